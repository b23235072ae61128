#!/usr/bin/env bash
# down removes only its own (issue 36, item 5; audit round 4, findings 5 and 6), on libvirt's test
# driver: a shared host holds lab audit-demo, which another controller made (another machine,
# another state directory: its UUIDs and metadata say so). down refuses it, naming whose it is,
# and removes nothing; status says whose it is; up's refusal names it; down --foreign removes it.
# And a second spelling of the recorded URI (another socket=) is another libvirtd: down is refused
# and this machine's pool directory of a lab still running is kept.
set -u
bin=${MESHLAB_BIN:-build/meshlab}
[ -x "$bin" ] || { echo "cli_down_own: skipped: $bin not built"; exit 77; }
. "$(dirname "$0")/controller_lib.sh"
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

tmp=$(mktemp -d /tmp/meshlab-cli-down-own-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export MESHLAB_STATE_DIR=$tmp/state MESHLAB_CACHE_DIR=$tmp/cache
unset MESHLAB_URI

lab=audit-demo
other=0a1b2c3d4e5f
bridge=mlb$(printf %s "$lab" | sha256sum | cut -c1-8)
domain() {
    cat <<EOF
  <domain type='test'>
    <name>meshlab-$lab.$1</name>
    <uuid>$(controller_uuid "$other" "meshlab domain meshlab-$lab.$1")</uuid>
    <metadata>
      <meshlab:lab xmlns:meshlab='https://meshlab.invalid/xmlns/lab/1'>
        <meshlab:name>$lab</meshlab:name>
        <meshlab:run>20261204-120000-aaaaaa</meshlab:run>
        <meshlab:node>$1</meshlab:node>
        <meshlab:controller>$other</meshlab:controller>
        <meshlab:by>meshlab on otherhost, state directory /srv/other-meshlab</meshlab:by>
      </meshlab:lab>
    </metadata>
    <memory>1048576</memory>
    <vcpu>1</vcpu>
    <os><type>hvm</type></os>
  </domain>
EOF
}
{
    echo "<node>"
    domain hub
    domain client-a
    echo "  <network><name>meshlab-$lab</name><uuid>$(controller_uuid "$other" "meshlab network meshlab-$lab")</uuid><bridge name='$bridge'/></network>"
    echo "</node>"
} >"$tmp/host.xml"
host="test://$tmp/host.xml"
sed "s/^name: three-guest/name: $lab/" topologies/three-guest.yaml >"$tmp/$lab.yaml"

"$bin" down --connect "$host" "$lab" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "down of another controller's lab exits 2 (rc $rc): $(head -c 400 "$tmp/err")" "[ $rc = 2 ]"
check "it names whose lab it is, and says nothing was removed" \
    "grep -q 'not this controller.s' '$tmp/err' && grep -q 'meshlab on otherhost, state directory /srv/other-meshlab' '$tmp/err' && grep -q 'Nothing was removed' '$tmp/err' && grep -q -- 'down --foreign $lab' '$tmp/err'"
check "and removed nothing" "! grep -q removed '$tmp/out'"

"$bin" status --connect "$host" --json >"$tmp/status.json" 2>"$tmp/err"
check "status names the lab's objects as another controller's" \
    "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); l=[x for x in d[\"labs\"] if x[\"name\"] == \"$lab\"][0]; \
assert len(l[\"foreign\"]) == 3 and all(\"controller $other\" in f for f in l[\"foreign\"]), l' '$tmp/status.json'"
"$bin" status --connect "$host" >"$tmp/status.txt" 2>&1
check "status's text says so too" "grep -q \"not this controller's: domain meshlab-$lab.hub: controller $other's\" '$tmp/status.txt'"

"$bin" up --connect "$host" "$tmp/$lab.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "up of a lab of that name is refused before anything is made (rc $rc): $(head -c 400 "$tmp/err")" \
    "[ $rc != 0 ] && grep -q 'already exists on test://$tmp/host.xml, and it is not this controller.s' '$tmp/err' && grep -q 'meshlab on otherhost' '$tmp/err'"
check "and it says what to do: another name, or down --foreign" \
    "grep -q 'Give this lab another name' '$tmp/err' && grep -q -- 'down --foreign $lab' '$tmp/err'"
check "up made no state or pool" "[ ! -e '$tmp/state/labs/$lab.json' ] && [ ! -e '$tmp/state/pools/$lab' ]"

"$bin" down --foreign --connect "$host" "$lab" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "down --foreign removes it (rc $rc): $(tr '\n' ';' <"$tmp/out") $(head -c 300 "$tmp/err")" \
    "[ $rc = 0 ] && grep -q 'removed domain meshlab-$lab.hub' '$tmp/out' && grep -q 'removed domain meshlab-$lab.client-a' '$tmp/out' && grep -q 'removed network meshlab-$lab' '$tmp/out'"

# Finding 6: the state file records the lab on test:///default, with its pool directory here; a
# second spelling with another socket= is another libvirtd.
mkdir -p "$tmp/state/labs" "$tmp/state/pools/qdemo"
echo '{"lab": "qdemo", "uri": "test:///default"}' >"$tmp/state/labs/qdemo.json"
echo disk >"$tmp/state/pools/qdemo/hub.qcow2"
"$bin" down --connect 'test:///default?socket=/run/another-libvirtd/libvirt-sock' qdemo >"$tmp/out" 2>"$tmp/err"
rc=$?
check "down --connect with another socket= than the recorded URI exits 2 (rc $rc): $(head -c 400 "$tmp/err")" \
    "[ $rc = 2 ] && grep -q 'lab qdemo was brought up on test:///default' '$tmp/err' && grep -q 'with another query' '$tmp/err'"
check "and keeps the state file and this machine's pool directory" \
    "[ -f '$tmp/state/labs/qdemo.json' ] && [ -s '$tmp/state/pools/qdemo/hub.qcow2' ] && ! grep -q removed '$tmp/out'"
"$bin" down --connect 'test:///default?SOCKET=/run/another-libvirtd/libvirt-sock' qdemo >"$tmp/out" 2>"$tmp/err"
check "the parameter's name in another case is the same parameter to libvirt, and refused too" \
    "[ $? = 2 ] && [ -s '$tmp/state/pools/qdemo/hub.qcow2' ]"
"$bin" down qdemo >"$tmp/out" 2>"$tmp/err"
rc=$?
check "down on the recorded connection removes the record and the pool directory (rc $rc): $(tr '\n' ';' <"$tmp/out")" \
    "[ $rc = 0 ] && [ ! -e '$tmp/state/labs/qdemo.json' ] && [ ! -e '$tmp/state/pools/qdemo' ]"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
