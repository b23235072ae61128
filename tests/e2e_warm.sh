#!/usr/bin/env bash
# End to end on real guests, the warm start (issue 10): the first `meshlab run` of
# tests/data/e2e-warm.yaml boots cold and saves each guest at cloud-init's hold; the second
# restores them, and its results.json says so. Then two more `up`s restore the same saved
# guests twice: restored twins must draw different random numbers and make different
# WireGuard keys (the host reseeds each restored guest's RNG). `down --purge-cache` drops the
# saved guests, and nothing is left.
set -u
topo=tests/data/e2e-warm.yaml
lab=e2e-warm

e2e=e2e-warm
. "$(dirname "$0")/e2e_lib.sh"

e2e_require
[ "${MESHLAB_WARM:-on}" != off ] || skip "MESHLAB_WARM=off"

"$bin" down "$lab" --purge-cache >/dev/null 2>&1
e2e_baseline
# field FILE EXPR: a value from a results.json, by a Python expression over r.
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }

out=$(mktemp -d /tmp/meshlab-e2e-warm-XXXXXX)
echo "e2e-warm: run directory $out"

# 1. Cold: booted, and each guest saved at the hold.
start=$(date +%s)
"$bin" run "$topo" --quick --out "$out/cold" > "$out/cold.log" 2>&1
rc=$?
echo "e2e-warm: cold run took $(( $(date +%s) - start )) s"
check "the first run exits 0" "[ $rc = 0 ]"
r=$out/cold/results.json
check "the first run says it started cold" "[ \"\$(field $r 'r[\"start\"]')\" = cold ]"
check "each guest of the first run was saved for the next (save_s)" \
    "[ \"\$(field $r 'all(g.get(\"save_s\", 0) > 0 for g in r[\"guests\"])')\" = True ]"
saved=$("$bin" check --json | python3 -c "import json,sys; print(len([s for s in json.load(sys.stdin)['saved_guests'] if s.startswith('$lab/')]))")
check "meshlab check lists the lab's 3 saved guests ($saved)" "[ '$saved' = 3 ]"

# 2. Warm: restored, measured, and results.json says so. This run also sweeps the hub's distance
# (issue 19): the same lab, its guests' XML and so their saved states unchanged, measured with
# the hub on lan, on vps-far (40 ms away), and 40 ms away on a 10 Mbit/s plan.
cp "$topo" "$out/warm.yaml"
printf 'wan_profiles:\n  e2e-far-plan: {delay_ms: 40, rate_mbit: 10}\nwan_sweep: [lan, vps-far, e2e-far-plan]\n' >> "$out/warm.yaml"
start=$(date +%s)
"$bin" run "$out/warm.yaml" --quick --out "$out/warm" > "$out/warm.log" 2>&1
rc=$?
echo "e2e-warm: warm run took $(( $(date +%s) - start )) s"
check "the second run exits 0" "[ $rc = 0 ]"
r=$out/warm/results.json
check "the second run says it started warm" "[ \"\$(field $r 'r[\"start\"]')\" = warm ]"
check "every guest of the second run was restored (start: warm)" \
    "[ \"\$(field $r 'all(g[\"start\"] == \"warm\" for g in r[\"guests\"])')\" = True ]"
check "the second run measured wireguard-hub through its verified path" \
    "[ \"\$(field $r '[p for p in r[\"paths\"] if p[\"name\"] == \"wireguard-hub\"][0][\"status\"]')\" = measured ]"
check "the second run's results are valid against docs/results.schema.json" \
    "python3 tests/check_results_schema.py $r >/dev/null"
