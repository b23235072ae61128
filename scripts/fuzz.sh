#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang with ASan and UBSan) into build-fuzz and runs
# each one for SECONDS (default 60), one after the other. Prints per target: inputs executed,
# seconds, crashes, corpus size; exits 1 when any target crashed (its input is kept in
# build-fuzz/fuzz-crashes/). The corpora grow in build-fuzz/fuzz-corpus/ between runs; seeds come
# from tests/data/samples and tests/fuzz/seeds. MESHLAB_FUZZ_TARGETS="route ping" runs only those;
# MESHLAB_FUZZ_PARALLEL=N runs N targets at once (CI), default one at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: SECONDS must be a whole number above 0, not '$secs'" >&2; exit 2; }
command -v clang >/dev/null || { echo "fuzz.sh: clang is not installed; run scripts/deps.sh" >&2; exit 2; }
dir=build-fuzz
CC=clang cmake -B "$dir" -S . -DMESHLAB_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$dir" -j"$(nproc)" --target fuzz_targets >/dev/null

# Seeds: the recorded tool output each parser reads, one input per file (a route per line).
seeds=$dir/fuzz-seeds
rm -rf "$seeds"
mkdir -p "$seeds"
for d in tests/fuzz/seeds/*/; do cp -r "$d" "$seeds/$(basename "$d")"; done
add() { local t=$1; shift; mkdir -p "$seeds/$t"; [ $# -eq 0 ] || cp "$@" "$seeds/$t/"; }
add topology topologies/*.yaml tests/data/*.yaml tests/data/bad/*.yaml
add ping tests/data/samples/ping-*.txt
add iperf tests/data/samples/iperf3-*.json tests/data/samples/iperf3/*.json
add hostinfo tests/data/samples/hostinfo/*.txt
add nebula tests/data/samples/nebula/print-tunnel-*
add tailscale tests/data/samples/tailscale/ping-*.txt tests/data/samples/tailscale/status-*.json
add headscale tests/data/samples/tailscale/headscale-*.json
mkdir -p "$seeds/route"
n=0
while IFS= read -r line; do
    printf '%s\n' "$line" > "$seeds/route/line-$n"
    n=$((n + 1))
done < <(cat tests/data/samples/ip-route-get*.txt)

targets=${MESHLAB_FUZZ_TARGETS:-$(cd tests/fuzz && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')}
parallel=${MESHLAB_FUZZ_PARALLEL:-1}
[[ "$parallel" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: MESHLAB_FUZZ_PARALLEL must be a whole number above 0, not '$parallel'" >&2; exit 2; }
mkdir -p "$dir/fuzz-crashes" "$dir/fuzz-logs"

# Runs target $1 for $secs s; writes its line of the table to fuzz-logs/$1.result.
run_one() {
    local t=$1 bin=$dir/tests/fuzz/fuzz_$1 corpus=$dir/fuzz-corpus/$1 log=$dir/fuzz-logs/$1.log
    mkdir -p "$corpus" "$seeds/$t"
    local start rc=0
    start=$(date +%s)
    # A GLib critical (a NULL where a string belongs) is a finding too.
    G_DEBUG=fatal-criticals "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$dir/fuzz-crashes/$t-" "$corpus" "$seeds/$t" >"$log" 2>&1 || rc=$?
    local took=$(($(date +%s) - start)) runs fuzzed
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    # libFuzzer's own count of the seconds it fuzzed: the wall clock also holds the build of the
    # corpus and any time the process was stopped.
    fuzzed=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
    took=${fuzzed:-$took}
    printf '%-12s %12s %8s %8s %8s\n' "$t" "${runs:-?}" "$took" "$((rc != 0))" \
        "$(find "$corpus" -type f | wc -l)" >"$dir/fuzz-logs/$t.result"
    return $rc
}

running=0
for t in $targets; do
    rm -f "$dir/fuzz-logs/$t.result"
    if [ "$parallel" -eq 1 ]; then
        run_one "$t" || true
    else
        run_one "$t" &
        running=$((running + 1))
        if [ "$running" -ge "$parallel" ]; then
            wait -n || true
            running=$((running - 1))
        fi
    fi
done
wait || true

failed=0
printf '%-12s %12s %8s %8s %8s\n' target runs seconds crashes corpus
for t in $targets; do
    cat "$dir/fuzz-logs/$t.result"
    read -r _ _ _ crashed _ <"$dir/fuzz-logs/$t.result"
    if [ "$crashed" != 0 ]; then
        failed=1
        echo "fuzz.sh: fuzz_$t crashed; the input is in $dir/fuzz-crashes/, the log in $dir/fuzz-logs/$t.log:" >&2
        grep -m 1 -A 12 'ERROR: \|runtime error' "$dir/fuzz-logs/$t.log" >&2 || tail -n 20 "$dir/fuzz-logs/$t.log" >&2
    fi
done
exit $failed
