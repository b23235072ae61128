#!/usr/bin/env bash
# Nothing in a results.json is code, and nothing in it reaches the terminal as an escape: for
# every string field of two fixtures in turn (one instance per field of the schema), a copy
# whose value is a payload of backquotes, $(...), system("..."), quotes, newlines, and ESC, OSC,
# BEL and C1 sequences. 'meshlab report' on it exits 0 (rendered, inert) or 2 naming the field's
# JSON pointer, and always 2 for a name (a path, guest, lab, node or profile name: the
# registry's and the topology's rules); 'meshlab compare' likewise. No payload file is ever
# created (gnuplot runs in this test's directory), a refused file leaves no report, and
# neither stdout nor stderr holds a raw control character besides newline and tab.
set -u
bin=${MESHLAB_BIN:-build/meshlab}
[ -x "$bin" ] || { echo "cli_report_inert: skipped: $bin not built"; exit 77; }
command -v python3 >/dev/null || { echo "cli_report_inert: skipped: no python3"; exit 77; }
bin=$(realpath "$bin")
src=$PWD
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }

# Names: what the schema's name patterns cover; each must be refused, at its own pointer.
names='^/(lab|profile/name|fixed_rate/slowest_path|order/[0-9]+/path|guests/[0-9]+/name|paths/[0-9]+/(name|from|to|hub)|nat_observed/[^/]+/node|nat_matrix/[0-9]+/(a_node|b_node|path|dataplane))$'

python3 - "$tmp/v" "$src/tests/data/results-v2-nat.json" "$src/tests/data/results-v2-matrix.json" <<'PY'
import json, os, re, sys

out = sys.argv[1]
payload = ("x`touch PWNED-bq`'$(touch PWNED-sh)\"'.system(\"touch PWNED-sys\").'\n"
           "!touch PWNED-bang\nsystem(\"touch PWNED-nl\")\x1b[2J\x1b]0;pwned\x07\x9b31m\ty")
seen = set()
n = 0
for fixture in sys.argv[2:]:
    doc = json.load(open(fixture))
    places = []

    def walk(x, path):
        if isinstance(x, str):
            places.append(path)
        elif isinstance(x, dict):
            for k, v in x.items():
                walk(v, path + [k])
        elif isinstance(x, list):
            for i, v in enumerate(x):
                walk(v, path + [i])

    walk(doc, [])
    for path in places:
        # one instance per field: indices, cells and guests stand for all of their kind
        general = "/".join("*" if isinstance(p, int) else
                           "CELL" if re.fullmatch(r"(forward|reverse|bidir)-\d+(-fixed)?", p) else
                           "GUEST" if p in ("hub", "client-a", "client-b") else p
                           for p in path)
        if general in seen:
            continue
        seen.add(general)
        d = json.load(open(fixture))
        node = d
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = payload
        n += 1
        os.makedirs(f"{out}/{n}", mode=0o700)
        json.dump(d, open(f"{out}/{n}/results.json", "w"))
        pointer = "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)
        with open(f"{out}/list", "a") as f:
            f.write(f"{n}\t{pointer}\t{fixture}\n")
PY
[ -s "$tmp/v/list" ] && ok || { bad "no variants generated"; echo "$passed passed, $failed failed"; exit 1; }

mkdir "$tmp/cwd"
cd "$tmp/cwd" || exit 1
# raw C0 (but \t \n), DEL, and C1 (U+0080..U+009F, UTF-8)
controls=$'[\x01-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]'
clean() { ! LC_ALL=C grep -aEq "$controls" "$1"; }
count=0
while IFS=$'\t' read -r n pointer fixture; do
    count=$((count + 1))
    run=$tmp/v/$n
    "$bin" report "$run" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    what="report with a payload at $pointer"
    if [ "$rc" = 0 ]; then
        [ -s "$run/report.md" ] && ok || bad "$what: exit 0 without report.md"
    elif [ "$rc" = 2 ]; then
        grep -qF -- ": at $pointer: " "$tmp/err" && ok ||
            bad "$what: exit 2 without naming $pointer: $(head -c 300 "$tmp/err")"
        [ ! -e "$run/report.md" ] && [ ! -e "$run/plots" ] && ok || bad "$what: refused, yet written"
    else
        bad "$what: exit $rc: $(head -c 300 "$tmp/err")"
    fi
    if [[ $pointer =~ $names ]]; then
        [ "$rc" = 2 ] && ok || bad "$what: a name that breaks the name rule was accepted (exit $rc)"
    fi
    clean "$tmp/out" && clean "$tmp/err" && ok || bad "$what: a raw control character reached the terminal"

    "$bin" compare "$run/results.json" "$fixture" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    what="compare with a payload at $pointer"
    if [ "$rc" = 2 ]; then
        grep -qF -- ": at $pointer: " "$tmp/err" && ok || bad "$what: exit 2 without naming $pointer"
    elif [ "$rc" != 0 ]; then
        bad "$what: exit $rc: $(head -c 300 "$tmp/err")"
    fi
    if [[ $pointer =~ $names ]]; then
        [ "$rc" = 2 ] && ok || bad "$what: a name that breaks the name rule was accepted (exit $rc)"
    fi
    clean "$tmp/out" && clean "$tmp/err" && ok || bad "$what: a raw control character reached the terminal"
done <"$tmp/v/list"
[ "$count" -ge 90 ] && ok || bad "only $count string fields tried"

pwned=$(find "$tmp" -name 'PWNED*' | head -3)
[ -z "$pwned" ] && ok || bad "a payload ran: $pwned"
command -v gnuplot >/dev/null || echo "note: gnuplot is not installed; the pictures were not drawn"

echo "$passed passed, $failed failed ($count fields)"
[ "$failed" = 0 ]
