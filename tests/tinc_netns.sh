#!/usr/bin/env bash
# tinc-direct and tinc-relay for real, without guests: a hub and two clients in network
# namespaces on a bridge (10.231.0.10, .11, .12), each in its own mount namespace with its own
# /etc/tinc and /run, running exactly what src/dataplanes/tinc.c renders (`test_tinc render`):
# the key command, the daemon's prepare script with the node's bundle on stdin, its command,
# its ready check and the view (SIGUSR2 dump; tincd -D logs to stderr, which the guests' unit
# hands to the journal and this script to a file). Checks: the overlay answers; direct, the
# client's dump shows the server as its own via at its lab address and the hub's link stays
# quiet; under the relay policy (each client drops UDP from anything but the hub, as
# ML_POLICY_RELAY) the dump shows the hub as the server's nexthop with no MTU probe answered,
# the hub's link carries the probe at the ratio the path's frames give within 5 % (as
# ml_path_verdict: 20 pings and replies in and out, each the model's 1117-byte frame of a
# 1028-byte packet, 2 x 1117 / 1028 times the probe's bytes), and a TCP stream's full segments
# are 1514-byte frames on the hub's link (the physics table's encap). Last, the nodes run the
# files `meshlab export` hands over for tinc (`test_tinc export`), and the overlay answers.
#
# Usage: tinc_netns.sh TEST_TINC [SAMPLES_DIR]   (SAMPLES_DIR: where to save the dumps)
# Needs root, tinc, nft, tcpdump and python3; exits 77 (skip) without them.
set -euo pipefail

bin=${1:?usage: tinc_netns.sh TEST_TINC [SAMPLES_DIR]}
samples=${2:-}
[ "$(id -u)" = 0 ] || { echo "skip: needs root for network namespaces"; exit 77; }
for c in tincd nft tcpdump python3 nsenter unshare; do
    command -v "$c" >/dev/null || { echo "skip: $c is not installed"; exit 77; }
done
[ -d /etc/tinc ] || { echo "skip: /etc/tinc missing (tinc package not installed)"; exit 77; }

id=mltinc$$
nodes=(hub client-a client-b)
declare -A addr=([hub]=10.231.0.10 [client-a]=10.231.0.11 [client-b]=10.231.0.12)
declare -A veth=([hub]=vh [client-a]=va [client-b]=vb)
declare -A holder=()
work=$(mktemp -d /tmp/tinc-netns.XXXXXX)
target=10.44.0.3 # client-b's overlay address (tinc.c: 10.44.0.(node + 1))

# ping(8) may be missing here: ICMP echo over a raw socket, as ping -c COUNT -s SIZE -i INTERVAL
# sends it; exits 0 when every echo was answered within a second.
cat > "$work/ping.py" <<'PY'
import os, socket, struct, sys, time
dst, count, size, interval = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.settimeout(1)
def csum(b):
    b += b"\0" * (len(b) % 2)
    t = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    t = (t >> 16) + (t & 0xFFFF)
    return ~(t + (t >> 16)) & 0xFFFF
ident, got = os.getpid() & 0xFFFF, 0
for seq in range(count):
    body = bytes(size)
    c = csum(struct.pack("!BBHHH", 8, 0, 0, ident, seq) + body)
    s.sendto(struct.pack("!BBHHH", 8, 0, c, ident, seq) + body, (dst, 0))
    end = time.time() + 1
    while time.time() < end:
        try:
            d = s.recv(65535)
        except socket.timeout:
            break
        h = (d[0] & 15) * 4
        t, _, _, i, q = struct.unpack("!BBHHH", d[h:h + 8])
        if t == 0 and i == ident and q == seq:
            got += 1
            break
    time.sleep(interval)
sys.exit(0 if got == count else 1)
PY

in_node() { nsenter -t "${holder[$1]}" -m -n -- sh -c "$2"; }

cleanup() {
    set +e
    for n in "${nodes[@]}"; do
        [ -n "${holder[$n]:-}" ] || continue
        in_node "$n" 'tincd -n meshlab --kill >/dev/null 2>&1'
        kill "${holder[$n]}" 2>/dev/null
    done
    sleep 1
    for n in "${nodes[@]}" br; do ip netns del "$id-$n" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    [ -z "${TINC_NETNS_KEEP:-}" ] || { trap - EXIT; echo "kept $id in $work" >&2; }
    [ -z "${TINC_NETNS_DEBUG:-}" ] || ip -n "$id-client-a" addr || true
    [ -z "${TINC_NETNS_DEBUG:-}" ] || ip -n "$id-client-a" route get "$target" || true
    for n in "${nodes[@]}"; do echo "--- $n log"; tail -n 40 "$work/$n.log" 2>/dev/null; done; exit 1; }

