#!/usr/bin/env python3
"""Writes tests/data/results-v2-*.json: results documents in the form docs/results.md (v2)
describes, with made-up but physically plausible figures. Run from the repository root; the
output is checked in, so the tests never run this."""
import json, math, statistics

LONG = ("artifacts missing: tailscale_1.76.6_amd64.tgz and headscale_0.23.0_linux_amd64 are not "
        "in the cache (/var/cache/meshlab/artifacts); run 'meshlab fetch --artifacts "
        "topologies/three-guest.yaml' on a host with network access, or copy them there by hand, "
        "then run again")

MATRIX = [
    {"cell": "forward-1", "direction": "forward", "streams": 1, "rate": "full", "passes": 3},
    {"cell": "reverse-1", "direction": "reverse", "streams": 1, "rate": "full", "passes": 1},
    {"cell": "forward-8", "direction": "forward", "streams": 8, "rate": "full", "passes": 1},
    {"cell": "forward-1-fixed", "direction": "forward", "streams": 1, "rate": "fixed", "passes": 1},
]
FIXED = 61000000
# Each daemon's CPU seconds per second while idle (idle.daemons_cpu_s_per_s).
DAEMON_IDLE_S_PER_S = 0.01


# The encapsulations of src/dataplanes (inner MTU, overhead, padding), as src/measure/physics.c
# reads them: the fixtures' physics is computed the same way.
ENCAP = {"wireguard-hub": (1420, 60, 16), "nebula-relay": (1300, 92, 0)}
HOW = {"wireguard-hub": "WireGuard: 20 IP + 8 UDP + 16 header + 16 tag = 60 bytes, padding to 16",
       "nebula-relay": "nebula relayed: 20 IP + 8 UDP + 16 relay header + 16 header + 16 AES-GCM tag + "
                       "16 relay tag = 92 bytes, no padding"}
PING_INNER = 84
PINGS = 80


