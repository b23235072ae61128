#!/usr/bin/env bash
# shellcheck disable=SC2015 # ok always succeeds: "A && ok || bad" is if-then-else here
# scripts/bench-up.sh without booting anything: its dry run prints topologies that the real
# `meshlab validate` accepts and the commands it would run; its argument checks; and its
# bookkeeping, driven through a stand-in meshlab (it only writes the state file and overlays
# that `up` would, and records its calls): the order cold up, down, warm up, down per N, the
# JSON it writes, and a `meshlab down` of the lab that was up when it is interrupted.
set -u
bin=${MESHLAB_BIN:-build/meshlab}
[ -x "$bin" ] || { echo "cli_bench: skipped: $bin not built"; exit 77; }
command -v python3 >/dev/null || { echo "cli_bench: skipped: no python3"; exit 77; }
script=scripts/bench-up.sh
passed=0 failed=0
tmp=$(mktemp -d)
export TMPDIR=$tmp # the script keeps its run directories there
trap 'rm -rf "$tmp"' EXIT
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }

bash -n "$script" && ok || bad "bash -n $script"
if command -v shellcheck >/dev/null; then
    shellcheck "$script" && ok || bad "shellcheck $script"
fi

# The dry run: each topology (validated by the real meshlab) and each command, nothing run.
MESHLAB_BIN=$bin bash "$script" --dry-run --n 2,8 --runs 2 >"$tmp/dry" 2>"$tmp/dry.err"
rc=$?
[ $rc -eq 0 ] && ok || bad "--dry-run exited $rc: $(cat "$tmp/dry.err")"
grep -q '^name: bench-n2$' "$tmp/dry" && grep -q '^name: bench-n8$' "$tmp/dry" && ok ||
    bad "--dry-run prints a topology per N"
[ "$(grep -c '^  - name: ' "$tmp/dry")" -eq 12 ] && ok || bad "--dry-run: hub + 2 and hub + 8 nodes"
grep -q '^  paths: \[plain\]$' "$tmp/dry" && grep -q '^  memory_mib: 512$' "$tmp/dry" && ok ||
    bad "--dry-run: plain path only, 512 MiB"
[ "$(grep -c -- 'down bench-n8 --purge-cache$' "$tmp/dry")" -eq 2 ] && ok ||
    bad "--dry-run: one cold start per run"
[ "$(grep -c 'up .*# warm$' "$tmp/dry")" -eq 4 ] && ok || bad "--dry-run: one warm up per N and run"

# Arguments it refuses.
for args in "--n 9" "--n 1" "--n 2,x" "--runs 0" "--bogus"; do
    # shellcheck disable=SC2086 # the words are the arguments
    MESHLAB_BIN=$bin bash "$script" $args --dry-run >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -ne 0 ] && ok || bad "'$args' accepted"
done
MESHLAB_BIN=$bin bash "$script" --n 9 --dry-run >/dev/null 2>"$tmp/err"
grep -q 'at most 8 clients' "$tmp/err" && ok || bad "--n 9 says the limit: $(cat "$tmp/err")"
MESHLAB_BIN=$tmp/none bash "$script" --n 2 >/dev/null 2>"$tmp/err"
grep -q 'meshlab is not built' "$tmp/err" && ok || bad "a missing meshlab is said: $(cat "$tmp/err")"
if command -v virsh >/dev/null; then
    MESHLAB_BIN=$bin MESHLAB_URI='qemu+unix:///system?socket=/nonexistent' bash "$script" --n 2 \
        >/dev/null 2>"$tmp/err"
    grep -q 'libvirtd is not answering' "$tmp/err" && ok || bad "no libvirtd is said: $(cat "$tmp/err")"
fi

# A stand-in meshlab: up writes the lab state file ("start" cold unless a down without
# --purge-cache left warm-start state) and one overlay per node; down removes them.
command -v virsh >/dev/null || { echo "$passed passed, $failed failed (no virsh: no stand-in run)"; [ $failed -eq 0 ]; exit; }
cat >"$tmp/meshlab" <<'EOF'
#!/usr/bin/env bash
echo "$*" >>"$STUB_LOG"
st=$MESHLAB_STATE_DIR
case "$1 $2" in
"down --help") echo "Usage: meshlab down [--purge-cache] NAME|FILE" ;;
up*)
    name=$(sed -n 's/^name: //p' "$2")
    nodes=$(grep -c '^  - name: ' "$2")
    start=cold
    [ -e "$st/warm-$name" ] && start=warm
    mkdir -p "$st/labs" "$st/pools/$name"
    [ -n "${STUB_HANG:-}" ] && { trap 'exit 130' INT; sleep 30 & wait; }
    python3 -c '
