"""Benchmark 2, teardown latency: one of 8 workers fails after a seeded random delay while its
siblings sleep; the time from its failure to every process of the job gone. Returns data only."""

import random

from .running import free_port, launchers_for, log, shell_join
from .stats import stats

N = 8


def measure(b):
    """{"raw": {"teardown": {label: {teardown_ms, exit_ms, runs, command}}}, "n", "delays"}"""
    rng = random.Random(6)
    reps_fast, reps_torch = b.reps(3, 10), b.reps(1, 5)
    delays = [rng.randrange(300, 800) for _ in range(max(reps_fast, reps_torch))]
    log("teardown latency")
    samples, commands = {}, {}
    for rep, delay in enumerate(delays):
        stamp = b.scratch / "fail-stamp"
        worker = [b.bin["bench_worker"], "fail-or-sleep", "0", str(delay), str(stamp)]
        for label, argv in launchers_for(b, N, free_port(), worker):
            if rep >= (reps_torch if label.startswith("torchrun") else reps_fast):
                continue
            commands[label] = argv
            samples.setdefault(label, []).append(run_once(b, label, argv, stamp))
    raw = {label: {"teardown_ms": stats([r["teardown_ms"] for r in runs if r["ok"]]),
                   "exit_ms": stats([r.get("exit_after_failure_ms") for r in runs if r["ok"]]),
                   "runs": runs, "command": shell_join(commands[label])}
           for label, runs in samples.items()}
    return {"raw": {"teardown": raw}, "n": N, "delays": delays[:reps_fast]}


def run_once(b, label, argv, stamp):
    stamp.unlink(missing_ok=True)
    r = b.proc_run(argv, timeout_s=90)
    try:
        failed_at = int(stamp.read_text())
        r["teardown_ms"] = (r["t_gone_ns"] - failed_at) / 1e6
        r["exit_after_failure_ms"] = (r["t_exit_ns"] - failed_at) / 1e6
    except (OSError, ValueError):
        r["teardown_ms"] = None
    r["ok"] = r["exit_code"] != 0 and r["teardown_ms"] is not None and r["killed_after_grace"] == 0
    if not r["ok"]:
        log(f"  {label}: {r}")
    return r
