#!/bin/sh
# mmdebstrap customize hook for the debian-12 lab guest: $1 is the root file system.
# Everything here serves one goal: a guest that boots fast under TCG, takes its
# configuration from a NoCloud seed, and is driven only through the guest agent.
set -eu
root="$1"

echo 'LABEL=meshlab-root / ext4 rw,noatime,errors=remount-ro 0 1' > "$root/etc/fstab"
echo 'meshlab-guest' > "$root/etc/hostname"

# cloud-init: only the NoCloud seed, and only the modules a lab guest uses.
cat > "$root/etc/cloud/cloud.cfg.d/90-meshlab.cfg" <<'CFG'
datasource_list: [ NoCloud, None ]
locale: false
ssh_genkeytypes: []
ssh_deletekeys: false
cloud_init_modules: [seed_random, bootcmd, write_files, set_hostname, update_hostname, update_etc_hosts]
cloud_config_modules: []
cloud_final_modules: []
CFG

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

# cloud-init's config and final stages have nothing to do in a lab guest (its
# user-data uses only init-stage modules), and under TCG each python start
# costs seconds of the guest's one vCPU. meshlab waits for the init stage.
for unit in cloud-config.service cloud-final.service; do
    ln -sf /dev/null "$root/etc/systemd/system/$unit"
done

# Nothing in a lab guest may touch the network on its own or burn its one vCPU.
for unit in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service \
    fstrim.timer man-db.timer dpkg-db-backup.timer logrotate.timer systemd-timesyncd.service \
    ssh.service getty@tty1.service; do
    ln -sf /dev/null "$root/etc/systemd/system/$unit"
done

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

# The ifupdown unit must not wait for a DHCP server that does not exist.
rm -f "$root/etc/network/interfaces.d/"* 2>/dev/null || true
printf 'auto lo\niface lo inet loopback\nsource /etc/network/interfaces.d/*\n' > "$root/etc/network/interfaces"

# Kernel and initramfs are booted directly by libvirt; meshlab copies them out.
rm -f "$root/var/cache/apt/archives/"*.deb
rm -rf "$root/var/lib/apt/lists/"*
