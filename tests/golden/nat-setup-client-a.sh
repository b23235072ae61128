set -e
[ -e /run/netns/mlnat ] || ip netns add mlnat
ip link show mlnat0 >/dev/null 2>&1 ||
    ip link add mlnat0 type veth peer name nat0 netns mlnat
ip addr replace 172.16.11.1/24 dev mlnat0
ip link set mlnat0 up
ip -n mlnat link set lo up
ip -n mlnat addr replace 172.16.11.2/24 dev nat0
ip -n mlnat link set nat0 up
ip -n mlnat route replace default via 172.16.11.1
sysctl -qw net.ipv4.ip_forward=1
