#!/usr/bin/env bash
# End to end on real guests, NAT traversal (issue 9): `meshlab up` of tests/data/e2e-nat.yaml
# builds the clients' NATs inside the guests and observes them from the hub; `meshlab exec`
# reaches into a live lab (inside the NAT's namespace too); `meshlab run --quick --capture`
# measures nebula-auto through a full cone and a port-restricted cone, then runs a reduced NAT
# matrix (none and symmetric, nebula and Tailscale, two repeats). Asserted: every repeat of every
# cell gives what RFC 4787 and the dataplane predict (nebula: symmetric x symmetric relay, a side
# with no NAT direct; Tailscale, whose port the guest firewall keeps closed: none x none direct,
# a symmetric side relay through Headscale's DERP); the Tailscale cells run where the cache has
# its binaries (CI builds them) and say "not run" otherwise; the symmetric NAT's mapping depends
# on the destination, the full cone filters nothing, the port-restricted cone filters by
# address and port; the captures, the grid and its picture are written; nothing is left.
set -u
topo=tests/data/e2e-nat.yaml
lab=e2e-nat

e2e=e2e-nat
. "$(dirname "$0")/e2e_lib.sh"

e2e_require

"$bin" down "$lab" >/dev/null 2>&1
e2e_baseline

out=$(mktemp -d /tmp/meshlab-e2e-nat-XXXXXX)
echo "e2e-nat: run directory $out"
start=$(date +%s)
"$bin" up "$topo" --out "$out/up" 2>&1 | tee "$out/up.log"
rc=${PIPESTATUS[0]}
echo "e2e-nat: meshlab up took $(( $(date +%s) - start )) s"
check "meshlab up exits 0" "[ $rc = 0 ]"

# A live lab to explore: commands run in the guest, inside the NAT with --netns, their output
# and exit status come back.
addr=$("$bin" exec "$lab" client-a --netns -- ip -4 -o addr show dev nat0 2>"$out/exec.err")
check "exec --netns sees the inside address 172.16.11.2 ($addr)" "echo '$addr' | grep -q 'inet 172.16.11.2/24'"
rules=$("$bin" exec "$lab" client-a -- nft list table ip meshlab_nat 2>&1)
check "exec shows client-a's NAT rules (a full cone: a learned set and masquerade)" \
    "echo \"\$rules\" | grep -q masquerade && echo \"\$rules\" | grep -q 'dnat to 172.16.11.2'"
"$bin" exec "$lab" hub -- sh -c 'echo out; echo err >&2; exit 7' >"$out/exec7.out" 2>"$out/exec7.err"
rc=$?
check "exec returns the command's exit status (7, got $rc)" "[ $rc = 7 ]"
check "exec keeps stdout and stderr apart" "grep -qx out '$out/exec7.out' && grep -qx err '$out/exec7.err'"
"$bin" exec "$lab" hub --netns -- true >/dev/null 2>"$out/exec-hub-netns.err"
check "exec --netns on the hub is refused (it sits behind no NAT)" "[ $? != 0 ] && grep -qi nat '$out/exec-hub-netns.err'"

# The Tailscale cells run where the cache holds its binaries (.ci/run builds them).
have_ts=$("$bin" check --json 2>/dev/null | python3 -c 'import json,sys; print(int(bool(json.load(sys.stdin)["artifacts"]["cached"])))' 2>/dev/null || echo 0)
echo "e2e-nat: Tailscale's binaries in the cache: $have_ts"

start=$(date +%s)
"$bin" run "$topo" --quick --capture --out "$out/run" 2>&1 | tee "$out/run.log"
rc=${PIPESTATUS[0]}
took=$(( $(date +%s) - start ))
echo "e2e-nat: meshlab run took $took s"
check "meshlab run exits 0" "[ $rc = 0 ]"

if [ -f "$out/run/results.json" ]; then
    python3 - "$out/run" "$have_ts" <<'PY' > "$out/asserts.txt" \
    || echo "bad the assertions in asserts.txt stopped short: python3 failed (its traceback is above)" >> "$out/asserts.txt"
import json, os, sys
run = sys.argv[1]
r = json.load(open(os.path.join(run, "results.json")))
def say(ok, what):
    print(("ok   - " if ok else "FAIL - ") + what)
obs = r.get("nat_observed") or {}
sym, fc, prc = obs.get("symmetric", {}), obs.get("full-cone", {}), obs.get("port-restricted-cone", {})
say(sym.get("mapping") in ("address-dependent", "address-and-port-dependent"),
    "symmetric: the mapping depends on the destination (%s; %s)" % (sym.get("mapping"), sym.get("seen")))
say(sym.get("port_preserved") is False, "symmetric: the port is not preserved")
say(fc.get("filtering") == "endpoint-independent",
    "full-cone: endpoint-independent filtering (%s)" % fc.get("filtering"))
say(fc.get("mapping") == "endpoint-independent", "full-cone: endpoint-independent mapping")
say(prc.get("filtering") == "address-and-port-dependent",
    "port-restricted-cone: address-and-port-dependent filtering (%s)" % prc.get("filtering"))
say(all(o.get("as_configured") for o in obs.values()) and len(obs) == 3,
    "every observed NAT behaves as configured (%s)" % sorted(obs))
paths = {p["name"]: p for p in r["paths"]}
na = paths.get("nebula-auto", {})
say(na.get("status") == "measured",
    "nebula-auto measured through a full cone and a port-restricted cone (%s: %s)" % (na.get("status"), na.get("reason")))
