"""Benchmark 8b, the etcd rendezvous at scale by simulation: N agents, each running the etcd
backend's real EtcdRendezvous with its own EtcdLink (client connections, lease), all in one
bench/rendezvous_sim process (--backend etcd), against ONE etcd member on loopback
(tests/etcd/etcd_cluster.py, data on /dev/shm), a fresh one per size. Sizes grow until one fails
(its join timeout is the budget) or takes over half of it; why it stopped is the limit a single
etcd here hits, read from the agents' first error, etcd's own metrics (/metrics) and its log.
Returns data only."""

import json
import os
import re
import subprocess
import sys
import time
import urllib.request

from .config import ROOT
from .running import log
from .scale import vm_hwm_kb

sys.path.insert(0, str(ROOT / "tests" / "etcd"))

SIZES = [16, 64, 256, 1000]
QUICK_SIZES = [16, 64]
FDS_PER_AGENT = 4  # as rendezvous_sim counts: lease, watch and request connections
# etcd's counters kept per size (summed over their label sets).
METRICS = {
    "requests": r'^grpc_server_handled_total\{[^}]*grpc_type="unary"[^}]*\} (\S+)',
    "txns": r'^grpc_server_handled_total\{[^}]*grpc_method="Txn"[^}]*\} (\S+)',
    "failed_requests": r'^grpc_server_handled_total\{grpc_code="(?!OK)[^"]*"[^}]*\} (\S+)',
    "watch_events": r'^etcd_debugging_mvcc_events_total (\S+)',
    "watchers": r'^etcd_debugging_mvcc_watcher_total (\S+)',
    "slow_watchers": r'^etcd_debugging_mvcc_slow_watcher_total (\S+)',
    "open_fds": r'^process_open_fds (\S+)',
    "max_fds": r'^process_max_fds (\S+)',
    "slow_applies": r'^etcd_server_slow_apply_total (\S+)',
    "leases_granted": r'^etcd_debugging_lease_granted_total (\S+)',
}


def measure(b):
    """{"status": "no-binary" | "no-etcd" | "ran", "raw": {"etcd_scale": {"N": {...}}}, "sizes",
    "budget_s", "stopped": {"after", "why"} or None}"""
    log("etcd rendezvous at scale (simulated agents)")
    sizes = QUICK_SIZES if b.quick else SIZES
    if not b.tool("rendezvous_sim"):
        return {"status": "no-binary", "raw": {}, "sizes": sizes}
    try:
        from etcd_cluster import EtcdCluster, skip_reason
    except ImportError as e:
        return {"status": "no-etcd", "why": f"tests/etcd/etcd_cluster.py: {e}", "raw": {}, "sizes": sizes}
    why = skip_reason()
    if why:
        return {"status": "no-etcd", "why": why, "raw": {}, "sizes": sizes}
    budget_s = b.reps(30, 120)
    out, stopped = {}, None
    for n in sizes:
        with EtcdCluster(members=1) as cluster:
            r = run_size(b, cluster, n, budget_s)
        out[str(n)] = r
        r["diagnosis"] = diagnose(r)
        if not r["ok"]:
            stopped = {"after": n, "why": "failed: " + ("; ".join(r["errors"]) or "no error text")[:300]}
        elif r["rdzv_s"] > budget_s / 2:
            # The next size is about 4x larger: it could not finish within the join timeout.
            stopped = {"after": n, "why": f"took {r['rdzv_s']:.1f} s, over half the {budget_s:g} s join "
                                          "timeout (the next size, about 4x larger, cannot finish in it)"}
        if stopped:
            break
    return {"status": "ran", "raw": {"etcd_scale": out}, "sizes": sizes, "budget_s": budget_s,
            "stopped": stopped}


