#!/usr/bin/env bash
# Every tests/data/results-v2-*.json is valid against docs/results.schema.json, and the checker
# (tests/check_results_schema.py) rejects what the contract forbids: a key whose unit hides in
# a wrong name, a status outside its enum, the old schema, a missing required key.
set -u

py=/usr/bin/python3
checker=tests/check_results_schema.py
if [[ ! -x $py ]] || ! $py -c 'import jsonschema' 2>/dev/null; then
    echo "skip: $py with the jsonschema module is missing (python3-jsonschema, scripts/deps.sh)"
    exit 77
fi

passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { passed=$((passed + 1)); }
bad() {
    failed=$((failed + 1))
    echo "FAIL: $*" >&2
}

shopt -s nullglob
docs=(tests/data/results-v2-*.json)
if [[ ${#docs[@]} -ge 1 ]]; then
    ok
else
    bad "no tests/data/results-v2-*.json to validate"
fi
for doc in "${docs[@]}"; do
    if out=$($py "$checker" "$doc" 2>&1); then
        ok
    else
        bad "$doc does not validate: $out"
    fi
done

# mutate NAME PYTHON-STATEMENT: a copy of the example with d (the document) changed.
example=tests/data/results-v2-schema-example.json
mutate() {
    $py - "${from:-$example}" "$tmp/$1.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}

# rejects NAME PYTHON-STATEMENT EXPECTED-TEXT: the checker exits 1 and names what and where.
rejects() {
    mutate "$1" "$2" || { bad "$1: could not make the mutated copy"; return; }
    out=$($py "$checker" "$tmp/$1.json" 2>&1)
    rc=$?
    if [[ $rc -eq 1 && $out == *"$3"* && $out == *INVALID* ]]; then
        ok
    else
        bad "$1: checker exited $rc, expected 1 and '$3' in: $out"
    fi
}

rejects pass-rss-kb 'd["paths"][0]["passes"][0]["rss_kb"] = 14000' \
    "at /paths/0/passes/0: Additional properties are not allowed ('rss_kb' was unexpected)"
rejects status-bogus 'd["paths"][0]["status"] = "bogus"' "at /paths/0/status: 'bogus' is not one of"
rejects schema-v1 'd["schema"] = "meshlab-results/1"' "at /schema: 'meshlab-results/3' was expected"
rejects no-passes 'del d["paths"][0]["passes"]' "at /paths/0: 'passes' is a required property"
rejects cell-rate 'd["paths"][0]["cells"]["forward-1"]["rate"] = "half"' \
    "at /paths/0/cells/forward-1/rate: 'half' is not one of"
rejects not-run-with-figure 'd["paths"][1]["median_bits_per_second"] = 1e8' \
    "at /paths/1/median_bits_per_second: 100000000.0 is not of type 'null'"
rejects observed-kb 'd["paths"][0]["observed"] = {"hub": {"headscale_rss_kb": 1}}' \
    "at /paths/0/observed/hub"

# the NAT matrix (from=: mutations of the NAT fixture): a wrong word is refused, wherever it is
nat=tests/data/results-v2-nat.json
from=$nat rejects nat-outcome-maybe 'd["nat_matrix"][0]["outcome"] = "maybe"' \
    "at /nat_matrix/0/outcome: 'maybe' is not one of"
from=$nat rejects nat-repeat-not-run 'd["nat_matrix"][0]["repeats"][0]["outcome"] = "not-run"' \
    "at /nat_matrix/0/repeats/0/outcome: 'not-run' is not one of"
from=$nat rejects nat-type-typo 'd["nat_matrix"][0]["a_nat"] = "symetric"' \
    "at /nat_matrix/0/a_nat: 'symetric' is not one of"
from=$nat rejects nat-mapping-word 'd["nat_observed"]["symmetric"]["mapping"] = "endpoint-dependent"' \
    "at /nat_observed/symmetric/mapping: 'endpoint-dependent' is not one of"
from=$nat rejects nat-observed-everyday-name 'd["nat_observed"]["hard"] = d["nat_observed"].pop("symmetric")' \
    "at /nat_observed: 'hard' is not one of"
from=$nat rejects nat-not-run-with-repeats 'd["nat_matrix"][6]["repeats"] = d["nat_matrix"][0]["repeats"]' \
    "at /nat_matrix/6/repeats"
from=$nat rejects nat-capture-absolute 'd["nat_matrix"][0]["repeats"][0]["captures"][0] = "/tmp/x.pcap"' \
    "at /nat_matrix/0/repeats/0/captures/0"
from=$nat mutate nat-unchanged 'pass'
if $py "$checker" "$tmp/nat-unchanged.json" >/dev/null 2>&1; then
    ok
else
    bad "the unchanged copy of $nat does not validate"
fi

# the unchanged copy passes through the same mutate step: the rejections are the mutations'
mutate unchanged 'pass'
if $py "$checker" "$tmp/unchanged.json" >/dev/null 2>&1; then
    ok
else
    bad "the unchanged copy of $example does not validate"
fi

# without the module (python -S: no site-packages) the checker skips, never passes silently
$py -S "$checker" "$example" >/dev/null 2>&1
rc=$?
if [[ $rc -eq 77 ]]; then
    ok
else
    bad "without the jsonschema module the checker exited $rc, expected 77 (skip)"
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
