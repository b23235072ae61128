#!/usr/bin/env bash
# meshlab over a real remote libvirt connection (issue 20, item 1): sshd started here on
# loopback with keys made for this test, and qemu+ssh://root@127.0.0.1:PORT/system to this
# machine's libvirtd through it. check describes that host from its libvirt; status and down
# find a lab there, by --connect and by the URI its state file records; a down over it
# removes the lab's objects on that host and leaves this machine's pool directory of the same
# name (another lab's, as far as a remote host is concerned). The "lab" is a tagged network
# defined, never started: no bridge, no traffic. ssh's own files (known_hosts) stay in the
# test's directory.
set -u
bin=${MESHLAB_BIN:-build/meshlab}
skip() {
    echo "cli_connect_ssh: skipped: $1"
    [ "${MESHLAB_E2E_REQUIRED:-0}" = 1 ] && { echo "FAIL - MESHLAB_E2E_REQUIRED=1: $1"; exit 1; }
    exit 77
}
[ -x "$bin" ] || skip "$bin not built"
[ "$(id -u)" = 0 ] || skip "needs root (sshd, root's libvirtd)"
virsh -c qemu:///system version >/dev/null 2>&1 || skip "libvirtd does not answer (scripts/deps.sh starts it)"
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

tmp=$(mktemp -d /tmp/meshlab-cli-ssh-XXXXXX)
lab=sshlab$$
net=meshlab-$lab
cleanup() {
    [ -f "$tmp/sshd.pid" ] && kill "$(cat "$tmp/sshd.pid")" 2>/dev/null
    virsh -c qemu:///system net-undefine "$net" >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT
export MESHLAB_STATE_DIR=$tmp/state MESHLAB_CACHE_DIR=$tmp/cache
unset MESHLAB_URI

. "$(dirname "$0")/sshd_lib.sh"
. "$(dirname "$0")/controller_lib.sh"
sshd_start "$tmp" || skip "$ssh_why"
port=$ssh_port uri=$ssh_uri shown=$ssh_shown

"$bin" check --connect "$uri" --json >"$tmp/check.json" 2>"$tmp/err"
check "check over ssh: libvirt answers, remote, named $(hostname), emulator found, no local probes ($(head -c 300 "$tmp/err"))" \
    "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); l=d[\"libvirt\"]; \
assert l[\"ok\"] and l[\"remote\"] and l[\"uri\"] == sys.argv[2] and l[\"host\"] == sys.argv[3] \
and l[\"host_cpus\"] >= 1 and l[\"host_emulator\"] and d[\"qemu\"] is None and d[\"accelerator\"] is None, d' \
'$tmp/check.json' '$shown' '$(hostname)'"
check "check's document holds no key file" "! grep -q '$tmp/key' '$tmp/check.json'"
"$bin" check --connect "$uri" >"$tmp/check.txt" 2>&1
check "check's text describes the remote host: $(grep 'remote host' "$tmp/check.txt")" \
    "grep -q '^info  remote host' '$tmp/check.txt' && ! grep -q '^ok    memory' '$tmp/check.txt'"

# A lab on that host: its network, defined and never started, with the bridge name meshlab
# gives the lab (mlb and the first 8 hex digits of the SHA-256 of its name: topology/plan.c) and
# the UUID that carries this controller (tests/controller_lib.sh).
bridge=mlb$(printf %s "$lab" | sha256sum | cut -c1-8)
controller=$("$bin" status --connect test:///default --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["controller"]["id"])')
cat >"$tmp/net.xml" <<EOF
<network><name>$net</name><uuid>$(controller_uuid "$controller" "meshlab network $net")</uuid><bridge name='$bridge' stp='off'/></network>
EOF
virsh -c qemu:///system net-define "$tmp/net.xml" >/dev/null
"$bin" status --connect "$uri" --json >"$tmp/status.json" 2>"$tmp/err"
check "status over ssh finds lab $lab, and shows the URI without its key file ($(head -c 200 "$tmp/err"))" \
    "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); \
assert d[\"uri\"] == sys.argv[2] and sys.argv[3] in [l[\"name\"] for l in d[\"labs\"]], d' '$tmp/status.json' '$shown' '$lab'"

# Its record on this machine, as up writes it, and a pool directory of the same name here.
mkdir -p "$tmp/state/labs" "$tmp/state/pools/$lab"
printf '{"lab": "%s", "uri": "%s"}\n' "$lab" "$uri" >"$tmp/state/labs/$lab.json"
: >"$tmp/state/pools/$lab/hub-overlay.qcow2"
out=$("$bin" status 2>&1)
check "status on this machine's libvirt says lab $lab is on the ssh host ($out)" \
    "grep -q \"lab $lab is on $shown:\" <<<\"\$out\""
"$bin" down "$lab" >"$tmp/down.out" 2>"$tmp/down.err"
rc=$?
check "down without --connect goes where the state says and exits 0 (rc $rc): $(cat "$tmp/down.err")" "[ $rc = 0 ]"
check "it removed the network on that host: $(tr '\n' ';' <"$tmp/down.out")" \
    "grep -q 'removed network $net' '$tmp/down.out' && ! virsh -c qemu:///system net-info '$net' >/dev/null 2>&1"
check "and the lab's state file" "[ ! -e '$tmp/state/labs/$lab.json' ]"
check "and left this machine's pool directory of that name alone" "[ -e '$tmp/state/pools/$lab/hub-overlay.qcow2' ]"
"$bin" down --connect "$uri" "$lab" >"$tmp/down.out" 2>&1
check "down --connect again: nothing to remove ($(cat "$tmp/down.out"))" "grep -q 'lab $lab: nothing to remove' '$tmp/down.out'"
check "ssh's known_hosts stayed in the test's directory" "[ -s '$tmp/known_hosts' ]"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
