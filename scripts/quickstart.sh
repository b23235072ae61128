#!/usr/bin/env bash
# From a fresh Debian 12 machine to the seed's report: install, build, get Tailscale and
# Headscale (downloaded, or built from their Go modules where the publishers' sites cannot be
# reached), run the seed's experiment (topologies/three-guest.yaml, its full profile), print
# where the report is and the seconds each phase took. Arguments go to `meshlab run`.
set -euo pipefail
cd "$(dirname "$0")/.."
phases=()
t0=$(date +%s.%N)
phase_start=$t0
phase() { # NAME: the phase that just ended
    local now
    now=$(date +%s.%N)
    phases+=("$(awk -v n="$1" -v a="$phase_start" -v b="$now" 'BEGIN { printf "%-28s %7.1f s", n, b - a }')")
    phase_start=$now
}
scripts/deps.sh
phase "packages and libvirtd"
scripts/build.sh
phase "build meshlab"
build/meshlab check || true
# Tailscale and Headscale: a phase of its own. The first build from the Go modules takes minutes;
# a cache that holds them already takes a second. Without them the run measures the other
# paths and reports the Tailscale ones as not run, saying why.
if ! build/meshlab fetch tailscale headscale; then
    echo "quickstart: Tailscale and Headscale could not be had (above: what to install); the run" \
        "reports their paths as not run" >&2
fi
phase "tailscale and headscale"
rc=0
build/meshlab run topologies/three-guest.yaml "$@" || rc=$?
phase "meshlab run (the experiment)"
echo "quickstart: the seconds each phase took"
for p in "${phases[@]}"; do echo "  $p"; done
awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "  %-28s %7.1f s\n", "in all", b - a }'
if [ "$rc" = 1 ]; then
    echo "quickstart: some paths were not measured: the report says why"
fi
echo "quickstart: next, every other dataplane on the same guests: build/meshlab run topologies/dataplanes.yaml"
exit "$rc"
