"""Benchmark 10, the status endpoint's cost: the agent with `--status-port=0` and a scraper that
GETs /metrics and /status once a second, beside the agent without the endpoint, in one run and
interleaved. (1) Launch time as benchmark 1 measures it (N = 1, 4; the sh floor beside it);
(2) store throughput as benchmark 4 loads it, against an agent's own store; (3) idle wake-ups as
benchmark 9 counts them, endpoint off, on and not scraped, on and scraped. Returns data only."""

import os
import re
import select
import subprocess
import threading
import time
import urllib.request

from .idle import DEFAULT_KEEP_ALIVE_S, hosts_store, start_job, status_fields, stop_job
from .launch import FLOOR
from .running import free_port, log, shell_join
from .servers import cpu_times, store_load
from .stats import stats

LAUNCH_NS = [1, 4]
STORE_KS = [1, 10, 100]
PERIOD_S = 1.0
PATHS = ("/metrics", "/status")
STATUS_ON = ["--status-port=0"]
ANNOUNCED = re.compile(r"status endpoint on http://(\S+?)/")
END_MARK = b"\n--bench: run over--\n"
# The launch variants, in the order each repetition runs them.
OFF, ON, SCRAPED = "endpoint off", "endpoint on, not scraped", "endpoint on, scraped"


class Scraper(threading.Thread):
    """GETs PATHS of each address at once, then every PERIOD_S until stopped. Counts the requests
    answered and failed."""

    def __init__(self, addresses):
        super().__init__(daemon=True)
        self.addresses = list(addresses)
        self.answered = self.failed = 0
        self.stopped = threading.Event()

    def scrape(self):
        for addr in self.addresses:
            self.answered, self.failed = get_all(addr, self.answered, self.failed)

    def run(self):
        while not self.stopped.is_set():
            self.scrape()
            self.stopped.wait(PERIOD_S)

    def stop(self):
        self.stopped.set()
        self.join(timeout=10)


def get_all(addr, answered, failed):
    """GETs PATHS of one agent; the counts of answered and failed requests, updated."""
    for path in PATHS:
        try:
            with urllib.request.urlopen(f"http://{addr}{path}", timeout=5) as r:
                r.read()
            answered += 1
        except OSError:
            failed += 1
    return answered, failed


class AnnouncedScraper(threading.Thread):
    """Reads a launcher's stderr from a FIFO (blocking, no polling); once the agent announces its
    endpoint, scrapes it at once and then every PERIOD_S until the run is over."""

    def __init__(self, fd):
        super().__init__(daemon=True)
        self.fd = fd
        self.text = b""
        self.answered = self.failed = 0

    def run(self):
        addr, next_at = None, None
        while True:
            timeout = None if addr is None else max(0.0, next_at - time.monotonic())
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if ready:
                self.text += os.read(self.fd, 65536)
                if END_MARK in self.text:
                    return
                m = addr is None and ANNOUNCED.search(self.text.decode(errors="replace"))
                if m:
                    addr, next_at = m.group(1), time.monotonic()
            if addr is not None and time.monotonic() >= next_at:
                self.answered, self.failed = get_all(addr, self.answered, self.failed)
                next_at += PERIOD_S


def measure(b):
    """{"raw": {"status": {"launch", "store", "idle"}}, "status", "reps", "seconds", ...}"""
    log("status endpoint cost")
    if not (b.tool("cpplaunch") and b.tool("bench_worker")):
        return {"raw": {}, "status": "no-binary"}
    reps = {"launch": b.reps(5, 20), "store": b.reps(2, 5), "idle": b.reps(2, 3)}
    seconds, window_s = b.reps(1.0, 2.0), b.reps(5, 15)
    raw = {"launch": {str(n): measure_launch(b, n, reps["launch"]) for n in LAUNCH_NS},
           "store": measure_store(b, reps["store"], seconds),
           "idle": measure_idle(b, reps["idle"], window_s)}
    return {"raw": {"status": raw}, "status": "ran", "reps": reps, "seconds": seconds,
            "window_s": window_s, "ns": LAUNCH_NS, "ks": STORE_KS}


# (1) Launch time.

