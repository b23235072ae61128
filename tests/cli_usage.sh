#!/usr/bin/env bash
# The command layer without libvirt: every verb's --help is true and exits 0,
# misuse exits 2 with a usage text, and bad input to up/run is refused before
# anything is created.
set -u
bin=${MESHLAB_BIN:-build/meshlab}
[ -x "$bin" ] || { echo "cli_usage: skipped: $bin not built"; exit 77; }
passed=0 failed=0
# Private files: parallel test runs must not read each other's output.
tmp=$(mktemp -d)
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
expect() { # expect RC DESCRIPTION -- command...
    local want=$1 what=$2; shift 3
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" = "$want" ]; then ok; else bad "$what: exit $rc, wanted $want"; fi
}

for verb in up run exec console down status validate check fetch report compare; do
    expect 0 "$verb --help" -- "$bin" "$verb" --help
    grep -q "^Usage: meshlab $verb" "$tmp/out" && ok || bad "$verb --help prints its usage"
done
expect 0 "check --help" -- "$bin" check --help
grep -q "MESHLAB_KVM_REPROBE=1" "$tmp/out" && ok || bad "check --help says how to re-probe KVM"
for verb in status check compare; do
    expect 0 "$verb --help" -- "$bin" "$verb" --help
    grep -q "^Usage: meshlab $verb \(\[--connect URI\] \)\?\[--json\]" "$tmp/out" && ok || bad "$verb --help shows --json"
    grep -q "^  -j, --json " "$tmp/out" && ok || bad "$verb --help describes --json"
    expect 2 "$verb --json with an operand" -- "$bin" "$verb" --json extra
    expect 2 "$verb with an unknown option" -- "$bin" "$verb" --bogus
done
expect 2 "validate refuses --json" -- "$bin" validate --json topologies/three-guest.yaml
expect 0 "--help" -- "$bin" --help
for verb in up run exec console down status validate check report compare; do
    grep -q "^  $verb " "$tmp/out" && ok || bad "--help lists $verb"
done
expect 0 "--version" -- "$bin" --version
expect 2 "no command" -- "$bin"
expect 2 "unknown command" -- "$bin" frobnicate
grep -q "unknown command 'frobnicate'" "$tmp/err" && ok || bad "unknown command is named"
# fetch checks every name before it downloads anything, and names what it knows: the image and
# each dataplane's fetched programs (the cache's table of them).
MESHLAB_CACHE_DIR=$tmp/no-cache expect 2 "fetch of an unknown name" -- "$bin" fetch tailscale nosuch
grep -qx "meshlab: unknown name 'nosuch'; known: ubuntu-24.04, tailscale, headscale, all" "$tmp/err" && ok ||
    bad "fetch names the unknown name and what it knows: $(cat "$tmp/err")"
[ ! -e "$tmp/no-cache" ] && ok || bad "fetch of an unknown name touched the cache"
expect 2 "validate without a file" -- "$bin" validate
expect 2 "status with an operand" -- "$bin" status extra
expect 2 "run with an unknown option" -- "$bin" run --bogus topologies/three-guest.yaml
# up and run share one option loop; each verb still takes only its own options.
expect 2 "up with run's --quick" -- "$bin" up --quick topologies/three-guest.yaml
grep -q "^Usage: meshlab up" "$tmp/err" && ok || bad "up --quick prints up's usage"
expect 2 "run with two files" -- "$bin" run topologies/three-guest.yaml topologies/three-guest.yaml
expect 2 "down of a path that is not a file" -- "$bin" down no/such/lab.yaml

