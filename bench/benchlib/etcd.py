"""Benchmark: the etcd v3 rendezvous. A agents (8, 32, 64) on loopback form one job through a
3-member etcd cluster (tests/etcd/etcd_cluster.py: members on loopback, data on /dev/shm) beside
the same job through c10d; and the time from a host's SIGKILL to the survivors' workers running
again (3 agents, --nnodes=2:3). Returns data only."""

import os
import signal
import subprocess
import sys
import time

from .config import ROOT
from .rendezvous import agent_errors, rdzv_once, start_agents
from .running import log, shell_join
from .stats import stats

sys.path.insert(0, str(ROOT / "tests" / "etcd"))

AGENT_COUNTS = (8, 32, 64)
# Lease TTL 3 s (keep_alive_interval x keep_alive_max_attempt) and last call 1 s for the kill.
KILL_CONF = "last_call_timeout=1,keep_alive_interval=1,keep_alive_max_attempt=3,join_timeout=60"


def measure(b):
    """{"status": "no-binary" | "no-etcd" | "ran", "raw", and for "ran": "agent_counts"}"""
    log("etcd rendezvous")
    if not b.tool("cpplaunch"):
        return {"status": "no-binary", "raw": {}}
    try:
        from etcd_cluster import EtcdCluster, skip_reason
    except ImportError as e:
        return {"status": "no-etcd", "why": f"tests/etcd/etcd_cluster.py: {e}", "raw": {}}
    why = skip_reason()
    if why:
        return {"status": "no-etcd", "why": why, "raw": {}}
    counts = (8, 32) if b.quick else AGENT_COUNTS
    raw = {}
    with EtcdCluster(members=3) as cluster:
        for a in counts:
            n = b.reps(1, 3)
            etcd_runs = [etcd_once(b, cluster.endpoints, a) for _ in range(n)]
            c10d_runs = [rdzv_once(b, "cpplaunch", a, timeout_s=60) for _ in range(n)]
            raw[f"etcd/{a}"] = {"rdzv_s": ok_stats(etcd_runs), "runs": etcd_runs}
            raw[f"c10d/{a}"] = {"rdzv_s": ok_stats(c10d_runs), "runs": c10d_runs}
        kills = [kill_once(b, cluster.endpoints) for _ in range(b.reps(1, 3))]
        raw["kill"] = {"back_s": stats([k["back_s"] for k in kills if k["ok"]]), "runs": kills}
    return {"status": "ran", "raw": {"etcd": raw}, "agent_counts": list(counts)}


def ok_stats(runs):
    return stats([r.get("rdzv_s") for r in runs if r["started_ok"]])


def etcd_argv(b, a, endpoints, run_id, worker, nnodes=None, conf="join_timeout=60"):
    return [b.bin["cpplaunch"], f"--nnodes={nnodes or a}", "--nproc-per-node=1",
            "--rdzv-backend=etcd-v3", "--rdzv-endpoint=" + ",".join(endpoints),
            f"--rdzv-id={run_id}", f"--rdzv-conf={conf}", "--no-python"] + worker


def etcd_once(b, endpoints, a, timeout_s=90):
    """One job of a agents through etcd: the last agent's fork to the last worker's start."""
    stamps = b.scratch / f"stamps-etcd-{a}-{time.monotonic_ns()}"
    stamps.mkdir()
    worker = [b.bin["bench_worker"], "stamp", str(stamps)]
    run_id = f"bench{time.monotonic_ns()}"
    results = start_agents(b, a, lambda i: etcd_argv(b, a, endpoints, run_id, worker), timeout_s)
    starts = [int(p.read_text()) for p in stamps.iterdir() if p.name.isdigit()]
    out = {"started_ok": len(starts) == a,
           "ok": all(r["exit_code"] == 0 and not r["timed_out"] for r in results),
           "command": shell_join(etcd_argv(b, a, endpoints, run_id, worker)),
           "errors": agent_errors(b, a)}
    if out["started_ok"]:
        out["rdzv_s"] = (max(starts) - max(r["t_fork_ns"] for r in results)) / 1e9
    for p in stamps.iterdir():
        p.unlink()
    stamps.rmdir()
    return out


def kill_once(b, endpoints, timeout_s=60):
    """3 agents --nnodes=2:3; SIGKILL group rank 0's agent once every worker runs; the time until
    both survivors' workers started again (their stamps rewritten)."""
    stamps = b.scratch / f"stamps-etcd-kill-{time.monotonic_ns()}"
    stamps.mkdir()
    worker = [b.bin["bench_worker"], "stamp-then-fail-or-sleep", str(stamps), "-1", "0", "/dev/null"]
    run_id = f"bench{time.monotonic_ns()}"
    argv = etcd_argv(b, 3, endpoints, run_id, worker, nnodes="2:3", conf=KILL_CONF)
    argv.insert(1, "--max-restarts=1")
    env = dict(b.env, LOGLEVEL="INFO")
    agents = [subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env=env, start_new_session=True) for _ in range(3)]
    out = {"ok": False, "command": shell_join(argv)}
    try:
        deadline = time.monotonic() + timeout_s
        while len(list(stamps.iterdir())) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        if len(list(stamps.iterdir())) < 3:
            out["error"] = "the first round did not start"
            return out
        victim = victim_agent(agents)
        killed_ns = time.monotonic_ns()
        os.kill(victim.pid, signal.SIGKILL)
        while time.monotonic() < deadline:
            again = [int(p.read_text() or 0) for p in stamps.iterdir()
                     if p.name in ("0", "1") and int(p.read_text() or 0) > killed_ns]
            if len(again) == 2:
                out.update(ok=True, back_s=(max(again) - killed_ns) / 1e9)
                break
            time.sleep(0.02)
        else:
            out["error"] = "the survivors' workers did not start again"
    finally:
        for agent in agents:
            if agent.poll() is None:
                agent.send_signal(signal.SIGTERM)
        for agent in agents:
            try:
                agent.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(agent.pid, signal.SIGKILL)
                agent.communicate()
        for p in stamps.iterdir():
            p.unlink()
        stamps.rmdir()
    return out


def victim_agent(agents):
    """The agent of group rank 0 (it hosts the workers' store), from its INFO line
    "rendezvous round 0 complete: node rank 0 of 3, ..."; every agent prints that line before
    its worker starts, so reading up to it never blocks."""
    for agent in agents:
        for line in agent.stderr:
            if "rendezvous round 0 complete" in line:
                if "node rank 0 of" in line:
                    return agent
                break
    return agents[0]
