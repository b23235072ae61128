#!/usr/bin/env bash
# A benchmark, not a test: how `meshlab up` and `meshlab down` scale with the number of guests,
# cold and warm. For each N it writes a lab of one hub and N clients (debian-12, 1 vCPU,
# 512 MiB, the plain path only) and, R times:
#   meshlab down NAME --purge-cache    no saved warm-start state: the next up is cold
#   meshlab up TOPOLOGY                cold: timed, with the controller's CPU and peak RSS
#   (the lab state file's guests[].boot_s/ready_s, the overlays' sizes)
#   meshlab down NAME                  timed; keeps the warm-start state
#   meshlab up TOPOLOGY                warm: the same figures
#   meshlab down NAME                  timed
# It prints one row per up and writes every figure to a JSON file. What the figures mean:
# docs/performance.md. Needs what `meshlab up` needs (root, libvirtd, the cached debian-12
# image); it boots guests, so run it on a quiet host and say what else ran.
#
#   scripts/bench-up.sh [--n 2,4,6] [--runs R] [--json FILE] [--dry-run]
#
#   --n LIST     clients per lab, each 2..8 (default 2,4,6)
#   --runs R     cold+warm pairs per N (default 1)
#   --json FILE  where the figures go (default bench-up.json in the current directory)
#   --dry-run    print each topology and the commands, run nothing (validates the topologies
#                when meshlab is built)
# Environment: MESHLAB_BIN (default build/meshlab under the source tree), MESHLAB_URI,
# MESHLAB_STATE_DIR as meshlab itself reads them.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
bin=${MESHLAB_BIN:-$src/build/meshlab}
uri=${MESHLAB_URI:-qemu:///system}
state_dir=${MESHLAB_STATE_DIR:-/var/lib/meshlab}
ns=2,4,6
runs=1
json=bench-up.json
dry=false

usage() { # usage STATUS
    sed -n '/^#   scripts\/bench-up.sh/,/^# MESHLAB_STATE_DIR/s/^# \{0,3\}//p' "$0"
    exit "$1"
}
die() {
    echo "bench-up: $*" >&2
    exit 1
}

while [ $# -gt 0 ]; do
    case $1 in
    --n) ns=${2:?--n needs a list such as 2,4,6}; shift 2 ;;
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --json) json=${2:?--json needs a file}; shift 2 ;;
    --dry-run) dry=true; shift ;;
    -h | --help) usage 0 ;;
    *) echo "bench-up: unknown argument '$1'" >&2; usage 2 >&2 ;;
    esac
done

