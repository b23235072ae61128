# Sourced by the tests that reach this machine's libvirtd as another host would be reached
# (tests/cli_connect_ssh.sh, tests/e2e_remote.sh): an sshd on loopback with keys made for the
# test, and a qemu+ssh:// URI through it. ssh's own files (known_hosts) stay in the test's
# directory. Call sshd_start DIR (a directory of the test's own); it sets ssh_port, ssh_uri
# (with the key file and the ssh wrapper) and ssh_shown (the URI as meshlab shows it), or
# returns non-zero with the reason in ssh_why. sshd_stop ends it.
sshd_start() {
    local dir=$1
    ssh_why=
    [ -x /usr/sbin/sshd ] || { ssh_why="no /usr/sbin/sshd (apt-get install openssh-server; scripts/deps.sh does)"; return 1; }
    command -v ssh >/dev/null && command -v ssh-keygen >/dev/null || { ssh_why="no ssh client"; return 1; }
    ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key" -C meshlab-test-host
    ssh-keygen -q -t ed25519 -N '' -f "$dir/key" -C meshlab-test-client
    cp "$dir/key.pub" "$dir/authorized_keys"
    ssh_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    cat >"$dir/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $ssh_port
HostKey $dir/host_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
EOF
    mkdir -p /run/sshd
    /usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log" || { ssh_why="sshd did not start: $(cat "$dir/sshd.log")"; return 1; }
    for _ in $(seq 1 50); do
        [ -s "$dir/sshd.pid" ] && python3 -c "import socket; socket.create_connection(('127.0.0.1', $ssh_port), 1)" 2>/dev/null && break
        sleep 0.1
    done
    sshd_dir=$dir
    # libvirt runs ssh itself (command=): this wrapper keeps its known_hosts in the test's directory.
    cat >"$dir/ssh" <<EOF
#!/bin/sh
exec ssh -F none -o UserKnownHostsFile=$dir/known_hosts -o StrictHostKeyChecking=accept-new -o BatchMode=yes "\$@"
EOF
    chmod 755 "$dir/ssh"
    ssh_uri="qemu+ssh://root@127.0.0.1:$ssh_port/system?keyfile=$dir/key&command=$dir/ssh&no_tty=1"
    ssh_shown="qemu+ssh://root@127.0.0.1:$ssh_port/system"
}
sshd_stop() {
    [ -n "${sshd_dir:-}" ] && [ -f "$sshd_dir/sshd.pid" ] && kill "$(cat "$sshd_dir/sshd.pid")" 2>/dev/null
    return 0
}
