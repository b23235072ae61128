#!/usr/bin/env bash
# meshlab as root on a shared host, through the command line, on libvirt's
# test driver: a run directory another user controls is refused before
# anything is created and a link planted in it is never followed; a second
# meshlab on a busy lab is refused within seconds, saying who holds it; down
# removes what a killed meshlab left. Issue 6, items 7, 9 and 11.
set -u
bin=${MESHLAB_BIN:-build/meshlab}
[ -x "$bin" ] || { echo "cli_safety: skipped: $bin not built"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "cli_safety: skipped: needs root to give a directory to another user"; exit 77; }
command -v flock >/dev/null || { echo "cli_safety: skipped: flock(1) missing (util-linux)"; exit 77; }
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

tmp=$(mktemp -d /tmp/meshlab-cli-safety-XXXXXX)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
export MESHLAB_STATE_DIR=$tmp/state MESHLAB_CACHE_DIR=$tmp/cache MESHLAB_URI=test:///default
topo=topologies/three-guest.yaml

# Another user's world-writable --out with a link to a root-only file planted in it.
echo victim > "$tmp/victim"; chmod 600 "$tmp/victim"
mkdir "$tmp/out"; chmod 777 "$tmp/out"; chown 65534:65534 "$tmp/out"
ln -s "$tmp/victim" "$tmp/out/results.json"
ln -s "$tmp/victim" "$tmp/out/report.md"
for verb in up run; do
    "$bin" "$verb" --out "$tmp/out" "$topo" >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    check "$verb into a foreign world-writable --out exits 2 (got $rc)" "[ $rc = 2 ]"
    check "$verb says why: $(head -c 200 "$tmp/stderr")" "grep -q 'belongs to uid 65534' '$tmp/stderr'"
done
check "the planted link's target is untouched" "[ \"\$(cat '$tmp/victim')\" = victim ] && [ \"\$(stat -c %a '$tmp/victim')\" = 600 ]"
check "nothing written into --out" "[ \"\$(ls -A '$tmp/out' | sort | tr '\n' ' ')\" = 'report.md results.json ' ]"
check "no pool, image or lab state created" "[ ! -e '$tmp/state/pools' ] && [ ! -e '$tmp/cache' ] && [ ! -e '$tmp/state/labs/three-guest.json' ]"

# Ours but writable by everyone: refused as well.
mkdir "$tmp/open"; chmod 777 "$tmp/open"
"$bin" up --out "$tmp/open" "$topo" >/dev/null 2>"$tmp/stderr"
rc=$?
check "up into a world-writable --out exits 2 (got $rc)" "[ $rc = 2 ] && grep -q 'writable by everyone' '$tmp/stderr'"

# A lab that another meshlab holds: refused at once, and nothing is touched.
mkdir -p "$tmp/state/labs"
# -o: the lock is flock's alone, so killing it frees the lab.
flock -n -o "$tmp/state/labs/three-guest.lock" sleep 30 </dev/null >/dev/null 2>&1 &
holder=$!
sleep 0.5
for verb in up run down; do
    start=$(date +%s)
    if [ "$verb" = down ]; then
        "$bin" down three-guest >/dev/null 2>"$tmp/stderr"
    else
        "$bin" "$verb" "$topo" >/dev/null 2>"$tmp/stderr"
    fi
    rc=$?
    took=$(( $(date +%s) - start ))
    check "$verb of a busy lab exits 1 within seconds (rc $rc, ${took} s)" "[ $rc = 1 ] && [ $took -le 5 ]"
    check "$verb says the lab is busy: $(head -c 160 "$tmp/stderr")" "grep -q 'lab three-guest is busy' '$tmp/stderr'"
done
pkill -P "$holder" sleep 2>/dev/null
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

# What a SIGKILLed meshlab leaves outside libvirt: down removes it, and only it.
sh -c 'exit 0' & dead=$!; wait $dead
mkdir -p "$tmp/cache/.build-debian-12-$dead-AbC123/rootfs" "$tmp/state/pools/three-guest"
touch "$tmp/state/pools/three-guest/hub.qcow2" "$tmp/cache/base.qcow2.tmp.$dead"
touch "$tmp/state/labs/three-guest.json.tmp.$dead.AbC123"
mkdir -p "$tmp/cache/debian-12-0123"
touch "$tmp/cache/debian-12-0123/base.qcow2"
"$bin" down three-guest >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
check "down after a kill exits 0 (rc $rc: $(head -c 300 "$tmp/stderr"))" "[ $rc = 0 ]"
check "down removed the pool directory" "[ ! -e '$tmp/state/pools/three-guest' ] && grep -q 'pool directory' '$tmp/stdout'"
check "down removed the half-built image and half-written files" \
    "[ ! -e '$tmp/cache/.build-debian-12-$dead-AbC123' ] && [ ! -e '$tmp/cache/base.qcow2.tmp.$dead' ] && [ ! -e '$tmp/state/labs/three-guest.json.tmp.$dead.AbC123' ]"
check "down left the cached image alone" "[ -e '$tmp/cache/debian-12-0123/base.qcow2' ]"
check "down removed the stale lock" "[ ! -e '$tmp/state/labs/three-guest.lock' ]"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
