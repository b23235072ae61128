#!/usr/bin/env bash
# The README's commands work as written for the reader it names (issue 6, item
# 17): on a fresh Debian 12 you are root and sudo is usually missing, so the
# quick start and the test command are given without sudo, and the scripts say
# plainly what to do when a normal user runs them.
set -u
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

# The command lines of the README's quick start and tests sections: indented
# code blocks, which start after a blank line (a list item's continuation does not).
cmds=$(awk '/^## Quick start/,/^## Commands/ {
    if ($0 ~ /^    [a-z]/ && (prev == "" || code)) { code = 1; print substr($0, 5) }
    else if ($0 != "") code = 0
    prev = $0 }' README.md)
check "the README gives commands in its quick start and tests sections" "[ -n \"\$cmds\" ]"
check "no README command needs sudo" "! grep -q '^sudo' <<<\"\$cmds\""
while read -r cmd _; do
    [ -n "$cmd" ] || continue
    check "README command $cmd exists and is executable" "[ -x '$cmd' ]"
done <<<"$cmds"
# Every command of the README's Commands table exists, with the usage the table shows.
bin=${MESHLAB_BIN:-build/meshlab}
if [ -x "$bin" ]; then
    while read -r verb; do
        check "README's meshlab $verb has a --help" "'$bin' $verb --help >/dev/null"
        check "meshlab --help lists $verb" "'$bin' --help | grep -q '^  $verb '"
    done < <(sed -n 's/^| `meshlab \([a-z]*\).*/\1/p' README.md)
    check "README's Commands table has report and compare" \
        "grep -q '^| \`meshlab report .*RUN_DIR\`' README.md && grep -q '^| \`meshlab compare' README.md"
fi
check "the README tells a normal user what to run" "grep -q 'su -c scripts/quickstart.sh root' README.md"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    out=$(setpriv --reuid=65534 --regid=65534 --clear-groups bash scripts/deps.sh 2>&1)
    rc=$?
    check "deps.sh as a normal user exits 1 and says to run as root ($out)" \
        "[ $rc = 1 ] && grep -q 'run as root' <<<\"\$out\""
else
    echo "not run: the normal-user check needs root and setpriv"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
