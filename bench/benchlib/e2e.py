"""Benchmark 3, end-to-end training: a real 2-worker gloo job (examples/ddp_train.py and the
LibTorch trainer when built) under each launcher, total wall time. Returns data only."""

from .config import PYTHON_SCRIPT_MARK, ROOT
from .running import free_port, launchers_for, log, shell_join
from .stats import stats


def jobs_for(b, epochs):
    script = ROOT / "examples/ddp_train.py"
    jobs = []
    if script.exists():
        jobs.append(("examples/ddp_train.py", [PYTHON_SCRIPT_MARK, str(script), "--epochs", str(epochs)]))
    if b.tool("trainer"):
        jobs.append(("examples trainer (LibTorch)", [b.bin["trainer"], "--epochs", str(epochs)]))
    return jobs


def measure(b):
    """{"raw": {"e2e": {job: {label: {wall_s, runs, command}}}} (empty when no job exists),
    "epochs", "jobs", "failures", "trainer"}"""
    log("end-to-end training")
    epochs = b.reps(2, 5)
    jobs = jobs_for(b, epochs)
    out = {"raw": {}, "epochs": epochs, "jobs": [name for name, _ in jobs], "failures": [],
           "trainer": bool(b.tool("trainer"))}
    if not jobs:
        return out
    raw = {name: measure_job(b, name, job, out["failures"]) for name, job in jobs}
    out["raw"]["e2e"] = raw
    return out


def measure_job(b, name, job, failures):
    reps, timeout_s = b.reps(1, 3), b.reps(60, 180)
    samples, commands, broken = {}, {}, set()
    for _ in range(reps):
        for label, argv in launchers_for(b, 2, free_port(), job):
            if b.quick and "=5)" in label:
                continue  # --quick: torchrun with its newest default only
            if label in broken:
                continue  # a launcher that failed this job is not run again
            if job[0] == PYTHON_SCRIPT_MARK:  # a Python script: drop --no_python, no interpreter
                argv = [a for a in argv if a != "--no_python" and a != PYTHON_SCRIPT_MARK]
            commands[label] = argv
            r = b.proc_run(argv, timeout_s=timeout_s)
            r["ok"] = r["exit_code"] == 0 and r["alive_after_exit"] == 0
            if not r["ok"]:
                failures.append(failure_note(name, label, r, timeout_s))
                broken.add(label)
            samples.setdefault(label, []).append(r)
    return {label: {"wall_s": stats([r["wall_ms"] / 1000 for r in runs if r["ok"]]), "runs": runs,
                    "command": shell_join(commands[label])}
            for label, runs in samples.items()}


def failure_note(name, label, r, timeout_s):
    why = f"timed out after {timeout_s} s" if r["timed_out"] else f"exit status {r['exit_code']}"
    log(f"  {name} {label}: {why}: {r['stderr_tail'][-400:]}")
    return (f"{name} under {label}: {why}; last lines of its stderr:\n\n```\n"
            f"{r['stderr_tail'].strip()[-500:]}\n```")
