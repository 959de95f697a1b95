"""Benchmark 8b, the etcd rendezvous at scale by simulation: N agents, each running the etcd
backend's real EtcdRendezvous with its own EtcdLink (client connections, lease), all in one
bench/rendezvous_sim process (--backend etcd), against ONE etcd member on loopback
(tests/etcd/etcd_cluster.py, data on /dev/shm), a fresh one per size. Sizes grow until one fails
(its join timeout is the budget) or takes over half of it; why it stopped is the limit a single
etcd here hits, read from the agents' first error, etcd's own metrics (/metrics) and its log.
Sizes above AGENTS_PER_PROCESS run in several rendezvous_sim processes, each reaching the member
at its own loopback address; the file descriptor limit is raised for etcd and them as far as the
system allows (a root harness up to fs.nr_open), and a size it cannot hold is reported so.
Then MEMBER_SIZES that one member completed run again on a cluster of MEMBERS members, the agents
spread evenly over them (one simulating process per member): what more members change here.
Returns data only."""

import json
import os
import re
import resource
import sys
import time
import urllib.request

from .config import ROOT
from .running import log
from .scale import run_processes, vm_hwm_kb

sys.path.insert(0, str(ROOT / "tests" / "etcd"))

SIZES = [16, 64, 256, 1000, 4000, 10000]
QUICK_SIZES = [16, 64]
FDS_PER_AGENT = 1  # as rendezvous_sim counts: an agent's one gRPC connection
# etcd's end: an agent's one connection, which carries its requests, watch and renewals (through
# the JSON gateway it took two: 8,019 descriptors open at 4,000 agents, 20,256 needed at 10,000).
ETCD_FDS_PER_AGENT = 1
FD_MARGIN = 256
# One process's agents reach etcd at one loopback address pair, whose ephemeral ports (28,232
# here) must hold their connections, and one process has one core: 2,500 agents each. Each
# process connects to 127.0.0.<p+1>, on all of which the member listens.
AGENTS_PER_PROCESS = 2500
MEMBERS = 3
MEMBER_SIZES = [1000, 4000]
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
# Requests per kind: unary calls by method (handled), streams by method (started: Watch, and the
# gateway's LeaseKeepAlive, one stream per keep-alive request).
UNARY = r'^grpc_server_handled_total\{[^}]*grpc_method="(\w+)"[^}]*grpc_type="unary"[^}]*\} (\S+)'
STREAMS = r'^grpc_server_started_total\{[^}]*grpc_method="(\w+)"[^}]*grpc_type="bidi_stream"[^}]*\} (\S+)'


