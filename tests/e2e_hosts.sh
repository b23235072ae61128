#!/usr/bin/env bash
# End to end over two hosts (issue 20, items 2 and 3): the hub on this machine's libvirt
# (qemu:///system), the clients on "another host" (qemu+ssh://root@127.0.0.1:PORT/system through
# an sshd started here on loopback), their bridges stitched by VXLAN between the underlay
# addresses 127.0.0.1 and 127.0.0.2, made and removed over each host's shell. run measures the
# underlay (round trip, MTU, a TCP ceiling between the hosts), then plain (client to client, on
# one host) and kernel WireGuard through the hub, whose every frame crosses the underlay. Then an
# up killed while its guests boot leaves on both hosts what down removes; down with one host
# unreachable removes what the other holds, names the one it could not reach and keeps the
# lab's record, and down again finishes.
#
# What one machine cannot show: both "hosts" are this machine's libvirtd and kernel, so the
# underlay is loopback (MTU 65536, memory for a wire), the guests share the same two cores, and
# the first host's down already removes the second's libvirt objects (they are one libvirtd's);
# two NICs and a switch, a real MTU of 1500 and the lab MTU of 1450 it forces, are not here.
set -u
lab=e2e-hosts

e2e=e2e-hosts
. "$(dirname "$0")/e2e_lib.sh"
. "$(dirname "$0")/sshd_lib.sh"

e2e_require
command -v iperf3 >/dev/null && command -v ping >/dev/null ||
    skip "the hosts' underlay is measured with ping and iperf3 (scripts/deps.sh installs them)"

out=$(mktemp -d /tmp/meshlab-e2e-hosts-XXXXXX)
mkdir -p "$out/ssh"
sshd_start "$out/ssh" || skip "$ssh_why"
trap 'sshd_stop' EXIT
echo "e2e-hosts: run directory $out, host 'there' at $ssh_shown"
unset MESHLAB_URI
# A topology's URI may not name a program (command=): the test's ssh, which keeps known_hosts in
# the test's directory, is found first on PATH instead, by libvirt and by meshlab's host shell.
real_ssh=$(command -v ssh)
mkdir -p "$out/ssh/bin"
cat >"$out/ssh/bin/ssh" <<EOF
#!/bin/sh
exec $real_ssh -F none -o UserKnownHostsFile=$out/ssh/known_hosts -o StrictHostKeyChecking=accept-new -o BatchMode=yes "\$@"
EOF
chmod 755 "$out/ssh/bin/ssh"
export PATH=$out/ssh/bin:$PATH
hosts_uri="qemu+ssh://root@127.0.0.1:$ssh_port/system?keyfile=$out/ssh/key&no_tty=1"
topo=$out/e2e-hosts.yaml
python3 - "$(dirname "$0")/data/e2e-hosts.yaml" "$topo" "$hosts_uri" <<'PY'
import sys
open(sys.argv[2], "w").write(open(sys.argv[1]).read().replace("@SSH_URI@", sys.argv[3]))
PY

"$bin" down "$lab" > "$out/down0.log" 2>&1
# An earlier run of this test that was killed (CI once met one) leaves the lab recorded with host
# 'there' at that run's sshd, which is gone: down removes what this machine holds (both "hosts"
# are its libvirtd and kernel) and keeps the record, as it must for a host that may come back.
# That host is gone for good, so the record goes, as down's message tells a user to do by hand:
# only a record of this test's own lab, made by an earlier run of it, with nothing of it left.
state=${MESHLAB_STATE_DIR:-/var/lib/meshlab}/labs/$lab.json
if [ -f "$state" ] && python3 - "$state" "$out" <<'PY'
import json, re, sys
s = json.load(open(sys.argv[1]))
there = [h.get("uri", "") for h in s.get("hosts", []) if h.get("name") == "there"]
ok = (re.fullmatch(r"/tmp/meshlab-e2e-hosts-[A-Za-z0-9]{6}/e2e-hosts\.yaml", s.get("topology", ""))
      and not s["topology"].startswith(sys.argv[2] + "/") and len(there) == 1
      and re.match(r"qemu\+ssh://root@127\.0\.0\.1:[0-9]+/system\?keyfile=/tmp/meshlab-e2e-hosts-", there[0]))
sys.exit(0 if ok else 1)
PY
then
    mine=$({
        virsh -c qemu:///system list --all --name | grep "^meshlab-$lab\."
        virsh -c qemu:///system net-list --all --name | grep "^meshlab-$lab"
        virsh -c qemu:///system pool-list --all --name | grep "^meshlab-$lab"
        ip -o link show | grep -oE ' mlx[0-9a-f]+'
        ls -d /var/lib/libvirt/images/meshlab-$lab.* /var/lib/meshlab/pools/$lab.* 2>/dev/null
    } | sed '/^$/d')
    if [ -z "$mine" ]; then
        echo "e2e-hosts: an earlier, killed run of this test left $state, its host 'there' an sshd that is gone; down removed what this machine held, so the record goes"
        rm -f "$state"
    else
        echo "e2e-hosts: an earlier run of this test left $state and, on this machine, ${mine//$'\n'/ }: kept"
    fi