import json, sys
n, start = int(sys.argv[1]), sys.argv[2]
print(json.dumps({"start": start, "phases": [{"name": "boot", "seconds": 1.5}],
                  "guests": [{"boot_s": 1.0 + i, "ready_s": 2.0 + i, "start": start}
                             for i in range(n)]}))' "$nodes" "$start" >"$st/labs/$name.json"
    for ((i = 0; i < nodes; i++)); do head -c $((4096 * (i + 1))) /dev/zero >"$st/pools/$name/n$i.qcow2"; done ;;
down*)
    rm -rf "$st/labs/$2.json" "$st/pools/$2"
    if [ "${3:-}" = --purge-cache ]; then rm -f "$st/warm-$2"; else touch "$st/warm-$2"; fi ;;
esac
EOF
chmod +x "$tmp/meshlab"
export STUB_LOG=$tmp/calls MESHLAB_STATE_DIR=$tmp/state MESHLAB_URI=test:///default
mkdir -p "$MESHLAB_STATE_DIR"
MESHLAB_BIN=$tmp/meshlab bash "$script" --n 2,3 --json "$tmp/b.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ok || bad "the stand-in run exited $rc: $(cat "$tmp/err")"
grep -v -- --help "$STUB_LOG" | sed 's|/[^ ]*/||g' >"$tmp/calls.short"
cat >"$tmp/calls.want" <<'EOF'
down bench-n2 --purge-cache
up bench-n2.yaml --out n2-r1-cold
down bench-n2
up bench-n2.yaml --out n2-r1-warm
down bench-n2
down bench-n3 --purge-cache
up bench-n3.yaml --out n3-r1-cold
down bench-n3
up bench-n3.yaml --out n3-r1-warm
down bench-n3
EOF
diff "$tmp/calls.want" "$tmp/calls.short" >"$tmp/diff" && ok || bad "the calls: $(cat "$tmp/diff")"
python3 - "$tmp/b.json" <<'PY' && ok || bad "the JSON file"
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]
assert [(r["clients"], r["start_wanted"], r["start"]) for r in runs] == [
    (2, "cold", "cold"), (2, "warm", "warm"), (3, "cold", "cold"), (3, "warm", "warm")], runs
r = runs[2]
assert [g["name"] for g in r["guests"]] == ["hub", "client-1", "client-2", "client-3"], r
assert r["guests"][3]["ready_s"] == 5.0 and r["guests"][0]["boot_s"] == 1.0, r
assert [o["apparent_bytes"] for o in r["overlays"]] == [4096, 8192, 12288, 16384], r
assert all(o["allocated_bytes"] >= 0 for o in r["overlays"]), r
for r in runs:
    assert r["up_rc"] == 0 and r["down_rc"] == 0 and r["up_wall_s"] >= 0 and r["down_wall_s"] >= 0
    assert r["controller_max_rss_kib"] > 0 and r["controller_user_s"] >= 0, r
PY
grep -q '^  N run want  start' "$tmp/out" && [ "$(grep -c '^  [23] ' "$tmp/out")" -eq 4 ] && ok ||
    bad "the table: $(cat "$tmp/out")"

# Interrupted during an up (Ctrl-C reaches the whole foreground group): the lab is taken down.
: >"$STUB_LOG"
set -m
STUB_HANG=1 MESHLAB_BIN=$tmp/meshlab bash "$script" --n 2 --json "$tmp/c.json" >/dev/null 2>&1 &
pid=$!
set +m
for _ in $(seq 1 100); do grep -q '^up ' "$STUB_LOG" && break; sleep 0.1; done
sleep 0.3
kill -INT -- -"$pid"
wait "$pid"
rc=$?
[ $rc -eq 130 ] && ok || bad "interrupted: exited $rc, not 130"
[ "$(tail -n 1 "$STUB_LOG")" = "down bench-n2" ] && ok ||
    bad "interrupted: the last call is not 'down bench-n2': $(cat "$STUB_LOG")"
[ ! -e "$tmp/c.json" ] && ok || bad "interrupted: a JSON file was written"

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
