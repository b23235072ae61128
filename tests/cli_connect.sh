#!/usr/bin/env bash
# --connect URI on every verb (issue 20, item 1), on libvirt's test driver: before or after
# the verb, with = or a space; a lab's later verbs go where its up recorded; down --connect to
# another host is refused and removes nothing; status says which labs are elsewhere, with
# their URIs and no key file or password; up and run to a host that does not answer fail
# before anything is made. No traffic leaves this machine: the only host named is 127.0.0.1.
set -u
bin=${MESHLAB_BIN:-build/meshlab}
[ -x "$bin" ] || { echo "cli_connect: skipped: $bin not built"; exit 77; }
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

tmp=$(mktemp -d /tmp/meshlab-cli-connect-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export MESHLAB_STATE_DIR=$tmp/state MESHLAB_CACHE_DIR=$tmp/cache
unset MESHLAB_URI
far='qemu+ssh://root@127.0.0.1:1/system?keyfile=/root/.ssh/lab-key&no_verify=1'

# Where it goes: before the verb, after it, with '='.
for form in "--connect test:///default status" "status --connect test:///default" \
    "status --connect=test:///default"; do
    out=$("$bin" $form 2>&1)
    check "meshlab $form lists the test driver's labs ($out)" "[ \"\$out\" = 'no meshlab labs on test:///default' ]"
done
"$bin" status --connect >/dev/null 2>"$tmp/err"
rc=$?
check "--connect without a URI exits 2 and says so (rc $rc)" "[ $rc = 2 ] && grep -q 'needs a libvirt URI' '$tmp/err'"
"$bin" status --connect= >/dev/null 2>"$tmp/err"
check "--connect= (empty) exits 2" "[ $? = 2 ]"
# A URI is read as libvirt reads it (src/topology/uri.c); one meshlab cannot read so is refused
# before anything connects, and the refusal shows neither its password nor its query.
"$bin" status --connect 'qemu+ssh://root:pw@127.0.0.1:1/system?keyfile=/root/.ssh/lab-key' >/dev/null 2>"$tmp/err"
rc=$?
check "--connect with a password exits 2, naming neither password nor key file (rc $rc: $(cat "$tmp/err"))" \
    "[ $rc = 2 ] && grep -q 'no password' '$tmp/err' && ! grep -q 'pw@\\|lab-key' '$tmp/err'"
MESHLAB_URI='qemu+ssh://h/system#frag' "$bin" status >/dev/null 2>"$tmp/err"
rc=$?
check "MESHLAB_URI with a fragment exits 2 and names MESHLAB_URI (rc $rc)" \
    "[ $rc = 2 ] && grep -q \"MESHLAB_URI 'qemu+ssh://h/system'\" '$tmp/err'"
check "meshlab --help names --connect" "'$bin' --help | grep -q -- '--connect URI'"
for verb in up run down status check exec console; do
    check "meshlab $verb --help names --connect" "'$bin' $verb --help | grep -q -- '--connect'"
done

# Labs this machine recorded: one on the test driver, one on another host.
mkdir -p "$tmp/state/labs"
echo '{"lab": "near", "uri": "test:///default"}' >"$tmp/state/labs/near.json"
printf '{"lab": "away", "uri": "%s"}\n' "$far" >"$tmp/state/labs/away.json"
"$bin" status --connect test:///default --json >"$tmp/status.json"
check "status --json names the other host's lab and its URI, without password or key file" \
    "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); \
assert d[\"elsewhere\"] == [{\"name\": \"away\", \"uri\": \"qemu+ssh://root@127.0.0.1:1/system\"}], d' '$tmp/status.json'"
out=$("$bin" status --connect test:///default)
check "status says where lab away is, and what reaches it ($out)" "grep -q \"lab away is on qemu+ssh://root@127.0.0.1:1/system: 'meshlab down away' and 'meshlab exec away ...' reach it there\" <<<\"\$out\""
check "no password or key file in status" "! grep -q 'pw\\|lab-key' <<<\"\$out\" && ! grep -q 'pw@\\|lab-key' '$tmp/status.json'"

# down --connect to a host other than the recorded one: refused, nothing removed.
"$bin" down --connect test:///default away >"$tmp/out" 2>"$tmp/err"
rc=$?
check "down --connect elsewhere exits 2, bad input (rc $rc): $(head -c 300 "$tmp/err")" \
    "[ $rc = 2 ] && grep -q 'lab away was brought up on qemu+ssh://root@127.0.0.1:1/system' '$tmp/err'"
check "its state file is kept" "[ -f '$tmp/state/labs/away.json' ]"
check "the refusal shows no password or key file" "! grep -q 'pw@\\|lab-key' '$tmp/err'"
# down without --connect goes where the state says: the test driver, in this process.
"$bin" down near >"$tmp/out" 2>"$tmp/err"
rc=$?
check "down near (recorded on test:///default) exits 0 (rc $rc): $(cat "$tmp/err")" "[ $rc = 0 ]"
check "and removes its state file" "[ ! -e '$tmp/state/labs/near.json' ] && grep -q 'removed state' '$tmp/out'"

# MESHLAB_URI naming another host than the recorded one is refused the same way, and says so.
MESHLAB_URI=test:///default "$bin" down away >"$tmp/out" 2>"$tmp/err"
rc=$?
check "down under MESHLAB_URI elsewhere exits 2 and names MESHLAB_URI (rc $rc): $(head -c 300 "$tmp/err")" \
    "[ $rc = 2 ] && grep -q 'which MESHLAB_URI names' '$tmp/err' && grep -q 'with MESHLAB_URI unset' '$tmp/err'"
# A host that does not answer (nothing listens on port 1): the error shows its URI without the
# query, libvirt's own words included, and the state file is kept.
"$bin" down --connect 'qemu+ssh://root@127.0.0.1:1/system?no_verify=1&no_tty=1' away >"$tmp/out" 2>"$tmp/err"
check "down --connect to a host that does not answer fails, its URI shown without the query: $(head -c 200 "$tmp/err")" \
    "grep -q 'cannot connect to libvirt at qemu+ssh://root@127.0.0.1:1/system:' '$tmp/err' && ! grep -q 'no_verify' '$tmp/err'"
check "and its state file is kept" "[ -f '$tmp/state/labs/away.json' ]"

# --connect's value is never an option or '--', and the guest's words after '--' are its own.
"$bin" status --connect --json >/dev/null 2>"$tmp/err"
check "--connect --json is a missing URI, exit 2" "[ $? = 2 ] && grep -q 'needs a libvirt URI' '$tmp/err'"
"$bin" exec --connect test:///default nolab hub -- echo --connect x >/dev/null 2>"$tmp/err"
rc=$?
check "exec keeps '--connect' after '--' as the guest's word (rc $rc: $(cat "$tmp/err"))" \
    "[ $rc = 2 ] && grep -q 'no lab nolab' '$tmp/err'"

# up and run go to the host the URI names; one that does not answer fails the connection,
# before any state or pool, and the message shows neither the password nor the key file.
for verb in up run; do
    "$bin" $verb --connect "$far" topologies/three-guest.yaml >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "$verb --connect to a host that does not answer fails the connection (rc $rc): $(head -c 300 "$tmp/err")" \
        "[ $rc = 1 ] && grep -q 'cannot connect to libvirt at qemu+ssh://root@127.0.0.1:1/system' '$tmp/err'"
    check "$verb shows the URI without password or key file" "! grep -q 'pw@\\|lab-key' '$tmp/err'"
    check "$verb created no state or pool" \
        "[ ! -e '$tmp/state/labs/three-guest.json' ] && [ ! -e '$tmp/state/pools/three-guest' ]"
done

# check --connect to a host that does not answer: libvirt's failure, said for a remote host.
"$bin" check --connect 'qemu+ssh://root@127.0.0.1:1/system?no_verify=1&no_tty=1' --json >"$tmp/check.json" 2>/dev/null
check "check --connect to a closed port fails libvirt, remote, with the ssh advice" \
    "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); l=d[\"libvirt\"]; \
assert not d[\"ok\"] and l[\"remote\"] and not l[\"ok\"] and \"for qemu+ssh\" in l[\"error\"] and d[\"qemu\"] is None and d[\"accelerator\"] is None, d' '$tmp/check.json'"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
