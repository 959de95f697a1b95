"""Benchmark 9, idle cost: a running 2-agent c10d job on loopback whose workers sleep. (1) The
agents' wake-ups (voluntary + involuntary context switches from /proc/<pid>/status) over a window
at the default keep-alive, beside the heartbeat ticks expected in it; (2) the agents' RSS over an
hour's worth of heartbeats, simulated with a short keep-alive. Returns data only."""

import os
import re
import signal
import subprocess
import time
from pathlib import Path

from .running import free_port, log

DEFAULT_KEEP_ALIVE_S = 5.0
FAST_KEEP_ALIVE_S = 0.1
HEARTBEATS_PER_HOUR = 3600 / (DEFAULT_KEEP_ALIVE_S / 4)  # a tick every keep_alive / 4


def measure(b):
    """{"raw": {"idle": {"wakeups": {...}, "rss": {...}}}, "status"}"""
    log("idle cost")
    if not (b.tool("cpplaunch") and b.tool("bench_worker")):
        return {"raw": {}, "status": "no-binary"}
    window_s = b.reps(6, 30)
    wake = run_job(b, DEFAULT_KEEP_ALIVE_S, 3, window_s, sample_rss=False)
    ticks_in_rss = b.reps(200, HEARTBEATS_PER_HOUR)
    rss_window = ticks_in_rss * FAST_KEEP_ALIVE_S / 4
    rss = run_job(b, FAST_KEEP_ALIVE_S, 10, rss_window, sample_rss=True)
    rss["ticks"] = ticks_in_rss
    return {"raw": {"idle": {"wakeups": wake, "rss": rss}}, "status": "ran", "window_s": window_s}


def status_fields(pid):
    text = Path(f"/proc/{pid}/status").read_text()
    get = lambda k: int(re.search(rf"^{k}:\s+(\d+)", text, re.M).group(1))  # noqa: E731
    return {"switches": get("voluntary_ctxt_switches") + get("nonvoluntary_ctxt_switches"),
            "involuntary": get("nonvoluntary_ctxt_switches"), "rss_kb": get("VmRSS")}


def listening_inodes(port):
    """Socket inodes listening on TCP port `port` (IPv4 or IPv6)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            f = line.split()
            if f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f[9])
    return inodes


def hosts_store(pid, port):
    """True when process pid holds the listening socket of the store on port."""
    inodes = listening_inodes(port)
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            link = os.readlink(fd)
        except OSError:
            continue
        if link.startswith("socket:[") and link[8:-1] in inodes:
            return True
    return False


def start_job(b, keep_alive_s, max_attempt, extra=(), name="idle"):
    """Starts the 2-agent job (extra: more agent options); waits until both workers stamped.
    The agents' stderr goes to <scratch>/<name>-agent-<i>.err."""
    port = free_port()
    stamps = b.scratch / f"idle-{time.monotonic_ns()}"
    stamps.mkdir()
    # Rank 99 does not exist: every worker stamps its start and sleeps until stopped.
    worker = [b.bin["bench_worker"], "stamp-then-fail-or-sleep", str(stamps), "99", "0", str(stamps / "none")]
    conf = f"keep_alive_interval={keep_alive_s},keep_alive_max_attempt={max_attempt}"
    agents = []
    for i in range(2):
        argv = [b.bin["cpplaunch"], "--nnodes=2", "--nproc_per_node=1", "--rdzv_backend=c10d",
                f"--rdzv_endpoint=127.0.0.1:{port}", f"--rdzv_id=idle{port}", f"--rdzv_conf={conf}",
                *extra, "--no_python"] + worker
        agents.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                       stderr=open(b.scratch / f"{name}-agent-{i}.err", "w"), env=b.env))
    deadline = time.monotonic() + 60
    while len([p for p in stamps.iterdir() if p.name.isdigit()]) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    return agents, port, len([p for p in stamps.iterdir() if p.name.isdigit()]) == 2


def stop_job(agents):
    for p in agents:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in agents:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def run_job(b, keep_alive_s, max_attempt, window_s, sample_rss):
    """Both agents' switches (and RSS) from 1 s after the workers started to window_s later."""
    agents, port, started = start_job(b, keep_alive_s, max_attempt)
    out = {"keep_alive_s": keep_alive_s, "window_s": window_s, "started": started}
    try:
        if not started:
            out["error"] = (b.scratch / "idle-agent-0.err").read_text(errors="replace")[-300:]
            return out
        time.sleep(1.0)  # past the round's set-up
        before = [status_fields(p.pid) for p in agents]
        rss_early = None
        t0 = time.monotonic()
        if sample_rss:  # RSS after a tenth of the window: the allocator's steady state
            time.sleep(window_s / 10)
            rss_early = [status_fields(p.pid)["rss_kb"] for p in agents]
        time.sleep(max(0.0, window_s - (time.monotonic() - t0)))
        after = [status_fields(p.pid) for p in agents]
        elapsed = time.monotonic() - t0
        out["alive"] = all(p.poll() is None for p in agents)
        out["elapsed_s"] = elapsed
        out["switches"] = [a["switches"] - s["switches"] for s, a in zip(before, after)]
        out["involuntary"] = [a["involuntary"] - s["involuntary"] for s, a in zip(before, after)]
        out["hosts_store"] = [hosts_store(p.pid, port) for p in agents]
        out["ticks"] = elapsed / (keep_alive_s / 4)
        out["rss_kb_start"] = [s["rss_kb"] for s in before]
        out["rss_kb_early"] = rss_early
        out["rss_kb_end"] = [a["rss_kb"] for a in after]
    finally:
        stop_job(agents)
    return out