# The sweep: each step's profile in force on the hub and proven, wireguard-hub measured at every
# step. Through the hub its idle round trip grew by the profiles' 40 + 40 ms within 10 % (the
# lan step's round trip is the lab's own: 3 to 10 ms of an emulated WireGuard). Whether its
# throughput on vps-far is lower than on lan is printed, not judged: in six runs it was (0.35 to
# 0.75 of lan), in the seventh it was not (19.8 against 19.1 Mbit/s). The raw iperf3 records,
# printed with it, show why it cannot be judged here. A quick pass measures 3 s after 1 s
# omitted; no segment is sent again at any step. The flow's window is still growing at the
# pass's end, and whether the window or the emulated CPUs hold it first depends on where the
# window starts and how fast the emulated guests run in that minute: on vps-far some 30 Mbit/s
# at a loaded 100-150 ms needs 375-560 KB in flight, reached in the last second or not at all;
# on lan the CPUs bind (its window over its loaded round trip is three to four times what it
# carries). In the seventh run the far step's window was already 276 KB after its first
# second (lan's: 119 KB), and both steps ran CPU-bound near 19 Mbit/s. The plan does slow it,
# every time: the hub's uplink at 10 Mbit/s holds the flow under it.
python3 - "$r" "$out/warm" <<'PY' > "$out/sweep-asserts.txt" \
    || echo "bad the assertions in sweep-asserts.txt stopped short: python3 failed (its traceback is above)" >> "$out/sweep-asserts.txt"
import json, os, sys
r = json.load(open(sys.argv[1]))
def say(ok, what):
    print(("ok " if ok else "bad") + " " + what)
sw = r.get("wan_sweep") or []
say([s["step"] for s in sw] == ["lan", "vps-far", "e2e-far-plan"], "three steps in order: %s" % [s["step"] for s in sw])
if len(sw) == 3:
    lan, far, plan = ({p["name"]: p for p in s["paths"]}["wireguard-hub"] for s in sw)
    for s, want in ((sw[1], "vps-far"), (sw[2], "e2e-far-plan")):
        hub = {n["node"]: n for n in s["wan"]["nodes"]}["hub"]
        say(s["wan"]["in_force"] and hub["profile"]["name"] == want and hub["qdisc_matches"]
            and len(s["wan"]["rtt"]) == 2 and all(x["within"] and x["added_ms"] == 40 for x in s["wan"]["rtt"]),
            "%s in force on the hub, each client's round trip to it 40 ms longer: %s" %
            (want, [(x["from"], x["baseline_p50_ms"], x["p50_ms"]) for x in s["wan"]["rtt"]]))
    say(all(x["status"] == "measured" for x in (lan, far, plan)),
        "wireguard-hub measured at every step: %s" % [x["status"] for x in (lan, far, plan)])
    if all(x["status"] == "measured" for x in (lan, far, plan)):
        grew = far["rtt_idle_p50_ms"] - lan["rtt_idle_p50_ms"]
        say(far["rtt_wan_added_ms"] == 80 and lan["rtt_wan_added_ms"] == 0 and abs(grew - 80) <= 8,
            "through the hub the idle round trip grew by %.1f ms (%.1f to %.1f), the profiles' sum 80 within 10 %%"
            % (grew, lan["rtt_idle_p50_ms"], far["rtt_idle_p50_ms"]))
        print("e2e-warm: wireguard-hub at lan %.1f Mbit/s, at vps-far %.1f Mbit/s, 40 ms on 10 Mbit/s %.1f Mbit/s"
              % tuple(x["median_bits_per_second"] / 1e6 for x in (lan, far, plan)), file=sys.stderr)
        # What the sender's TCP said in each step's forward-1 passes: window at the end, the
        # largest, retransmissions, mean round trip under load.
        import glob
        for s, raw in zip(sw, ["raw"] + ["sweep/step-%d/raw" % k for k in (2, 3)]):
            for f in sorted(glob.glob(os.path.join(sys.argv[2], raw, "wireguard-hub", "*-forward-1-[0-9]*.iperf3.json"))):
                j = json.load(open(f))
                snd = j["end"]["streams"][0]["sender"]
                cw = [i["streams"][0].get("snd_cwnd") for i in j["intervals"]]
                print("e2e-warm: %s %s: window %s bytes by second, largest %s, retransmits %s, mean rtt %.1f ms"
                      % (s["step"], os.path.basename(f), cw, snd.get("max_snd_cwnd"), snd.get("retransmits"),
                         (snd.get("mean_rtt") or 0) / 1000), file=sys.stderr)
        print("e2e-warm: on vps-far wireguard-hub's throughput is %s than on lan: %.1f against %.1f Mbit/s (printed, not judged)"
              % ("lower" if far["median_bits_per_second"] < lan["median_bits_per_second"] else "not lower",
                 far["median_bits_per_second"] / 1e6, lan["median_bits_per_second"] / 1e6), file=sys.stderr)
        say(plan["median_bits_per_second"] < min(lan["median_bits_per_second"], 10e6),
            "on the 10 Mbit/s plan wireguard-hub's throughput is under the plan and lower than on lan: %.1f < %.1f Mbit/s"
            % (plan["median_bits_per_second"] / 1e6, lan["median_bits_per_second"] / 1e6))
    # The first step is the document's own; the later ones are whole in their own files, raw beside.
    say(sw[0]["results"] is None and [s["results"] for s in sw[1:]] == ["sweep/step-2/measured.json", "sweep/step-3/measured.json"]
        and all(os.path.isfile(os.path.join(sys.argv[2], s["results"])) for s in sw[1:])
        and os.path.isdir(os.path.join(sys.argv[2], "sweep/step-2/raw/wireguard-hub")),
        "the later steps' measurements and raw files are kept under sweep/step-N/")
