"""Benchmark 1, launch overhead: N workers that exit at once, fork of the launcher to its exit,
for cpplaunch, torchrun (both monitor intervals), an sh floor and mpirun when installed; then
the phases of an 8-worker launch and bench/spawn_cost's cgroup figures. Returns data only."""

import json
import os
import shutil
import subprocess

from .running import free_port, launchers_for, log, shell_join
from .stats import stats

NS = [1, 8, 32]
FLOOR = "sh forking /bin/true (floor)"


def measure(b):
    """{"raw": {"launch", "launch_phases", "spawn_cost"?}, "ns", "rss_true_kb", "mpirun", "reps"}"""
    reps = {"fast": b.reps(3, 15), "torchrun": b.reps(1, 5)}
    log("launch overhead")
    rss_true = b.proc_run(["/bin/true"])["maxrss_kb"]
    raw = {str(n): measure_n(b, n, reps) for n in NS}
    out = {"raw": {"launch": raw, "launch_phases": measure_phases(b, reps)}, "ns": NS,
           "rss_true_kb": rss_true, "mpirun": bool(shutil.which("mpirun")), "reps": reps}
    if b.tool("spawn_cost"):
        spawn = measure_spawn_cost(b)
        if spawn is not None:
            out["raw"]["spawn_cost"] = spawn
    if b.tool("interpreter_cost"):
        choice = measure_interpreter_cost(b)
        if choice is not None:
            out["raw"]["interpreter_cost"] = choice
    return out


def entries_for(b, n):
    entries = [(FLOOR, ["/bin/sh", "-c", " & ".join(["/bin/true"] * n) + " & wait"])]
    entries += launchers_for(b, n, 0, ["/bin/true"])
    if shutil.which("mpirun"):
        # As root (CI, containers) Open MPI refuses to start without --allow-run-as-root; its
        # out-of-band channel stays on loopback like every other benchmark.
        root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
        entries.append(("Open MPI mpirun", ["mpirun", "--oversubscribe", *root, "--mca",
                                            "oob_tcp_if_include", "lo", "-n", str(n), "/bin/true"]))
    return entries


def wanted(b, label, n, rep, reps):
    """Whether repetition rep of this launcher runs (torchrun takes seconds per run)."""
    if rep >= (reps["torchrun"] if label.startswith("torchrun") else reps["fast"]):
        return False
    # torchrun: fewer repetitions away from N = 8
    return not (label.startswith("torchrun") and n != 8 and (b.quick or rep >= 3))


def measure_n(b, n, reps):
    """Interleaved repetitions at N workers; {label: {wall_ms, maxrss_mib, runs, command}}."""
    entries = entries_for(b, n)
    samples = {label: [] for label, _ in entries}
    commands = {}
    for rep in range(max(reps.values())):
        for label, argv in entries:
            if not wanted(b, label, n, rep, reps):
                continue
            port = free_port()
            argv = [a.replace("--master_port=0", f"--master_port={port}") for a in argv]
            commands[label] = argv
            # Open MPI 4.1's mpirun sometimes never returns with 32 processes on 2 cores
            # (seen with /bin/true alone); a short limit keeps that from costing a minute per
            # repetition. A run that hits it is a failed run, counted in "ok runs".
            limit = 10 if label.startswith("Open MPI") else 60
            r = b.proc_run(argv, timeout_s=limit)
            r["ok"] = r["exit_code"] == 0 and r["alive_after_exit"] == 0
            if not r["ok"]:
                log(f"  {label} N={n}: exit {r['exit_code']} alive {r['alive_after_exit']}: "
                    f"{r['stderr_tail'][-300:]}")
            samples[label].append(r)
    return {label: summarize(runs, commands.get(label)) for label, runs in samples.items()}


def summarize(runs, command):
    if not runs:
        return {"wall_ms": None, "maxrss_mib": None, "runs": [], "command": "(not run with --quick)"}
    return {"wall_ms": stats([r["wall_ms"] for r in runs if r["ok"]]),
            "maxrss_mib": stats([r["maxrss_kb"] / 1024 for r in runs if r["ok"]]),
            "runs": runs, "command": shell_join(command)}


def measure_phases(b, reps):
    """Where the 8-worker launch time goes: workers that stamp their start time and exit.
    {label: [{first, spread, exit, total} in ms]}"""
    samples = {}
    for rep in range(max(reps.values())):
        for label, argv in launchers_for(b, 8, free_port(), []):
            if "=5)" in label or rep >= (reps["torchrun"] if label.startswith("torchrun") else reps["fast"]):
                continue
            phase = phases_once(b, argv)
            if phase:
                samples.setdefault(label, []).append(phase)
    return samples


def phases_once(b, argv):
    stamps = b.scratch / "phase-stamps"
    shutil.rmtree(stamps, ignore_errors=True)
    stamps.mkdir()
    r = b.proc_run(argv + [b.bin["bench_worker"], "stamp", str(stamps)], timeout_s=60)
    starts = sorted(int(p.read_text()) for p in stamps.iterdir())
    if r["exit_code"] != 0 or len(starts) != 8:
        return None
    return {"first": (starts[0] - r["t_fork_ns"]) / 1e6, "spread": (starts[-1] - starts[0]) / 1e6,
            "exit": (r["t_exit_ns"] - starts[-1]) / 1e6, "total": r["wall_ms"]}


def measure_interpreter_cost(b):
    """bench/interpreter_cost's JSON: choosing the workers' Python, with a venv without torch
    first on PATH (a link to the system's python3 beside a pyvenv.cfg); None if unreadable."""
    venv = b.scratch / "venv-without-torch"
    shutil.rmtree(venv, ignore_errors=True)
    (venv / "bin").mkdir(parents=True)
    real = os.path.realpath("/usr/bin/python3")
    (venv / "bin" / "python3").symlink_to(real)
    (venv / "pyvenv.cfg").write_text(f"home = {os.path.dirname(real)}\n"
                                     "include-system-site-packages = false\n")
    out = subprocess.run([b.bin["interpreter_cost"], str(b.reps(50, 200)), str(venv / "bin")],
                         capture_output=True, text=True, timeout=120)
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        return None


def measure_spawn_cost(b):
    """bench/spawn_cost's JSON: 8 spawns with and without joining a cgroup; None if unreadable."""
    out = subprocess.run([b.bin["spawn_cost"], "8", str(b.reps(5, 15))], capture_output=True,
                         text=True, timeout=120)
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        return None