IFS=, read -r -a n_list <<<"$ns"
[ ${#n_list[@]} -gt 0 ] || die "--n '$ns' lists no number"
for n in "${n_list[@]}"; do
    if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 2 ] || [ "$n" -gt 8 ]; then
        die "--n '$ns': '$n' is not a number of clients from 2 to 8 (a lab is one hub and at most 8 clients, and measures two of them)"
    fi
done
if ! [[ $runs =~ ^[0-9]+$ ]] || [ "$runs" -lt 1 ]; then
    die "--runs '$runs' is not a number of at least 1"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/meshlab-bench-up-XXXXXX")
trap 'rm -rf "$work"' EXIT # until a lab is brought up: then its logs are kept

# topology N: a hub and N clients, on stdout.
topology() {
    local n=$1 i
    cat <<EOF
# Written by scripts/bench-up.sh: one hub and $n clients.
name: bench-n$n
image:
  use: debian-12
bridge:
  subnet: 192.0.2.0/24
defaults:
  vcpus: 1
  memory_mib: 512
nodes:
  - name: hub
    address: 192.0.2.10
    tunnel_address: 10.8.0.1
EOF
    for ((i = 1; i <= n; i++)); do
        printf '  - name: client-%d\n    address: 192.0.2.%d\n    tunnel_address: 10.8.0.%d\n' \
            "$i" $((10 + i)) $((1 + i))
    done
    cat <<EOF
wireguard:
  subnet: 10.8.0.0/24
  hub: hub
measure:
  client: client-1
  server: client-2
  paths: [plain]
EOF
}

for n in "${n_list[@]}"; do
    topology "$n" >"$work/bench-n$n.yaml"
done

if $dry; then
    for n in "${n_list[@]}"; do
        t=$work/bench-n$n.yaml
        echo "=== N=$n: $t"
        cat "$t"
        if [ -x "$bin" ]; then
            "$bin" validate "$t" >/dev/null || die "the topology for N=$n is not valid (above)"
        fi
        for ((r = 1; r <= runs; r++)); do
            echo "+ $bin down bench-n$n --purge-cache"
            echo "+ /usr/bin/time $bin up $t --out $work/runs/n$n-r$r-cold    # cold"
            echo "+ read $state_dir/labs/bench-n$n.json, du $state_dir/pools/bench-n$n/*.qcow2"
            echo "+ $bin down bench-n$n"
            echo "+ /usr/bin/time $bin up $t --out $work/runs/n$n-r$r-warm    # warm"
            echo "+ read $state_dir/labs/bench-n$n.json, du $state_dir/pools/bench-n$n/*.qcow2"
            echo "+ $bin down bench-n$n"
        done
    done
    echo "+ write $json"
    exit 0
fi

[ -x "$bin" ] || die "meshlab is not built: $bin is not an executable; build it (scripts/build.sh or cmake --build build) or set MESHLAB_BIN"
command -v python3 >/dev/null || die "python3 is needed to read the lab state file and write $json"
command -v virsh >/dev/null || die "virsh is needed to check that libvirtd answers (package libvirt-clients)"
if ! why=$(timeout 20 virsh -q -c "$uri" uri 2>&1); then
    die "libvirtd is not answering on $uri: ${why//$'\n'/ }; start it (systemctl start libvirtd) and try again"
fi
"$bin" down --help 2>&1 | grep -q -- --purge-cache ||
    die "this meshlab's down has no --purge-cache, so a cold start cannot be forced; build a newer meshlab"
if ! [ -d "$(dirname "$json")" ] || ! [ -w "$(dirname "$json")" ]; then
    die "cannot write $json: its directory is missing or not writable"
fi
json=$(cd "$(dirname "$json")" && pwd)/$(basename "$json")

# Runs "$@" and leaves wall seconds, user and system CPU seconds and max RSS (KiB) of it and
# its waited-for children in $rusage ("WALL USER SYS RSS"); returns its status.
timed() {
    local f=$work/time.$$ rc=0
    local t0 t1
    t0=$(date +%s.%N)
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -o "$f" -f '%U %S %M' "$@" || rc=$?
    else
        python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%.2f %.2f %d\n" % (r.ru_utime, r.ru_stime, r.ru_maxrss))
sys.exit(rc)' "$f" "$@" || rc=$?
    fi
    t1=$(date +%s.%N)
    # /usr/bin/time writes "Command exited with non-zero status N" first when it fails.
    rusage="$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}') $(tail -n 1 "$f" 2>/dev/null || echo '0 0 0')"
    rm -f "$f"
    return $rc
}

current=""   # the lab that is up, for the trap
cleanup() {
    if [ -n "$current" ]; then
        echo "bench-up: interrupted: meshlab down $current" >&2
        "$bin" down "$current" >&2 || true
        current=""
    fi
}
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
trap 'cleanup' EXIT

records=$work/records.jsonl
: >"$records"

# measure_up N RUN START: one up, its figures appended to $records, then a timed down.
measure_up() {
    local n=$1 run=$2 start=$3 name=bench-n$1
    local out=$work/runs/n$n-r$run-$start up_rc=0 down_rc=0 up_usage down_usage
    mkdir -p "$out"
    current=$name
    echo "bench-up: N=$n run $run $start: meshlab up (log $out.log)" >&2
    timed "$bin" up "$work/$name.yaml" --out "$out" >"$out.log" 2>&1 || up_rc=$?
    up_usage=$rusage
    local state=$state_dir/labs/$name.json
    local sizes=$work/sizes.txt
    : >"$sizes"
    for f in "$state_dir/pools/$name"/*.qcow2; do
        [ -e "$f" ] || continue
        printf '%s %s %s\n' "$(basename "$f")" "$(du -B1 --apparent-size "$f" | cut -f1)" \
            "$(du -B1 "$f" | cut -f1)" >>"$sizes"
    done
    cp "$state" "$work/state.json" 2>/dev/null || echo '{}' >"$work/state.json"
    timed "$bin" down "$name" >>"$out.log" 2>&1 || down_rc=$?
    down_usage=$rusage
    current=""
    python3 - "$n" "$run" "$start" "$up_rc" "$up_usage" "$down_rc" "$down_usage" \
        "$work/state.json" "$sizes" "$out.log" >>"$records" <<'PY'
import json, sys
n, run, start, up_rc, up_usage, down_rc, down_usage, state_f, sizes_f, log = sys.argv[1:]
wall, user, sys_s, rss = up_usage.split()
state = json.load(open(state_f))
names = ["hub"] + ["client-%d" % i for i in range(1, int(n) + 1)]
guests = []
for i, g in enumerate(state.get("guests", [])):
    guests.append({"name": names[i] if i < len(names) else "guest-%d" % i,
                   "boot_s": g.get("boot_s"), "ready_s": g.get("ready_s"),
                   "cpu_s": g.get("cpu_s"), "save_s": g.get("save_s"),
                   "start": g.get("start")})
overlays = []
for line in open(sizes_f):
    f, apparent, allocated = line.split()
    overlays.append({"file": f, "apparent_bytes": int(apparent),
                     "allocated_bytes": int(allocated)})
print(json.dumps({
    "clients": int(n), "guests_n": int(n) + 1, "run": int(run), "start_wanted": start,
    "start": state.get("start"), "up_rc": int(up_rc), "up_wall_s": float(wall),
    "controller_user_s": float(user), "controller_sys_s": float(sys_s),
    "controller_max_rss_kib": int(rss), "down_rc": int(down_rc),
    "down_wall_s": float(down_usage.split()[0]), "phases": state.get("phases", []),
    "guests": guests, "overlays": overlays, "log": log}))
PY
    [ "$up_rc" -eq 0 ] || echo "bench-up: N=$n run $run $start: meshlab up exited $up_rc (see $out.log)" >&2
    [ "$down_rc" -eq 0 ] || die "N=$n run $run $start: meshlab down exited $down_rc (see $out.log); stopping"
}

for n in "${n_list[@]}"; do
    for ((r = 1; r <= runs; r++)); do
        "$bin" down "bench-n$n" --purge-cache >/dev/null 2>&1 ||
            die "meshlab down bench-n$n --purge-cache failed; run it by hand to see why"
        measure_up "$n" "$r" cold
        measure_up "$n" "$r" warm
    done
done

python3 - "$records" "$json" "$uri" "$(git -C "$src" describe --always --dirty 2>/dev/null || echo unknown)" <<'PY'
import json, os, platform, sys, time
records_f, json_f, uri, rev = sys.argv[1:]
runs = [json.loads(l) for l in open(records_f) if l.strip()]
doc = {"what": "meshlab up/down by number of guests (scripts/bench-up.sh)",
       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
       "host": {"cpus": os.cpu_count(), "kernel": platform.release()},
       "uri": uri, "meshlab": rev, "runs": runs}
with open(json_f, "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")

def mx(xs):
    xs = [x for x in xs if isinstance(x, (int, float))]
    return max(xs) if xs else float("nan")

print("%3s %3s %-5s %-5s %7s %9s %9s %9s %8s %7s %7s %7s %11s %6s" % (
    "N", "run", "want", "start", "up_s", "agent_max", "ready_max", "gcpu_max", "save_max",
    "cpu_s", "rss_MiB", "down_s", "ovl_max_MiB", "up_rc"))
for r in runs:
    g = r["guests"]
    alloc = mx([o["allocated_bytes"] / 2**20 for o in r["overlays"]])
    print("%3d %3d %-5s %-5s %7.1f %9.1f %9.1f %9.1f %8.1f %7.2f %7.1f %7.1f %11.1f %6d" % (
        r["clients"], r["run"], r["start_wanted"], r["start"] or "?", r["up_wall_s"],
        mx([x["boot_s"] for x in g]), mx([x["ready_s"] for x in g]),
        mx([x["cpu_s"] for x in g]), mx([x["save_s"] for x in g]),
        r["controller_user_s"] + r["controller_sys_s"], r["controller_max_rss_kib"] / 1024,
        r["down_wall_s"], alloc, r["up_rc"]))
print("N: clients (guests = N + 1); want/start: the start asked for and the one the lab "
      "reports; agent_max/ready_max: the slowest guest's agent and cloud-init, from the "
      "start; gcpu_max: the most CPU seconds a guest's QEMU used to be ready; save_max: the "
      "longest save of a cold guest for the next warm start; cpu_s/rss_MiB: the controller "
      "(meshlab and its children, not QEMU); ovl_max_MiB: the largest overlay, allocated, "
      "after up. Every figure per guest and overlay: " + json_f)
PY
echo "bench-up: run directories and logs in $work" >&2