PY
verdicts "$out/sweep-asserts.txt"
check "the report has the distance sweep, its tables and sentence" \
    "grep -q '^## Distance sweep' '$out/warm/report.md' && grep -q '^| median throughput, Mbit/s | lan | vps-far | e2e-far-plan |' '$out/warm/report.md' && grep -q -- '- \*\*wireguard-hub\*\*: from lan to e2e-far-plan' '$out/warm/report.md'"
cold_ready=$(field "$out/cold/results.json" 'max(g["ready_s"] for g in r["guests"])')
warm_ready=$(field "$r" 'max(g["ready_s"] for g in r["guests"])')
echo "e2e-warm: slowest guest ready: cold ${cold_ready} s, warm ${warm_ready} s"
check "warm guests were ready sooner than cold ones ($warm_ready s < $cold_ready s)" \
    "python3 -c 'import sys; sys.exit(not $warm_ready < $cold_ready)'"

# 3. Twins: the same saved guests restored twice make different keys and random numbers.
draw() {
    for node in hub client-a client-b; do
        echo "$node $("$bin" exec "$lab" "$node" -- wg show wg0 public-key) $("$bin" exec "$lab" "$node" -- sh -c 'head -c 16 /dev/urandom | od -An -tx1 | tr -d " \n"')"
    done
}
# The second twin, while it is up, also carries a bypass of its tunnel (below).
bypass_run() {
    "$bin" run "$topo" --profile full --out "$out/bypass" > "$out/bypass.log" 2>&1 &
    local pid=$!
    for _ in $(seq 1 300); do grep -q 'wireguard-hub: pass 2 of forward-1' "$out/bypass.log" && break; sleep 0.5; done
    sleep 3
    # For 3 s client-a sends to client-b's tunnel address in the clear, through the hub, which
    # forwards it into its own wg0: the NICs still carry the payload, the hub's WireGuard peer
    # for client-a does not.
    "$bin" exec "$lab" client-a -- sh -c 'ip route replace 10.8.0.3/32 via 192.0.2.10 dev eth0; sleep 3; ip route del 10.8.0.3/32'
    check "client-a bypassed its WireGuard tunnel for 3 s in the middle of pass 2" "[ $? = 0 ]"
    wait "$pid"
    rc=$?
    check "the run with the bypass exits 0: wireguard-hub measured without that pass (rc $rc)" "[ $rc = 0 ]"
    python3 - "$out/bypass/results.json" <<'PY' > "$out/bypass-asserts.txt" \
        || echo "bad the assertions in bypass-asserts.txt stopped short: python3 failed" >> "$out/bypass-asserts.txt"
import json, sys
w = {x["name"]: x for x in json.load(open(sys.argv[1]))["paths"]}["wireguard-hub"]
def say(ok, what):
    print(("ok " if ok else "bad") + " " + what)
# A pass whose view saw the bypass lost its path and was run again once (measure.c
# settle_again): the passes of the profile are those not run in another's place. A pass
# "repeated" for a busy host is in no figure, its repeat (same index) in its place.
wp = [x for x in w["passes"] if x["status"] != "repeated"]
again = {x["run_again_as"]: x for x in wp if "run_again_as" in x}
redo = [x for x in wp if x["seq"] in again]
ps = [x for x in wp if x["seq"] not in again]
say(all(again[x["seq"]].get("path_lost") and again[x["seq"]]["index"] == 2 and x["index"] == 2
        for x in redo) and len(redo) <= 1,
    "only the bypassed pass 2 was run again, and only where a view saw the path lost: %s" %
    [(x["index"], x["status"]) for x in redo])
say(len(ps) == 2, "two passes of 10 s (%d)" % len(ps))
if len(ps) == 2:
    j = ps[0].get("tunnel_judged") or {}
    say(ps[0]["status"] == "ok" and j.get("windows", 0) >= 1 and j.get("failed") == 0 and j.get("min_share", 0) >= 0.75,
        "pass 1 ok, the hub's own WireGuard counters judged over %s windows, the least share %s" % (j.get("windows"), j.get("min_share")))
    why = ps[1]["reason"] or ""
    say(ps[1]["status"] == "failed" and "the dataplane's own counters did not carry the payload" in why
        and "the hub's peer for client-a counted" in why,
        "pass 2, its tunnel bypassed for 3 s, failed on the hub's own WireGuard counters: %s" % why[:700])
    import statistics
    good = [ps[0]["bits_per_second"]] + [x["bits_per_second"] for x in redo if x["status"] == "ok"]
    say(w["median_bits_per_second"] == statistics.median(good),
        "no figure includes the bypassed pass (median %s, of pass 1 and the pass run again %s)" % (w["median_bits_per_second"], good))
say(all(c["ok"] for c in w["checks"]), "the checks before and after passed: the bypass was seen inside the pass alone")
PY
    verdicts "$out/bypass-asserts.txt"
}
# The first twin, while it is up, runs the cells beyond TCP under --until: a UDP cell (loss and
# jitter at a fixed rate) and rrul (4 streams each way beside the 20 Hz ping), each repeated until
# its interval is within ±50 % or 3 passes, and the hub's door read every second.
cells_run() {
    "$bin" run "$topo" --profile cells --until 50,3 --out "$out/cells" > "$out/cells.log" 2>&1
    local rc=$?
    check "the run of the cells beyond TCP exits 0 (rc $rc)" "[ $rc = 0 ]"
    python3 - "$out/cells/results.json" <<'PY' > "$out/cells-asserts.txt" \
        || echo "bad the assertions in cells-asserts.txt stopped short: python3 failed" >> "$out/cells-asserts.txt"
import json, math, sys
r = json.load(open(sys.argv[1]))
w = {x["name"]: x for x in r["paths"]}["wireguard-hub"]
def say(ok, what):
    print(("ok " if ok else "bad") + " " + what)
say((r.get("profile") or {}).get("until") == {"percent": 50, "max_passes": 3},
    "results.json records --until 50,3: %s" % (r.get("profile") or {}).get("until"))
by = {}
for p in w["passes"]:
    if p["status"] != "repeated":  # a busy pass run again: its repeat is in its place
        by.setdefault(p["cell"], []).append(p)
for cell in ("forward-1", "udp-4M", "rrul"):
    ps = by.get(cell, [])
    u = (w.get("until") or {}).get(cell) or {}
    say(2 <= len(ps) <= 3 and u.get("status") in ("converged", "gave-up") and u.get("passes") == len(ps),
        "%s: %d passes, --until says %s after %s" % (cell, len(ps), u.get("status"), u.get("passes")))
    say(all(p["status"] == "ok" for p in ps), "%s: every pass verified and ok: %s" % (cell, [p["reason"] for p in ps]))
    c = (w.get("cells") or {}).get(cell) or {}
    ci = c.get("median_bits_per_second_ci95") or {}
    m = c.get("median_bits_per_second")
    say(m is not None and ci.get("low") is not None and ci["low"] <= m <= ci["high"],
        "%s: the median %s lies in its 95 %% interval %s" % (cell, m, ci))
udp = by.get("udp-4M", [])
say(udp and all(isinstance(p.get("udp_loss_percent"), (int, float)) and isinstance(p.get("udp_jitter_ms"), (int, float))
                and p.get("udp_packets", 0) > 0 and abs(p["udp_offered_bits_per_second"] - 4e6) < 1 for p in udp),
    "udp-4M: each pass records loss, jitter and packets at 4 Mbit/s: %s" % [(p.get("udp_loss_percent"), p.get("udp_jitter_ms"), p.get("udp_packets")) for p in udp])
rrul = by.get("rrul", [])
say(rrul and all(p["direction"] == "bidir" and p["streams"] == 4 and (p.get("rtt_loaded") or {}).get("received", 0) > 0 for p in rrul),
    "rrul: 4 streams each way, with the loaded RTT beside them: %s" % [(p["direction"], p["streams"], (p.get("rtt_loaded") or {}).get("p99_ms")) for p in rrul])
fw = by.get("forward-1", [])
say(fw and all(isinstance(p.get("hub_rx_dropped_frames"), int) and
               all(s.get("door_bytes") is not None and s.get("door_queue_bytes") is not None for s in p["series"]) for p in fw),
    "forward-1: the hub's door (what reached it, its queue, the frames dropped there: %s) read every second"
    % [p.get("hub_rx_dropped_frames") for p in fw])
# The after phase timed step by step, the guests' CPU read before ping's end is waited for.
def steps(p):
    a = (p.get("time") or {}).get("after") or {}
    return [a.get(k) for k in ("counted_s", "guest_cpu_s", "ping_s", "end_view_s", "recorded_s")]
al = [steps(p) for p in w["passes"]]
say(al and all(None not in s and 0 <= s[0] <= s[1] <= s[2] <= s[4] and s[3] <= s[4] for s in al),
    "every pass times its after phase: counters, then the guests' CPU, then ping's end, all before "
    "it is recorded: %s" % al)
PY
    verdicts "$out/cells-asserts.txt"
}
for twin in 1 2; do
    "$bin" up "$topo" --out "$out/up$twin" > "$out/up$twin.log" 2>&1
    check "twin $twin: up exits 0, restored" "grep -q 'guests started from their saved state' $out/up$twin.log"
    draw > "$out/twin$twin.txt"
    [ "$twin" = 1 ] && cells_run
    [ "$twin" = 2 ] && bypass_run
    "$bin" down "$lab" > /dev/null 2>&1
