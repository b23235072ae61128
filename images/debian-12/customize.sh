#!/bin/sh
# mmdebstrap customize hook for the debian-12 lab guest: $1 is the root file system.
# Everything here serves one goal: a guest that boots fast under TCG, takes its
# configuration from a NoCloud seed, and is driven only through the guest agent.
set -eu
root="$1"

echo 'LABEL=meshlab-root / ext4 rw,noatime,errors=remount-ro 0 0' > "$root/etc/fstab"
echo 'meshlab-guest' > "$root/etc/hostname"
# Empty, not "uninitialized": each boot gets its own transient id without systemd's
# first-boot work (presets of every unit), which would cost seconds under TCG.
: > "$root/etc/machine-id"

# cloud-init: only the NoCloud seed, and only the modules a lab guest uses.
cat > "$root/etc/cloud/cloud.cfg.d/90-meshlab.cfg" <<'CFG'
datasource_list: [ NoCloud, None ]
# The seed is in NoCloud's seed directory: no blkid scan for a cidata volume.
datasource:
  NoCloud:
    fs_label: null
locale: false
ssh_genkeytypes: []
ssh_deletekeys: false
cloud_init_modules: [seed_random, bootcmd, write_files, set_hostname, update_hostname, update_etc_hosts]
cloud_config_modules: []
cloud_final_modules: []
CFG

# A tiny initrd. The cloud kernel has ext4 built in but virtio's PCI transport and
# block driver as modules; initramfs-tools' generic initrd (15 MB, udev, 190
# modules) costs seconds of emulated CPU to unpack and run. This one is busybox,
# the six modules, and a script that mounts /dev/vda and hands over to systemd.
kver=$(ls "$root/lib/modules" | head -1)
grep -q '^CONFIG_EXT4_FS=y' "$root/boot/config-$kver" || {
    echo "customize.sh: kernel $kver has no built-in ext4; the tiny initrd cannot mount the root" >&2
    exit 1
}
stage="$root/tmp/meshlab-initrd"
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/dev" "$stage/proc" "$stage/root" "$stage/lib/modules"
cp "$root/bin/busybox" "$stage/bin/busybox"
mods="virtio/virtio virtio/virtio_ring virtio/virtio_pci_legacy_dev virtio/virtio_pci_modern_dev virtio/virtio_pci block/virtio_blk"
for m in $mods; do
    f="$root/lib/modules/$kver/kernel/drivers/$m.ko"
    [ -f "$f" ] || { echo "customize.sh: $f is missing; the tiny initrd cannot load it" >&2; exit 1; }
    cp "$f" "$stage/lib/modules/"
done
cat > "$stage/init" <<'INIT'
#!/bin/busybox sh
# meshlab's initrd: load virtio's PCI and block modules, mount /dev/vda, start systemd.
bb=/bin/busybox
$bb mount -t devtmpfs devtmpfs /dev
for m in virtio virtio_ring virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_blk; do
    $bb insmod /lib/modules/$m.ko || echo "meshlab initrd: cannot load $m" > /dev/kmsg
done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 1000 ]; do i=$((i + 1)); $bb usleep 10000; done
if ! $bb mount -t ext4 -o rw,noatime /dev/vda /root; then
    echo "meshlab initrd: cannot mount /dev/vda as the root; a shell follows" > /dev/console
    exec $bb sh
fi
$bb mount --move /dev /root/dev
exec $bb switch_root /root /sbin/init
INIT
chmod 755 "$stage/init"
# cpio from inside the root file system, so the host needs none; uncompressed, as
# unpacking costs less emulated CPU than decompressing.
chroot "$root" sh -c 'cd /tmp/meshlab-initrd && find . | cpio -o -H newc --quiet' > "$root/boot/initrd.img-$kver"
rm -rf "$stage"

# The guest agent needs only its virtio port; starting it before
# sysinit.target lets the host see the guest while cloud-init still runs.
mkdir -p "$root/etc/systemd/system/qemu-guest-agent.service.d"
cat > "$root/etc/systemd/system/qemu-guest-agent.service.d/early.conf" <<'UNIT'
[Unit]
DefaultDependencies=no
Before=shutdown.target
Conflicts=shutdown.target
UNIT
ln -sf /lib/systemd/system/qemu-guest-agent.service \
    "$root/etc/systemd/system/multi-user.target.wants/qemu-guest-agent.service" 2>/dev/null || true

