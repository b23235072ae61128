#!/usr/bin/env bash
# meshlab report and meshlab compare on checked-in results documents: no lab, no libvirt.
# report re-renders report.md, report.html and plots/ from a run directory's results.json
# alone; report.html is self-contained; without gnuplot the reports are still written;
# another schema is refused. compare tells a difference beyond the passes' noise from one
# within it, in text and JSON.
set -u
bin=${MESHLAB_BIN:-build/meshlab}
[ -x "$bin" ] || { echo "cli_report: skipped: $bin not built"; exit 77; }
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
expect() { # expect RC DESCRIPTION -- command...
    local want=$1 what=$2; shift 3
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" = "$want" ]; then ok; else bad "$what: exit $rc, wanted $want ($(cat "$tmp/err"))"; fi
}
has() { grep -q -- "$2" "$3" && ok || bad "$1"; }
lacks() { grep -q -- "$2" "$3" && bad "$1" || ok; }

run=$tmp/run
mkdir -m 700 "$run"
cp tests/data/results-v2-matrix.json "$run/results.json"
expect 0 "report of a v2 run directory" -- "$bin" report "$run"
for f in report.md report.html; do
    [ -s "$run/$f" ] && ok || bad "report writes $f"
done
# A month of another workload from the run's own figures: wireguard-hub's 1,130 GB a TB each way
# times 210 GB, 137 GB beyond the 100 GB included at 0.01 a GB; results.json untouched.
sum=$(sha256sum < "$run/results.json")
expect 0 "report prices a workload given to it" -- "$bin" report --traffic 210 --relayed-share 0.2 \
    --egress-price 0.01 --included-tb 0.1 "$run"
has "the report says whose workload it prices" "The workload given to \`meshlab report\` (not the run's own" "$run/report.md"
has "the report prices wireguard-hub's month" "| wireguard-hub | 210 GB | 237 GB | 237 GB | 137 GB | 1.37 USD |" "$run/report.md"
# This results.json records no path policy: nebula-relay's relay counts all of the payload, and
# the report says why.
has "the report prices nebula-relay as all of the payload" "| nebula-relay | 210 GB | 253 GB | 253 GB | 153 GB | 1.53 USD |" "$run/report.md"
has "the report says why without a policy" "records no path policy to tell a relay from a hub path by" "$run/report.md"
[ "$(sha256sum < "$run/results.json")" = "$sum" ] && ok || bad "report --traffic leaves results.json as it was"
expect 2 "report refuses a bad workload flag" -- "$bin" report --traffic 210 --relayed-share 2 "$run"
has "a bad workload flag is named" "relayed-share must be 0 to 1" "$tmp/err"
expect 2 "report refuses a workload without traffic (the run recorded none)" -- \
    "$bin" report --egress-price 0.01 "$run"
expect 2 "report refuses -o" -- "$bin" report -o x "$run"
expect 0 "report of the run directory again" -- "$bin" report "$run"
lacks "without flags the report prices no workload the run did not record" "A month of the workload" "$run/report.md"
has "report.md has the CPU cost section" "^## CPU cost" "$run/report.md"
has "report.md has the footnote" "^\[^1\]: artifacts missing" "$run/report.md"
lacks "report.html fetches nothing (src)" 'src="https\?://' "$run/report.html"
lacks "report.html fetches nothing (href)" 'href="https\?://' "$run/report.html"
lacks "report.html loads no stylesheet or script" '<link\|<script' "$run/report.html"
has "report.html has its CSS inline" "<style>" "$run/report.html"
if command -v gnuplot >/dev/null; then
    has "report.html inlines the pictures" "<svg" "$run/report.html"
    [ "$(grep -c '<svg' "$run/report.html")" = 4 ] && ok || bad "report.html has 4 pictures"
    for p in throughput hub-series rtt cpu; do
        grep -q "<svg" "$run/plots/$p.svg" 2>/dev/null && ok || bad "plots/$p.svg drawn"
        has "report.md links plots/$p.svg" "](plots/$p.svg)" "$run/report.md"
    done
    has "report says how many pictures" "pictures: 4 drawn" "$tmp/out"
else
    echo "not run: the picture checks need gnuplot"
fi

# Without gnuplot: still exit 0, a line where each picture would be.
mkdir "$tmp/empty"
PATH=$tmp/empty expect 0 "report without gnuplot" -- "$bin" report "$run"
[ "$(grep -c ': not drawn (gnuplot is not installed; install gnuplot-nox' "$run/report.md")" = 4 ] &&
    ok || bad "report.md says four times that gnuplot is missing"
lacks "report.html without gnuplot has no picture" "<svg" "$run/report.html"
[ -z "$(ls "$run/plots" 2>/dev/null)" ] && ok || bad "no picture of an earlier rendering stays behind"
has "report.html says why" "not drawn (gnuplot is not installed" "$run/report.html"

