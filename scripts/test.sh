#!/usr/bin/env bash
# The test suite: installs and starts what it needs, builds, runs every test
# (unit, command line, and end to end on real guests), then builds again with
# AddressSanitizer and UBSan and runs the whole suite once more (leaks included).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build
export MESHLAB_E2E_REQUIRED=${MESHLAB_E2E_REQUIRED:-1}
ctest --test-dir build --output-on-failure
scripts/build.sh build-asan -DMESHLAB_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure
