#!/usr/bin/env bash
# meshlab export, as root, on a run directory someone may have sent and into directories other
# users may control (issue 36; the 2026-12-04 audit's findings 3, 11, 12 and the export's share
# of item 2): --to in a directory another user owns or can write, or with a symbolic link on
# the way, is refused with exit 2 before anything is written; export reads only RUN's own
# regular files (never the topology results.json names, never through a link, never a FIFO) and
# its errors quote none of them; --hub-address is an IP address or an RFC 1123 name; --verify
# never connects to the libvirt hosts a run's topology names unless --connect names the one.
set -u
bin=${MESHLAB_BIN:-build/meshlab}
[ -x "$bin" ] || { echo "cli_export_safety: skipped: $bin not built"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "cli_export_safety: skipped: needs root to give directories to another user"; exit 77; }
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

tmp=$(mktemp -d /tmp/meshlab-cli-export-safety-XXXXXX)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
export MESHLAB_STATE_DIR=$tmp/state MESHLAB_CACHE_DIR=$tmp/cache
unset MESHLAB_URI
have_nft=0
command -v nft >/dev/null && nft -c -f /dev/null 2>/dev/null && have_nft=1

# A run directory as `meshlab run` leaves one: results.json, topology.yaml, the hub's rulesets.
make_run() {
    mkdir -m 700 "$1"
    cp tests/data/results-v2-matrix.json "$1/results.json"
    cp topologies/three-guest.yaml "$1/topology.yaml"
    for p in plain wireguard-hub nebula-relay tailscale-direct tailscale-relay; do
        mkdir -p "$1/rulesets/$p"
        cp tests/data/ruleset-hub.nft "$1/rulesets/$p/hub.nft"
    done
}
run=$tmp/run
make_run "$run"
export_to() { "$bin" export --hub-address 203.0.113.10 --to "$1" "${2:-$run}" >"$tmp/out" 2>"$tmp/err"; }

# --to's directory belongs to nobody: nobody could swap the stage while it is written.
mkdir -m 755 "$tmp/foreign"; chown 65534:65534 "$tmp/foreign"
export_to "$tmp/foreign/out"; rc=$?
check "--to in nobody's directory exits 2 (got $rc)" "[ $rc = 2 ]"
check "it says whose: $(head -c 200 "$tmp/err")" "grep -q 'belongs to uid 65534' '$tmp/err'"
check "nothing was written there" "[ -z \"\$(ls -A '$tmp/foreign')\" ]"

# A symbolic link on the way, nobody's (the audit's repro 2) or root's own: none is followed.
mkdir -m 700 "$tmp/target" "$tmp/target2"
mkdir -m 755 "$tmp/userdir"; ln -s "$tmp/target" "$tmp/userdir/l"
chown -h 65534:65534 "$tmp/userdir/l"; chown 65534:65534 "$tmp/userdir"
ln -s "$tmp/target2" "$tmp/rootlink"
for to in "$tmp/userdir/l/exp" "$tmp/rootlink/exp"; do
    export_to "$to"; rc=$?
    check "--to $to exits 2 (got $rc)" "[ $rc = 2 ]"
    check "it names the link: $(head -c 200 "$tmp/err")" "grep -q \"'[a-z]*l[a-z]*' on its way is a symbolic link\" '$tmp/err'"
done
check "nothing was written where the links point" "[ -z \"\$(ls -A '$tmp/target')\" ] && [ -z \"\$(ls -A '$tmp/target2')\" ]"

# Ours, but anyone may write it.
mkdir -m 777 "$tmp/open"
export_to "$tmp/open/out"; rc=$?
check "--to in a world-writable directory exits 2 (got $rc)" "[ $rc = 2 ] && grep -q 'writable by everyone' '$tmp/err'"
check "nothing was written in it" "[ -z \"\$(ls -A '$tmp/open')\" ]"