def launch_entries(b, n):
    def cpplaunch(extra):
        return [b.bin["cpplaunch"], f"--nproc_per_node={n}", "--master_port=0", *extra, "--no_python",
                "/bin/true"]
    return [(FLOOR, ["/bin/sh", "-c", " & ".join(["/bin/true"] * n) + " & wait"], False),
            (OFF, cpplaunch([]), False), (ON, cpplaunch(STATUS_ON), False),
            (SCRAPED, cpplaunch(STATUS_ON), True)]


def measure_launch(b, n, reps):
    """Interleaved repetitions at n workers; {label: {wall_ms, runs, command, scrapes}}."""
    entries = launch_entries(b, n)
    samples, commands = {label: [] for label, _, _ in entries}, {}
    for _ in range(reps):
        for label, argv, scrape in entries:
            argv = [a.replace("--master_port=0", f"--master_port={free_port()}") for a in argv]
            commands[label] = argv
            r = launch_scraped(b, argv) if scrape else b.proc_run(argv, timeout_s=60)
            r["ok"] = r["exit_code"] == 0 and r["alive_after_exit"] == 0
            if not r["ok"]:
                log(f"  status launch {label} N={n}: exit {r['exit_code']} alive {r['alive_after_exit']}: "
                    f"{r['stderr_tail'][-300:]}")
            samples[label].append(r)
    return {label: {"wall_ms": stats([r["wall_ms"] for r in runs if r["ok"]]), "runs": runs,
                    "command": shell_join(commands[label]),
                    "scrapes_answered": sum(r.get("scrapes_answered", 0) for r in runs),
                    "scrapes_failed": sum(r.get("scrapes_failed", 0) for r in runs)}
            for label, runs in samples.items()}


def launch_scraped(b, argv):
    """One launcher run whose stderr is a FIFO read by an AnnouncedScraper. The FIFO is held
    open for reading and writing, so the launcher's open never waits for the reader."""
    fifo = b.scratch / "status-stderr.fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR)
    scraper = AnnouncedScraper(fd)
    scraper.start()
    try:
        r = b.proc_run(argv, timeout_s=60, stderr=str(fifo))
    finally:
        os.write(fd, END_MARK)
        scraper.join(timeout=30)
        os.close(fd)
    r["stderr_tail"] = scraper.text.replace(END_MARK, b"").decode(errors="replace")[-600:]
    r["scrapes_answered"], r["scrapes_failed"] = scraper.answered, scraper.failed
    return r


# (2) Store throughput against an agent's own store.

class Agent:
    """A one-host agent (static rendezvous) whose worker sleeps; it hosts the job's store on a
    free port. With the endpoint on, its address is read from the agent's announcement."""

    def __init__(self, b, name, extra):
        self.port = free_port()
        self.err = b.scratch / f"status-{name}.err"
        worker = [b.bin["bench_worker"], "fail-or-sleep", "99", "0", str(b.scratch / "none")]
        self.argv = [b.bin["cpplaunch"], "--nproc_per_node=1", f"--master_port={self.port}", *extra,
                     "--no_python"] + worker
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL, stderr=open(self.err, "w"),
                                     env=b.env)
        self.status_addr = None
        self.check = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.proc.poll() is None:
            self.check = store_load(b, ["check", "--port", str(self.port)], timeout_s=30)
            m = ANNOUNCED.search(self.err.read_text(errors="replace"))
            self.status_addr = m.group(1) if m else None
            if self.check.get("ok") and (self.status_addr or not extra):
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"agent {name} did not come up: {self.err.read_text(errors='replace')[-300:]}")

    def stop(self):
        stop_job([self.proc])


def measure_store(b, reps, seconds):
    """Both agents run side by side, the endpoint of one scraped for the whole benchmark; every
    K against each, repetition by repetition. {"off/K" | "on/K": {...}, "checks", "scraper"}"""
    agents, scraper = {}, None
    out = {"checks": {}}
    try:
        agents = {"off": Agent(b, "store-off", []), "on": Agent(b, "store-on", STATUS_ON)}
        out["checks"] = {kind: a.check for kind, a in agents.items()}
        out["commands"] = {kind: shell_join(a.argv) for kind, a in agents.items()}
        scraper = Scraper([agents["on"].status_addr])
        scraper.start()
        samples = {}
        for _ in range(reps):
            for k in STORE_KS:
                for kind, agent in agents.items():
                    samples.setdefault(f"{kind}/{k}", []).append(store_once(b, agent, k, seconds))
        out.update({key: summarize_store(runs) for key, runs in samples.items()})
    except RuntimeError as e:
        out["error"] = str(e)
    finally:
        if scraper:
            scraper.stop()
            out["scraper"] = {"answered": scraper.answered, "failed": scraper.failed}
        for a in agents.values():
            a.stop()
    return out