fi
e2e_baseline
both_hosts() {
    {
        for u in "$uri" "$ssh_uri"; do
            virsh -c "$u" list --all --name | grep "^meshlab-$lab\."
            virsh -c "$u" net-list --all --name | grep "^meshlab-$lab"
            virsh -c "$u" pool-list --all --name | grep "^meshlab-$lab"
        done
        ip -o link show | grep -oE ' mlx[0-9a-f]+'
        ls -d /var/lib/libvirt/images/meshlab-$lab.* /var/lib/meshlab/pools/$lab.* 2>/dev/null
    } | sed '/^$/d' | sort -u
}

# 1. run --keep: up over both hosts, the underlay measured, both paths; the lab left up.
start=$(date +%s)
"$bin" run "$topo" --quick --keep --out "$out/run" > "$out/run.log" 2>&1
rc=$?
echo "e2e-hosts: run took $(( $(date +%s) - start )) s"
r=$out/run/results.json
check "the KVM verdict was each host's: this machine's and the SSH host's by its transient domain" \
    "grep -q 'accelerator .*host here: .*host there: ' '$out/run.log' && grep -q 'KVM probe: a transient KVM domain meshlab-$lab.kvm-probe on the host' '$out/run.log'"
check "run over two hosts exits 0 ($(tail -n 3 "$out/run.log" | tr '\n' ' ' | head -c 400))" "[ $rc = 0 ] && [ -f '$r' ]"
check "each host got its own network and pool, and its bridge was stitched to the other's by VXLAN" \
    "grep -q 'network meshlab-$lab.here on host here' '$out/run.log' && grep -q 'network meshlab-$lab.there on host there' '$out/run.log' && [ \$(grep -c 'stitched to the other hosts by mlx' '$out/run.log') = 2 ]"
check "the underlay was read on each host before anything was made: lo, MTU 65536, the lab's MTU 1500" \
    "grep -q 'host there: underlay 127.0.0.2 on lo, MTU 65536; the lab.s MTU is 1500' '$out/run.log'"
check "the images were uploaded to host 'there' only (here reads the cache)" \
    "[ \$(grep -c 'uploaded base-' '$out/run.log') -le 1 ]"
python3 - "$r" "$ssh_shown" <<'PY' > "$out/asserts.txt" || echo "bad the assertions stopped short: python3 failed" >> "$out/asserts.txt"
import json, sys
r = json.load(open(sys.argv[1]))
def say(ok, what):
    print(("ok " if ok else "bad") + " " + what)
u = r.get("underlay") or {}
h = u.get("hosts", {})
say(h.get("here", {}).get("nodes") == ["hub"] and h.get("there", {}).get("nodes") == ["client-a", "client-b"],
    "results record the placement: %s" % {k: v.get("nodes") for k, v in h.items()})
say(h.get("there", {}).get("uri") == sys.argv[2] and h.get("here", {}).get("uri") == "qemu:///system",
    "results record each host's URI without the key file: %s" % [v.get("uri") for v in h.values()])
say(u.get("lab_mtu") == 1500 and u.get("vxlan_overhead_bytes") == 50 and h.get("there", {}).get("mtu") == 65536,
    "results record the underlay's MTU (%s) and the lab's (%s)" % (h.get("there", {}).get("mtu"), u.get("lab_mtu")))
links = u.get("links") or [{}]
l = links[0]
rtt = (l.get("rtt_ms") or {}).get("median")
tcp = l.get("tcp_bits_per_second")
say(l.get("from") == "here" and l.get("to") == "there" and rtt is not None and 0 < rtt < 5 and tcp and tcp > 1e8 and not l.get("why_not"),
    "the underlay was measured between the hosts: RTT %s ms, TCP ceiling %s Mbit/s (%s)" % (rtt, tcp and round(tcp / 1e6), l.get("why_not")))
paths = {p["name"]: p for p in r["paths"]}
for name, lo, hi in (("plain", 0, 0.01), ("wireguard-hub", 2.0, 2.5)):
    p = paths.get(name)
    say(p is not None and p["status"] == "measured", "%s measured across the hosts: %s" % (name, p and p["status"]))
    if p and p["status"] == "measured":
        f = p["hub_bytes_per_payload_byte"]
        say(f is not None and lo <= f <= hi and all(c["ok"] for c in p["checks"]),
            "%s: checks passed, hub factor %s in [%s, %s]" % (name, f, lo, hi))
        passes = [x for x in p.get("passes", []) if x.get("status") == "ok"]
        if name == "wireguard-hub":
            # Every frame at the hub crossed the underlay: its bytes plus 50 per frame.
            uf = [(x.get("underlay_bytes_per_payload_byte"), x.get("hub_bytes_per_payload_byte")) for x in passes]
            say(uf and all(a is not None and b and b < a < b * 1.1 for a, b in uf),
                "wireguard-hub: the underlay's bytes per payload byte above the hub's by VXLAN's 50 a frame: %s" % uf)
        else:
            say(all("underlay_bytes_per_payload_byte" not in x for x in passes),
                "plain (client to client on one host) claims no underlay factor")
        print("e2e-hosts: %s %.1f Mbit/s, hub factor %.3f" % (name, p["median_bits_per_second"] / 1e6, f), file=sys.stderr)
