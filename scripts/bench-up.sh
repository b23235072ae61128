#!/usr/bin/env bash
# Benchmark: how long `meshlab up` takes from a cached image, phase by phase,
# against the slowest guest's own boot. Reports figures; asserts nothing.
#   scripts/bench-up.sh [TOPOLOGY] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
topo=${1:-topologies/three-guest.yaml}
runs=${2:-3}
bin=${MESHLAB_BIN:-build/meshlab}
lab=$(sed -n 's/^name: *//p' "$topo" | head -1)
state=${MESHLAB_STATE_DIR:-/var/lib/meshlab}/labs/$lab.json
"$bin" down "$lab" >/dev/null
printf '%-4s %8s %8s %8s %8s %8s %12s %8s\n' run image define boot wireguard nebula slowest_ready up_total
for i in $(seq 1 "$runs"); do
    start=$(date +%s.%N)
    "$bin" up "$topo" --out "$(mktemp -d /tmp/meshlab-bench-XXXXXX)" >/dev/null 2>&1
    total=$(echo "$(date +%s.%N) - $start" | bc)
    python3 - "$state" "$i" "$total" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
ph = {p["name"]: p["seconds"] for p in s.get("phases", [])}
ready = max(g["ready_s"] for g in s["guests"])
print("%-4s %8.1f %8.1f %8.1f %8.1f %8.1f %12.1f %8.1f" % (sys.argv[2], ph.get("image", 0),
      ph.get("define", 0), ph.get("boot", 0), ph.get("wireguard", 0), ph.get("nebula", 0),
      ready, float(sys.argv[3])))
PY
    "$bin" down "$lab" >/dev/null
done