def store_once(b, agent, k, seconds):
    user0, sys0 = cpu_times(agent.proc.pid)
    r = store_load(b, ["throughput", "--port", str(agent.port), "--clients", str(k), "--seconds",
                       str(seconds), "--warmup-ms", "500"], timeout_s=120)
    user1, sys1 = cpu_times(agent.proc.pid)
    if r.get("all_ops"):
        r["agent_cpu_us_per_op"] = (user1 - user0 + sys1 - sys0) * 1e6 / r["all_ops"]
    if r.get("exit_code") != 0:
        log(f"  status store K={k}: {r}")
    return r


def summarize_store(runs):
    ok = [r for r in runs if r.get("exit_code") == 0]
    return {"ops_per_s": stats([r["ops_per_s"] for r in ok]), "p99_us": stats([r["p99_us"] for r in ok]),
            "cpu_us": stats([r.get("agent_cpu_us_per_op") for r in ok]), "runs": runs}


# (3) Idle wake-ups.

IDLE_JOBS = {"off": [], "on": STATUS_ON, "scraped": STATUS_ON}


def measure_idle(b, reps, window_s):
    """Three idle 2-agent jobs (off, on, on and scraped) run at the same time and are counted
    over the same window; repeated with new jobs. {kind: [{switches, involuntary, ...} per rep]}"""
    out = {kind: [] for kind in IDLE_JOBS}
    out["scraper"] = []
    for rep in range(reps):
        for kind, r in idle_once(b, rep, window_s).items():
            out[kind].append(r)
    return out


def idle_once(b, rep, window_s):
    jobs, scraper = {}, None
    result = {"scraper": {}}
    try:
        for kind, extra in IDLE_JOBS.items():
            agents, port, started = start_job(b, DEFAULT_KEEP_ALIVE_S, 3, extra, name=f"status-{kind}-{rep}")
            jobs[kind] = (agents, port)
            if not started:
                error = (b.scratch / f"status-{kind}-{rep}-agent-0.err").read_text(errors="replace")[-300:]
                log(f"  status idle {kind}: workers did not start: {error}")
                return {k: {"error": f"the {kind} job's workers did not start"} for k in IDLE_JOBS} | {
                    "scraper": {}}
        addrs = [ANNOUNCED.search((b.scratch / f"status-scraped-{rep}-agent-{i}.err").read_text()).group(1)
                 for i in range(2)]
        scraper = Scraper(addrs)
        scraper.start()
        time.sleep(1.0)  # past the round's set-up, as benchmark 9
        before = {k: [status_fields(p.pid) for p in agents] for k, (agents, _) in jobs.items()}
        req0, t0 = scraper.answered + scraper.failed, time.monotonic()
        time.sleep(window_s)
        after = {k: [status_fields(p.pid) for p in agents] for k, (agents, _) in jobs.items()}
        elapsed, req1 = time.monotonic() - t0, scraper.answered + scraper.failed
        for kind, (agents, port) in jobs.items():
            result[kind] = {
                "elapsed_s": elapsed, "alive": all(p.poll() is None for p in agents),
                "switches": [a["switches"] - s["switches"] for s, a in zip(before[kind], after[kind])],
                "involuntary": [a["involuntary"] - s["involuntary"] for s, a in zip(before[kind], after[kind])],
                "hosts_store": [hosts_store(p.pid, port) for p in agents]}
        result["scraper"] = {"requests_in_window": req1 - req0, "failed": scraper.failed, "elapsed_s": elapsed}
    finally:
        if scraper:
            scraper.stop()
        for agents, _ in jobs.values():
            stop_job(agents)
    return result

