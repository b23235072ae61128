#!/usr/bin/env bash
# A topology file is data (issue 36, items 1 and 7; audit round 4, findings 1 and 2): hostile
# topologies whose host URIs would make libvirt or meshlab run a program (the audit's YAML/sh
# polyglot with '?no_verify=1;command=/bin/bash', socket= pasted into the host's shell, and their
# near variants) are refused by validate, up, run and down FILE with file:line:col and exit 2,
# before anything connects: the marker file each one would write never appears, and nothing of
# the state directory is touched. No traffic leaves this machine.
set -u
bin=${MESHLAB_BIN:-build/meshlab}
[ -x "$bin" ] || { echo "cli_hostile: skipped: $bin not built"; exit 77; }
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

tmp=$(mktemp -d /tmp/meshlab-cli-hostile-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export MESHLAB_STATE_DIR=$tmp/state MESHLAB_CACHE_DIR=$tmp/cache TMPDIR=$tmp
unset MESHLAB_URI
mkdir -p "$tmp/state/labs"
echo keep >"$tmp/state/sentinel"
top=$PWD
cd "$tmp" || exit 1

# The audit's polyglot: a valid three-node topology whose description is also a shell script;
# with command=/bin/bash and the file's own name as the URI's user, bash -l would run it.
polyglot() { # NAME URI
    cat >"$1" <<EOF
name: polyglot
description: |
  touch $tmp/PWNED-$1; exit 0
image:
  use: debian-12
hosts:
  h1: "$2"
bridge:
  subnet: 192.0.2.0/24
nodes:
  - {name: hub, address: 192.0.2.10, tunnel_address: 10.0.0.1, host: h1}
  - {name: client-a, address: 192.0.2.11, tunnel_address: 10.0.0.2, host: h1}
  - {name: client-b, address: 192.0.2.12, tunnel_address: 10.0.0.3, host: h1}
wireguard:
  subnet: 10.0.0.0/24
  hub: hub
measure:
  client: client-a
  server: client-b
  paths: [plain]
EOF
}

n=0
hostile() { # WHAT URI REASON: the URI's refusal names REASON
    n=$((n + 1))
    local f=t$n.yaml
    polyglot "$f" "$2"
    "$bin" validate "$f" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    check "$1: validate exits 2 at the URI's line and column, naming why (rc $rc): $(head -c 300 "$tmp/err")" \
        "[ $rc = 2 ] && grep -q '^meshlab: $f:7:7: hosts.h1: ' '$tmp/err' && grep -q -- \"$3\" '$tmp/err'"
    for verb in "down" "up" "run"; do
        "$bin" $verb "$f" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        check "$1: $verb FILE exits 2 before it connects (rc $rc)" "[ $rc = 2 ] && grep -q '$f:7:7' '$tmp/err'"
    done
    check "$1: nothing ran" "[ ! -e '$tmp/PWNED-$f' ] && [ -z \"\$(ls '$tmp' | grep PWNED)\" ]"
}

hostile "finding 1, ';' before command=" \
    "qemu+ssh://t1.yaml@127.0.0.1/system?no_verify=1;command=/bin/bash" "'no_verify' turns off"
hostile "finding 1, no_tty allowed, ';' before command=" \
    "qemu+ssh://t2.yaml@127.0.0.1/system?no_tty=1;command=/bin/bash" "'command' names the program"
hostile "command= in another case" \
    "qemu+ssh://t3.yaml@127.0.0.1/system?no_tty=1&CoMmAnD=/bin/bash" "'CoMmAnD' names the program"
hostile "command= percent-escaped" \
    "qemu+ssh://t4.yaml@127.0.0.1/system?no_tty=1&%63ommand=/bin/bash" "no percent escape"
hostile "keyfile= whose value hides ';command='" \
    "qemu+ssh://t5.yaml@127.0.0.1/system?keyfile=/k;command=/bin/bash&no_tty=1" "'keyfile' has a value of another shape"
hostile "netcat= after an empty section" \
    "qemu+ssh://root@127.0.0.1/system?;netcat=/bin/bash" "'netcat' names a program"
hostile "finding 2, socket= into the host's shell" \
    "qemu+ssh://root@127.0.0.1:2299/system?keyfile=/root/.ssh/k&socket=/run/x;touch\$IFS$tmp/PWNED-s" "'socket' is pasted"
hostile "the host key check turned off" \
    "qemu+ssh://root@127.0.0.1/system?known_hosts_verify=ignore" "'known_hosts_verify' changes"
hostile "a transport that runs a program" \
    "qemu+ext:///system?command=/bin/bash" "transport 'qemu+ext'"
hostile "libvirt's embedded driver" \
    "qemu:///embed?root=$tmp/root" "not /system"
hostile "a key libvirt does not know, passed to the far end" \
    "qemu+ssh://root@127.0.0.1/system?x=\$(id)" "'x' is not a parameter meshlab knows"
hostile "a user name that reads as an option" \
    "qemu+ssh://-oProxyCommand@127.0.0.1/system" "starts with '-'"
hostile "a user name that is not one" \
    "qemu+ssh://-oProxyCommand=touch@127.0.0.1/system" "a user name is letters"

# The same polyglot as a received run directory's topology.yaml, under export --verify (which
# brings a lab up from it): refused while the run is read, before any libvirt host is opened.
for k in 1 7; do
    run=$tmp/run$k
    mkdir -m 700 "$run"
    cp "$top/tests/data/results-v2-matrix.json" "$run/results.json"
    cp "t$k.yaml" "$run/topology.yaml"
    "$bin" export "$run" --hub-address 203.0.113.10 --to "$run/out" --verify >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "export --verify of a run whose topology.yaml is hostile ($k) exits 2 (rc $rc): $(head -c 300 "$tmp/err")" \
        "[ $rc = 2 ] && grep -q 'run$k/topology.yaml:7:7: hosts.h1: ' '$tmp/err'"
    check "and nothing ran, nothing was exported" "[ -z \"\$(ls '$tmp' | grep PWNED)\" ] && [ ! -e '$run/out' ]"
done

check "the state directory holds only what was there" \
    "[ \"\$(cd '$tmp/state' && find . | sort | tr '\n' ' ')\" = '. ./labs ./sentinel ' ] && [ \"\$(cat '$tmp/state/sentinel')\" = keep ]"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