if [ "$have_nft" = 1 ]; then
    mkdir -m 700 "$tmp/good"
    export_to "$tmp/good/out"; rc=$?
    check "--to in a directory of root's own exports (rc $rc): $(head -c 300 "$tmp/err")" "[ $rc = 0 ] && [ -s '$tmp/good/out/manifest.json' ]"
    check "and leaves no stage beside it" "[ \"\$(ls -A '$tmp/good')\" = out ]"
else
    echo "note: no nft (or not allowed here): the export that succeeds was not tried"
fi

# The run's topology: RUN/topology.yaml alone, never the path results.json names, never a link,
# never a FIFO; the errors name the file and never quote a secret.
printf 'root:$y$j9T$SECRETHASHabcdef$xyz:19000:0:99999:7:::\n' >"$tmp/secret.txt"; chmod 600 "$tmp/secret.txt"
make_run "$tmp/named"
rm "$tmp/named/topology.yaml"
python3 - "$tmp/named/results.json" "$tmp/secret.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["topology"] = sys.argv[2]
json.dump(d, open(sys.argv[1], "w"))
PY
export_to "$tmp/x" "$tmp/named"; rc=$?
check "a run without topology.yaml exits 2 (got $rc)" "[ $rc = 2 ] && grep -q 'named/topology.yaml' '$tmp/err'"
check "the file results.json names is not read: $(head -c 300 "$tmp/err")" "! grep -q SECRETHASH '$tmp/err' '$tmp/out'"
make_run "$tmp/linked"
ln -sf "$tmp/secret.txt" "$tmp/linked/topology.yaml"
export_to "$tmp/x" "$tmp/linked"; rc=$?
check "a linked topology.yaml exits 2 (got $rc)" "[ $rc = 2 ] && grep -q 'symbolic link' '$tmp/err'"
check "and is not quoted: $(head -c 300 "$tmp/err")" "! grep -q SECRETHASH '$tmp/err' '$tmp/out'"
# The run's own topology.yaml with a secret where a key belongs: refused at its place, unquoted.
make_run "$tmp/keyed"
{ cat "$tmp/keyed/topology.yaml"; cat "$tmp/secret.txt"; } >"$tmp/keyed/t" && mv "$tmp/keyed/t" "$tmp/keyed/topology.yaml"
export_to "$tmp/x" "$tmp/keyed"; rc=$?
check "a run's topology.yaml with an unknown key exits 2 at its line, the key unquoted (rc $rc): $(head -c 300 "$tmp/err")" \
    "[ $rc = 2 ] && grep -q 'keyed/topology.yaml:[0-9]*:1: unknown key' '$tmp/err' && ! grep -q SECRETHASH '$tmp/err' '$tmp/out'"
make_run "$tmp/fifo"
rm "$tmp/fifo/topology.yaml"; mkfifo "$tmp/fifo/topology.yaml"
start=$(date +%s)
timeout 20 "$bin" export --hub-address 203.0.113.10 --to "$tmp/x" "$tmp/fifo" >/dev/null 2>"$tmp/err"; rc=$?
took=$(( $(date +%s) - start ))
check "a FIFO as topology.yaml exits 2 at once (rc $rc, ${took} s)" "[ $rc = 2 ] && [ $took -le 5 ] && grep -q 'not a regular file' '$tmp/err'"
make_run "$tmp/rlinked"
mv "$tmp/rlinked/results.json" "$tmp/results-elsewhere.json"; ln -s "$tmp/results-elsewhere.json" "$tmp/rlinked/results.json"
export_to "$tmp/x" "$tmp/rlinked"; rc=$?
check "a linked results.json exits 2 (got $rc)" "[ $rc = 2 ] && grep -q 'results.json: it is, or is inside, a symbolic link' '$tmp/err'"
make_run "$tmp/rulelink"
mv "$tmp/rulelink/rulesets" "$tmp/rulesets-elsewhere"; ln -s "$tmp/rulesets-elsewhere" "$tmp/rulelink/rulesets"
export_to "$tmp/rulelink-out" "$tmp/rulelink"; rc=$?
check "linked rulesets/ exit 2 (got $rc)" "[ $rc = 2 ] && grep -q 'symbolic link' '$tmp/err'"
check "and nothing was exported" "[ ! -e '$tmp/rulelink-out' ] && [ -z \"\$(ls -A '$tmp' | grep '^\\.rulelink-out')\" ]"