def frame(encap, inner):
    mtu, over, pad = encap
    n = min(inner, mtu)
    if pad:
        n = min(-(-n // pad) * pad, mtu)
    return n + over + 14


def physics(path, ps):
    """src/measure/physics.c over a cell's passes that passed: the expected object."""
    encap = ENCAP.get(path)
    if not encap or not ps:
        return None
    payload = sum(p["payload_bytes"] for p in ps)
    rx = sum(p["hub_rx_packets"] for p in ps)
    probe = sum(p["probe_hub_rx_packets"] for p in ps)
    retr = sum(p["retransmits"] for p in ps)
    hub = sum(p["hub_rx_bytes"] + p["hub_tx_bytes"] - p["probe_hub_bytes"] for p in ps)
    mtu, over, pad = encap
    mss = mtu - 52
    data, ack = frame(encap, mtu), frame(encap, 52)
    d = math.ceil(payload / mss)
    a = max(0, rx - d - probe - retr)
    expected = 2 * (d * data + a * ack) / payload
    measured = hub / payload
    differs = (measured - expected) / expected * 100
    return {"inner_mtu_bytes": mtu, "overhead_bytes": over, "mss_bytes": mss,
            "data_frame_bytes": data, "ack_frame_bytes": ack, "data_packets": d,
            "probe_packets": probe, "retransmits": retr, "ack_packets": a,
            "ack_ratio": round(d / a, 2) if a else None,
            "hub_bytes_per_payload_byte": round(expected, 4),
            "floor_hub_bytes_per_payload_byte": round(2 * d * data / payload, 4),
            "ceiling_hub_bytes_per_payload_byte": round(2 * (d * data + d / 2 * ack) / payload, 4),
            "measured_hub_bytes_per_payload_byte": round(measured, 4),
            "differs_percent": round(differs, 2), "flag": abs(differs) > 5,
            "model": "2 x (D x %d + A x %d) / payload, D = %d data segments of %d bytes, A = %d ACKs "
                     "(hub packets received beyond D, less the probe's %d and %d retransmits); %s"
                     % (data, ack, d, mss, a, probe, retr, HOW[path])}


def cv(v):
    return None if len(v) < 2 else round(100 * statistics.stdev(v) / statistics.mean(v), 1)


def pass_(seq, rnd, cell, idx, bps, factor, p99, cpu_hub, ok=True, failed=None, dur=4.0,
          daemon=None, client_cpu=1.0, detour=None, encap=None, acks=3.1, lost=0):
    m = next(c for c in MATRIX if c["cell"] == cell)
    payload = int(bps * dur / 8)
    hub = int(payload * factor)
    # the latency probe's pings cross a relaying hub in and out, each way (pass.c)
    pframe = frame(encap, PING_INNER) if encap else 0
    prx = (PINGS + PINGS - lost) if encap else 0
    pbytes = prx * pframe
    rx_bytes, tx_bytes = hub // 2 + pbytes, hub - hub // 2 + pbytes
    if encap:
        d = math.ceil(payload / (encap[0] - 52))
        rx_packets = d + math.ceil(d / acks) + prx + idx * 3
    else:
        rx_packets = hub // 2800
    offered = FIXED if m["rate"] == "fixed" else None
    carried = round(100 * bps / offered, 1) if offered else None
    loss = round(100 * lost / PINGS, 2)
    series = []
    for t in range(1, int(dur) + 1):
        pb = payload // int(dur)
        hb = hub // int(dur)
        good = not (failed and t in failed)
        if not good and detour:
            hb = int(pb * detour)
        series.append({"t_s": t, "payload_bytes": pb, "hub_bytes": hb, "hub_packets": hb // 1400,
                       "hub_bytes_per_payload_byte": round(hb / pb, 6), "ok": good})
    gb = payload / 1e9
    cpu = {"hub": {"user_s": 0.1, "system_s": 0.2, "softirq_s": round(cpu_hub * gb - 0.3, 3),
                   "busy_s": round(cpu_hub * gb, 3), "vcpu_s": round(cpu_hub * gb * 1.6, 3)},
           "client-a": {"user_s": 0.3, "system_s": 0.9, "softirq_s": 0.4,
                        "busy_s": round(client_cpu * gb, 3), "vcpu_s": round(client_cpu * gb * 1.2, 3)},
           "client-b": {"user_s": 0.2, "system_s": 0.7, "softirq_s": 0.6,
                        "busy_s": round(client_cpu * gb * 0.9, 3), "vcpu_s": round(client_cpu * gb, 3)}}
    return {
        "seq": seq, "round": rnd, "cell": cell, "direction": m["direction"], "streams": m["streams"],
        "rate": m["rate"], "offered_bits_per_second": FIXED if m["rate"] == "fixed" else None,
        "index": idx, "status": "ok" if ok else "failed",
        "reason": None if ok else "seconds %s outside the band: hub %.1f bytes per payload byte, above the path's 0.01" % (", ".join(map(str, failed)), detour),
        "failed_seconds": failed or [], "duration_s": dur, "payload_bytes": payload,
        "sent_bytes": payload + 1400, "bits_per_second": bps, "retransmits": idx * 3,
        "hub_rx_bytes": rx_bytes, "hub_tx_bytes": tx_bytes,
        "hub_rx_packets": rx_packets, "hub_tx_packets": rx_packets,
        "probe_frame_bytes": pframe, "probe_hub_rx_packets": prx, "probe_hub_bytes": 2 * pbytes,
        "hub_bytes_per_payload_byte": round(hub / payload, 6),
        "hub_bytes_per_payload_byte_raw": round((rx_bytes + tx_bytes) / payload, 6),
        "hub_rx_bytes_per_payload_byte": round((hub // 2) / payload, 6),
        "hub_tx_bytes_per_payload_byte": round((hub - hub // 2) / payload, 6),
        "carried_percent_of_offered": carried,
        "below_offered_rate": None if carried is None else carried < 95,
        "series": series,
        "rtt_loaded": {"transmitted": PINGS, "received": PINGS - lost, "loss_percent": loss,
                       "p50_ms": round(p99 / 6, 2), "p90_ms": round(p99 / 2, 2), "p99_ms": p99,
                       "max_ms": p99 if lost else round(p99 * 1.2, 2),
                       "p50_at_least": False, "p90_at_least": False, "p99_at_least": loss > 1},
        "cpu": cpu, "daemons_cpu_s": {"hub": daemon(gb) if daemon else {}, "client-a": {}, "client-b": {}},
        "daemons_cpu_above_idle_s": {"hub": {n: round(v - DAEMON_IDLE_S_PER_S * dur, 3)
                                             for n, v in (daemon(gb) if daemon else {}).items()},
                                     "client-a": {}, "client-b": {}},
        "host": {"other_cpu_percent": 3.0, "steal_percent": 0.0, "load1": 2.1, "busy": False},
        "views": [{"when": w, "ok": True, "evidence": "route via %s" % ("hub" if factor > 1 else "the bridge")}
                  for w in ("start", "middle", "end")],
        "raw": {"iperf3": "raw/P/%02d-%s-%d.iperf3.json" % (seq, cell, idx),
                "ping": "raw/P/%02d-%s-%d.ping.txt" % (seq, cell, idx),
                "series": "raw/P/%02d-%s-%d.series.csv" % (seq, cell, idx)},
    }


def cells_of(passes, warn_cv=10, path=None):
    cells = {}
    for m in MATRIX:
        ps = [p for p in passes if p["cell"] == m["cell"]]
        if not ps:
            continue
        ok = [p for p in ps if p["status"] == "ok"]
        bps = [p["bits_per_second"] for p in ok]
        fac = [p["hub_bytes_per_payload_byte"] for p in ok]
        gb = sum(p["payload_bytes"] for p in ok) / 1e9
        def per_gb(guest):
            g = {k + "_per_gb": round(sum(p["cpu"][guest][k] for p in ok) / gb, 3)
                 for k in ("user_s", "system_s", "softirq_s", "busy_s", "vcpu_s")}
            g["busy_above_idle_s_per_gb"] = round(g["busy_s_per_gb"] * 0.9, 3)
            return g
        daemons, above = {}, {}
        for g in ("hub", "client-a", "client-b"):
            names = set(n for p in ok for n in p["daemons_cpu_s"][g])
            daemons[g] = {n: round(sum(p["daemons_cpu_s"][g][n] for p in ok) / gb, 3) for n in sorted(names)}
            # above idle: a figure only where it is a tenth or more of the daemon's CPU
            above[g] = {}
            for n in sorted(names):
                a = sum(p["daemons_cpu_above_idle_s"][g][n] for p in ok)
                raw = sum(p["daemons_cpu_s"][g][n] for p in ok)
                above[g][n] = round(a / gb, 3) if a > 0 and a >= 0.1 * raw else None
        c = {"direction": m["direction"], "streams": m["streams"], "rate": m["rate"],
             "passes_ok": len(ok), "passes_failed": len(ps) - len(ok),
             "median_bits_per_second": statistics.median(bps), "cv_bits_per_second_percent": cv(bps),
             "median_hub_bytes_per_payload_byte": statistics.median(fac),
             "cv_hub_bytes_per_payload_byte_percent": cv(fac)}
        for q in ("p50", "p90", "p99", "max"):
            c["rtt_loaded_%s_ms" % q] = statistics.median(p["rtt_loaded"]["%s_ms" % q] for p in ok)
        c["cpu_s_per_gb"] = {g: per_gb(g) for g in ("hub", "client-a", "client-b")}
        c["daemons_cpu_s_per_gb"] = daemons
        sent = sum(p["rtt_loaded"]["transmitted"] for p in ok)
        got = sum(p["rtt_loaded"]["received"] for p in ok)
        c["rtt_loaded_loss_percent"] = 100 * (sent - got) / sent if sent else None
        c["rtt_loaded_p99_at_least"] = any(p["rtt_loaded"]["p99_at_least"] for p in ok)
        c["passes_below_offered_rate"] = (sum(1 for p in ok if p["below_offered_rate"])
                                          if m["rate"] == "fixed" else None)
        c["expected"] = physics(path, ok)
        c["daemons_cpu_above_idle_s_per_gb"] = above
        c["cv_warning"] = any(x is not None and x > warn_cv for x in (c["cv_bits_per_second_percent"], c["cv_hub_bytes_per_payload_byte_percent"]))
        cells[m["cell"]] = c
    return cells


def measured(name, desc, target, role, passes, idle_p99, expected=None, setup=None, rss=None,
             accel="tcg"):
    cells = cells_of(passes, path=name)
    head = cells["forward-1"]
    # the hub's CPU of the cell the comparison names (the headline), above idle
    hub_cpu = head["cpu_s_per_gb"]["hub"]["busy_above_idle_s_per_gb"]
    warnings = []
    for cn, c in cells.items():
        if c["cv_bits_per_second_percent"] and c["cv_bits_per_second_percent"] > 10:
            warnings.append("CV of bits_per_second in %s is %.0f %% (> 10 %%)" % (cn, c["cv_bits_per_second_percent"]))
    for cn, c in cells.items():
        if c["rtt_loaded_loss_percent"] and c["rtt_loaded_loss_percent"] > 1:
            warnings.append("%s: %.1f %% of the pings under load got no reply (above 1 %%): its p99 is a lower bound" % (cn, c["rtt_loaded_loss_percent"]))
        if c["passes_below_offered_rate"]:
            warnings.append("%s: %d pass(es) carried less than 95 %% of the offered rate: not the rate the paths are compared at" % (cn, c["passes_below_offered_rate"]))
    factor = head["median_hub_bytes_per_payload_byte"]
    hok = [p for p in passes if p["cell"] == "forward-1" and p["status"] == "ok"]
    bits = sum(8 * p["payload_bytes"] for p in hok)
    busy = sum(p["cpu"]["hub"]["busy_s"] for p in hok)
    secs = sum(p["duration_s"] for p in hok)
    med = lambda k: statistics.median(p[k] for p in hok)
    idle_rtt = {"transmitted": 40, "received": 40, "loss_percent": 0.0,
                "p50_ms": round(idle_p99 / 2, 2), "p90_ms": round(idle_p99 * 0.7, 2),
                "p99_ms": idle_p99, "max_ms": round(idle_p99 * 1.1, 2),
                "p50_at_least": False, "p90_at_least": False, "p99_at_least": False}
    idle_daemons = {g: {n: DAEMON_IDLE_S_PER_S
                        for n in sorted(set(d for p in passes for d in p["daemons_cpu_s"][g]))}
                    for g in ("hub", "client-a", "client-b")}
    return {
        "name": name, "description": desc, "from": "client-a", "to": "client-b", "target": target,
        "status": "measured", "reason": None, "setup_s": setup, "hub_role": role,
        "checks": [{"when": w, "ok": True, "evidence": "hub NIC moved %s during the probe" % ("41,120 bytes, 2.1 per probe byte" if role == "carries" else "40 bytes, its idle 40"),
                    "hub_bytes": 86352 if role == "carries" else 40, "hub_idle_bytes": 40, "probe_bytes": 41120,
                    "transmitted": 20, "received": 20,
                    "route": {"dev": "eth0" if role == "quiet" else "wg0", "via": None, "src": "192.0.2.11"},
                    "own": []} for w in ("before", "after")],
        "idle": {"seconds": 2.0, "hub_bytes": 800, "hub_bytes_per_s": 400.0, "rtt": idle_rtt,
                 "daemons_cpu_s_per_s": idle_daemons},
        "idle_fixed": {"seconds": 2.0, "hub_bytes": 820, "hub_bytes_per_s": 410.0,
                       "rtt": dict(idle_rtt), "daemons_cpu_s_per_s": idle_daemons},
        "passes": passes, "cells": cells,
        "median_bits_per_second": head["median_bits_per_second"],
        "cv_bits_per_second_percent": head["cv_bits_per_second_percent"],
        "hub_bytes_per_payload_byte": factor,
        "rtt_idle_p99_ms": idle_p99, "rtt_loaded_p99_ms": head["rtt_loaded_p99_ms"],
        "rtt_idle_p99_at_least": False, "rtt_loaded_p99_at_least": head["rtt_loaded_p99_at_least"],
        "rtt_loaded_loss_percent": head["rtt_loaded_loss_percent"],
        "hub_cpu_s_per_gb": hub_cpu,
        "expected": head["expected"],
        "vps": None if role == "quiet" else {
            "hub_gb_per_tb_payload": round(factor * 1000, 1),
            "hub_gb_in_per_tb_payload": round(med("hub_rx_bytes_per_payload_byte") * 1000, 1),
            "hub_gb_out_per_tb_payload": round(med("hub_tx_bytes_per_payload_byte") * 1000, 1),
            "hub_vcpu_relay_bits_per_second": round(bits / busy, -3),
            "relay_cell": "forward-1",
            "relay_cell_bits_per_second": round(bits / secs),
            "relay_cell_hub_busy_percent": round(100 * busy / secs, 2),
            "meaningful": accel == "kvm",
            "daemons_rss_kib": {"hub": rss or {}},
            "from": ["hub_bytes_per_payload_byte", "passes.hub_rx_bytes_per_payload_byte",
                     "passes.hub_tx_bytes_per_payload_byte", "passes.cpu", "passes.daemons_rss_kib"]},
        "warnings": warnings, "observed": None,
    }


def not_run(name, desc, target, reason):
    return {"name": name, "description": desc, "from": "client-a", "to": "client-b",
            "target": target, "status": "not-run", "reason": reason, "setup_s": None,
            "hub_role": "carries" if "relay" in name else "quiet",
            "checks": [], "idle": None, "passes": [], "cells": {}, "median_bits_per_second": None,
            "cv_bits_per_second_percent": None, "hub_bytes_per_payload_byte": None,
            "rtt_idle_p99_ms": None, "rtt_loaded_p99_ms": None, "hub_cpu_s_per_gb": None,
            "rtt_idle_p99_at_least": None, "rtt_loaded_p99_at_least": None,
            "rtt_loaded_loss_percent": None, "idle_fixed": None,
            "expected": None, "vps": None, "warnings": [], "observed": None}


def document(paths, order, busy=False, accel="tcg", run_id="20261130-071500-a1b2c3"):
    return {
        "schema": "meshlab-results/3", "schema_version": 3, "meshlab_version": "0.2.0",
        "lab": "three-guest", "topology": "topologies/three-guest.yaml", "run_id": run_id,
        "lab_run_id": run_id, "started": "2026-11-30T07:15:00Z", "finished": "2026-11-30T07:27:10Z",
        "profile": {"name": "quick", "pass_s": 4, "ping_count": 40, "ping_interval_s": 0.05,
                    "idle_s": 2, "fixed_rate_fraction": 0.5, "matrix": MATRIX},
        "fixed_rate": {"bits_per_second": FIXED, "fraction": 0.5, "slowest_path": "wireguard-hub",
                       "slowest_median_bits_per_second": 122000000},
        "order": order, "host_busy": busy,
        "controller": {"cpu_s": 3.1, "max_rss_kib": 14000, "wall_s": 730.0, "cpu_percent_of_core": 0.42},
        "environment": {
            "host_kernel": "6.1.0-28-amd64", "libvirt": "9.0.0", "qemu": "7.2.0",
            "accelerator": accel,
            "accelerator_reason": "/dev/kvm is absent" if accel == "tcg" else None,
            "image": {"name": "debian-12", "requested": "debian-12", "fallback_reason": None,
                      "sha256": "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"},
            "guest_os": "Debian GNU/Linux 12 (bookworm)", "guest_kernel": "6.1.0-28-amd64",
            "tools": {"iperf3": "iperf 3.12"},
            "host_cpu_model": "AMD EPYC 7B13", "host_cpus": 2,
            "hosts": {"hub": {"kernel": "6.1.0-28-amd64", "vcpus": 1, "memory_mib": 1024,
                              "offloads": {"tcp-segmentation-offload": "on"},
                              "sysctls": {"net.ipv4.tcp_congestion_control": "cubic"},
                              "mtu_bytes": {"eth0": 1500, "wg0": 1420},
                              "daemons": {"nebula": "1.6.1"}}}},
        "phases": [{"name": "boot", "seconds": 60.0}, {"name": "measure", "seconds": 650.0},
                   {"name": "teardown", "seconds": 20.0}],
        "wall_s": 730.0,
        "guests": [{"name": g, "address": "192.0.2.1%d" % i, "boot_s": 20.0 + i, "ready_s": 40.0 + i,
                    "vcpus": 1, "memory_mib": 1024} for i, g in enumerate(("hub", "client-a", "client-b"))],
        "paths": paths,
    }


def order_of(names):
    order, seq = [], 1
    for rnd in (1, 2, 3):
        for n in names:
            for m in MATRIX:
                if rnd <= m["passes"]:
                    order.append({"seq": seq, "round": rnd, "path": n, "cell": m["cell"], "pass": rnd})
                    seq += 1
    return order


def plain_passes(scale=1.0, busy=False):
    ps = [pass_(1, 1, "forward-1", 1, 1.21e9 * scale, 0.000064, 2.4, 3.1),
          pass_(9, 2, "forward-1", 2, 1.25e9 * scale, 0.000064, 2.6, 3.0, ok=False,
                failed=[3, 4], detour=2.1),
          pass_(13, 3, "forward-1", 3, 1.19e9 * scale, 0.000064, 2.5, 3.2),
          pass_(2, 1, "reverse-1", 1, 1.15e9 * scale, 0.000066, 2.7, 3.1),
          pass_(3, 1, "forward-8", 1, 1.4e9 * scale, 0.00007, 5.5, 3.4),
          pass_(4, 1, "forward-1-fixed", 1, 61e6, 0.0001, 0.9, 4.0)]
    if busy:
        for p in ps:
            p["host"] = {"other_cpu_percent": 61.0, "steal_percent": 0.0, "load1": 3.9, "busy": True}
    return ps


def wg_passes(scale=1.0, spread=1.0):
    # kernel WireGuard runs no daemon: nothing is counted for it
    e = ENCAP["wireguard-hub"]
    return [pass_(5, 1, "forward-1", 1, 140e6 * scale, 2.26, 21.0, 9.3, encap=e),
            pass_(10, 2, "forward-1", 2, 122e6 * scale * (1 - 0.1 * (spread - 1)), 2.27, 24.0, 9.4, encap=e),
            pass_(14, 3, "forward-1", 3, 104e6 * scale, 2.25, 19.0, 9.2, encap=e),
            pass_(6, 1, "reverse-1", 1, 118e6 * scale, 2.26, 22.0, 9.5, encap=e),
            pass_(7, 1, "forward-8", 1, 150e6 * scale, 2.21, 48.0, 8.8, encap=e, acks=8),
            pass_(8, 1, "forward-1-fixed", 1, 61e6, 2.24, 6.0, 9.9, encap=e, acks=2.5)]


def nebula_passes(scale=1.0, cpu=14.0):
    nb = lambda gb: {"nebula": round(6.0 * gb, 3)}
    e = ENCAP["nebula-relay"]
    # the hub's CPU varies from pass to pass as a real one does (the noise compare weighs);
    # the review's nebula fixed #3: short of the offered rate, 9.8 % of its pings lost
    return [pass_(15, 1, "forward-1", 1, 96e6 * scale, 2.41, 30.0, cpu * 0.97, daemon=nb, encap=e, acks=8),
            pass_(16, 2, "forward-1", 2, 97e6 * scale, 2.40, 31.0, cpu, daemon=nb, encap=e, acks=8),
            pass_(17, 3, "forward-1", 3, 95e6 * scale, 2.42, 29.0, cpu * 1.03, daemon=nb, encap=e, acks=8),
            pass_(18, 1, "forward-1-fixed", 1, 54.6e6, 2.39, 2500.0, cpu * 1.1, daemon=nb, encap=e,
                  acks=2, lost=8)]


def matrix_doc(run_id="20261130-071500-a1b2c3", wg_scale=1.0, plain_scale=1.0, nebula_cpu=14.0):
    paths = [
        measured("plain", "client-a to client-b over the bridge, unencrypted", "192.0.2.12",
                 "quiet", plain_passes(plain_scale), 0.9),
        measured("wireguard-hub", "kernel WireGuard through the hub", "10.8.0.3", "carries",
                 wg_passes(wg_scale), 1.3, None, 3.2),
        measured("nebula-relay", "nebula, relayed by the lighthouse on the hub", "10.9.0.3", "carries",
                 nebula_passes(1.0, nebula_cpu), 1.6, None, 4.1,
                 rss={"nebula": 24576}),
        not_run("tailscale-direct", "Tailscale, peer to peer", None, LONG),
        not_run("tailscale-relay", "Tailscale through the DERP relay on the hub", None, LONG),
    ]
    return document(paths, order_of([p["name"] for p in paths[:3]]), run_id=run_id)


def fixup(doc):
    """The keys measure/ writes beside the figures above, as a real run has them."""
    doc["profile"].setdefault("passes", 3)
    env = doc["environment"]
    env.setdefault("accelerator_source", "none")
    env.setdefault("accelerator_probed_at", None)
    for h in env["hosts"].values():
        if not h:
            continue
        for d in ("tailscaled", "headscale", "nebula", "wireguard-go"):
            h["daemons"].setdefault(d, None)
    for p in doc["paths"]:
        p.setdefault("hub", "hub")
        if p.get("idle"):
            p["idle"].setdefault("cpu_busy_s_per_s", {"hub": 0.02, "client-a": 0.03, "client-b": 0.02})
        if p.get("idle_fixed"):
            p["idle_fixed"].setdefault("cpu_busy_s_per_s", {"hub": 0.021, "client-a": 0.03, "client-b": 0.02})
        first = next((x["cell"] for x in p["passes"] if x["rate"] == "full"), None)
        p.setdefault("headline_cell", first)
        if p.get("observed") is None:
            p.pop("observed", None)
        if p["status"] != "measured":
            p["warnings"] = None
        for x in p["passes"]:
            x.setdefault("daemons_rss_kib", {g: {} for g in x["cpu"]})
            for c in x["cpu"].values():
                c.setdefault("busy_above_idle_s", round(c["busy_s"] * 0.9, 3))
                c.setdefault("qemu_s", round(c["vcpu_s"] * 1.1, 3) if c.get("vcpu_s") is not None else None)
            for sec in x["series"]:
                sec.setdefault("iperf_bytes", sec["payload_bytes"])
                sec.setdefault("client_bytes", None if sec["payload_bytes"] is None else int(sec["payload_bytes"] * 1.03))
        for c in p["cells"].values():
            for g in c.get("cpu_s_per_gb", {}).values():
                g.setdefault("busy_above_idle_s_per_gb", round(g["busy_s_per_gb"] * 0.9, 3))
                g.setdefault("qemu_s_per_gb", round(g["vcpu_s_per_gb"] * 1.1, 3) if g.get("vcpu_s_per_gb") is not None else None)
    return doc


def write(name, doc):
    fixup(doc)
    with open("tests/data/" + name, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


write("results-v2-matrix.json", matrix_doc())
# The same lab again, every figure within the passes' own spread.
write("results-v2-rerun.json", matrix_doc("20261130-081500-d4e5f6", wg_scale=1.02, nebula_cpu=14.1))
# WireGuard through the hub 40 % faster: beyond any noise of the passes.
write("results-v2-faster.json", matrix_doc("20261130-091500-0a0b0c", wg_scale=1.4))
busy = document([measured("plain", "client-a to client-b over the bridge, unencrypted",
                          "192.0.2.12", "quiet", plain_passes(busy=True), 0.9, accel="kvm")],
                order_of(["plain"]), busy=True, accel="kvm", run_id="20261130-101500-ffffff")
write("results-v2-busy.json", busy)


# The NAT matrix (docs/results.md, nat_observed and nat_matrix): NAT observed for three types, a
# nebula matrix over [none, port-restricted-cone, symmetric] with 2 repeats (direct, relay, a
# race that went both ways) and a Tailscale matrix whose artifacts are missing.
NAT_TYPES = ["none", "port-restricted-cone", "symmetric"]
EXPLAIN = {
    ("none", "none"): "client-b has no NAT, so client-a's first packet to it opens the way: direct.",
    ("none", "port-restricted-cone"): "client-a has no NAT, so client-b's first packet to it opens the way: direct.",
    ("none", "symmetric"): "client-a has no NAT, so client-b's first packet to it opens the way: direct.",
    ("port-restricted-cone", "port-restricted-cone"):
        "Both NATs keep one port for every destination but let in only what their side has sent to, so both "
        "sides must punch at about the same time: direct. It is a race between nebula's hole punch and its "
        "relay set-up (a tunnel that comes up relayed stays relayed), and the repeats differ: 1 direct, 1 relay.",
    ("port-restricted-cone", "symmetric"):
        "client-b's symmetric NAT picks a new port for every destination, so the port the hub saw is not the "
        "one client-b uses towards client-a, and client-a's NAT lets in only the exact addresses and ports it "
        "has sent to: relay.",
    ("symmetric", "symmetric"): "Both NATs pick a new port for every destination, so neither side can predict where to send: relay.",
}


def nat_observed():
    def obs(node, t, mapping, filtering, preserved, seen):
        return {"node": node, "type": t, "mapping": mapping, "filtering": filtering,
                "port_preserved": preserved,
                "expected": {"mapping": mapping, "filtering": filtering, "port_preserved": preserved},
                "as_configured": True, "seen": seen}
    return {
        "full-cone": obs("client-a", "full-cone", "endpoint-independent", "endpoint-independent", True,
                         "mapped 172.16.11.2:40001 to 192.0.2.11:40001 towards 192.0.2.10:3478 and "
                         "192.0.2.20:3479; a send from 192.0.2.20:3480 got in"),
        "port-restricted-cone": obs("client-a", "port-restricted-cone", "endpoint-independent",
                                    "address-and-port-dependent", True,
                                    "mapped 172.16.11.2:40001 to 192.0.2.11:40001 towards both hub "
                                    "addresses; sends from 192.0.2.10:3480 and 192.0.2.20:3478 were dropped"),
        "symmetric": obs("client-a", "symmetric", "address-and-port-dependent", "address-and-port-dependent",
                         False, "mapped 172.16.11.2:40001 to 192.0.2.11:61234 towards 192.0.2.10:3479, "
                         "to 192.0.2.11:52011 towards 192.0.2.10:3478, to 192.0.2.11:47702 towards 192.0.2.20:3478"),
    }


def nat_repeat(dp, a, b, i, outcome, secs=None, hub=None):
    name = "%s-%s-%s-%d" % (dp, a, b, i)
    timeline = [{"t": 0.5, "state": "relay" if outcome == "relay" or secs and secs > 1 else "direct"}]
    if outcome == "direct" and secs and secs > 1:
        timeline.append({"t": secs, "state": "direct", "remote": "192.0.2.12:4242"})
    return {"outcome": outcome, "seconds_to_direct": secs, "hub_bytes": hub, "reason": None,
            "view": ("nebula print-tunnel: currentRemote 192.0.2.12:4242" if outcome == "direct" else
                     "nebula print-tunnel: currentRemote null, relayed by 10.42.0.1"),
            "captures": ["captures/nat/%s/hub.pcap" % name, "captures/nat/%s/client-a.pcap" % name],
            "timeline": timeline}


def nat_cell(dp, a, b, repeats, reason=None):
    n = {k: sum(1 for r in repeats if r["outcome"] == k) for k in ("direct", "relay", "failed")}
    if not repeats:
        outcome = "not-run"
    else:
        outcome = max(("direct", "relay", "failed"), key=lambda k: (n[k], -("direct", "relay", "failed").index(k)))
    secs = [r["seconds_to_direct"] for r in repeats if r["outcome"] == "direct"]
    hubs = [r["hub_bytes"] for r in repeats if r["hub_bytes"] is not None]
    prc = {"none": "direct", "port-restricted-cone": "race" if dp == "nebula" else "direct", "symmetric": "relay"}
    # tailscaled's port is not open in the guest firewall: for it `none` filters as a
    # port-restricted cone does (results/natgrid.c).
    none_open = dp == "nebula"
    expected = ("direct" if "none" in (a, b) and none_open else
                "relay" if "symmetric" in (a, b) else
                "direct" if "none" in (a, b) else prc[a])
    return {"a_nat": a, "b_nat": b, "a_node": "client-a", "b_node": "client-b", "dataplane": dp,
            "path": dp + "-auto", "outcome": outcome, "reason": reason, "expected": expected,
            "outcomes": n, "seconds_to_direct": statistics.median(secs) if secs else None,
            "hub_bytes": statistics.median(hubs) if hubs else None,
            "explanation": EXPLAIN[(a, b)] if repeats else "Not run: " + reason + ".",
            "repeats": repeats}


def nat_doc():
    doc = matrix_doc("20261130-111500-4a7c0e")
    doc["lab"] = "nat-lesson"
    doc["topology"] = "topologies/nat-lesson.yaml"
    doc["paths"] = doc["paths"][:1] + doc["paths"][3:4]
    doc["order"] = [o for o in doc["order"] if o["path"] == "plain"]
    doc["nat_observed"] = nat_observed()
    rep = nat_repeat
    nebula = {
        ("none", "none"): [rep("nebula", "none", "none", 1, "direct", 0.4, 2100),
                           rep("nebula", "none", "none", 2, "direct", 0.6, 2300)],
        ("none", "port-restricted-cone"): [rep("nebula", "none", "port-restricted-cone", 1, "direct", 1.2, 3100),
                                           rep("nebula", "none", "port-restricted-cone", 2, "direct", 1.4, 2900)],
        ("none", "symmetric"): [rep("nebula", "none", "symmetric", 1, "direct", 1.1, 3000),
                                rep("nebula", "none", "symmetric", 2, "direct", 2.5, 5200)],
        ("port-restricted-cone", "port-restricted-cone"):
            [rep("nebula", "port-restricted-cone", "port-restricted-cone", 1, "direct", 2.5, 9000),
             rep("nebula", "port-restricted-cone", "port-restricted-cone", 2, "relay", None, 120000)],
        ("port-restricted-cone", "symmetric"):
            [rep("nebula", "port-restricted-cone", "symmetric", 1, "relay", None, 118000),
             rep("nebula", "port-restricted-cone", "symmetric", 2, "relay", None, 122000)],
        ("symmetric", "symmetric"): [rep("nebula", "symmetric", "symmetric", 1, "relay", None, 121000),
                                     rep("nebula", "symmetric", "symmetric", 2, "relay", None, 119000)],
    }
    cells = []
    for i, a in enumerate(NAT_TYPES):
        for b in NAT_TYPES[i:]:
            cells.append(nat_cell("nebula", a, b, nebula[(a, b)]))
    for i, a in enumerate(NAT_TYPES):
        for b in NAT_TYPES[i:]:
            cells.append(nat_cell("tailscale", a, b, [], "not run: " + LONG))
    for c in cells:
        if c["outcome"] == "not-run":
            c["explanation"] = "Not run: " + LONG + "."  # the reason, as a sentence
    doc["nat_matrix"] = cells
    doc["captures_filter"] = "udp.port == 4242"
    return doc


write("results-v2-nat.json", nat_doc())