ip netns add "$id-br"
ip -n "$id-br" link add br0 type bridge
ip -n "$id-br" link set br0 up
for n in "${nodes[@]}"; do
    ip netns add "$id-$n"
    ip link add eth0 netns "$id-$n" type veth peer name "${veth[$n]}" netns "$id-br"
    ip -n "$id-br" link set "${veth[$n]}" master br0 up
    ip -n "$id-$n" addr add "${addr[$n]}/24" dev eth0
    ip -n "$id-$n" link set eth0 up
    ip -n "$id-$n" link set lo up
    mkdir -p "$work/$n/etc" "$work/$n/run"
    ip netns exec "$id-$n" unshare -m --propagation private sleep 100000 >/dev/null 2>&1 &
    holder[$n]=$!
done
sleep 0.5
for n in "${nodes[@]}"; do
    in_node "$n" "mount --bind $work/$n/etc /etc/tinc && mount -t tmpfs tmpfs /run" ||
        fail "cannot give $n its own /etc/tinc and /run"
done

# Keys inside each node; only the public block comes out.
r=$work/render
mkdir -p "$r/keys"
"$bin" render "$r"
for n in "${nodes[@]}"; do
    in_node "$n" "$(cat "$r/keycmd.$n")" > "$r/keys/$n.pub" || fail "key command on $n"
    grep -q -- '-----BEGIN RSA PUBLIC KEY-----' "$r/keys/$n.pub" || fail "$n printed no public key"
    [ "$(grep -c PRIVATE "$r/keys/$n.pub")" = 0 ] || fail "$n printed a private key"
done
"$bin" render "$r"

start() { # NODE PREPARE?
    local n=$1
    if [ "$2" = prepare ]; then
        in_node "$n" "$(cat "$r/prepare")" < "$r/bundle.$n" || fail "prepare on $n"
    fi
    nsenter -t "${holder[$n]}" -m -n -- sh -c "$(cat "$r/command") ${TINC_NETNS_DEBUG:-}" \
        >/dev/null 2>>"$work/$n.log" &
    for _ in $(seq 60); do
        in_node "$n" "$(cat "$r/ready")" && return 0
        sleep 0.5
    done
    fail "tincd on $n never got its address"
}
stop() { in_node "$1" 'tincd -n meshlab --kill >/dev/null 2>&1; sleep 1'; }
view() { # NODE: its dump, as the guest's view command reads it from the journal
    in_node "$1" "$(cat "$r/view_kill")" || fail "tincd --kill=USR2 on $1"
    sh -c "tail -n 400 $work/$1.log | $(cat "$r/view_filter")"
}
ping_ok() {
    for _ in $(seq 60); do
        ip netns exec "$id-client-a" python3 "$work/ping.py" "$target" 1 56 0 && return 0
    done
    fail "$target never answered through tinc"
}
hub_bytes() {
    ip netns exec "$id-br" sh -c "echo \$((\$(cat /sys/class/net/vh/statistics/rx_bytes) + \
        \$(cat /sys/class/net/vh/statistics/tx_bytes)))"
}
# The verification probe as measure.c sends it: 20 pings of 1000 bytes; probe bytes count each
# IP packet once each way, 2 x (20 + 8 + 1000).
probe() {
    local before after
    before=$(hub_bytes)
    ip netns exec "$id-client-a" python3 "$work/ping.py" "$target" 20 1000 0.05 ||
        fail "probe pings lost"
    after=$(hub_bytes)
    echo $((after - before))
}
wait_view() { # NODE PATTERN (grep -P on NODE's dump; client-a's is left in view.txt)
    for _ in $(seq 60); do
        view "$1" > "$work/view.txt"
        grep -qP -- "$2" "$work/view.txt" && return 0
        sleep 1
    done
    cat "$work/view.txt" >&2
    fail "$1's dump never matched $2"
}
save() {
    [ -n "$samples" ] || return 0
    {
        echo "# $1: recorded by tests/tinc_netns.sh in network namespaces on Debian 12," \
             "$(dpkg-query -W -f='tinc ${Version}' tinc 2>/dev/null || tincd --version | head -1)," \
             "$(date -u +%Y-%m-%d); client-a's tincd, SIGUSR2"
        cat "$2"
    } > "$samples/$1.txt"
}

probed() { # PMTU discovery done on the hub's links, as tinc.c's settle waits for
    local fixed='pmtu (\d+) \(min \1 max \1\)'
    wait_view hub "^ client_b at .* $fixed"
    wait_view hub "^ client_a at .* $fixed"
    wait_view client-b "^ hub at .* $fixed"
    wait_view client-a "^ hub at .* $fixed"
}

probe_bytes=$((20 * 2 * (20 + 8 + 1000)))

