#!/usr/bin/env bash
# From a fresh Debian 12 machine to the seed's report: install, build, run the
# full measurement matrix on topologies/three-guest.yaml, print where the report is.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
build/meshlab check || true
rc=0
build/meshlab run topologies/three-guest.yaml "$@" || rc=$?
if [ "$rc" = 1 ]; then
    echo "quickstart: some paths were not measured (without network the Tailscale paths cannot"
    echo "quickstart: be; 'meshlab fetch tailscale headscale' fetches them): the report says why"
fi
exit "$rc"