say(na.get("found") in ("direct", "relay"), "nebula-auto says which path it found (%s)" % na.get("found"))
chk = (na.get("checks") or [{}])[0]
say(len(chk.get("captures") or []) == 3 and all(os.path.exists(os.path.join(run, f)) for f in chk["captures"]),
    "--capture kept the path check's pcaps (%s)" % chk.get("captures"))
have_ts = sys.argv[2] == "1"
window = 30  # tests/data/e2e-nat.yaml's window_s
cells = r.get("nat_matrix") or []
say([(c["dataplane"], c["a_nat"], c["b_nat"]) for c in cells] ==
    [(d, a, b) for d in ("nebula", "tailscale") for a, b in
     (("none", "none"), ("none", "symmetric"), ("symmetric", "symmetric"))],
    "six cells: none-none, none-symmetric, symmetric-symmetric for nebula and for tailscale (%d)" % len(cells))
# What each cell must give: RFC 4787 and the dataplane (src/results/natgrid.c). Tailscale's port is
# closed in the guests' firewall, so a side with no NAT filters as a port-restricted cone for it,
# and a symmetric NAT on the other side leaves only DERP.
EXPECT = {("nebula", "none", "none"): "direct", ("nebula", "none", "symmetric"): "direct",
          ("nebula", "symmetric", "symmetric"): "relay", ("tailscale", "none", "none"): "direct",
          ("tailscale", "none", "symmetric"): "relay", ("tailscale", "symmetric", "symmetric"): "relay"}
for c in cells:
    key = (c["dataplane"], c["a_nat"], c["b_nat"])
    name = "%s %s x %s" % key
    reps = c.get("repeats") or []
    want = EXPECT.get(key)
    say(c.get("expected") == want, "%s: expected %s (the report's own prediction: %s)" % (name, want, c.get("expected")))
    if c["dataplane"] == "tailscale" and not have_ts:
        say(c["outcome"] == "not-run" and "artifacts missing" in (c.get("reason") or "") and reps == [],
            "%s: not run, its artifacts missing (%s)" % (name, c.get("reason")))
        continue
    say(len(reps) == 2, "%s: two repeats" % name)
    outs = [x.get("outcome") for x in reps]
    say(outs == [want, want] and c["outcome"] == want, "%s: %s in every repeat (%s)" % (name, want, outs))
    if want == "relay":
        say(all(x.get("seconds_to_direct") is None for x in reps), "%s: never went direct" % name)
        if c["dataplane"] == "tailscale":
            say(all(x.get("view") == "tailscale-auto: relayed by headscale" and
                    "pong via DERP(headscale)" in ((x.get("check") or {}).get("evidence") or "") for x in reps),
                "%s: relayed by Headscale's DERP, its own ping says so (%s)" % (name, [x.get("view") for x in reps]))
    else:
        std = [x.get("seconds_to_direct") for x in reps]
        say(all(s is not None and 0 <= s <= window for s in std),
            "%s: time to direct recorded in every repeat, within the %d s window (%s s)" % (name, window, std))
        if c["dataplane"] == "tailscale":
            say(all((x.get("view") or "").startswith("tailscale-auto: direct to 192.0.2.12:") for x in reps),
                "%s: direct to client-b's own address (%s)" % (name, [x.get("view") for x in reps]))
    say(bool(c.get("explanation")), "%s: explained (%s)" % (name, c.get("explanation")))
    for x in reps:
        caps = x.get("captures") or []
        good = len(caps) == 3 and all(
            os.path.getsize(os.path.join(run, f)) > 24 and
            open(os.path.join(run, f), "rb").read(4) in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4")
            for f in caps)
        say(good, "%s repeat %s: three pcaps with packets (%s)" % (name, x.get("repeat"), caps))
        say(x.get("hub_bytes") is not None and x.get("check", {}).get("ok") is True,
            "%s repeat %s: hub bytes and a passed check recorded" % (name, x.get("repeat")))
md = open(os.path.join(run, "report.md")).read()
html = open(os.path.join(run, "report.html")).read()
say("NAT matrix" in md and "udp.port == 4242" in md, "report.md has the NAT matrix and the capture filter")
for dp in ("nebula", "tailscale") if have_ts else ("nebula",):
    say("nat-matrix-%s.svg" % dp in md and os.path.exists(os.path.join(run, "plots", "nat-matrix-%s.svg" % dp)),
        "%s's grid picture is written and linked" % dp)
if have_ts:
    say("udp.port == 41641 || udp.port == 3478" in md, "report.md names Tailscale's capture filter")
say(html.count("<svg") >= 1 and "NAT matrix" in html, "report.html carries the grid")
PY
    cat "$out/asserts.txt"
    passed=$((passed + $(grep -c '^ok' "$out/asserts.txt")))
    failed=$((failed + $(grep -c '^FAIL' "$out/asserts.txt")))
    check "results.json valid against docs/results.schema.json" \
        "/usr/bin/python3 tests/check_results_schema.py '$out/run/results.json'"
else
    bad "no results.json"
fi

# The NATs are back as the topology says, and the lab still answers through them.
rules=$("$bin" exec "$lab" client-b -- nft list table ip meshlab_nat 2>&1)
check "client-b is back behind its port-restricted cone (no learned set, no random ports)" \
    "echo \"\$rules\" | grep -q masquerade && ! echo \"\$rules\" | grep -q random"

"$bin" down "$lab" 2>&1 | tail -3
left=$(leftovers)
check "nothing left (${left//$'\n'/ })" "[ -z \"\$left\" ]"
e2e_finish
