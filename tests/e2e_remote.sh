#!/usr/bin/env bash
# End to end on "another host" (issue 20, item 1): the seed lab built, measured and removed
# over qemu+ssh://root@127.0.0.1:PORT/system, through an sshd started here on loopback with keys
# made for this test. Everything goes through the libvirt connection: the images uploaded into
# the host's image pool (once: a second up finds them by their hash), the guests' seeds and
# consoles, the KVM verdict probed there by a transient domain, the counters. The lab's later
# verbs find it by the URI its up recorded. A meshlab killed mid-up leaves nothing that down
# cannot find, and down --purge-cache leaves nothing on the host: no domain, network, pool,
# volume or directory, and nothing of the lab in this machine's directories.
#
# What one machine cannot show: the host here is this machine, so the upload crosses loopback
# (hundreds of MiB/s where a WAN gives tens), and the guests share the controller's two cores.
set -u
topo=tests/data/e2e-remote.yaml
lab=e2e-remote

e2e=e2e-remote
. "$(dirname "$0")/e2e_lib.sh"
. "$(dirname "$0")/sshd_lib.sh"

e2e_require
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }

out=$(mktemp -d /tmp/meshlab-e2e-remote-XXXXXX)
mkdir -p "$out/ssh"
sshd_start "$out/ssh" || skip "$ssh_why"
trap 'sshd_stop' EXIT
echo "e2e-remote: run directory $out, libvirt at $ssh_shown"
unset MESHLAB_URI

# The host's image pool goes first, so that this run uploads (and the second up does not).
"$bin" down "$lab" --connect "$ssh_uri" --purge-cache > "$out/down0.log" 2>&1
e2e_baseline
pools_dir=/var/lib/libvirt/images
host_leftovers() {
    {
        virsh -c "$ssh_uri" list --all --name | grep "^meshlab-$lab\."
        virsh -c "$ssh_uri" net-list --all --name | grep -x "meshlab-$lab"
        virsh -c "$ssh_uri" pool-list --all --name | grep -x "meshlab-$lab"
        ls -d "$pools_dir/meshlab-$lab" 2>/dev/null
    } | sed '/^$/d'
}

# 1. up on the host: the images uploaded, the KVM verdict the host's, the lab recorded there.
start=$(date +%s)
"$bin" up --connect "$ssh_uri" "$topo" --out "$out/up" > "$out/up.log" 2>&1
rc=$?
echo "e2e-remote: up took $(( $(date +%s) - start )) s"
check "up over ssh exits 0 ($(tail -n 3 "$out/up.log" | tr '\n' ' ' | head -c 400))" "[ $rc = 0 ]"
check "the base, kernel and initrd were uploaded into the host's image pool: $(grep -c 'uploaded ' "$out/up.log") uploads" \
    "grep -q 'uploaded base-[0-9a-f]*.qcow2' '$out/up.log' && grep -q 'uploaded kernel-' '$out/up.log' && grep -q 'uploaded initrd-' '$out/up.log'"
check "the KVM verdict was probed on the host by a transient domain: $(grep 'accelerator' "$out/up.log" | head -c 300)" \
    "grep -q 'KVM probe: a transient KVM domain meshlab-$lab.kvm-probe on the host' '$out/up.log' && grep -q \"probed now on the lab's host\" '$out/up.log'"
check "the lab's pool is the host's, in $pools_dir" \
    "virsh -c '$ssh_uri' pool-dumpxml meshlab-$lab | grep -q '<path>$pools_dir/meshlab-$lab</path>'"
check "the host's pool directory is root's and 0711: QEMU may pass, not list or plant links" \
    "[ \"\$(stat -c '%U %a' $pools_dir/meshlab-$lab)\" = 'root 711' ]"
check "no pool directory of the lab on this machine's side (/var/lib/meshlab/pools/$lab)" \
    "[ ! -e /var/lib/meshlab/pools/$lab ]"
check "the state file records the host's URI, which the later verbs use" \
    "field /var/lib/meshlab/labs/$lab.json 'r[\"uri\"]' | grep -q '^qemu+ssh://root@127.0.0.1:$ssh_port/system'"
"$bin" status --json > "$out/status.json" 2>&1
check "status (this machine's libvirt) lists the lab as elsewhere, at its host's URI without the key file" \
    "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any(e[\"name\"] == \"$lab\" and e[\"uri\"] == \"$ssh_shown\" for e in d[\"elsewhere\"]), d' '$out/status.json'"

# 2. run without --connect: it attaches on the recorded host and measures there; --capture runs
# tcpdump on the host's taps over the URI's own SSH.
"$bin" run "$topo" --quick --capture --out "$out/run" > "$out/run.log" 2>&1
rc=$?
r=$out/run/results.json
check "run (no --connect) attached on the recorded host and exits 0" "[ $rc = 0 ] && [ -f '$r' ]"
python3 - "$r" "$ssh_shown" <<'PY' > "$out/asserts.txt" || echo "bad the assertions stopped short: python3 failed" >> "$out/asserts.txt"
import json, sys
r = json.load(open(sys.argv[1]))
def say(ok, what):
    print(("ok " if ok else "bad") + " " + what)