# This run's seed comes from the host, through the guest agent, into NoCloud's seed
# directory. cloud-init's one stage (init-local, see below) runs late, once the rest of
# the boot is done, and holds: it imports cloud-init (seconds of emulated CPU), says so in
# /run/meshlab/held, then waits on a FIFO until the host has written the seed and its release
# line. meshlab can save a guest while it holds and restore it into a later run (the warm
# start): then only cloud-init's own work is left. The host starts no process to do it (under
# TCG each costs the guest a tenth of a second and more: the host's `test -p` every 250 ms
# took the cloud-init imports' CPU): it reads /run/meshlab/held, writes the seed and the
# firewall as files, and the line into the FIFO, all through the agent's file calls. The line
# is "go NS HEX": the host's clock in ns since the epoch and 64 bytes of its randomness. Before
# anything else runs, this script sets the clock from it, writes the bytes to /dev/urandom and
# has the CRNG take a new key (RNDRESEEDCRNG: restored twins must not draw the same numbers;
# Debian's cloud kernel has no vmgenid), loads the firewall (before the network comes up), and
# reseeds Python's random. What fails is said in /run/meshlab/hold-error, which the ready file
# carries. The FIFO costs no CPU.
mkdir -p "$root/usr/local/lib/meshlab"
cat > "$root/usr/local/lib/meshlab/cloud-init-local" <<'HOLD'
#!/usr/bin/python3
"""cloud-init init --local, imported ahead and held until meshlab writes this run's seed."""
import fcntl
import os
import random
import subprocess
import sys
import time

from cloudinit.cmd import main
import cloudinit.config.schema  # noqa: F401  imported now, used after the hold
import cloudinit.net.eni  # noqa: F401
import cloudinit.sources.DataSourceNoCloud  # noqa: F401
import cloudinit.sources.DataSourceNone  # noqa: F401

try:
    import jsonschema  # noqa: F401  (the user-data schema check)
except ImportError:
    pass

RUN = "/run/meshlab"
FIFO = RUN + "/release"
HELD = RUN + "/held"
ERROR = RUN + "/hold-error"
FIREWALL = RUN + "/firewall.nft"
RNDRESEEDCRNG = 0x5207  # _IO('R', 0x07), <linux/random.h>


def fail(why):
    with open(ERROR, "w") as f:
        f.write(why + "\n")
    sys.exit(1)


os.makedirs(RUN, exist_ok=True)
os.makedirs("/var/lib/cloud/seed/nocloud", exist_ok=True)
for stale in (FIFO, HELD):
    try:
        os.unlink(stale)
    except FileNotFoundError:
        pass
os.mkfifo(FIFO, 0o600)
with open(HELD, "w") as f:
    f.write("held\n")
with open(FIFO) as f:
    line = f.readline()
os.unlink(HELD)
words = line.split()
if len(words) != 3 or words[0] != "go" or not words[1].isdigit() or len(words[2]) != 128:
    fail("the hold's release line is not 'go NS HEX' (%d words)" % len(words))
try:
    seed = bytes.fromhex(words[2])
except ValueError:
    fail("the hold's release line has no 64 bytes in hex")
try:
    time.clock_settime_ns(time.CLOCK_REALTIME, int(words[1]))
    fd = os.open("/dev/urandom", os.O_WRONLY)
    try:
        if os.write(fd, seed) != len(seed):
            fail("a short write of the host's randomness to /dev/urandom")
        fcntl.ioctl(fd, RNDRESEEDCRNG)
    finally:
        os.close(fd)
except OSError as e:
    fail("setting the clock or reseeding the RNG: %s" % e)
seed = words = line = None
if os.path.exists(FIREWALL):
    r = subprocess.run(["nft", "-f", FIREWALL], capture_output=True, text=True)
    if r.returncode != 0:
        fail("loading the firewall (nft -f %s): %s" % (FIREWALL, r.stderr.strip()))
    os.unlink(FIREWALL)  # loaded; the agent wrote it writable by all
