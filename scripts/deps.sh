#!/usr/bin/env bash
# Installs what meshlab needs on Debian 12 and starts libvirt's daemons (these
# hosts may have no systemd, so the daemons are started by hand when needed).
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "deps.sh: run as root (it installs packages and starts libvirtd); as a normal user: su -c $0 root" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
packages=(
    # build
    gcc make cmake pkg-config
    libvirt-dev libguestfs-dev libcurl4-openssl-dev libjson-c-dev libyaml-dev libglib2.0-dev
    # export: WireGuard keys (libcrypto's X25519), the clients' QR codes (libqrencode, libpng)
    libssl-dev libqrencode-dev libpng-dev
    # run: libvirt and QEMU, the image builder, seeds
    libvirt-daemon-system libvirt-clients qemu-system-x86 qemu-utils
    mmdebstrap e2fsprogs cloud-image-utils genisoimage libguestfs-tools
    # the Ubuntu image's package verification (gpgv), and its test key (gpg)
    gpgv gpg
    # the guest firewall's rulesets checked by the real nft in a throwaway netns
    nftables
    # tests: the local HTTP server for the download tests, the e2e checks
    # (setpriv and flock are util-linux's)
    python3 iproute2 util-linux
    # test_fetch's https server: a throwaway certificate made at test time
    openssl
    # report.html's plots (gnuplot's svg terminal), results.json checked against its JSON Schema
    gnuplot-nox python3-jsonschema
    # run --capture: pcaps taken passively from the guests' taps
    tcpdump
    # a lab over several hosts: its underlay's round trip (ping) and TCP ceiling (iperf3),
    # measured between the hosts themselves
    iputils-ping iperf3
    # scripts/fuzz.sh: the parsers' libFuzzer targets (clang's fuzzer, ASan and UBSan runtimes)
    clang libclang-rt-14-dev
    # tests/openvpn_netns.sh and tests/tinc_netns.sh: the daemons the guests run, run for real in
    # network namespaces here (without them both skip, and a fresh machine's CI tested neither)
    openvpn tinc
    # export: nebula-cert makes an export's CA and certificates and `nebula -test` checks its
    # configs (Debian's nebula 1.6.1, the guests' own); `wg-quick strip` and `wg pubkey` check
    # its WireGuard files; zbarimg reads its QR codes back in test_export
    nebula wireguard-tools zbar-tools
    # tests/cli_connect_ssh.sh: a remote libvirt connection (qemu+ssh://) to this machine through
    # an sshd the test starts on loopback itself (the package's own sshd is not started)
    openssh-server openssh-client
)
need=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "deps.sh: installing ${need[*]}"
    apt-get update -q
    # A daemon a package would start (openssh-server's sshd on every address) is not wanted:
    # the tests start what they need, where they need it.
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    apt-get install -y -q --no-install-recommends "${need[@]}"
fi

if ! virsh -c qemu:///system version >/dev/null 2>&1; then
    mkdir -p /run/libvirt
    pgrep -x virtlogd >/dev/null || /usr/sbin/virtlogd -d
    pgrep -x libvirtd >/dev/null || /usr/sbin/libvirtd -d --pid-file /run/libvirtd.pid
    for _ in $(seq 1 30); do
        virsh -c qemu:///system version >/dev/null 2>&1 && break
        sleep 1
    done
fi
virsh -c qemu:///system version >/dev/null || { echo "deps.sh: libvirtd does not answer" >&2; exit 1; }
echo "deps.sh: packages installed, libvirtd answering"
