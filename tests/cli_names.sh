#!/usr/bin/env bash
# A lab or node name given on the command line is checked by the topology's own name rule
# before anything is locked, opened or removed: "", ".", ".." and "../x" would otherwise name
# the directories that hold every lab's pools and saved guests. Two labs' pools, states and
# saves are present; every refused name exits 2 with the rule and leaves all of them in place.
# Issue 16, item 1.
set -u
bin=${MESHLAB_BIN:-build/meshlab}
[ -x "$bin" ] || { echo "cli_names: skipped: $bin not built"; exit 77; }
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

tmp=$(mktemp -d /tmp/meshlab-cli-names-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export MESHLAB_STATE_DIR=$tmp/state MESHLAB_CACHE_DIR=$tmp/cache MESHLAB_URI=test:///default
export TMPDIR=$tmp/tmp
mkdir -p "$TMPDIR"
for lab in lab-a lab-b; do
    mkdir -p "$tmp/state/pools/$lab" "$tmp/state/labs" "$tmp/cache/warm/$lab/hub"
    echo disk > "$tmp/state/pools/$lab/hub.qcow2"
    echo '{}' > "$tmp/state/labs/$lab.json"
    for f in key state overlay.qcow2; do echo "$f" > "$tmp/cache/warm/$lab/hub/$f"; done
done
tree() { (cd "$tmp" && find state cache tmp | LC_ALL=C sort); }
before=$(tree)

# refused VERB ARGS...: exits 2, names the rule, touches nothing.
refused() {
    local what=$1
    shift
    "$bin" "$@" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null
    local rc=$?
    check "$what exits 2 (got $rc)" "[ $rc = 2 ]"
    check "$what says the rule: $(head -c 200 "$tmp/stderr")" \
        "grep -q 'is not allowed: a name starts with a lowercase letter' '$tmp/stderr'"
    check "$what removes and creates nothing" "[ \"\$(tree)\" = \"\$before\" ]"
}

refused 'down ""' down ""
refused 'down .' down .
refused 'down ..' down ..
refused 'down ../x' down ../x
refused 'down pools/..' down pools/..
refused 'down --purge-cache ""' down --purge-cache ""
refused 'down --purge-cache .' down --purge-cache .
refused 'down --purge-cache ..' down --purge-cache ..
refused 'down Lab-A' down Lab-A
refused 'exec "" hub' exec "" hub -- true
refused 'exec .. hub' exec .. hub -- true
refused 'exec lab-a ../hub' exec lab-a ../hub -- true
refused 'exec lab-a ""' exec lab-a "" -- true
refused 'console .. hub' console .. hub
refused 'console lab-a .' console lab-a .
refused 'console lab-a a/b' console lab-a a/b

# status takes no name: one given is refused like any stray operand, and touches nothing.
"$bin" status .. >/dev/null 2>"$tmp/stderr"
rc=$?
check "status .. exits 2 (got $rc) and touches nothing" \
    "[ $rc = 2 ] && grep -q 'Usage: meshlab status' '$tmp/stderr' && [ \"\$(tree)\" = \"\$before\" ]"

# A good name still works, and takes only its own lab's pool and saves.
"$bin" down --purge-cache lab-a >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
check "down --purge-cache lab-a exits 0 (rc $rc: $(head -c 200 "$tmp/stderr"))" "[ $rc = 0 ]"
check "lab-a's pool, state and saves are gone" \
    "[ ! -e '$tmp/state/pools/lab-a' ] && [ ! -e '$tmp/state/labs/lab-a.json' ] && [ ! -e '$tmp/cache/warm/lab-a' ]"
check "lab-b's pool, state and saves are all there" \
    "[ -s '$tmp/state/pools/lab-b/hub.qcow2' ] && [ -e '$tmp/state/labs/lab-b.json' ] && [ -s '$tmp/cache/warm/lab-b/hub/overlay.qcow2' ]"

# What down removes from a pool directory a killed meshlab left: the files meshlab makes, by
# their names, and nothing added by hand (finding 18); then it says what it left, and exits 1.
pool=$tmp/state/pools/lab-b
touch "$pool/hub-seed.iso" "$pool/a-artifacts.iso" "$pool/hub-console.log" "$pool/hub-console.log.0"
echo mine > "$pool/notes.txt"
mkdir "$pool/keep"
"$bin" down lab-b >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
check "down with hand-added files in the pool exits 1 (got $rc)" "[ $rc = 1 ]"
check "down says what it left: $(head -c 300 "$tmp/stderr")" \
    "grep -q \"holds what meshlab did not make ('keep', 'notes.txt')\" '$tmp/stderr'"
check "down removed meshlab's files from the pool" \
    "[ \"\$(ls -A '$pool' | tr '\n' ' ')\" = 'keep notes.txt ' ]"
check "the hand-added file is intact" "[ \"\$(cat '$pool/notes.txt')\" = mine ]"
rm -r "$pool/notes.txt" "$pool/keep"
"$bin" down lab-b >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
check "down once they are moved away exits 0 (got $rc) and removes the directory" \
    "[ $rc = 0 ] && [ ! -e '$pool' ]"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
