#!/usr/bin/env bash
# A lab over several hosts (issue 20, item 2), what is refused before anything is made, on
# libvirt's test driver (two URIs of it are two "hosts" here): a topology with hosts and
# --connect or MESHLAB_URI; a host whose URI has no shell (qemu+tls://); an underlay address that
# is not the host's (read on that host before any state, network or pool); and down of a lab
# whose other host does not answer, which says which, keeps the record, and removes the rest.
# No traffic leaves this machine: the only hosts named are loopback and the test driver.
set -u
bin=${MESHLAB_BIN:-build/meshlab}
[ -x "$bin" ] || { echo "cli_hosts: skipped: $bin not built"; exit 77; }
command -v ip >/dev/null || { echo "cli_hosts: skipped: no ip (iproute2)"; exit 77; }
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

tmp=$(mktemp -d /tmp/meshlab-cli-hosts-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export MESHLAB_STATE_DIR=$tmp/state MESHLAB_CACHE_DIR=$tmp/cache
unset MESHLAB_URI

# topo HOSTS: the two-host lab of tests/data/e2e-hosts.yaml with its hosts replaced, named
# cli-hosts: down of a lab over hosts removes its VXLAN devices over each host's shell, and a
# test:///default host is this machine's, so the name must be no real lab's (e2e_hosts' lab,
# killed mid-run, once left an mlx device of e2e-hosts that this test's down met as another
# controller's).
topo() {
    python3 - tests/data/e2e-hosts.yaml "$tmp/t.yaml" "$1" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
t = re.sub(r"hosts:\n(  .*\n)+", "hosts:\n" + sys.argv[3] + "\n", t)
t = re.sub(r"^name: e2e-hosts$", "name: cli-hosts", t, flags=re.M)
open(sys.argv[2], "w").write(t)
PY
}

topo "  here: {uri: 'test:///default', underlay: 127.0.0.1}
  there: {uri: 'test:///default?no_tty=1', underlay: 127.0.0.2}"
"$bin" validate "$tmp/t.yaml" >"$tmp/out" 2>&1
check "validate accepts two hosts: $(head -c 200 "$tmp/out")" "[ $? = 0 ]"
for form in "--connect test:///default" "MESHLAB_URI"; do
    if [ "$form" = MESHLAB_URI ]; then
        MESHLAB_URI=test:///default "$bin" up "$tmp/t.yaml" >"$tmp/out" 2>"$tmp/err"
    else
        "$bin" up $form "$tmp/t.yaml" >"$tmp/out" 2>"$tmp/err"
    fi
    rc=$?
    check "up with $form and a topology that names its hosts exits 2 (rc $rc): $(head -c 300 "$tmp/err")" \
        "[ $rc = 2 ] && grep -q 'the topology places its nodes on hosts' '$tmp/err'"
done
check "nothing recorded" "[ ! -e '$tmp/state/labs/cli-hosts.json' ]"

# A host without a shell: refused before any connection.
topo "  here: {uri: 'test:///default', underlay: 127.0.0.1}
  there: {uri: 'qemu+tls://127.0.0.1/system', underlay: 127.0.0.2}"
"$bin" up "$tmp/t.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a host of qemu+tls:// is refused: no shell to stitch with (rc $rc): $(head -c 300 "$tmp/err")" \
    "[ $rc = 2 ] && grep -q 'host there: a lab over several hosts stitches their bridges' '$tmp/err' && grep -q 'not an SSH URI' '$tmp/err'"
check "nothing recorded" "[ ! -e '$tmp/state/labs/cli-hosts.json' ]"

# An underlay address that is not the host's: read on that host before anything is made.
topo "  here: {uri: 'test:///default', underlay: 127.0.0.1}
  there: {uri: 'test:///default?no_tty=1', underlay: 192.0.2.254}"
ip -o route get 192.0.2.254 2>/dev/null | grep -q '^local ' && { echo "cli_hosts: skipped: 192.0.2.254 is this machine's"; exit 77; }
"$bin" up "$tmp/t.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "an underlay that is not the host's fails up, naming host and address (rc $rc): $(head -c 300 "$tmp/err")" \
    "[ $rc = 1 ] && grep -q 'host there: underlay 192.0.2.254 is no address of this host' '$tmp/err'"
check "before any state, pool directory or network" \
    "[ ! -e '$tmp/state/labs/cli-hosts.json' ] && [ -z \"\$(ls '$tmp/state/pools' 2>/dev/null)\" ] && ! grep -q 'define' '$tmp/out'"

# down of a lab recorded over two hosts, one of which does not answer: the other's share goes,
# the unanswering host is named, the record kept; exit 1.
mkdir -p "$tmp/state/labs"
cat >"$tmp/state/labs/cli-hosts.json" <<'JSON'
{"lab": "cli-hosts", "uri": "test:///default",
 "hosts": [{"name": "here", "uri": "test:///default", "nodes": ["hub"]},
           {"name": "there", "uri": "qemu+ssh://root@127.0.0.1:1/system?no_verify=1&no_tty=1", "nodes": ["client-a"]}]}
JSON
"$bin" down cli-hosts >"$tmp/out" 2>"$tmp/err"
rc=$?
check "down with host 'there' unreachable exits 1 and names it (rc $rc): $(tail -n 2 "$tmp/err" | head -c 400)" \
    "[ $rc = 1 ] && grep -q 'host there (qemu+ssh://root@127.0.0.1:1/system)' '$tmp/err' && grep -q 'not removed from host(s) there' '$tmp/err'"
check "the record is kept for down again" "[ -f '$tmp/state/labs/cli-hosts.json' ]"
"$bin" down --connect test:///default cli-hosts >"$tmp/out" 2>"$tmp/err"
check "down --connect of a lab over hosts is refused: its hosts are in its record" \
    "[ $? = 2 ] && grep -q 'spread over hosts' '$tmp/err'"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