def run_size(b, cluster, n, budget_s):
    """One job of n simulated agents against the fresh member of `cluster`."""
    pid = cluster.pids[0]
    log(f"  N={n}: one process, one etcd member (pid {pid})")
    argv = [b.bin["rendezvous_sim"], "--backend", "etcd", "--endpoints", ",".join(cluster.endpoints),
            "--agents", str(n), "--total", str(n), "--run-id", f"escale{n}x{time.monotonic_ns()}",
            "--store-pid", str(pid), "--timeout-s", str(budget_s)]
    before = metrics(cluster)
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=b.env)
    try:
        out, err = proc.communicate(timeout=2 * budget_s + 60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    try:
        d = json.loads(out)
    except json.JSONDecodeError:
        d = {"ok": False, "first_error": (out + err).strip()[-300:] or f"exit status {proc.returncode}"}
    d["exit_code"] = proc.returncode
    wall_s = time.monotonic() - t0
    after = metrics(cluster)
    r = {"n": n, "ok": bool(d.get("ok")), "sim": d, "command": " ".join(argv),
         "etcd_peak_rss_mb": (vm_hwm_kb(pid) or 0) / 1024,
         "etcd": {k: after[k] - before.get(k, 0) if k not in ("open_fds", "max_fds", "watchers") else after[k]
                  for k in after},
         "etcd_log": log_findings(cluster.log(0)),
         "errors": [d["first_error"][:300]] if d.get("first_error") else [],
         "fds_needed": n * FDS_PER_AGENT, "wall_s": wall_s}
    if "store_cpu_held_s" in d:
        r["etcd_cpu_s"] = d["store_cpu_held_s"] - d["store_cpu_start_s"]
    if "last_holding_ns" in d and d.get("failed") == 0:
        r["rdzv_s"] = (d["last_holding_ns"] - d["last_join_ns"]) / 1e9
        r["etcd_cpu_rdzv_s"] = d["store_cpu_held_s"] - d["store_cpu_start_s"]
        r["sim_cpu_s"] = d["sim_cpu_s"]
        r["sim_rss_mb"] = d["sim_max_rss_kb"] / 1024
    return r


def metrics(cluster):
    """etcd's counters of METRICS now; {} when /metrics does not answer (a member in trouble)."""
    try:
        with urllib.request.urlopen(cluster.client_url(0) + "/metrics", timeout=10) as answer:
            text = answer.read().decode(errors="replace")
    except OSError:
        return {}
    return {name: sum(float(v) for v in re.findall(pattern, text, re.M)) for name, pattern in METRICS.items()}


def log_findings(text):
    """How many warnings etcd logged, and the distinct kinds ("msg" of its zap JSON lines)."""
    kinds = {}
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("level") in ("warn", "error", "fatal", "panic"):
            kinds[entry.get("msg", "?")] = kinds.get(entry.get("msg", "?"), 0) + 1
    return kinds


def diagnose(r):
    """What bound this size, in numbers: etcd's CPU against the machine's cores, the transactions
    and watch events per agent (the contention on the one state key), file descriptors and
    memory against their limits."""
    n, e = r["n"], r["etcd"]
    parts = []
    if r.get("etcd_cpu_s") is not None and r["wall_s"] > 0:
        parts.append(f"etcd used {r['etcd_cpu_s']:.1f} s of CPU in {r['wall_s']:.1f} s "
                     f"({r['etcd_cpu_s'] / r['wall_s']:.2f} of the machine's {os.cpu_count()} cores)")
    if e.get("txns") is not None:
        parts.append(f"{e['txns'] / n:.0f} transactions and {e.get('watch_events', 0) / n:.0f} watch events "
                     "per agent")
    slow = r["etcd_log"].get("apply request took too long")
    if slow:
        parts.append(f"{slow:,} applies over 100 ms logged")
    if e.get("max_fds"):
        parts.append(f"file descriptors: about {r['fds_needed']:,} needed of etcd's {e['max_fds']:,.0f}")
    avail_kb = int(re.search(r"MemAvailable:\s+(\d+)", open("/proc/meminfo").read()).group(1))
    parts.append(f"etcd's peak RSS {r['etcd_peak_rss_mb']:,.0f} MB of {avail_kb / 1024:,.0f} MB available")
    return "; ".join(parts)
