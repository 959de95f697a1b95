"""Benchmark 8, rendezvous at scale by simulation: N agents, each running the agent's real
DynamicRendezvous and JobChannel with its own connections to one cpplaunch-store, many agents per
bench/rendezvous_sim process. Per size: the rendezvous (last join to every agent holding the
round), the store's CPU and peak RSS, the heartbeat load at the default keep-alive, and the
failure fan-out (one agent ends the round; time until every agent was told); then hot spares, the
replacement of a lost member by a spare (scale_spares.py). Returns data only."""

import json
import re
import resource
import subprocess
import time
from pathlib import Path

from . import scale_spares
from .running import log
from .servers import Server

CONNECTIONS_PER_AGENT = 1  # the rendezvous' connection, which the job channel shares (tagged)
AGENTS_PER_PROCESS = 2000  # 8,000 connections: under any process's file limit here
PROFILE_SIZE = 1000  # the size whose requests are counted, in one process
FD_MARGIN = 100


def measure(b):
    """{"raw": {"scale": {"N": {...}}, "scale_spares": {...}, "scale_profile": {...}}, "sizes",
    "budget_s", "hold_s", "skipped", "fd_limit", "spares", "profile"}"""
    log("rendezvous at scale (simulated agents)")
    sizes = [64, 256] if b.quick else [64, 256, 1000, 4000, 10000]
    budget_s = b.reps(30, 150)
    hold_s = b.reps(3, 10)
    fd_limit = soft_fd_limit()  # scripts/bench raised it for itself and what it starts
    out, skipped = {}, None
    if not (b.tool("rendezvous_sim") and b.tool("cpplaunch-store")):
        return {"raw": {}, "sizes": sizes, "missing": True}
    for n in sizes:
        if skipped:
            break
        r = run_size(b, n, budget_s, hold_s, fd_limit)
        out[str(n)] = r
        if not r["ok"]:
            skipped = {"after": n, "why": "failed"}
        elif too_big(r, n, sizes):
            skipped = {"after": n, "why": too_big(r, n, sizes)}
        elif r["rdzv_s"] > budget_s / 8:
            skipped = {"after": n, "why": f"took {r['rdzv_s']:.1f} s, over {budget_s / 8:g} s "
                                          f"(the next size would exceed {budget_s:g} s if it grows "
                                          "quadratically)"}
    counted = count_requests(b, PROFILE_SIZE, budget_s, fd_limit)
    spares = scale_spares.measure(b)
    return {"raw": {"scale": out, "scale_spares": spares, "scale_profile": counted}, "sizes": sizes,
            "budget_s": budget_s, "hold_s": hold_s, "skipped": skipped, "fd_limit": fd_limit,
            "spares": spares, "profile": counted}


def count_requests(b, n, budget_s, fd_limit):
    """One more rendezvous of n agents in one process, counting the store requests of each agent
    (`rendezvous_sim --count-requests 1`, request_tally.h): {"n", "requests": {kind: [count, first
    ms, last ms]}, "rdzv_s"}, or None when it failed. Counting costs the simulation CPU, so this run
    is not one of the timed sizes."""
    srv = Server(b, "cpplaunch", extra=["--max-connections", str(fd_limit)])
    try:
        parts, argv = run_sims(b, srv, n, n, f"count{n}x{time.monotonic_ns()}", budget_s,
                               lambda p: ["--channel", "0", "--count-requests", "1"])
    finally:
        srv.stop()
    d = parts[0]
    if not d.get("ok") or not d.get("requests"):
        return None
    return {"n": n, "requests": d["requests"], "rdzv_s": (d["last_holding_ns"] - d["last_join_ns"]) / 1e9,
            "command": " ".join(str(a) for a in argv)}


def requests_per_agent(profile):
    """[(kind, requests per agent)] of a counted run, in the order the kinds began; None without one."""
    if not profile or not profile.get("requests"):
        return None
    n = profile["n"]
    kinds = sorted(profile["requests"].items(), key=lambda kv: kv[1][1])
    return [(kind, v[0] / n) for kind, v in kinds]


