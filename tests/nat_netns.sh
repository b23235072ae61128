#!/bin/bash
# The NAT types' rulesets on a real kernel, without guests: for each DIR/TYPE.nft, a hub, a
# NATed client's root namespace and the client's inside namespace, built as network namespaces
# on this host (addresses only inside them; nothing touches the host's own interfaces). The
# client's root namespace gets the guest firewall DIR/fw.nft and the type's ruleset, the inside
# namespace comes from DIR/setup.sh (ml_nat_setup_script_in), and the probe's two halves run
# as on the guests; the client's output lands in DIR/TYPE.out for test_nat to classify.
# Usage: nat_netns.sh DIR ID A1 A2 CLIENT TYPE...  (ID keeps concurrent runs apart)
# Exits 77 when not root or when network namespaces cannot be made here.
set -u
dir=$1 id=$2 a1=$3 a2=$4 client=$5
shift 5
[ "$(id -u)" = 0 ] || { echo "skip: network namespaces need root"; exit 77; }
command -v ip >/dev/null && command -v nft >/dev/null ||
    { echo "skip: needs ip (iproute2) and nft (nftables)"; exit 77; }
py=/usr/bin/python3
[ -x $py ] || { echo "skip: needs $py"; exit 77; }
hub=mlt-hub-$id cli=mlt-cli-$id in=mlt-in-$id
cleanup() {
    for ns in $hub $cli $in; do ip netns delete "$ns" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ip netns add "$hub" 2>/dev/null || { echo "skip: 'ip netns add' fails here"; exit 77; }
ip netns delete "$hub"

# One lab, fresh for each run: conntrack is per namespace, so nothing of the type before stays.
# The inside namespace is added out here: one that setup.sh adds under `ip netns exec` would be
# mounted in that command's private mount namespace and vanish with it (on a guest, setup.sh
# runs in the root namespace and adds it itself).
build() {
    cleanup
    ip netns add "$hub" && ip netns add "$cli" &&
        ip -n "$hub" link add eth0 type veth peer name eth0 netns "$cli" &&
        ip -n "$hub" addr add "$a1/24" dev eth0 && ip -n "$hub" addr add "$a2/24" dev eth0 &&
        ip -n "$cli" addr add "$client/24" dev eth0 &&
        for ns in $hub $cli; do
            ip -n "$ns" link set lo up && ip -n "$ns" link set eth0 up &&
                ip netns exec "$ns" nft -f "$dir/fw.nft" || return 1
        done &&
        ip netns add "$in" &&
        ip netns exec "$cli" sh -e "$dir/setup.sh"
}

# probe TYPE OUT [CLIENT_PORTS]: the hub's half in the background, the client's where its
# daemons would run (inside, or for none the client's root namespace).
probe() {
    ip netns exec "$hub" $py - $a1 $a2 3479 3480 <"$dir/hub.py" >"$dir/$2.hub" &
    local hubpid=$! where=$in
    [ "$1" = none ] && where=$cli
    ip netns exec "$where" $py - $a1 $a2 3479 3480 ${3:-} <"$dir/client.py" >"$dir/$2.out"
    local rc=$?
    wait $hubpid || rc=1
    return $rc
}

status=0
for type in "$@"; do
    build || { echo "FAIL: cannot build the namespaces for $type"; status=1; continue; }
    ip netns exec "$cli" nft -f "$dir/$type.nft" || { echo "FAIL: nft -f $type"; status=1; }
    # Twice: the setup script must be idempotent (ml_nat_apply runs it for every switch).
    ip netns exec "$cli" sh -e "$dir/setup.sh" || { echo "FAIL: setup.sh twice"; status=1; }
    probe "$type" "$type" || { echo "FAIL: probe behind $type"; status=1; }
    echo "$type: $(cat "$dir/$type.out")"
    if [ "$type" = port-restricted-cone ]; then
        # A dataplane's transport (nebula 4242, tailscaled 41641) must pass the guest
        # firewall's forward chain between the veth and the lab NIC.
        probe "$type" transport "4242 41641" || { echo "FAIL: transport probe"; status=1; }
        echo "transport: $(cat "$dir/transport.out")"
    fi
done
exit $status
