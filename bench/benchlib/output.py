"""Benchmark 7, output throughput: one worker writes many MiB of lines; the rate at which every
byte reaches every destination (console file, per-rank log) without a launcher, under cpplaunch
(inherited, --tee, --redirects) and under torchrun. Returns data only."""

import shutil

from .config import TORCHRUN, TORCHRUN_DEFAULT_STD
from .running import free_port, log, shell_join
from .stats import stats

DIRECT = "direct to a file (no launcher)"


def modes_for(b, logs):
    """(label, launcher or None, launcher flags) for every mode measured."""
    modes = [(DIRECT, None, [])]
    if b.tool("cpplaunch"):
        modes += [("cpplaunch, inherited stdout", "cpplaunch", []),
                  ("cpplaunch --tee 1", "cpplaunch", ["--tee", "1", f"--log_dir={logs}"]),
                  ("cpplaunch --redirects 1", "cpplaunch", ["--redirects", "1", f"--log_dir={logs}"])]
    if b.tool("cpplaunch-baseline"):
        modes += [("cpplaunch (baseline) --tee 1", "cpplaunch-baseline",
                   ["--tee", "1", f"--log_dir={logs}"]),
                  ("cpplaunch (baseline) --redirects 1", "cpplaunch-baseline",
                   ["--redirects", "1", f"--log_dir={logs}"])]
    modes += [("torchrun, inherited stdout", "torchrun", TORCHRUN_DEFAULT_STD),
              ("torchrun -t 1 (tee)", "torchrun", ["-r", "9:1", "-t", "1", f"--log_dir={logs}"]),
              ("torchrun -r 1 (redirect)", "torchrun", ["-r", "1", "-t", "9:1", f"--log_dir={logs}"])]
    return modes


def argv_for(b, launcher, flags, worker):
    if launcher is None:
        return worker
    if launcher.startswith("cpplaunch"):
        return [b.bin[launcher], "--nproc_per_node=1", f"--master_port={free_port()}"] + flags + \
               ["--no_python"] + worker
    return [TORCHRUN] + flags + ["--nproc_per_node=1", f"--master_port={free_port()}",
                                 "--monitor_interval=0.1", "--no_python"] + worker


def measure(b):
    """{"raw": {"output": {label: {mib_per_s, exit_s, cpu_s, runs, command}}, "output_bytes"},
    "size", "modes"}"""
    log("output throughput")
    size = b.reps(128, 1024) * 1024 * 1024
    logs = b.scratch / "logs"
    modes = modes_for(b, logs)
    samples, commands = {}, {}
    for _ in range(b.reps(1, 3)):
        for label, launcher, flags in modes:
            worker = [b.bin["bench_worker"], "write", str(size), str(b.scratch / "write-stamp")]
            commands[label] = argv_for(b, launcher, flags, worker)
            samples.setdefault(label, []).append(run_once(b, label, commands[label], size, logs))
    shutil.rmtree(logs, ignore_errors=True)
    raw = {label: {"mib_per_s": stats([r["mib_per_s"] for r in runs if r["ok"]]),
                   "exit_s": stats([r["exit_seconds"] for r in runs if r["ok"]]),
                   "cpu_s": stats([r["cpu_s"] for r in runs if r["ok"]]),
                   "runs": runs, "command": shell_join(commands[label])}
           for label, runs in samples.items()}
    return {"raw": {"output": raw, "output_bytes": size}, "size": size,
            "modes": [label for label, _, _ in modes]}


def run_once(b, label, argv, size, logs):
    """One run; ok when every expected destination holds all the bytes."""
    shutil.rmtree(logs, ignore_errors=True)
    stamp, console = b.scratch / "write-stamp", b.scratch / "console.out"
    r, last_growth = b.run_watching_files(argv, str(console), [console, logs], timeout_s=600)
    got = console.stat().st_size if console.exists() else 0
    logged = sum(p.stat().st_size for p in logs.rglob("stdout.log")) if logs.exists() else 0
    r["console_bytes"], r["log_bytes"] = got, logged
    expect_console = "redirect" not in label
    expect_log = "tee" in label or "redirect" in label
    r["ok"] = (r["exit_code"] == 0 and (got >= size) == expect_console and
               (not expect_log or logged >= size) and stamp.exists())
    if stamp.exists() and last_growth:
        start = int(stamp.read_text())
        r["seconds"] = (last_growth - start) / 1e9
        r["exit_seconds"] = (r["t_exit_ns"] - start) / 1e9
        r["mib_per_s"] = size / 1048576 / r["seconds"]
    if not r["ok"]:
        log(f"  {label}: exit {r['exit_code']} console {got} log {logged}: {r['stderr_tail'][-300:]}")
    console.unlink(missing_ok=True)
    stamp.unlink(missing_ok=True)
    return r
