#!/usr/bin/env bash
# A benchmark, not a test: what meshlab itself (the controller) costs while it runs a lab.
# Runs `meshlab run TOPOLOGY [ARGS...]` (default: the seed topology, full profile), samples the
# controller's CPU time and resident memory once a second from /proc, and prints the figures
# beside the goal: under 1 % of one core and under 30 MB over the whole run, and the share of
# the measure phase that passes spent transferring (goal: 0.90 on the full profile). The guests are
# not the controller: their QEMU processes are not counted. Needs what `meshlab run` needs
# (root, libvirtd); run it on a quiet host and say what else ran.
#
#   scripts/bench-controller.sh [TOPOLOGY] [RUN-ARGS...]    e.g. ... topologies/three-guest.yaml --quick
set -u
bin=${MESHLAB_BIN:-build/meshlab}
topo=${1:-topologies/three-guest.yaml}
shift || true
out=$(mktemp -d /tmp/meshlab-bench-XXXXXX)
hz=$(getconf CLK_TCK)
"$bin" run "$topo" "$@" --out "$out/run" > "$out/run.log" 2>&1 &
pid=$!
peak_kib=0 samples=0 sum_kib=0 cpu_ticks=0
start=$(date +%s.%N)
while kill -0 "$pid" 2>/dev/null; do
    if [ -r "/proc/$pid/status" ]; then
        rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
        stat=$(cat "/proc/$pid/stat" 2>/dev/null)
        if [ -n "$rss" ] && [ -n "$stat" ]; then
            samples=$((samples + 1))
            sum_kib=$((sum_kib + rss))
            [ "$rss" -gt "$peak_kib" ] && peak_kib=$rss
            # utime + stime, fields 14 and 15, read after the command name's ')'.
            cpu_ticks=$(echo "${stat##*) }" | awk '{print $12 + $13}')
        fi
    fi
    sleep 1
done
wait "$pid"
rc=$?
wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
cpu_s=$(awk -v t="$cpu_ticks" -v hz="$hz" 'BEGIN {printf "%.2f", t / hz}')
pct=$(awk -v c="$cpu_s" -v w="$wall" 'BEGIN {printf "%.3f", 100 * c / w}')
avg_kib=$(( samples ? sum_kib / samples : 0 ))
echo "meshlab run exited $rc after ${wall%.*} s (log: $out/run.log)"
echo "controller CPU: $cpu_s s = $pct % of one core (goal: under 1 %), sampled from /proc/$pid/stat"
echo "controller memory: peak $((peak_kib / 1024)) MiB, mean $((avg_kib / 1024)) MiB resident over $samples samples (goal: under 30 MB)"
if [ -s "$out/run/results.json" ]; then
    /usr/bin/python3 - "$out/run/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d.get("controller") or {}
print("results.json controller: %s s CPU, %s %% of a core, peak %s KiB (getrusage, measured by meshlab itself)"
      % (c.get("cpu_s"), c.get("cpu_percent_of_core"), c.get("max_rss_kib")))
# Time spent measuring: the seconds iperf3 ran (every pass's duration_s, warm-up included) over
# the measure phase's wall clock (checks, idle baselines, policy switches and each pass's own
# reads are the rest). Goal: at least 0.90 on the full profile.
measure = next((p["seconds"] for p in d.get("phases", []) if p.get("name") == "measure"), None)
passes = [p for x in d.get("paths", []) for p in x.get("passes", []) or []]
pass_s = sum(p.get("duration_s") or 0 for p in passes)
if measure:
    print("time spent measuring: %.1f s of passes (%d) in a %.1f s measure phase = %.2f "
          "(goal: at least 0.90 on the full profile), %.1f s of the rest per pass"
          % (pass_s, len(passes), measure, pass_s / measure,
             (measure - pass_s) / len(passes) if passes else float("nan")))
# Where the rest went, as meshlab itself timed it (results.json measure_time), and each pass's
# own wall clock around its transfer (passes[].time).
t = d.get("measure_time")
if t:
    print("measure phase: %.1f s = passes %.1f (transfers %.1f) + checks %.1f + idle baselines %.1f"
          " + policy switches %.1f + other %.1f" % (t["seconds"], t["passes_s"], t["transfer_s"],
          t["checks_s"], t["idle_s"], t["policy_s"], t["other_s"]))
    if t["seconds"] > 0:
        print("policy switches: %.1f %% of the measure phase (goal: under 5 %% on the full profile)"
              % (100 * t["policy_s"] / t["seconds"]))
tms = [p["time"] for p in passes if p.get("time") and p["time"].get("after_s") is not None]
if tms:
    n = len(tms)
    print("per pass, mean of %d: before iperf3 %.2f s, transfer %.2f s, after it %.2f s"
          % (n, sum(x["before_s"] for x in tms) / n, sum(x["transfer_s"] for x in tms) / n,
             sum(x["after_s"] for x in tms) / n))
    # The after phase's steps, each one's end counted from iperf3's exit (mean over the passes
    # that recorded it): what a pass's overhead is made of.
    steps = ("counted_s", "guest_cpu_s", "ping_s", "end_view_s", "recorded_s")
    ends = []
    for k in steps:
        v = [x["after"][k] for x in tms if (x.get("after") or {}).get(k) is not None]
        ends.append("%s %.2f" % (k[:-2].replace("_", " "), sum(v) / len(v)) if v else None)
    if any(ends):
        print("after iperf3, each step done at (s, mean): " + ", ".join(e for e in ends if e))
PY
fi
load=$(cut -d' ' -f1-3 /proc/loadavg)
echo "host load at the end: $load; anything else running on the host is counted in the guests' time, not here"