# Re-rendering is a pure function of results.json: twice gives the same report.md.
cp "$run/report.md" "$tmp/first.md"
PATH=$tmp/empty expect 0 "report again" -- "$bin" report "$run"
cmp -s "$tmp/first.md" "$run/report.md" && ok || bad "report.md is the same when rendered again"

# A NAT lesson's run: the NAT matrix grids are drawn by meshlab itself, gnuplot or not.
nat=$tmp/nat
mkdir -m 700 "$nat"
cp tests/data/results-v2-nat.json "$nat/results.json"
PATH=$tmp/empty expect 0 "report of a NAT run without gnuplot" -- "$bin" report "$nat"
for dp in nebula tailscale; do
    grep -q '<rect class="cell"' "$nat/plots/nat-matrix-$dp.svg" 2>/dev/null && ok ||
        bad "plots/nat-matrix-$dp.svg drawn without gnuplot"
    has "report.md shows the $dp grid" "](plots/nat-matrix-$dp.svg)" "$nat/report.md"
done
[ "$(grep -c '<svg' "$nat/report.html")" = 2 ] && ok || bad "report.html inlines the 2 NAT grids"
has "report.md has the NAT sections" "^## NAT behaviour observed" "$nat/report.md"
has "report.md has the captures" "^## Captures" "$nat/report.md"
expect 0 "compare two NAT runs" -- "$bin" compare "$nat" tests/data/results-v2-nat.json
expect 0 "compare a NAT run with one without" -- "$bin" compare "$nat" tests/data/results-v2-matrix.json

# Refusals: another schema, no results.json, a directory others can write.
old=$tmp/old
mkdir -m 700 "$old"
cp tests/data/results-all-measured.json "$old/results.json"
expect 2 "report of a v1 results.json" -- "$bin" report "$old"
has "the refusal names the schema it reads" "not a 'meshlab-results/3' results document" "$tmp/err"
has "the refusal names the file's schema" "at /schema: its schema is \"meshlab-results/1\"" "$tmp/err"
[ ! -e "$old/report.md" ] && ok || bad "nothing written for a v1 results.json"
expect 2 "report of a directory without results.json" -- "$bin" report "$tmp/empty"
open=$tmp/open
mkdir "$open" && chmod 777 "$open"
cp tests/data/results-v2-busy.json "$open/results.json"
expect 2 "report into a world-writable directory" -- "$bin" report "$open"
has "the refusal says what to do" "chmod go-w" "$tmp/err"
expect 2 "report without a directory" -- "$bin" report

# compare: Welch's t-test of the passes' logarithms, Holm-adjusted. 40 % faster over 3 passes of
# 15 % CV is within the noise (p 0.050; test_compare has one that differs); a rerun 2 % apart is
# too.
a=tests/data/results-v2-matrix.json
expect 0 "compare with a faster run" -- "$bin" compare "$run" tests/data/results-v2-faster.json
has "compare's table" "^| Path | Cell | Figure | Unit | A | B | B - A | B - A % |" "$tmp/out"
has "the faster wireguard-hub is within the noise, its p-value shown" \
    "^| wireguard-hub | forward-1 | median_bits_per_second | Mbit/s | 122 | 171 | 48.8 | 40.0 | .* | 0\.05[0-9] | [01]\.[0-9][0-9][0-9] | 3 / 3 | 140 122 104 / 196 171 146 | within noise |$" "$tmp/out"
[ "$(grep -c 'differs' "$tmp/out")" = 0 ] && ok || bad "no figure differs"
has "one pass a side is unknown" "| reverse-1 | median_bits_per_second .* | 1 / 1 | [^|]* | unknown |" "$tmp/out"
expect 0 "compare with a rerun" -- "$bin" compare "$a" tests/data/results-v2-rerun.json
lacks "a rerun is within the noise" "differs" "$tmp/out"
has "a rerun is within the noise" "within noise" "$tmp/out"
expect 0 "compare --json" -- "$bin" compare --json "$a" tests/data/results-v2-faster.json
has "compare --json names its schema" '"schema": "meshlab-compare/3"' "$tmp/out"
has "--json has the Holm-adjusted p-value" '"p_holm": ' "$tmp/out"
[ "$(grep -c '"verdict": "within noise"' "$tmp/out")" -ge 1 ] && ok || bad "--json has the verdict"
has "--json has the p-value" '"p_value": 0.0[5-9]' "$tmp/out"
if command -v python3 >/dev/null; then
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out" && ok ||
        bad "compare --json is JSON"
fi
expect 2 "compare with a v1 document" -- "$bin" compare "$a" tests/data/results-all-measured.json
has "compare names the document it refuses" "results-all-measured.json is not a 'meshlab-results/3'" "$tmp/err"
expect 2 "compare with one run" -- "$bin" compare "$a"
expect 2 "compare with a missing file" -- "$bin" compare "$a" "$tmp/nothing.json"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
