# Sourced by the end-to-end tests (tests/e2e_*.sh): the tally of checks, the skip rule, what a
# test needs before it can run, and what no lab may leave behind. Set e2e (the test's name in
# its messages) before sourcing.
bin=${MESHLAB_BIN:-build/meshlab}
uri=${MESHLAB_URI:-qemu:///system}
passed=0 failed=0 failures=()

# Exits 77 (ctest's skip), or fails under MESHLAB_E2E_REQUIRED=1 (CI), saying why.
skip() {
    if [ "${MESHLAB_E2E_REQUIRED:-0}" = 1 ]; then
        echo "$e2e: cannot run: $1 (MESHLAB_E2E_REQUIRED=1 makes that a failure)"
        echo "0 passed, 1 failed"
        exit 1
    fi
    echo "$e2e: skipped: $1"
    exit 77
}
ok() { passed=$((passed + 1)); echo "ok   - $1"; }
bad() { failed=$((failed + 1)); failures+=("$1"); echo "FAIL - $1"; }
# verdicts FILE: each "ok WHAT" or "bad WHAT" line an assertion script printed, counted.
verdicts() {
    local verdict what
    while read -r verdict what; do
        if [ "$verdict" = ok ]; then ok "$what"; else bad "$what"; fi
    done < "$1"
}
# The tally, and each failure again at the end: CI keeps only the tail of a long log, and a
# failure in its middle must still be seen there. Exits non-zero when a check failed.
e2e_finish() {
    local f
    for f in "${failures[@]}"; do echo "FAILED: ${f:0:600}"; done
    echo "$passed passed, $failed failed"
    [ "$failed" = 0 ]
}
# check DESCRIPTION SHELL-CONDITION
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

e2e_require() {
    [ "$(id -u)" = 0 ] || skip "needs root (libvirt qemu:///system, storage pools)"
    virsh -c "$uri" version >/dev/null 2>&1 || skip "libvirt is not reachable at $uri (start virtlogd and libvirtd)"
    command -v python3 >/dev/null || skip "python3 is needed to read results.json"
}

# Everything meshlab makes, of any lab: domains, networks, pools, taps and bridges, pool and
# state files, seed directories, half-built images and half-written files, captures.
leftovers_all() {
    {
        virsh -c "$uri" list --all --name | grep '^meshlab-'
        virsh -c "$uri" net-list --all --name | grep '^meshlab-'
        virsh -c "$uri" pool-list --all --name | grep '^meshlab-'
        ip -o link show | grep -oE ' (mlt|mlb|mlx)[0-9a-f]+'
        ls -d /var/lib/meshlab/pools/* 2>/dev/null
        ls -d /var/lib/meshlab/labs/* 2>/dev/null
        ls -d "${TMPDIR:-/tmp}"/meshlab-seed-* 2>/dev/null
        find /var/lib/meshlab /var/cache/meshlab -maxdepth 3 \( -name '.build-*' -o -name '*.tmp.*' \) 2>/dev/null
        pgrep -a tcpdump | grep -E 'mlt[0-9a-f]+'
        ls /tmp/meshlab-capture-* 2>/dev/null
    } | sed '/^$/d'
}

# What was there before this test, once it has taken down its own labs (e2e_baseline, called
# after those `meshlab down`s): another lab's, left by a killed run of another test, is said
# and not judged; everything this test's labs leave is. CI once failed e2e_three_guest's four
# checks of what is left on an e2e-nat lab that a killed e2e_nat had left before it started.
e2e_before=
e2e_baseline() {
    e2e_before=$(leftovers_all)
    [ -z "$e2e_before" ] ||
        echo "$e2e: there before this test, not judged ('meshlab down LAB' removes a lab's): ${e2e_before//$'\n'/ }"
}
leftovers() {
    leftovers_all | grep -vxF -f <(printf '%s\n' "$e2e_before")
}
