#!/usr/bin/env bash
# docs/examples/ is a real run, and its report is what this meshlab renders from its
# results.json: `meshlab report` on a copy gives report.md back byte for byte, and the
# results document is valid against the published schema.
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
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