def raise_fd_limit(wanted):
    """Raises this process's descriptor limit (soft and hard) towards `wanted`, for the etcd member
    and the simulating processes it starts: past the hard limit only as root, never past
    fs.nr_open. Returns the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        ceiling = int(open("/proc/sys/fs/nr_open").read())
    except (OSError, ValueError):
        ceiling = hard
    target = min(max(wanted, soft), ceiling)
    for limits in ((target, max(target, hard)), (min(target, hard), hard)):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, limits)
            break
        except (ValueError, OSError):
            continue
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


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
        with make_cluster(EtcdCluster, n) as cluster:
            r = run_size(b, cluster, n, budget_s)
        out[str(n)] = r
        r["diagnosis"] = diagnose(r)
        if r.get("fd_limited"):
            stopped = {"after": n, "why": r["errors"][0]}
        elif not r["ok"]:
            stopped = {"after": n, "why": "failed: " + ("; ".join(r["errors"]) or "no error text")[:300]}
        elif r["rdzv_s"] > budget_s / 2:
            # The next size is about 4x larger: it could not finish within the join timeout.
            stopped = {"after": n, "why": f"took {r['rdzv_s']:.1f} s, over half the {budget_s:g} s join "
                                          "timeout (the next size, about 4x larger, cannot finish in it)"}
        if stopped:
            break
    members = {}
    if not b.quick:
        for n in MEMBER_SIZES:
            if out.get(str(n), {}).get("ok"):
                members[str(n)] = run_members(b, EtcdCluster, n, budget_s)
    return {"status": "ran", "raw": {"etcd_scale": out, "etcd_scale_members": members}, "sizes": sizes,
            "budget_s": budget_s, "stopped": stopped}


def sim_argv(b, endpoint, agents, n, first, processes, run_id, pid, budget_s, extra=()):
    """One rendezvous_sim process: `agents` of the job's n, from index `first`, reaching etcd at
    `endpoint` and measuring the CPU of the member `pid`."""
    return [b.bin["rendezvous_sim"], "--backend", "etcd", "--endpoints", endpoint, "--agents", str(agents),
            "--total", str(n), "--first-index", str(first), "--processes", str(processes), "--run-id", run_id,
            "--store-pid", str(pid), "--timeout-s", str(budget_s), *extra]


def outcome(parts, first_argv):
    """What the simulating processes' reports say together: ok, their distinct first errors, the
    command, and the rendezvous time (last join to every agent holding the round) when all held."""
    r = {"ok": all(d.get("ok") for d in parts),
         "errors": sorted({d["first_error"][:300] for d in parts if d.get("first_error")}),
         "command": " ".join(str(a) for a in first_argv)}
    if all("last_holding_ns" in d and d.get("failed") == 0 for d in parts):
        r["rdzv_s"] = (max(d["last_holding_ns"] for d in parts) - max(d["last_join_ns"] for d in parts)) / 1e9
    return r


def run_members(b, EtcdCluster, n, budget_s):
    """One job of n simulated agents against a fresh cluster of MEMBERS members, a simulating
    process per member reaching only it (a real job's agents would pick their first endpoint
    at random)."""
    log(f"  N={n}: {MEMBERS} members, {MEMBERS} processes")
    raise_fd_limit(-(-n // MEMBERS) * FDS_PER_AGENT + FD_MARGIN)
    with EtcdCluster(members=MEMBERS) as cluster:
        run_id = f"emembers{n}x{time.monotonic_ns()}"
        per_process = -(-n // MEMBERS)
        argvs = [sim_argv(b, f"127.0.0.1:{cluster.client_ports[p]}", min(per_process, n - p * per_process), n,
                          p * per_process, MEMBERS, run_id, cluster.pids[p], budget_s)
                 for p in range(MEMBERS)]
        t0 = time.monotonic()
        parts, first_argv = run_processes(b, argvs, 2 * budget_s + 60)
        wall_s = time.monotonic() - t0
    # As for one member: each process measures its member's CPU from its agents' start to all
    # holding the round.
    window = [d["store_cpu_held_s"] - d["store_cpu_start_s"] for d in parts
              if "store_cpu_held_s" in d and "store_cpu_start_s" in d]
    r = {"n": n, "members": MEMBERS, "wall_s": wall_s,
         "etcd_cpu_s": sum(window) if len(window) == MEMBERS else None, "cpu_per_member_s": window}
    r.update(outcome(parts, first_argv))
    return r


def plan(n):
    """(processes, file descriptors needed by the largest process, by etcd)."""
    processes = -(-n // AGENTS_PER_PROCESS)
    per_process = -(-n // processes)
    return processes, per_process * FDS_PER_AGENT + FD_MARGIN, n * ETCD_FDS_PER_AGENT + FD_MARGIN


def make_cluster(EtcdCluster, n):
    """A fresh one-member cluster (not started) listening at one loopback address per process."""
    cluster = EtcdCluster(members=1)
    processes, _, _ = plan(n)
    port = cluster.client_ports[0]
    if processes > 1:
        cluster.extra_args += ["--listen-client-urls",
                               ",".join(f"http://127.0.0.{p + 1}:{port}" for p in range(processes))]
    return cluster


def run_size(b, cluster, n, budget_s, extra=()):
    """One job of n simulated agents against the fresh member of `cluster`."""
    pid = cluster.pids[0]
    processes, sim_fds, etcd_fds = plan(n)
    limit = raise_fd_limit(max(sim_fds, etcd_fds))
    log(f"  N={n}: {processes} process(es), one etcd member (pid {pid}), file descriptor limit {limit:,}")
    r = {"n": n, "processes": processes, "fds_needed": etcd_fds, "fd_limit": limit}
    if max(sim_fds, etcd_fds) > limit:
        who = (f"the etcd member needs about {etcd_fds:,} file descriptors" if etcd_fds > limit else
               f"each simulating process needs about {sim_fds:,} file descriptors")
        r.update(ok=False, errors=[f"not run: for {n:,} agents {who}, over the limit {limit:,} "
                                   "(raising it past the hard limit needs CAP_SYS_RESOURCE)"],
                 etcd={}, etcd_log={}, etcd_peak_rss_mb=0, wall_s=0, fd_limited=True)
        return r
    port = cluster.client_ports[0]
    run_id = f"escale{n}x{time.monotonic_ns()}"
    before = metrics(cluster)
    t0 = time.monotonic()
    per_process = -(-n // processes)
    argvs = []
    for p in range(processes):
        first = p * per_process
        endpoint = f"127.0.0.{p + 1}:{port}" if processes > 1 else ",".join(cluster.endpoints)
        argvs.append(sim_argv(b, endpoint, min(per_process, n - first), n, first, processes, run_id, pid,
                              budget_s, extra))
    parts, first_argv = run_processes(b, argvs, 2 * budget_s + 60)
    wall_s = time.monotonic() - t0
    after = metrics(cluster)
    r.update(outcome(parts, first_argv))
    r.update({"sim": parts[0], "parts": len(parts),
              "etcd_peak_rss_mb": (vm_hwm_kb(pid) or 0) / 1024,
              "etcd": {k: after[k] - before.get(k, 0) if k not in ("open_fds", "max_fds", "watchers") else after[k]
                       for k in after if not isinstance(after[k], dict)},
              "etcd_kinds": {k: v - before.get("kinds", {}).get(k, 0) for k, v in after.get("kinds", {}).items()
                             if v - before.get("kinds", {}).get(k, 0) > 0},
              "etcd_log": log_findings(cluster.log(0)),
              "wall_s": wall_s})
    if all("store_cpu_held_s" in d for d in parts):
        r["etcd_cpu_s"] = max(d["store_cpu_held_s"] for d in parts) - min(d["store_cpu_start_s"] for d in parts)
    if "rdzv_s" in r:
        r["etcd_cpu_rdzv_s"] = r["etcd_cpu_s"]
        r["sim_cpu_s"] = sum(d["sim_cpu_s"] for d in parts)
        r["sim_rss_mb"] = max(d["sim_max_rss_kb"] for d in parts) / 1024
    return r


def metrics(cluster):
    """etcd's counters of METRICS now; {} when /metrics does not answer (a member in trouble)."""
    try:
        with urllib.request.urlopen(cluster.client_url(0) + "/metrics", timeout=10) as answer:
            text = answer.read().decode(errors="replace")
    except OSError:
        return {}
    out = {name: sum(float(v) for v in re.findall(pattern, text, re.M)) for name, pattern in METRICS.items()}
    kinds = {}
    for pattern in (UNARY, STREAMS):
        for method, value in re.findall(pattern, text, re.M):
            kinds[method] = kinds.get(method, 0) + float(value)
    out["kinds"] = kinds
    return out


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
    and watch events per agent, the requests per agent by kind, file descriptors and memory
    against their limits."""
    n, e = r["n"], r["etcd"]
    parts = []
    if r.get("etcd_cpu_s") is not None and r["wall_s"] > 0:
        parts.append(f"etcd used {r['etcd_cpu_s']:.1f} s of CPU in {r['wall_s']:.1f} s "
                     f"({r['etcd_cpu_s'] / r['wall_s']:.2f} of the machine's {os.cpu_count()} cores)")
    if e.get("txns") is not None:
        parts.append(f"{e['txns'] / n:.1f} transactions and {e.get('watch_events', 0) / n:.1f} watch events "
                     "per agent")
    kinds = ", ".join(f"{k} {v / n:.2f}" for k, v in sorted(r.get("etcd_kinds", {}).items()) if v / n >= 0.01)
    if kinds:
        parts.append(f"requests per agent: {kinds}")
    slow = r["etcd_log"].get("apply request took too long")
    if slow:
        parts.append(f"{slow:,} applies over 100 ms logged")
    if e.get("max_fds"):
        parts.append(f"file descriptors: about {r['fds_needed']:,} needed of etcd's {e['max_fds']:,.0f}")
    avail_kb = int(re.search(r"MemAvailable:\s+(\d+)", open("/proc/meminfo").read()).group(1))
    parts.append(f"etcd's peak RSS {r['etcd_peak_rss_mb']:,.0f} MB of {avail_kb / 1024:,.0f} MB available")
    return "; ".join(parts)