print("e2e-hosts: guests ready after %s s; up phases %s" % ([g.get("ready_s") for g in r["guests"]],
      {ph["name"]: ph["seconds"] for ph in r.get("phases", [])}), file=sys.stderr)
PY
verdicts "$out/asserts.txt"
# exec finds each node on its own host: client-a over the SSH URI the state records for it.
check "exec reaches client-a on host 'there' and the hub on host 'here'" \
    "[ \"\$('$bin' exec $lab client-a -- cat /etc/hostname 2>&1)\" = client-a ] && [ \"\$('$bin' exec $lab hub -- cat /etc/hostname 2>&1)\" = hub ]"
"$bin" down "$lab" > "$out/down-run.log" 2>&1
check "down removed the VXLAN device on each host" \
    "[ \$(grep -c 'removed VXLAN device mlx' '$out/down-run.log') = 2 ]"
check "after down, nothing of the lab on either host: $(both_hosts | tr '\n' ' ')" "[ -z \"\$(both_hosts)\" ]"

# 2. up killed while its guests boot: both hosts hold the lab's objects and its VXLAN devices.
# (MESHLAB_ACCEL=tcg: the KVM verdict of each host was probed by the run above; this up only has
# to reach its guests.)
MESHLAB_ACCEL=tcg "$bin" up "$topo" --out "$out/up" > "$out/up.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do grep -q 'guests started' "$out/up.log" && break; sleep 0.2; done
sleep 2
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
check "killed mid-boot, each host holds its network and a VXLAN device: $(both_hosts | tr '\n' ' ')" \
    "both_hosts | grep -qx 'meshlab-$lab.here' && both_hosts | grep -qx 'meshlab-$lab.there' && [ \$(both_hosts | grep -c '^ *mlx') = 2 ]"

"$bin" status --json > "$out/status.json" 2>&1
check "status lists the half-made lab with its hosts and their nodes, the URIs without the key file" \
    "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); l=[x for x in d[\"labs\"] if x[\"name\"] == \"$lab\"][0]; h={x[\"name\"]: (x[\"uri\"], x[\"nodes\"]) for x in l[\"hosts\"]}; assert h == {\"here\": (\"qemu:///system\", \"hub\"), \"there\": (\"$ssh_shown\", \"client-a, client-b\")}, h' '$out/status.json'"

# 3. down with host 'there' unreachable (its sshd stopped): what 'here' holds goes, 'there' is
# named, the record is kept; down again, 'there' back, finishes.
sshd_stop
for _ in $(seq 1 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $ssh_port), 1)" 2>/dev/null || break; sleep 0.1; done
"$bin" down "$lab" > "$out/down1.log" 2>&1
rc=$?
check "down with host 'there' unreachable fails, names it and says to run down again ($(tail -n 2 "$out/down1.log" | tr '\n' ' ' | head -c 400))" \
    "[ $rc != 0 ] && grep -q 'host there' '$out/down1.log' && grep -q 'not removed from host(s) there' '$out/down1.log' && grep -q \"run 'meshlab down $lab' again\" '$out/down1.log'"
check "and removed host 'here''s domains, network, pool and VXLAN device meanwhile" \
    "grep -q 'removed network meshlab-$lab.here' '$out/down1.log' && grep -q 'removed VXLAN device mlx.* on host here' '$out/down1.log' && grep -q 'removed domain meshlab-$lab.hub' '$out/down1.log'"
check "the lab's state file is kept for the second down" "[ -f /var/lib/meshlab/labs/$lab.json ]"
/usr/sbin/sshd -f "$out/ssh/sshd_config" -E "$out/ssh/sshd.log"
for _ in $(seq 1 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $ssh_port), 1)" 2>/dev/null && break; sleep 0.1; done
"$bin" down "$lab" > "$out/down2.log" 2>&1
rc=$?
check "down again, host 'there' back, finishes ($(tail -n 2 "$out/down2.log" | tr '\n' ' ' | head -c 300))" \
    "[ $rc = 0 ] && [ ! -f /var/lib/meshlab/labs/$lab.json ]"
check "nothing of the lab is left on either host: no domain, network, pool, volume, directory or VXLAN device: $(both_hosts | tr '\n' ' ')" \
    "[ -z \"\$(both_hosts)\" ]"
check "nothing of any lab is left (domains, networks, pools, taps, state, seeds): $(leftovers | tr '\n' ' ')" \
    "[ -z \"\$(leftovers)\" ]"
e2e_finish
