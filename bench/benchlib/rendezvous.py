"""Benchmark 6, rendezvous scale: A agents on loopback form one dynamic c10d job; the time from
the last agent's start to the last worker's start, and a cross-host teardown (the last rank
fails, every agent must end). Returns data only."""

import json
import re
import shutil
import subprocess
import time

from .config import ROOT, TORCHRUN, TORCHRUN_DEFAULT_STD
from .running import free_port, log, shell_join
from .stats import stats

TEARDOWN_SIZES = (4, 64)


def measure(b):
    """{"status": "no-binary" | "probe-failed" | "ran", "raw", and for "ran": "rows" data
    ({"kind/A": ...} in "raw"["rendezvous"]), "agent_counts", "timeout_s"}"""
    log("rendezvous scale")
    if not b.tool("cpplaunch"):
        return {"status": "no-binary", "raw": {}}
    probe = rdzv_once(b, "cpplaunch", 2, timeout_s=30)
    if not probe["started_ok"]:
        return {"status": "probe-failed", "probe": probe, "raw": {"rendezvous": {"probe": probe}}}
    agent_counts = [4, 64] if b.quick else [4, 8, 16, 32, 64, 128]
    timeout_s = b.reps(20, 60)
    plan = [("cpplaunch", a) for a in agent_counts] + ([] if b.quick else [("torchrun", 4)])
    raw, stopped = {}, set()
    for launcher, a in plan:
        if launcher in stopped:
            continue
        raw[f"{launcher}/{a}"] = measure_size(b, launcher, a, timeout_s)
        if not any(r["started_ok"] for r in raw[f"{launcher}/{a}"]["runs"]):
            stopped.add(launcher)  # larger sizes would only fail slower
    return {"status": "ran", "raw": {"rendezvous": raw}, "agent_counts": agent_counts,
            "timeout_s": timeout_s}


def measure_size(b, launcher, a, timeout_s):
    n = b.reps(1, 3) if launcher == "cpplaunch" else 1  # a torchrun run takes tens of seconds
    runs = [rdzv_once(b, launcher, a, timeout_s=timeout_s) for _ in range(n)]
    td_runs = [rdzv_once(b, launcher, a, fail=True, timeout_s=timeout_s) for _ in range(n)] \
        if a in TEARDOWN_SIZES else []
    return {"rdzv_s": stats([r.get("rdzv_s") for r in runs if r["started_ok"]]),
            "teardown_s": stats([r.get("teardown_s") for r in td_runs if r["ok"]]),
            "runs": runs, "teardown_runs": td_runs}


def start_agents(b, a, argv_for, timeout_s):
    """Starts a agents back to back, each under proc_run; their proc_run results."""
    procs = []
    for i in range(a):
        cmd = [b.bin["proc_run"], "--timeout-ms", str(int(timeout_s * 1000)), "--stdout", "/dev/null",
               "--stderr", str(b.scratch / f"agent-{i}.err"), "--"] + argv_for(i)
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=b.env))
    results = []
    for p in procs:
        out, _ = p.communicate(timeout=timeout_s + 60)
        results.append(json.loads(out))
    return results


def rdzv_argv(b, launcher, a, port, run_id, worker):
    common = [f"--nnodes={a}", "--nproc_per_node=1", "--rdzv_backend=c10d",
              f"--rdzv_endpoint=127.0.0.1:{port}", f"--rdzv_id={run_id}"]
    if launcher == "cpplaunch":
        return [b.bin["cpplaunch"]] + common + ["--no_python"] + worker
    return [TORCHRUN] + TORCHRUN_DEFAULT_STD + common + ["--monitor_interval=0.1", "--no_python"] + worker


def agent_errors(b, a):
    """Up to 4 kinds of error lines from the agents' stderr (numbers replaced by N; paths in
    the checkout relative to it, so the report cites the repository, not this machine)."""
    errors = []
    for i in range(a):
        for line in (b.scratch / f"agent-{i}.err").read_text(errors="replace").splitlines():
            line = line.strip().replace(f"{ROOT}/", "")
            line = re.sub(r"\d+", "N", line)  # one entry per kind of message
            if ("error" in line or "failed" in line) and line not in errors and len(errors) < 4:
                errors.append(line)
    return errors


def rdzv_once(b, launcher, a, fail=False, timeout_s=120):
    """One job of a agents; with fail, the last rank's worker fails 500 ms after its start."""
    stamps = b.scratch / f"stamps-{launcher}-{a}-{time.monotonic_ns()}"
    stamps.mkdir()
    fail_stamp = stamps / "failed"
    worker = [b.bin["bench_worker"], "stamp", str(stamps)] if not fail else \
        [b.bin["bench_worker"], "stamp-then-fail-or-sleep", str(stamps), str(a - 1), "500", str(fail_stamp)]
    port = free_port()
    run_id = f"bench{time.monotonic_ns()}"
    results = start_agents(b, a, lambda i: rdzv_argv(b, launcher, a, port, run_id, worker),
                           timeout_s=timeout_s)
    starts = [int(p.read_text()) for p in stamps.iterdir() if p.name.isdigit()]
    codes = sorted(r["exit_code"] if not r["timed_out"] else "timeout" for r in results)
    out = {"agents_ok": sum(r["exit_code"] == (1 if fail else 0) for r in results),
           "exit_codes": ", ".join(f"{c}×{codes.count(c)}" for c in sorted(set(codes), key=str)),
           "any_timeout": any(r["timed_out"] for r in results),
           "workers_started": len(starts), "alive_after_exit": sum(r["alive_after_exit"] for r in results),
           "command": shell_join(rdzv_argv(b, launcher, a, port, run_id, worker)),
           "stderr": (b.scratch / "agent-0.err").read_text(errors="replace")[-400:],
           "errors": agent_errors(b, a)}
    out["started_ok"] = len(starts) == a
    if out["started_ok"]:
        out["rdzv_s"] = (max(starts) - max(r["t_fork_ns"] for r in results)) / 1e9
    if fail and fail_stamp.exists():
        out["teardown_s"] = (max(r["t_gone_ns"] for r in results) - int(fail_stamp.read_text())) / 1e9
    out["ok"] = run_ok(out, results, a, fail)
    shutil.rmtree(stamps, ignore_errors=True)
    return out


def run_ok(out, results, a, fail):
    if fail:  # the job must end everywhere: no agent timed out, none left anything, one reported it
        return (out["started_ok"] and not out["any_timeout"] and out["alive_after_exit"] == 0 and
                any(r["exit_code"] != 0 for r in results))
    return out["agents_ok"] == a and out["started_ok"] and out["alive_after_exit"] == 0
