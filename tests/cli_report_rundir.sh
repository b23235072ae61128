#!/usr/bin/env bash
# A run directory is data that people send each other. 'meshlab report' and 'meshlab compare'
# read only its own regular files: a results.json that is a symbolic link (here to a 0600
# secret shaped like a shadow line), a FIFO or a directory is refused, and so is a run directory
# given as a link; no message quotes what a file holds (not JSON, a field of the wrong type).
# A name, run id, path or node with a newline at its end breaks the schema's patterns ('$' is
# the very end, as in ECMA-262), at that field. report.html links only to files the run
# directory has, by plain relative names: text in results.json cannot forge a link.
set -u
bin=${MESHLAB_BIN:-build/meshlab}
[ -x "$bin" ] || { echo "cli_report_rundir: skipped: $bin not built"; exit 77; }
command -v python3 >/dev/null || { echo "cli_report_rundir: skipped: no python3"; exit 77; }
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
# run RC DESCRIPTION -- command...: the exit status, stdout and stderr (in $tmp/out, $tmp/err)
run() {
    local want=$1 what=$2; shift 3
    timeout 20 "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    [ "$rc" = "$want" ] && ok || bad "$what: exit $rc, wanted $want ($(head -c 400 "$tmp/err"))"
}
has() { grep -qF -- "$2" "$3" && ok || bad "$1: no '$2' in $(head -c 400 "$3")"; }
lacks() { grep -qF -- "$2" "$3" && bad "$1: '$2' in $(head -c 400 "$3")" || ok; }
secret_kept() { # DESCRIPTION: neither stdout nor stderr holds a byte of the secret
    cat "$tmp/out" "$tmp/err" >"$tmp/both"
    lacks "$1: the secret stays out of the output" "SECRETHASH" "$tmp/both"
    lacks "$1: the secret's line stays out of the output" "19000:0:99999" "$tmp/both"
}
# edit FROM TO PYTHON: a copy of the results document FROM with d changed
edit() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}
rundir() { mkdir -m 700 "$tmp/$1" && echo "$tmp/$1"; }

nat=tests/data/results-v2-nat.json
hosts=tests/data/results-hosts.json
secret=$tmp/secret
printf 'root:$y$j9T$SECRETHASHabcdef$xyz:19000:0:99999:7:::\n' >"$secret"
chmod 600 "$secret"

# results.json a link: to the secret, and to a valid document (the link is refused, not the
# content); nothing is written.
r=$(rundir link)
ln -s "$secret" "$r/results.json"
run 2 "report of a results.json linked to a secret" -- "$bin" report "$r"
secret_kept "report of a linked results.json"
has "the refusal names the file" "$r/results.json" "$tmp/err"
has "the refusal says it is a link" "symbolic link" "$tmp/err"
[ ! -e "$r/report.md" ] && [ ! -e "$r/report.html" ] && ok || bad "nothing written beside a link"
run 2 "compare of a run directory whose results.json is linked to a secret" -- \
    "$bin" compare "$r" "$nat"
secret_kept "compare of a linked results.json (directory)"
run 2 "compare of a results.json linked to a secret" -- "$bin" compare "$nat" "$r/results.json"
secret_kept "compare of a linked results.json (file)"
has "compare says it is a link" "symbolic link" "$tmp/err"
r=$(rundir link-valid)
ln -s "$(realpath "$nat")" "$r/results.json"
run 2 "report of a results.json linked to a valid document" -- "$bin" report "$r"
run 2 "compare of a results.json linked to a valid document" -- "$bin" compare "$r" "$nat"
cp "$nat" "$tmp/real.json"
ln -s "$tmp/real.json" "$tmp/linked.json"
run 2 "compare of a results file that is a link" -- "$bin" compare "$tmp/linked.json" "$nat"
# the run directory itself a link
r=$(rundir real)
cp "$nat" "$r/results.json"
ln -s "$r" "$tmp/dirlink"
run 2 "report of a run directory given as a link" -- "$bin" report "$tmp/dirlink"
has "report says the directory is a link" "symbolic link" "$tmp/err"
run 2 "compare of a run directory given as a link" -- "$bin" compare "$tmp/dirlink" "$nat"
run 0 "report of the directory itself" -- "$bin" report "$r"
run 0 "compare of the directory itself" -- "$bin" compare "$r" "$nat"

# not a regular file: a FIFO (never opened, so never waited on) and a directory
r=$(rundir fifo)
mkfifo "$r/results.json"
run 2 "report of a FIFO results.json" -- "$bin" report "$r"
has "report says it is not a regular file" "not a regular file" "$tmp/err"
run 2 "compare of a FIFO results.json" -- "$bin" compare "$r" "$nat"
r=$(rundir dir)
mkdir "$r/results.json"
run 2 "report of a directory results.json" -- "$bin" report "$r"

# The file's own bytes are never quoted: not JSON, JSON with more after it, a secret in a field
# of the wrong type or outside its words.
r=$(rundir notjson)
cp "$secret" "$r/results.json"
run 2 "report of a results.json that is not JSON" -- "$bin" report "$r"
secret_kept "report of a results.json that is not JSON"
has "the refusal names the place and the rule" \
    "$r/results.json is not JSON: at line 1, column 1 (byte 0): unexpected character" "$tmp/err"