e = r["environment"]
say(e.get("libvirt_uri") == sys.argv[2], "results record the host's URI, no key file: %s" % e.get("libvirt_uri"))
say(e.get("libvirt_host") and e.get("host_cpus") and "libvirt's name" in (e.get("host_cpu_model") or ""),
    "results describe the host from its libvirt: %s, %s CPUs, %s" % (e.get("libvirt_host"), e.get("host_cpus"), e.get("host_cpu_model")))
say(e.get("accelerator_source") == "probe", "the accelerator was probed (on the host): %s" % e.get("accelerator_reason"))
paths = {p["name"]: p for p in r["paths"]}
for name, lo, hi in (("plain", 0, 0.01), ("wireguard-hub", 2.0, 2.5)):
    p = paths.get(name)
    say(p is not None and p["status"] == "measured", "%s measured: %s" % (name, p and p["status"]))
    if p and p["status"] == "measured":
        f = p["hub_bytes_per_payload_byte"]
        say(f is not None and lo <= f <= hi and all(c["ok"] for c in p["checks"]),
            "%s: checks passed, hub factor %s in [%s, %s] from the host's counters" % (name, f, lo, hi))
        print("e2e-remote: %s %.1f Mbit/s, hub factor %.3f" % (name, p["median_bits_per_second"] / 1e6, f), file=sys.stderr)
# --capture on the host: each path check's pcaps came back over ssh, whole, with the probe's
# packets on the hub's tap for the relayed path and none of it for plain.
import os, struct
def packets(f):
    data = open(f, "rb").read()
    n, off = 0, 24
    while off + 16 <= len(data):
        incl = struct.unpack("<I", data[off + 8:off + 12])[0]
        off += 16 + incl
        n += 1
    return n, data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") and off == len(data)
run_dir = os.path.dirname(sys.argv[1])
for name in ("plain", "wireguard-hub"):
    files = [f for c in paths.get(name, {}).get("checks", []) for f in (c.get("captures") or [])]
    got = {f: packets(os.path.join(run_dir, f)) if os.path.isfile(os.path.join(run_dir, f)) else (0, False) for f in files}
    hub = [n for f, (n, whole) in got.items() if f.endswith("/hub.pcap")]
    want = (lambda n: n >= 40) if name == "wireguard-hub" else (lambda n: n < 20)
    say(len(files) == 6 and all(whole for _, whole in got.values()) and len(hub) == 2 and all(want(n) for n in hub),
        "%s: 6 pcaps from the host's taps, whole; the hub's tap carried %s packets in its checks" % (name, hub))
print("e2e-remote: guests ready after %s s (boot to cloud-init done)" % [g.get("ready_s") for g in r["guests"]], file=sys.stderr)
PY
verdicts "$out/asserts.txt"

# 3. down without --connect: on the recorded host; the lab's objects and pool directory go.
"$bin" down "$lab" > "$out/down.log" 2>&1
check "down finds the lab on its recorded host and removes it ($(grep -c removed "$out/down.log") removed)" \
    "grep -q 'removed storage pool meshlab-$lab' '$out/down.log' && [ -z \"\$(host_leftovers)\" ]"

# 4. A second up finds the images by their hash and uploads nothing; killed while its guests
# boot, it leaves what down (by the state it recorded first) removes.
"$bin" up --connect "$ssh_uri" "$topo" --out "$out/up2" > "$out/up2.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do grep -q 'guests started' "$out/up2.log" && break; sleep 0.2; done
sleep 2
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
check "the second up uploaded nothing: the host had the images ($(grep -c 'uploading' "$out/up2.log") uploads)" \
    "grep -q 'guests started' '$out/up2.log' && ! grep -q 'uploading' '$out/up2.log'"
check "killed mid-boot, the lab is still there on the host" "[ -n \"\$(host_leftovers)\" ]"
"$bin" down "$lab" --purge-cache > "$out/down2.log" 2>&1
check "down after the kill, with --purge-cache, leaves nothing of the lab on the host: $(host_leftovers | tr '\n' ' ')" \
    "[ -z \"\$(host_leftovers)\" ]"
check "and the host's image pool is gone with its volumes and directory" \
    "grep -q 'removed storage pool meshlab.images' '$out/down2.log' && ! virsh -c '$ssh_uri' pool-info meshlab.images >/dev/null 2>&1 && [ ! -e $pools_dir/meshlab.images ]"
check "nothing of any lab is left (domains, networks, pools, taps, state, seeds): $(leftovers | tr '\n' ' ')" \
    "[ -z \"\$(leftovers)\" ]"
check "no capture directory or tcpdump is left on the host" \
    "! ls -d /tmp/meshlab-hostcap-* >/dev/null 2>&1 && ! pgrep -f 'tcpdump .*mlt' >/dev/null"
e2e_finish