random.seed()
sys.argv = ["/usr/bin/cloud-init", "init", "--local"]
sys.exit(main.main())
HOLD
cat > "$root/usr/local/lib/meshlab/ready" <<'READY'
#!/bin/sh
# The host polls /run/meshlab/ready (a file read through the agent, no process): this
# run's /etc/meshlab/guest when cloud-init configured the guest, else why not.
out=/run/meshlab/ready
mkdir -p /run/meshlab
if [ -s /run/meshlab/hold-error ]; then
    echo "error=$(head -c 2000 /run/meshlab/hold-error | tr '\n' ' ')" > $out.tmp
elif ! systemctl is-active -q cloud-init-local.service; then
    echo "error=cloud-init-local.service is $(systemctl is-active cloud-init-local.service)" > $out.tmp
elif [ ! -f /etc/meshlab/guest ]; then
    echo "error=cloud-init ran but wrote no /etc/meshlab/guest" > $out.tmp
else
    { echo ok; cat /etc/meshlab/guest; } > $out.tmp
fi
mv $out.tmp $out
READY
chmod 755 "$root/usr/local/lib/meshlab/cloud-init-local" "$root/usr/local/lib/meshlab/ready"
# Debian's unit orders init-local before sysinit.target, which would hold the whole boot;
# this one runs after basic.target, so that a saved guest has done everything but cloud-init.
cat > "$root/etc/systemd/system/cloud-init-local.service" <<'UNIT'
[Unit]
Description=Initial cloud-init job (meshlab: held until the host has written this run's seed)
DefaultDependencies=no
Wants=network-pre.target
After=systemd-remount-fs.service basic.target
Before=network-pre.target shutdown.target
Conflicts=shutdown.target
RequiresMountsFor=/var/lib/cloud

[Service]
Type=oneshot
ExecStart=/usr/local/lib/meshlab/cloud-init-local
RemainAfterExit=yes
TimeoutSec=0
StandardOutput=journal+console

[Install]
WantedBy=cloud-init.target
UNIT
cat > "$root/etc/systemd/system/meshlab-ready.service" <<'UNIT'
[Unit]
Description=meshlab: tell the host this guest is configured
DefaultDependencies=no
After=cloud-init-local.service networking.service
Before=shutdown.target
Conflicts=shutdown.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/lib/meshlab/ready
UNIT
mkdir -p "$root/etc/systemd/system/cloud-init.target.wants"
ln -sf /etc/systemd/system/cloud-init-local.service \
    "$root/etc/systemd/system/cloud-init.target.wants/cloud-init-local.service"
ln -sf /etc/systemd/system/meshlab-ready.service \
    "$root/etc/systemd/system/multi-user.target.wants/meshlab-ready.service"

# cloud-init in one process: the seed's meta-data says dsmode: local, so init-local
# runs the init modules too and the network stage (cloud-init.service) has nothing
# left to do. No generator: ds-identify would only find what datasource_list says,
# so cloud-init.target is wanted statically.
ln -sf /dev/null "$root/etc/systemd/system/cloud-init.service"
mkdir -p "$root/etc/systemd/system-generators"
ln -sf /dev/null "$root/etc/systemd/system-generators/cloud-init-generator"
# systemd runs every generator before it loads a unit, each a process of its own: 2.45 s from
# "Initializing machine ID" to "Queued start job" in a cold hub, of which these eleven took
# 1.2 s of the guest's one vCPU (timed one by one in a booted guest; with them and udev's
# replay below gone, PID 1's cgroup took 1.6-2.1 s by ready, not 3.6-3.9) and have nothing to
# find here: no encrypted, integrity or verity volume, no GPT auto-mount, no hibernation image, no
# SysV script, rc.local or OpenVPN config enabled at boot (meshlab starts openvpn@ units
# itself), no systemd.run= or debug options on the kernel command line, no offline update.
# fstab's and getty's stay: they mount the root and start the serial console.
for gen in openvpn-generator systemd-cryptsetup-generator systemd-debug-generator \
    systemd-gpt-auto-generator systemd-hibernate-resume-generator \
    systemd-integritysetup-generator systemd-rc-local-generator systemd-run-generator \
    systemd-system-update-generator systemd-sysv-generator systemd-veritysetup-generator; do
    ln -sf /dev/null "$root/etc/systemd/system-generators/$gen"
done
ln -sf /lib/systemd/system/cloud-init.target \
    "$root/etc/systemd/system/multi-user.target.wants/cloud-init.target"

# cloud-init's config and final stages have nothing to do in a lab guest (its
# user-data uses only init-stage modules), and under TCG each python start
# costs seconds of the guest's one vCPU. meshlab waits for the init stage.
for unit in cloud-config.service cloud-final.service; do
    ln -sf /dev/null "$root/etc/systemd/system/$unit"
done

# Nothing in a lab guest may touch the network on its own or burn its one vCPU.
# (kmod-static-nodes stays: it makes /dev/net/tun, which nebula and wireguard-go open.)
for unit in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service \
    fstrim.timer man-db.timer dpkg-db-backup.timer logrotate.timer systemd-timesyncd.service \
    ssh.service getty@tty1.service ifupdown-pre.service systemd-pstore.service \
    modprobe@loop.service modprobe@configfs.service modprobe@fuse.service \
    modprobe@efi_pstore.service modprobe@drm.service modprobe@dm_mod.service \
    sys-kernel-debug.mount sys-kernel-tracing.mount dev-hugepages.mount dev-mqueue.mount \
    sys-fs-fuse-connections.mount sys-kernel-config.mount systemd-binfmt.service \
    proc-sys-fs-binfmt_misc.automount systemd-update-utmp.service \
    systemd-update-utmp-runlevel.service systemd-journal-flush.service cron.service; do
    ln -sf /dev/null "$root/etc/systemd/system/$unit"
done

# What the dataplanes' packages start at every boot, meshlab starts itself when a path needs it
# (ipsec: systemctl restart strongswan.service; openvpn: openvpn-client@/-server@ units; tinc:
# meshlab-tinc.service), so they are not enabled here. Booted, charon-systemd took 8.7 s of the
# boot before the hold beside cloud-init's imports, woke again when eth0 got its address after
# it (a warm start's networking.service took 4.7 s, where raising eth0 on an idle guest takes
# 1.1-1.3 s), and tinc's and OpenVPN's ifupdown hooks ran for every interface raised. logind serves login sessions, which a lab guest
# has on its serial console alone (pam_systemd is optional there). Nothing in a lab guest talks
# on D-Bus (systemctl as root uses systemd's own socket; cloud-init writes the host name; the
# dataplanes' daemons and Headscale do not need it, tailscaled runs with --accept-dns=false), and
# dbus-daemon took 3.5 s of a cold boot beside cloud-init's imports.
rm -f "$root/etc/systemd/system/multi-user.target.wants/strongswan.service" \
    "$root/etc/systemd/system/multi-user.target.wants/openvpn.service" \
    "$root/etc/systemd/system/multi-user.target.wants/tinc.service" \
    "$root/etc/network/if-pre-up.d/tinc" "$root/etc/network/if-up.d/tinc" \
    "$root/etc/network/if-post-down.d/tinc" "$root/etc/network/if-up.d/openvpn" \
    "$root/etc/network/if-down.d/openvpn" "$root/etc/network/if-down.d/resolved"
for unit in systemd-logind.service dbus.service dbus.socket; do
    ln -sf /dev/null "$root/etc/systemd/system/$unit"
done

# udev's coldplug replays an "add" for every device the kernel found before udevd started: 240
# devices and 176 subsystems in a lab guest, and udevd with its workers took 4.5-5.3 s of a
# cold guest's CPU by ready (CPUUsageNSec), the trigger 0.57-0.74 s more. A lab guest needs
# udev for its disk (dev-vda.device), NIC, the agent's port (qemu-guest-agent binds to
# /dev/virtio-ports/org.qemu.guest_agent.0), PCI (ata_piix for the artifacts CD), misc (tun),
# the CPU (the crypto modules its features select, which IPsec, OpenVPN and WireGuard use) and
# ttyS0 (the serial getty); not the 68 consoles, 54 ACPI nodes, memory blocks, input devices
# and the rest, nor the subsystems' own events. Replaying only those, udevd took 2.35-2.44 s
# and the trigger 0.22-0.41 s. A device the kernel adds later (the CD's SCSI disk once
# ata_piix is in) gets its own event, as it always did.
mkdir -p "$root/etc/systemd/system/systemd-udev-trigger.service.d"
cat > "$root/etc/systemd/system/systemd-udev-trigger.service.d/meshlab.conf" <<'UNIT'
[Service]
ExecStart=
ExecStart=-udevadm trigger --type=devices --action=add --prioritized-subsystem=block,net,virtio-ports \
    --subsystem-nomatch=acpi --subsystem-nomatch=tty --subsystem-nomatch=vc \
    --subsystem-nomatch=vtconsole --subsystem-nomatch=wakeup --subsystem-nomatch=memory \
    --subsystem-nomatch=memory_tiering --subsystem-nomatch=node --subsystem-nomatch=workqueue \
    --subsystem-nomatch=event_source --subsystem-nomatch=pnp --subsystem-nomatch=platform \
    --subsystem-nomatch=leds --subsystem-nomatch=container --subsystem-nomatch=clockevents \
    --subsystem-nomatch=clocksource --subsystem-nomatch=thermal --subsystem-nomatch=graphics \
    --subsystem-nomatch=dmi --subsystem-nomatch=rtc --subsystem-nomatch=input \
    --subsystem-nomatch=serio
ExecStart=-udevadm trigger --type=devices --action=add --subsystem-match=tty --sysname-match=ttyS0
UNIT
# QEMU's "max" CPU offers SVM, so the CPU's modalias loaded kvm and kvm_amd (1.1 MB) in every
# guest; a lab guest runs no guest of its own.
mkdir -p "$root/etc/modprobe.d"
printf 'blacklist kvm_amd\nblacklist kvm_intel\n' > "$root/etc/modprobe.d/meshlab-no-kvm.conf"

# The serial console (ttyS0, where the kernel's console= points and `meshlab console`
# attaches) logs root in without a password, for students exploring a live lab. Only this
# console: no password is set anywhere, and there is no SSH.
mkdir -p "$root/etc/systemd/system/serial-getty@ttyS0.service.d"
cat > "$root/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf" <<'UNIT'
[Service]
ExecStart=
ExecStart=-/sbin/agetty --autologin root --keep-baud 115200,57600,38400,9600 %I $TERM
UNIT

# Journald in memory: no flush to disk at boot.
mkdir -p "$root/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\n' > "$root/etc/systemd/journald.conf.d/meshlab.conf"

# ifupdown raises eth0 with the address cloud-init rendered. Its unit first waits for udev
# to settle, which a guest whose devices were all found before cloud-init ran does not need,
# and its hooks for ethtool settings and resolved have nothing to do here.
mkdir -p "$root/etc/systemd/system/networking.service.d"
printf '[Service]\nExecStartPre=\n' > "$root/etc/systemd/system/networking.service.d/meshlab.conf"
rm -f "$root/etc/network/if-pre-up.d/ethtool" "$root/etc/network/if-up.d/ethtool" \
    "$root/etc/network/if-up.d/resolved"
# The ifupdown unit must not wait for a DHCP server that does not exist.
rm -f "$root/etc/network/interfaces.d/"* 2>/dev/null || true
printf 'auto lo\niface lo inet loopback\nsource /etc/network/interfaces.d/*\n' > "$root/etc/network/interfaces"

# The caches that units with ConditionNeedsUpdate= rebuild (hwdb, ld.so.cache, the
# journal catalog) are built here once; /etc/.updated and /var/.updated newer than
# /usr tell systemd so at every boot.
chroot "$root" systemd-hwdb update
chroot "$root" ldconfig
touch "$root/etc/.updated" "$root/var/.updated"

# Kernel and initramfs are booted directly by libvirt; meshlab copies them out.
rm -f "$root/var/cache/apt/archives/"*.deb
rm -rf "$root/var/lib/apt/lists/"*