run 2 "compare of a results.json that is not JSON" -- "$bin" compare "$nat" "$r"
secret_kept "compare of a results.json that is not JSON"
r=$(rundir trailing)
{ cat "$nat"; cat "$secret"; } >"$r/results.json"
run 2 "report of a document with a secret after it" -- "$bin" report "$r"
secret_kept "report of a document with a secret after it"
has "the refusal says something follows" "something follows the one JSON document" "$tmp/err"
r=$(rundir typed)
edit "$nat" "$r/results.json" 'd["paths"][0]["passes"][0]["seq"] = "root:$y$j9T$SECRETHASHabcdef$xyz:19000:0:99999:7:::"'
run 2 "report of a secret where a number belongs" -- "$bin" report "$r"
secret_kept "report of a secret where a number belongs"
has "the refusal names the field" "at /paths/0/passes/0/seq: the value is a string, not of type" "$tmp/err"
r=$(rundir word)
edit "$nat" "$r/results.json" 'd["paths"][0]["status"] = "root:$y$j9T$SECRETHASHabcdef$xyz:19000:0:99999:7:::"'
run 2 "compare of a secret where a word belongs" -- "$bin" compare "$r" "$nat"
secret_kept "compare of a secret where a word belongs"
has "the refusal names the field" "at /paths/0/status: the value is not one of" "$tmp/err"

# A newline at the end of a name is not a name ('$' is the very end); the same name without it
# is. report and compare name the field.
for field in 'lab|d["lab"] = "three-guest\n"' 'run_id|d["run_id"] += "\n"' \
    'paths/0/name|d["paths"][0]["name"] += "\n"' 'guests/0/name|d["guests"][0]["name"] += "\n"' \
    'nat_matrix/0/a_node|d["nat_matrix"][0]["a_node"] += "\n"' \
    'nat_observed/symmetric/node|d["nat_observed"]["symmetric"]["node"] += "\n"'; do
    pointer=/${field%%|*}
    r=$(rundir "nl-${pointer//\//-}")
    edit "$nat" "$r/results.json" "${field#*|}"
    run 2 "report of a newline after $pointer" -- "$bin" report "$r"
    has "report names $pointer" "$r/results.json: at $pointer: the text does not match the pattern" "$tmp/err"
    [ ! -e "$r/report.md" ] && ok || bad "report wrote report.md for a newline after $pointer"
    run 2 "compare of a newline after $pointer" -- "$bin" compare "$nat" "$r/results.json"
    has "compare names $pointer" "at $pointer: the text does not match the pattern" "$tmp/err"
    edit "$r/results.json" "$r/results.json" 'd["lab"] = d["lab"].rstrip("\n")
d["run_id"] = d["run_id"].rstrip("\n")
for x in d["paths"] + d["guests"] + d["nat_matrix"]:
    for k in ("name", "a_node"):
        if k in x:
            x[k] = x[k].rstrip("\n")
d["nat_observed"]["symmetric"]["node"] = d["nat_observed"]["symmetric"]["node"].rstrip("\n")'
    run 0 "report of the same document without the newline ($pointer)" -- "$bin" report "$r"
done
for f in tests/data/results-v2-*.json "$hosts" docs/examples/results.json; do
    r=$(rundir "valid-$(basename "$f" .json)")
    cp "$f" "$r/results.json"
    run 0 "report of $f" -- "$bin" report "$r"
done

# report.html: links to the captures the run directory has, none to a file it lacks, and none
# forged by text in results.json (fields the schema leaves free).
r=$(rundir links)
edit "$hosts" "$r/results.json" 'h = d["underlay"]["hosts"]
h["there"]["uri"] = "[the host](\\\\evil.example/steal)"
h["there"]["device"] = "[d](//evil.example/x)"
h["here"]["device"] = "<a href=\"javascript:alert(1)\">x</a>"
d["captures_filter"] = "[f](../x)"'
run 0 "report of forged links" -- env PATH="$tmp/none" "$bin" report "$r"
lacks "report.html: no link from \\\\ text" 'href="\' "$r/report.html"
lacks "report.html: no link from // text" 'href="//' "$r/report.html"
lacks "report.html: no script link" 'href="javascript' "$r/report.html"
[ "$(grep -o '<a href="[^#]' "$r/report.html" | wc -l)" = 0 ] && ok ||
    bad "report.html links outside its notes: $(grep -o '<a href="[^"]*"' "$r/report.html" | head -3)"
has "report.md escapes the text" '\[the host\](\\\\evil.example/steal)' "$r/report.md"
has "report.html shows the text as it was" '[the host](\\evil.example/steal)' "$r/report.html"
r=$(rundir captures)
edit "$nat" "$r/results.json" 'c = d["nat_matrix"][0]["repeats"][0]["captures"]
c[0] = "a/../../x.pcap"
c[1] = "\\\\evil.example/x.pcap"
d["captures_filter"] = "[f](captures/nat/nebula-none-none-2/hub.pcap)"'
mkdir -p "$r/captures/nat/nebula-none-none-2"
: >"$r/captures/nat/nebula-none-none-2/hub.pcap"
ln -s "$secret" "$r/captures/nat/nebula-none-none-2/client-a.pcap"
run 0 "report of a NAT run with some of its captures" -- env PATH="$tmp/none" "$bin" report "$r"
links=$(grep -o '<a href="[^#][^"]*"' "$r/report.html" | sort -u)
[ "$links" = '<a href="captures/nat/nebula-none-none-2/hub.pcap"' ] && ok ||
    bad "report.html links only to the capture the run directory has, not a link: $links"
has "report.md links the capture by its name" "[hub.pcap](captures/nat/nebula-none-none-2/hub.pcap)" "$r/report.md"
has "report.md leaves a path out of the directory as text" "): a/../../x.pcap, \\\\\\\\evil.example/x.pcap;" "$r/report.md"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
