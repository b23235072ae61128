#!/bin/bash
# openvpn-hub on a real kernel, without guests: the hub and the two clients of a copy of
# topologies/dataplanes.yaml (its lab addresses moved to 10.231.7.0/24) as network namespaces
# on one bridge, which sits in a namespace of its own (nothing touches the host's interfaces).
# Each runs exactly what the dataplane sends its guest (test_openvpn --render writes it): the
# key made in the namespace, only the fingerprint read back, the configurations, the daemons.
# Then: client-a pings client-b's overlay address; the hub's NIC carries it twice, wrapped;
# the hub's status file reads as test_openvpn expects; a TCP stream's largest frame on the hub's
# NIC is the encapsulation's full-size frame.
# Usage: openvpn_netns.sh TEST_OPENVPN [RECORD_DIR]  (RECORD_DIR: keep the outputs as samples)
# Exits 77 when not root, or when openvpn, openssl or network namespaces are not here.
set -u
drv=$1 rec=${2:-}
[ "$(id -u)" = 0 ] || { echo "skip: network namespaces need root"; exit 77; }
for p in ip openvpn openssl python3; do
    command -v $p >/dev/null || { echo "skip: needs $p"; exit 77; }
done
id=$$
br=mlo-br-$id
nodes=(hub client-a client-b)
work=$(mktemp -d)
ns() { echo "mlo-$1-$id"; }
cleanup() {
    for n in "${nodes[@]}"; do
        f=$work/$n/run/pid
        [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null
    done
    [ -n "${tcpd:-}" ] && kill "$tcpd" 2>/dev/null
    for n in "${nodes[@]}"; do ip netns delete "$(ns "$n")" 2>/dev/null; done
    ip netns delete "$br" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# ping(8) may be missing here: ICMP echo from python, COUNT of SIZE data bytes, each answered.
pyping() {
    ip netns exec "$1" python3 -c '
import os, socket, struct, sys, time
dst, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.settimeout(1)
def csum(b):
    b += b"\0" * (len(b) % 2)
    v = sum(struct.unpack("!%dH" % (len(b) // 2), b)); v = (v >> 16) + (v & 0xffff)
    return ~(v + (v >> 16)) & 0xffff
ident = os.getpid() & 0xffff
for seq in range(count):
    body = b"m" * size
    h = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    s.sendto(struct.pack("!BBHHH", 8, 0, csum(h + body), ident, seq) + body, (dst, 0))
    try:
        while True:
            p = s.recv(65535)
            t, _, _, i, q = struct.unpack("!BBHHH", p[20:28])
            if t == 0 and i == ident and q == seq:
                break
    except socket.timeout:
        sys.exit(1)
    time.sleep(0.05)
' "$2" "$3" "$4"
}
fail() { echo "FAIL: $*"; [ -n "${KEEP:-}" ] && sleep "$KEEP"; for n in "${nodes[@]}"; do
    echo "--- $n log"; cat "$work/$n/run/log" 2>/dev/null; done; exit 1; }

ip netns add "$br" 2>/dev/null || { echo "skip: 'ip netns add' fails here"; exit 77; }
ip -n "$br" link add br0 type bridge
ip -n "$br" link set br0 up
last=10
for n in "${nodes[@]}"; do
    ip netns add "$(ns "$n")"
    ip link add eth0 netns "$(ns "$n")" type veth peer name "v$last" netns "$br"
    ip -n "$br" link set "v$last" master br0 up
    ip -n "$(ns "$n")" addr add "10.231.7.$last/24" dev eth0
    ip -n "$(ns "$n")" link set eth0 up
    ip -n "$(ns "$n")" link set lo up
    last=$((last + 1))
done

sed 's/192\.0\.2\./10.231.7./g' topologies/dataplanes.yaml > "$work/lab.yaml"
"$drv" --render "$work/lab.yaml" "$work" || fail "test_openvpn --render"
for n in "${nodes[@]}"; do
    ip netns exec "$(ns "$n")" sh -c "$(cat "$work/$n/keygen.sh")" > "$work/$n/fp" ||
        fail "keygen on $n"
    # Only the fingerprint came back; the key stayed where it was made.
    grep -q PRIVATE "$work/$n/fp" && fail "$n printed its key"
done
"$drv" --render "$work/lab.yaml" "$work" || fail "test_openvpn --render with fingerprints"
for n in "${nodes[@]}"; do
    [ -s "$work/$n/openvpn.conf" ] || fail "no configuration for $n"
    # Captured as the guest agent captures it: the daemon must not hold the pipe open.
    out=$(timeout 20 ip netns exec "$(ns "$n")" sh -c "$(cat "$work/$n/start.sh")" \
        < "$work/$n/openvpn.conf") || fail "start on $n: $out"
done

a=$(ns client-a)
ok=
for _ in $(seq 30); do
    pyping "$a" 10.17.0.3 1 56 && { ok=1; break; }
done
[ -n "$ok" ] || fail "client-a never reached 10.17.0.3 through the hub"

hubstats=/sys/class/net/v10/statistics
hubbytes() { ip netns exec "$br" sh -c "echo \$((\$(cat $hubstats/rx_bytes) + \$(cat $hubstats/tx_bytes)))"; }
route=$(ip netns exec "$a" ip -o route get 10.17.0.3)
echo "route: $route"
case "$route" in *" dev ovpn0 "*) ;; *) fail "client-a's route to 10.17.0.3 is not ovpn0: $route" ;; esac

# 20 pings of 1000 bytes: the hub's NIC moves each twice, wrapped, both ways; above its
# idle bytes (keepalives), counted over as long right after.
sleep 2
t0=$(date +%s.%N) b0=$(hubbytes)
pyping "$a" 10.17.0.3 20 1000 || fail "a ping was lost"
t1=$(date +%s.%N) b1=$(hubbytes)
sleep "$(python3 -c "print($t1 - $t0)")"
b2=$(hubbytes)
probe=$((20 * 2 * (20 + 8 + 1000)))
frame=$((20 + 8 + 1000 + 52 + 14))
echo "hub moved $((b1 - b0)) bytes for a probe of $probe, idle $((b2 - b1)) over as long;" \
    "the encapsulation says $((4 * 20 * frame))"
python3 -c "import sys; f=($b1-$b0-($b2-$b1))/$probe; print('hub factor %.3f' % f)
sys.exit(0 if abs(f - 4 * 20 * $frame / $probe) < 0.05 else 1)" ||
    fail "the ping burst's hub factor is not the encapsulation's"

h=$(ns hub)
read_status() { ip netns exec "$h" cat "$work/hub/run/status"; }
read_status > "$work/status-1"
sleep 2.5
read_status > "$work/status-2"
ip netns exec "$h" pgrep -x openvpn > /dev/null || fail "no openvpn process"
cat "$work/status-2"
"$drv" --status "$work/status-1" "$work/status-2" || fail "test_openvpn does not read the status"

# The largest frame of a TCP stream through the tunnel: MSS clamped by mssfix.
if command -v tcpdump >/dev/null; then
    ip netns exec "$br" tcpdump -i v10 -nn -e -l udp port 1194 > "$work/tcpdump" 2>/dev/null &
    tcpd=$!
    sleep 1
    ip netns exec "$(ns client-b)" python3 -c '
import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.17.0.3", 5201)); s.listen(1); c, _ = s.accept()
while c.recv(65536): pass' &
    srv=$!
    sleep 0.5
    ip netns exec "$a" python3 -c '
import socket; s = socket.create_connection(("10.17.0.3", 5201))
print("mss", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG))
s.sendall(b"x" * 2000000); s.close()' > "$work/mss"
    wait $srv
    sleep 1
    kill $tcpd; wait $tcpd 2>/dev/null; tcpd=
    max=$(sed -n 's/.* length \([0-9]*\): .*/\1/p' "$work/tcpdump" | sort -n | tail -1)
    echo "TCP through the tunnel: $(cat "$work/mss"); largest frame on the hub's NIC: $max bytes"
    [ "$max" = 1506 ] || fail "the largest frame is $max bytes, the encapsulation says 1506"
fi

if [ -n "$rec" ]; then
    mkdir -p "$rec"
    cp "$work/status-1" "$rec/status-1.txt"
    cp "$work/status-2" "$rec/status-2.txt"
    cp "$work/hub/openvpn.conf" "$rec/server.conf"
    cp "$work/client-a/openvpn.conf" "$rec/client-a.conf"
    echo "$route" > "$rec/route.txt"
    grep -m3 'length' "$work/tcpdump" > "$rec/tcpdump-head.txt" 2>/dev/null
    echo "$(cat "$work/mss") largest-frame $max" > "$rec/tcp.txt"
    openvpn --version | head -1 > "$rec/version.txt"
fi
echo "ok: openvpn-hub in network namespaces"
