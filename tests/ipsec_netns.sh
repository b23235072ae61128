#!/usr/bin/env bash
# ipsec-hub for real, in network namespaces on this host: three namespaces (hub, client-a,
# client-b) on a bridge in a fourth, 10.231.17.0/24, each node's charon-systemd in its own
# mount namespace (/etc/swanctl, /etc/strongswan.d and /run bound to a directory of its own).
# Each node runs what src/dataplanes/ipsec.c renders (printed by test_ipsec): the key command,
# the setup script, `swanctl --load-all`; then client-a pings client-b's overlay address, the
# hub's wire must show ESP in UDP 4500 and no ICMP, a 1438-byte inner packet must leave as a
# 1514-byte frame, and verify() must accept the hub's view.
# MESHLAB_RECORD_SAMPLES=1 saves that view under tests/data/samples/ipsec/.
# Skips (77) when not root or strongSwan (charon-systemd, swanctl, pki) is missing.
set -uo pipefail
drv=${1:?usage: ipsec_netns.sh PATH/TO/test_ipsec}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for network namespaces"; exit 77; }
for p in charon-systemd swanctl pki ip tcpdump nsenter unshare; do
    command -v "$p" >/dev/null || { echo "SKIP: $p is not installed"; exit 77; }
done
ns=mlipsec$$
dir=$(mktemp -d /tmp/mlipsec.XXXXXX)
nodes=(hub client-a client-b)
declare -A holder
cleanup() {
    for n in "${nodes[@]}"; do
        [ -f "$dir/$n/charon.pid" ] && kill "$(cat "$dir/$n/charon.pid")" 2>/dev/null
        [ -n "${holder[$n]:-}" ] && kill "${holder[$n]}" 2>/dev/null
    done
    for _ in $(seq 30); do
        alive=
        for n in "${nodes[@]}"; do
            [ -f "$dir/$n/charon.pid" ] && kill -0 "$(cat "$dir/$n/charon.pid")" 2>/dev/null && alive=1
        done
        [ -z "$alive" ] && break
        sleep 0.2
    done
    for n in "${nodes[@]}" sw; do ip netns del "$ns-$n" 2>/dev/null; done
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
in_node() { local n=$1; shift; nsenter -t "${holder[$n]}" -m -n "$@"; }

ip netns add "$ns-sw" || fail "cannot add namespace $ns-sw"
ip -n "$ns-sw" link add br0 type bridge && ip -n "$ns-sw" link set br0 up
for i in 0 1 2; do
    n=${nodes[$i]}
    ip netns add "$ns-$n"
    ip link add "mlis$$$i" type veth peer name eth0 netns "$ns-$n"
    ip link set "mlis$$$i" netns "$ns-sw"
    ip -n "$ns-sw" link set "mlis$$$i" master br0 up
    ip -n "$ns-$n" addr add "10.231.17.$((10 + i))/24" dev eth0
    ip -n "$ns-$n" link set eth0 up
    ip -n "$ns-$n" link set lo up
    mkdir -p "$dir/$n/run"
    cp -a /etc/swanctl "$dir/$n/swanctl" && cp -a /etc/strongswan.d "$dir/$n/strongswan.d"
    # charon-systemd logs to the journal, which /run hides here: a file instead.
    printf 'charon-systemd {\n    filelog {\n        netns {\n            path = /run/charon.log\n            default = 1\n        }\n    }\n}\n' \
        > "$dir/$n/strongswan.d/zz-netns-log.conf"
    ip netns exec "$ns-$n" unshare -m --propagation private sh -c \
        "mount --bind $dir/$n/swanctl /etc/swanctl && mount --bind $dir/$n/strongswan.d /etc/strongswan.d && mount --bind $dir/$n/run /run && exec sleep 900" &
    holder[$n]=$!
done
sleep 1
# Whether this kernel can carry the data path: XFRM interfaces and rfc4106(gcm(aes)). Without
# them the configuration, the keys and IKE are still checked (userspace), ipsec0 left out.
kernel=1
ip -n "$ns-sw" link add mlisprobe type xfrm if_id 9 2>/dev/null || kernel=
ip -n "$ns-sw" xfrm state add src 10.231.17.1 dst 10.231.17.2 proto esp spi 0x100 mode tunnel \
    aead 'rfc4106(gcm(aes))' 0x0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021222324 128 \
    encap espinudp 4500 4500 0.0.0.0 2>/dev/null || kernel=
ip -n "$ns-sw" xfrm state flush 2>/dev/null
mkdir -p "$dir/keys"
keycmd=$("$drv" key-command) || fail "test_ipsec key-command"
for n in "${nodes[@]}"; do
    in_node "$n" sh -c "$keycmd" > "$dir/keys/$n.pem" 2>/dev/null || fail "$n: key command"
    grep -q "BEGIN PUBLIC KEY" "$dir/keys/$n.pem" || fail "$n: the key command printed no public key"
    in_node "$n" grep -q "PRIVATE KEY" /etc/swanctl/private/meshlab.pem || fail "$n: no private key in the node"
done
for i in 0 1 2; do
    n=${nodes[$i]}
    "$drv" setup "$i" "$dir/keys" > "$dir/$n/setup.sh" || fail "test_ipsec setup $i"
    [ -n "$kernel" ] || sed -i '/ipsec0/d' "$dir/$n/setup.sh"
    in_node "$n" sh -e < "$dir/$n/setup.sh" || fail "$n: setup script"
    # ipsec.c runs `systemctl restart strongswan.service`; no systemd here, so the daemon itself
    in_node "$n" sh -c 'charon-systemd >/dev/null 2>&1 & echo $!' > "$dir/$n/charon.pid"
    for _ in $(seq 50); do in_node "$n" test -S /run/charon.vici && break; sleep 0.2; done
    in_node "$n" swanctl --load-all --noprompt > "$dir/$n/load.txt" 2>&1 ||
        { cat "$dir/$n/load.txt"; fail "$n: swanctl --load-all"; }
    grep -q "loaded connection" "$dir/$n/load.txt" || { cat "$dir/$n/load.txt"; fail "$n: no connection loaded"; }
done
# IKE: both clients authenticated by their raw public keys, moved to UDP 4500 by encap = yes.
for _ in $(seq 50); do
    in_node hub swanctl --list-sas --noblock > "$dir/ike.txt" 2>/dev/null
    [ "$(grep -c "ESTABLISHED, IKEv2" "$dir/ike.txt")" = 2 ] && break
    sleep 0.2
done
for c in a b; do
    grep -q "remote 'client-$c' @ 10.231.17.1[12]\[4500\]" "$dir/ike.txt" ||
        { cat "$dir/ike.txt"; in_node hub tail -20 /run/charon.log; fail "no IKE_SA with client-$c on UDP 4500"; }
done
grep -q "AES_GCM_16-256/PRF_HMAC_SHA2_256/ECP_256" "$dir/ike.txt" || fail "IKE not AES-GCM-256: $(cat "$dir/ike.txt")"
in_node hub swanctl --version --daemon > "$dir/version-daemon.txt" 2>/dev/null
if [ -z "$kernel" ]; then
    if [ "${MESHLAB_RECORD_SAMPLES:-}" = 1 ]; then
        cp "$dir/ike.txt" tests/data/samples/ipsec/list-sas-hub-ike-only.txt
        cp "$dir/version-daemon.txt" tests/data/samples/ipsec/version-daemon.txt
        echo "recorded into tests/data/samples/ipsec/"
    fi
    echo "SKIP: keys, configuration and IKE (both clients on UDP 4500) checked; the data path not:"
    echo "this kernel ($(uname -r)) has no XFRM interfaces or no rfc4106(gcm(aes))"
    exit 77
fi
ok=
for _ in $(seq 60); do
    in_node client-a ping -c 1 -W 1 10.46.0.3 >/dev/null 2>&1 && { ok=1; break; }
done
[ -n "$ok" ] || { in_node client-a swanctl --list-sas; in_node hub cat /run/charon.log | tail -30; fail "client-a does not reach 10.46.0.3"; }
# The wire: ESP in UDP 4500 only, no ICMP in clear; a full inner packet is a 1514-byte frame.
in_node hub timeout 15 tcpdump -nn -e -l -i eth0 -c 44 > "$dir/wire.txt" 2>/dev/null &
tpid=$!
sleep 1
in_node client-a ping -c 20 -i 0.05 -s 972 10.46.0.3 > "$dir/ping.txt" || fail "ping lost packets: $(tail -2 "$dir/ping.txt")"
in_node client-a ping -c 1 -M do -s 1410 10.46.0.3 >/dev/null || fail "a 1438-byte inner packet did not pass"
wait "$tpid"
grep -q "ICMP" "$dir/wire.txt" && fail "ICMP in clear on the hub's wire: $(grep -m1 ICMP "$dir/wire.txt")"
esp=$(grep -c "UDP-encap\|\.4500 > .*\.4500" "$dir/wire.txt")
[ "$esp" -ge 40 ] || fail "the hub saw $esp ESP-in-UDP packets of 44: $(head -3 "$dir/wire.txt")"
grep -q "length 1514:" "$dir/wire.txt" || fail "no 1514-byte frame for a 1438-byte inner packet: $(grep -m3 -o 'length [0-9]*:' "$dir/wire.txt" | sort -u | tr '\n' ' ')"
in_node client-a ping -c 1 -M do -s 1411 10.46.0.3 >/dev/null 2>&1 && fail "a 1439-byte inner packet passed ipsec0's MTU 1438"
out=$dir/samples
mkdir -p "$out"
in_node client-a ip -o route get 10.46.0.3 > "$out/route-client-a.txt"
in_node hub swanctl --list-sas --noblock > "$out/list-sas-hub.txt"
in_node hub sh -c "$("$drv" view-command)" > "$out/xfrm-state-hub.txt"
in_node hub sh -c 'pidof charon-systemd || true' > "$out/pidof-hub.txt"
in_node hub swanctl --version --daemon > "$out/version-daemon.txt" 2>/dev/null
grep -q " 0x" "$out/xfrm-state-hub.txt" && fail "the view still holds a key"
"$drv" verify "$out" || fail "verify() rejects the live view (above)"
if [ "${MESHLAB_RECORD_SAMPLES:-}" = 1 ]; then
    cp "$out"/*.txt tests/data/samples/ipsec/ && cp "$dir/wire.txt" tests/data/samples/ipsec/wire-hub.txt
    echo "recorded into tests/data/samples/ipsec/"
fi
echo "ipsec-hub in netns: client-a -> 10.46.0.3 through the hub inside ESP in UDP ($esp packets)"