# --- tinc-direct
start hub prepare
start client-a prepare
start client-b prepare
ping_ok
probed # as tinc.c's settle
wait_view client-a "$(cat "$r/direct_re")"
grep -q "^ client_b at 10.231.0.12 port 655 .* nexthop hub via client_b " "$work/view.txt" ||
    fail "direct: client_b is not its own via at 10.231.0.12 port 655"
cp "$work/view.txt" "$work/direct.txt"
hub=$(probe)
echo "direct: hub link moved $hub bytes for $probe_bytes probe bytes"
[ $((hub * 20)) -lt "$probe_bytes" ] || fail "direct: the hub carried $hub bytes (5% is $((probe_bytes / 20)))"
save direct "$work/direct.txt"

# --- tinc-relay: the relay policy, then the clients' tincd afresh
for n in client-a client-b; do
    in_node "$n" "nft add table inet meshlab_path && nft add chain inet meshlab_path input \
        '{ type filter hook input priority 0; policy accept; }' && nft add rule inet meshlab_path \
        input iifname eth0 ip saddr != ${addr[hub]} meta l4proto udp drop" || fail "nft on $n"
    stop "$n"
done
start client-a noprepare
start client-b noprepare
ping_ok
probed
wait_view client-a '^ client_b at .* nexthop hub via \S+ pmtu \d+ \(min 0 '
cp "$work/view.txt" "$work/relay.txt"
hub=$(probe)
echo "relay: hub link moved $hub bytes for $probe_bytes probe bytes"
relayed=$((20 * 4 * 1117))
[ $((hub * 100)) -ge $((relayed * 95)) ] && [ $((hub * 100)) -le $((relayed * 105)) ] ||
    fail "relay: the hub carried $hub bytes, not within 5% of $relayed (2 x 1117 / 1028 times $probe_bytes)"
save relay "$work/relay.txt"

# A TCP stream through the relay: its full segments on the hub's link, and the hub factor.
ip netns exec "$id-client-b" python3 -c '
import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.44.0.3", 5201)); s.listen(1); c, _ = s.accept()
while c.recv(65536): pass' &
sink=$!
sleep 0.5
ip netns exec "$id-br" timeout 20 tcpdump -i vh -nn -e -c 100 udp port 655 \
    > "$work/tcpdump.txt" 2>/dev/null &
dump=$!
sleep 1
before=$(hub_bytes)
ip netns exec "$id-client-a" python3 -c '
import socket; s = socket.create_connection(("10.44.0.3", 5201)); b = bytes(65536)
for _ in range(160): s.sendall(b)
s.close()' || fail "the TCP stream through the relay failed"
wait "$sink"
after=$(hub_bytes)
wait "$dump" || true
payload=$((160 * 65536))
python3 -c "print('relay TCP: hub factor %.3f (%d hub bytes, %d payload bytes)' % \
    ($((after - before)) / $payload, $((after - before)), $payload))"
max=$(grep -o 'length [0-9]*:' "$work/tcpdump.txt" | tr -dc '0-9\n' | sort -n | tail -1)
echo "relay TCP: largest frame on the hub's link: $max bytes"
[ "$max" = 1514 ] || fail "full segments should be 1514-byte frames (1437 inner + 63 + 14), saw $max"
if [ -n "$samples" ]; then
    {
        echo "# relay TCP stream, tcpdump -e on the hub's link (the first 100 tinc UDP frames);" \
             "recorded by tests/tinc_netns.sh in network namespaces on Debian 12," \
             "$(dpkg-query -W -f='tinc ${Version}' tinc)"
        cat "$work/tcpdump.txt"
    } > "$samples/relay-tcpdump.txt"
fi

# --- the export: every node's /etc/tinc/meshlab replaced by what `meshlab export` hands over
# (keys made by libcrypto, not by tincd -K), tincd run as the exported unit runs it, still
# under the relay policy: the overlay must answer through the hub.
x=$work/export
mkdir -p "$x"
"$bin" export "$x" || fail "test_tinc export"
exec_start=$(sed -n 's/^ExecStart=//p' "$x/unit")
[ -n "$exec_start" ] || fail "the exported unit has no ExecStart"
for n in "${nodes[@]}"; do stop "$n"; done
for n in "${nodes[@]}"; do
    rm -rf "$work/$n/etc/meshlab"
    cp -r "$x/$n" "$work/$n/etc/meshlab"
    chmod 755 "$work/$n/etc/meshlab/tinc-up"
    nsenter -t "${holder[$n]}" -m -n -- sh -c "$exec_start" >/dev/null 2>>"$work/$n.log" &
    for _ in $(seq 60); do in_node "$n" "$(cat "$r/ready")" && break; sleep 0.5; done
    in_node "$n" "$(cat "$r/ready")" || fail "the exported tincd on $n never got its address"
done
ping_ok
wait_view client-a '^ client_b at .* nexthop hub via \S+ '
echo "export: the exported files and keys carry the overlay through the hub"
echo "PASS"
