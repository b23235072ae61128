#!/usr/bin/env bash
# The test suite: installs and starts what it needs, builds, runs every test
# (unit, command line, and end to end on real guests), then builds again with
# AddressSanitizer and UBSan and runs the suite once more (leaks included). Each end-to-end test
# runs once, in one of the two builds, unless MESHLAB_ASAN_E2E=all.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build
# CI (.ci/run) builds Tailscale and Headscale from their Go modules (images/go) into the cache, so
# the seed lab's end-to-end test measures the three Tailscale paths; the Go module and build
# caches make a second build on the same machine take seconds. Elsewhere the tests measure them
# only where `meshlab fetch tailscale headscale` has been run.
if [ "${MESHLAB_BUILD_TAILSCALE:-}" = 1 ]; then
    build/meshlab fetch --build tailscale headscale
fi
export MESHLAB_E2E_REQUIRED=${MESHLAB_E2E_REQUIRED:-1}
# The seed lab's, the NAT lab's and the two-host lab's end-to-end tests in the normal build; the warm start's (the
# newest code on real guests: saves, restores, the reseed, a thread per guest) and the remote
# lab's (uploads and downloads through libvirt's streams) under the sanitizers. MESHLAB_ASAN_E2E=all runs every one in both builds (about 20 more minutes, which
# CI's 40 do not have room for).
all=false
[ "${MESHLAB_ASAN_E2E:-}" = all ] && all=true
$all && normal='^$' || normal='e2e_warm|e2e_remote'
$all && asan='^$' || asan='e2e_three_guest|e2e_nat|e2e_hosts'
# -j: the unit and command-line tests run side by side on the CPUs; every end-to-end and netns
# test is RUN_SERIAL (tests/CMakeLists.txt), so it measures with nothing else of the suite beside it.
ctest --test-dir build --output-on-failure -j"$(nproc)" -E "$normal"
scripts/build.sh build-asan -DMESHLAB_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -E "$asan"
