#!/usr/bin/env bash
# docs/examples/ is a real run, and its report is what this meshlab renders from its
# results.json: `meshlab report` on a copy gives report.md back byte for byte, and the
# results document is valid against the published schema, and every file it names is there.
set -u
bin=${MESHLAB_BIN:-build/meshlab}
[ -x "$bin" ] || { echo "cli_example: skipped: $bin not built"; exit 77; }
ex=docs/examples
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
mkdir -m 700 "$tmp/run"
cp "$ex/results.json" "$tmp/run/results.json"
if "$bin" report "$tmp/run" >"$tmp/out" 2>&1; then ok "meshlab report renders the example"; else bad "meshlab report: $(cat "$tmp/out")"; fi
if cmp -s "$tmp/run/report.md" "$ex/report.md"; then
    ok "docs/examples/report.md is what this meshlab renders"
else
    bad "docs/examples/report.md differs from a fresh rendering (meshlab report on a copy of docs/examples/results.json):"
    diff "$ex/report.md" "$tmp/run/report.md" | head -20
fi
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
    if /usr/bin/python3 tests/check_results_schema.py "$ex/results.json" >"$tmp/schema" 2>&1; then
        ok "docs/examples/results.json is valid against docs/results.schema.json"
    else
        bad "docs/examples/results.json: $(head -5 "$tmp/schema")"
    fi
fi
# Every file the document names (a pass's raw iperf3 JSON, ping output and series, a capture, a
# ruleset, a guest's log) is shipped beside it, so each figure can be rebuilt from its samples.
names=$(/usr/bin/python3 - "$ex/results.json" <<'PY'
import json, re, sys
prefixes = ("raw/", "captures/", "rulesets/", "guests/", "plots/")
def walk(o):
    if isinstance(o, dict):
        for v in o.values():
            yield from walk(v)
    elif isinstance(o, list):
        for v in o:
            yield from walk(v)
    elif isinstance(o, str) and o.startswith(prefixes):
        yield o
for n in sorted(set(walk(json.load(open(sys.argv[1]))))):
    print(n)
PY
)
count=0 missing=0
for n in $names; do
    count=$((count + 1))
    case "$n" in *..*) bad "results.json names '$n', which leaves the run directory"; continue ;; esac
    [ -f "$ex/$n" ] || { missing=$((missing + 1)); [ "$missing" -le 5 ] && echo "  missing: $ex/$n"; }
done
if [ "$count" -gt 0 ] && [ "$missing" = 0 ]; then
    ok "every one of the $count files results.json names is in $ex"
else
    bad "$missing of the $count files results.json names are missing from $ex"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