# Bad input to up and run stops before libvirt is even contacted.
bad_topo=$(ls tests/data/bad/*.yaml | head -1)
for verb in up run; do
    MESHLAB_URI=test:///nonexistent-should-not-be-opened \
        expect 2 "$verb with a malformed topology" -- "$bin" "$verb" "$bad_topo"
    grep -q "^meshlab: $bad_topo:[0-9]*:[0-9]*: " "$tmp/err" && ok ||
        bad "$verb names file:line:col"
done
# The profile is resolved before any lab is touched: a wrong --profile creates nothing (no
# state, no lock, no run directory) and never contacts libvirt.
nolab() { MESHLAB_URI=test:///nonexistent-should-not-be-opened MESHLAB_STATE_DIR="$tmp/state" "$@"; }
nolab expect 2 "run --profile with an unknown name" -- \
    "$bin" run --profile nope --out "$tmp/run" topologies/three-guest.yaml
grep -qx "meshlab: topologies/three-guest.yaml has no profile 'nope'; its profiles are full, deep, quick" \
    "$tmp/err" && ok || bad "an unknown --profile names the file's profiles: $(cat "$tmp/err")"
nolab expect 2 "run --quick with --profile deep" -- \
    "$bin" run --quick --profile deep --out "$tmp/run" topologies/three-guest.yaml
grep -qx "meshlab: --quick is --profile quick; it cannot go with --profile deep" "$tmp/err" && ok ||
    bad "--quick with another --profile is refused: $(cat "$tmp/err")"
# The VPS workload's flags are checked before any lab is touched, like the profile.
nolab expect 2 "run --relayed-share above 1" -- \
    "$bin" run --traffic 210 --relayed-share 1.5 --out "$tmp/run" topologies/three-guest.yaml
grep -qx "meshlab: --relayed-share must be 0 to 1 (0.2 for a fifth), not 1.5" "$tmp/err" && ok ||
    bad "a bad --relayed-share is named: $(cat "$tmp/err")"
nolab expect 2 "run --egress-price without --traffic" -- \
    "$bin" run --egress-price 0.01 --out "$tmp/run" topologies/three-guest.yaml
grep -q "give --traffic GB" "$tmp/err" && ok || bad "a workload without traffic: $(cat "$tmp/err")"
[ ! -e "$tmp/run" ] && [ ! -e "$tmp/state" ] && ok || bad "a bad workload flag created nothing"
"$bin" run --help | grep -q "^  --traffic GB " && ok || bad "run --help describes --traffic"
# --quick and --profile quick agree; both ask for quick, which this file does not have.
only=tests/data/profiles-full-only.yaml
for args in "--quick" "--profile quick" "--quick --profile quick" "--profile=quick"; do
    # shellcheck disable=SC2086 # the options are words on purpose
    nolab expect 2 "run $args on a file without quick" -- "$bin" run $args --out "$tmp/run" "$only"
    grep -qx "meshlab: $only has no profile 'quick'; its profiles are full" "$tmp/err" && ok ||
        bad "run $args asks for the quick profile: $(cat "$tmp/err")"
done
nolab expect 2 "run --profile without a name" -- "$bin" run --profile
grep -q "^Usage: meshlab run" "$tmp/err" && ok || bad "run --profile without a name prints the usage"
[ ! -e "$tmp/run" ] && [ ! -e "$tmp/state" ] && ok || bad "a refused --profile created something"
expect 0 "run --help" -- "$bin" run --help
grep -q -- "--profile NAME" "$tmp/out" && ok || bad "run --help describes --profile"
expect 2 "up with run's --profile" -- "$bin" up --profile full topologies/three-guest.yaml

MESHLAB_BOOT_TIMEOUT=soon expect 2 "up with a bad MESHLAB_BOOT_TIMEOUT" -- \
    "$bin" up topologies/three-guest.yaml
grep -q "MESHLAB_BOOT_TIMEOUT must be a number of seconds" "$tmp/err" && ok ||
    bad "bad MESHLAB_BOOT_TIMEOUT is explained"

# exec and console: misuse is refused before libvirt is contacted, with what was wrong.
nolab expect 2 "exec without --" -- "$bin" exec demo hub nft list ruleset
grep -q "the command must follow \`--\`" "$tmp/err" && ok || bad "exec without -- says so: $(cat "$tmp/err")"
nolab expect 2 "exec without a command" -- "$bin" exec demo hub --
grep -q "no command after \`--\`" "$tmp/err" && ok || bad "exec without a command says so"
nolab expect 2 "exec with an unknown option" -- "$bin" exec demo hub --bogus -- true
grep -q "unknown option '--bogus'" "$tmp/err" && ok || bad "exec names the unknown option"
grep -q "^Usage: meshlab exec \[--connect URI\] LAB NODE" "$tmp/err" && ok || bad "exec misuse shows the usage line"
nolab expect 2 "exec without a node" -- "$bin" exec demo -- true
nolab expect 2 "exec with a bad --timeout" -- "$bin" exec demo hub --timeout 0 -- true
nolab expect 2 "exec --timeout without a value" -- "$bin" exec demo hub --timeout -- true
nolab expect 2 "console without a node" -- "$bin" console demo
nolab expect 2 "console with an unknown option" -- "$bin" console --bogus demo hub
# Finding the guest, on libvirt's test driver: a lab "demo" with guests hub and client-a.
demo() { MESHLAB_URI="test://$PWD/tests/data/libvirt-test-lab.xml" MESHLAB_STATE_DIR="$tmp/state" "$@"; }
demo expect 2 "exec in a lab that does not exist" -- "$bin" exec nosuch hub -- true
grep -qx "meshlab: no lab nosuch: meshlab status lists running labs" "$tmp/err" && ok ||
    bad "exec names the missing lab: $(cat "$tmp/err")"
demo expect 2 "exec on a node the lab lacks" -- "$bin" exec demo nope -- true
grep -qx "meshlab: lab demo has no node 'nope'; its nodes are client-a, hub" "$tmp/err" && ok ||
    bad "exec lists the lab's nodes: $(cat "$tmp/err")"
demo expect 1 "exec where the guest agent does not answer" -- "$bin" exec demo hub -- true
grep -q "the guest agent of hub (lab demo) does not answer" "$tmp/err" && ok ||
    bad "exec says the agent does not answer: $(cat "$tmp/err")"
demo expect 2 "console on a node the lab lacks" -- "$bin" console demo nope
demo expect 1 "console on a guest without a pty console" -- "$bin" console demo hub
grep -q "has no serial console to attach to" "$tmp/err" && ok || bad "console says why not"

# export --client-address: each a client of the run's topology, once, NODE=ADDR; refused with
# exit 2 and the reason before anything is written.
run=$tmp/run
mkdir -p "$run"
cp tests/data/results-v2-matrix.json "$run/results.json"
cp topologies/three-guest.yaml "$run/topology.yaml"
expect 0 "export --help" -- "$bin" export --help
grep -q "^  --client-address NODE=ADDR" "$tmp/out" && ok || bad "export --help describes --client-address"
while IFS='|' read -r arg why; do
    expect 2 "export --client-address $arg" -- "$bin" export --hub-address 203.0.113.10 \
        --client-address client-b=198.51.100.12 --client-address "$arg" --to "$tmp/x" "$run"
    grep -qF "'$arg' $why" "$tmp/err" && grep -qF "give NODE=ADDR once for each client (client-a, client-b)" "$tmp/err" \
        && ok || bad "export --client-address $arg says it $why: $(cat "$tmp/err")"
    [ ! -e "$tmp/x" ] && ok || bad "export --client-address $arg wrote $tmp/x"
done <<'ARGS'
client-a|is not NODE=ADDR
hub=198.51.100.10|names the hub, whose address is --hub-address
client-z=198.51.100.13|names no node of the run's topology
client-a=bad_addr!|has an address that is neither an IP address nor a DNS name
client-b=198.51.100.22|names a client given already
client-a=198.51.100.12|gives an address another node has
client-a=203.0.113.10|gives an address another node has
ARGS

rm -rf "$tmp"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
