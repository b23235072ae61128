#!/usr/bin/env bash
# The test suite: installs and starts what it needs, builds, runs every test
# (unit, command line, and end to end on real guests), then builds again with
# AddressSanitizer and UBSan and runs the suite once more (leaks included), all but the seed
# lab's end-to-end test unless MESHLAB_ASAN_E2E=all.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build
export MESHLAB_E2E_REQUIRED=${MESHLAB_E2E_REQUIRED:-1}
ctest --test-dir build --output-on-failure
scripts/build.sh build-asan -DMESHLAB_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
# Under the sanitizers: every unit and command-line test, and the NAT end-to-end test (the newest
# code on real guests: the NAT step, the matrix, captures, exec, nebula-auto measured through two
# NATs). The seed lab's end-to-end test ran above; run it here too with
# MESHLAB_ASAN_E2E=all (about 13 more minutes, which CI's 40 do not have room for).
skip=e2e_three_guest
[ "${MESHLAB_ASAN_E2E:-nat}" = all ] && skip='^$'
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -E "$skip"