# --hub-address: an IP address or an RFC 1123 name, refused before the run is read.
for addr in a..b 1e100 -a.example a-.example .example example. a_b.example 10.0.0.256 127.1 \
    "$(printf 'x%.0s' $(seq 64)).example"; do
    "$bin" export --hub-address "$addr" --to "$tmp/x" "$run" >/dev/null 2>"$tmp/err"; rc=$?
    check "--hub-address '$addr' exits 2 (got $rc)" "[ $rc = 2 ] && grep -qF -- \"--hub-address '$addr' is neither an IP address nor a DNS name\" '$tmp/err'"
    "$bin" export --hub-address 203.0.113.10 --client-address "client-a=$addr" --to "$tmp/x" "$run" >/dev/null 2>"$tmp/err"; rc=$?
    check "--client-address client-a=$addr exits 2 (got $rc)" "[ $rc = 2 ] && grep -q 'neither an IP address nor a DNS name' '$tmp/err'"
done
for addr in vpn.example.net 203.0.113.10 2001:db8::10 x1.example hub-1.example.org; do
    "$bin" export --hub-address "$addr" --to "$tmp/x" "$tmp/nosuch" >/dev/null 2>"$tmp/err"
    check "--hub-address '$addr' is taken: $(head -c 160 "$tmp/err")" "! grep -q 'neither an IP address' '$tmp/err'"
done
[ ! -e "$tmp/x" ] && ok "no refused export wrote --to" || bad "a refused export wrote $tmp/x"

# --verify and a topology over several libvirt hosts: the run directory does not choose where
# meshlab connects. Refused before anything is made; --connect on the command line names the
# one host to verify on.
hosts=$tmp/hosts
mkdir -m 700 "$hosts"
cp tests/data/results-hosts.json "$hosts/results.json"
sed 's|@SSH_URI@|qemu+ssh://root@198.51.100.99/system|' tests/data/e2e-hosts.yaml >"$hosts/topology.yaml"
start=$(date +%s)
"$bin" export --verify --hub-address 203.0.113.10 --to "$tmp/hosts-out" "$hosts" >/dev/null 2>"$tmp/err"; rc=$?
took=$(( $(date +%s) - start ))
check "--verify of a run over hosts exits 2 at once (rc $rc, ${took} s)" "[ $rc = 2 ] && [ $took -le 5 ]"
check "it says why and what to do: $(head -c 400 "$tmp/err")" "grep -q 'topology.yaml:[0-9]*:[0-9]*: the run.s topology places its lab on libvirt hosts' '$tmp/err' && grep -q 'give --connect URI' '$tmp/err'"
check "no lab run directory, no export, no lab state" "[ ! -e '$hosts/verify' ] && [ ! -e '$tmp/hosts-out' ] && [ ! -e '$tmp/state/labs' ]"
MESHLAB_URI=test:///default "$bin" export --verify --hub-address 203.0.113.10 --to "$tmp/hosts-out" "$hosts" >/dev/null 2>"$tmp/err"; rc=$?
check "MESHLAB_URI is not the command line: still refused (rc $rc)" "[ $rc = 2 ] && grep -q 'places its lab on libvirt hosts' '$tmp/err'"
"$bin" export --connect test:///default --verify --hub-address 203.0.113.10 --to "$tmp/hosts-out" "$hosts" >/dev/null 2>"$tmp/err"; rc=$?
check "with --connect the hosts are no reason to refuse: $(head -c 300 "$tmp/err")" "! grep -q 'places its lab on libvirt hosts' '$tmp/err' && [ ! -e '$tmp/hosts-out' ]"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