done
cat "$out/twin1.txt" "$out/twin2.txt"
for node in hub client-a client-b; do
    k1=$(awk -v n=$node '$1 == n {print $2}' "$out/twin1.txt")
    k2=$(awk -v n=$node '$1 == n {print $2}' "$out/twin2.txt")
    r1=$(awk -v n=$node '$1 == n {print $3}' "$out/twin1.txt")
    r2=$(awk -v n=$node '$1 == n {print $3}' "$out/twin2.txt")
    check "$node: restored twins have different WireGuard keys ($k1 / $k2)" \
        "[ ${#k1} = 44 ] && [ ${#k2} = 44 ] && [ '$k1' != '$k2' ]"
    check "$node: restored twins draw different random numbers ($r1 / $r2)" \
        "[ ${#r1} = 32 ] && [ '$r1' != '$r2' ]"
done

# 4. down --purge-cache drops the saved guests; nothing is left.
"$bin" down "$lab" --purge-cache > "$out/purge.log" 2>&1
check "down --purge-cache says it removed the saved guests" "grep -q 'saved guests' $out/purge.log"
saved=$("$bin" check --json | python3 -c "import json,sys; print(len([s for s in json.load(sys.stdin)['saved_guests'] if s.startswith('$lab/')]))")
check "no saved guest of the lab is left ($saved)" "[ '$saved' = 0 ]"
left=$(leftovers)
check "nothing is left behind${left:+: $left}" "[ -z '$left' ]"

e2e_finish