def too_big(r, n, sizes):
    """Why the size after n must not run on this machine's memory, or None. An agent holds its own
    assignment and about log2 N peers' records, so the simulating processes' memory grows a little
    faster than N; the guard extrapolates as N^1.5 to stay on the safe side."""
    later = [m for m in sizes if m > n]
    rss_kb = sum(d.get("sim_max_rss_kb", 0) for d in r["parts"])
    if not later or not rss_kb:
        return None
    need_gb = rss_kb * (later[0] / n) ** 1.5 / 2**20
    avail_gb = int(re.search(r"MemAvailable:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1)) / 2**20
    if need_gb <= avail_gb / 2:
        return None
    return (f"would need about {need_gb:.0f} GB for {later[0]:,} simulated agents "
            f"({rss_kb / 2**20:.1f} GB at {n:,}), over half of the {avail_gb:.0f} GB available")


def soft_fd_limit():
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def run_size(b, n, budget_s, hold_s, fd_limit):
    """One job of n simulated agents against a fresh store."""
    # The store holds every agent's connections; with fewer descriptors than the job channel
    # needs, only the rendezvous (one connection per agent) is simulated.
    channel = n * CONNECTIONS_PER_AGENT + FD_MARGIN <= fd_limit
    per_process = AGENTS_PER_PROCESS if channel else fd_limit - FD_MARGIN
    processes = -(-n // per_process)
    log(f"  N={n}: {processes} process(es), job channel {'on' if channel else 'off (fd limit)'}")
    srv = Server(b, "cpplaunch", extra=["--max-connections", str(fd_limit)])
    try:
        parts, argv = run_sims(
            b, srv, n, per_process, f"scale{n}x{time.monotonic_ns()}", budget_s,
            lambda p: ["--channel", "1" if channel else "0", "--hold-s", str(hold_s if channel else 0),
                       "--fail", ("1" if p == 0 else "2") if channel else "0"])
        peak_rss_kb = vm_hwm_kb(srv.proc.pid)
    finally:
        srv.stop()
    return summarize(n, channel, processes, parts, peak_rss_kb, argv)


def run_sims(b, srv, n, per_process, run_id, budget_s, extra):
    """Runs one job of n simulated agents, per_process to a rendezvous_sim process, against the
    store `srv`; extra(p) gives process p's own arguments. Returns (each process's JSON, the
    first process's argv)."""
    processes = -(-n // per_process)
    argvs = []
    for p in range(processes):
        first = p * per_process
        count = min(per_process, n - first)
        argvs.append([b.bin["rendezvous_sim"], "--port", str(srv.port), "--agents", str(count),
                      "--total", str(n), "--first-index", str(first), "--processes", str(processes),
                      "--run-id", run_id, *extra(p),
                      "--store-pid", str(srv.proc.pid), "--timeout-s", str(budget_s)])
    return run_processes(b, argvs, 3 * budget_s + 60)


def run_processes(b, argvs, timeout_s):
    """Starts one rendezvous_sim process per argv, all at once, and collects each one's JSON
    object (waiting at most timeout_s for each); kills any left running. Returns (the objects, the
    first argv). Shared by the c10d and the etcd simulations."""
    procs = []
    try:
        for argv in argvs:
            procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True, env=b.env))
        return [collect(p, timeout_s) for p in procs], procs[0].args
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def collect(proc, timeout_s):
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    try:
        d = json.loads(out)
    except json.JSONDecodeError:
        d = {"ok": False, "first_error": (out + err).strip()[-300:] or f"exit status {proc.returncode}"}
    d["exit_code"] = proc.returncode
    return d


def vm_hwm_kb(pid):
    m = re.search(r"VmHWM:\s+(\d+)", Path(f"/proc/{pid}/status").read_text())
    return int(m.group(1)) if m else None


def summarize(n, channel, processes, parts, peak_rss_kb, argv):
    ok = all(d.get("ok") for d in parts)
    r = {"n": n, "channel": channel, "processes": processes, "ok": ok, "parts": parts,
         "store_peak_rss_mb": peak_rss_kb / 1024 if peak_rss_kb else None,
         "command": " ".join(str(a) for a in argv),
         "errors": sorted({d.get("first_error", "")[:200] for d in parts if d.get("first_error")})}
    if not all("last_holding_ns" in d for d in parts):
        return r
    holding = [d["last_holding_ns"] for d in parts]
    r["rdzv_s"] = (max(holding) - max(d["last_join_ns"] for d in parts)) / 1e9
    r["all_joined_s"] = (max(holding) - min(d["first_join_ns"] for d in parts)) / 1e9
    r["store_cpu_rdzv_s"] = max(d["store_cpu_held_s"] for d in parts) - min(d["store_cpu_start_s"] for d in parts)
    r["sim_cpu_s"] = sum(d["sim_cpu_s"] for d in parts)
    if channel:
        first = parts[0]
        r["hold_s"] = first.get("hold_s")
        r["ended_during_hold"] = sum(d.get("ended_during_hold", 0) for d in parts)
        if first.get("hold_s"):
            r["heartbeat_store_cpu_share"] = first["hold_store_cpu_s"] / first["hold_s"]
        if first.get("fail_ns") and all(d.get("told") == d.get("agents") for d in parts):
            r["fanout_s"] = (max(d["last_told_ns"] for d in parts) - first["fail_ns"]) / 1e9
    return r
