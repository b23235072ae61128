#!/usr/bin/env bash
# From a fresh Debian 12 machine to the seed's report: install, build, run the
# full measurement matrix on topologies/three-guest.yaml, print where the report is.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
build/meshlab check || true
build/meshlab run topologies/three-guest.yaml "$@"
