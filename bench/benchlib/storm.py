"""Benchmark 5, init storm: W clients start at once against a fresh server and do PyTorch 1.13's
init_process_group pattern (connect, ADD, SET, a barrier, GET); time until all are released, its
phases and the server's CPU, growing W until a server takes too long. Returns data only."""

import resource
import statistics

from .running import log
from .servers import Server, available_servers, store_load
from .stats import stats


def measure(b):
    """{"raw": {"storm": {"kind/W": {total_s, server_cpu_s, connect_calls_s, connected_s,
    joined_s, runs}}}, "ws", "kinds", "budget_s", "samples", "skipped"}"""
    log("init storm")
    ws = [256, 1024, 2048] if b.quick else [256, 512, 1024, 2048, 4096, 8192, 16384]
    # A server whose last size took longer than budget/4 is not run at the next (doubled) size, as
    # a quadratic server would need over the budget there; one run longer than the budget stops.
    budget_s = b.reps(8, 60)
    kinds = available_servers(b)
    samples, skipped = {}, {}
    for w in ws:
        for kind in kinds:
            if kind in skipped:
                continue
            samples[(kind, w)] = run_size(b, kind, w, budget_s)
            ok = [r["total_ms"] for r in samples[(kind, w)] if r.get("exit_code") == 0]
            if not ok or statistics.median(ok) / 1000 > budget_s / 4:
                skipped[kind] = w
    raw = {f"{kind}/{w}": summarize(runs) for (kind, w), runs in sorted_samples(samples, ws, kinds)}
    return {"raw": {"storm": raw}, "ws": ws, "kinds": kinds, "budget_s": budget_s,
            "samples": samples, "skipped": skipped}


def sorted_samples(samples, ws, kinds):
    return [((kind, w), samples[(kind, w)]) for w in ws for kind in kinds if (kind, w) in samples]


def run_size(b, kind, w, budget_s):
    """The repetitions at W clients, each against a freshly started server."""
    runs = []
    # Each client's idle callback socket doubles the descriptors; where 2·W would not fit the file
    # limit, the clients open only their main connection (the size is marked in the report).
    callback = callback_sockets_fit(w)
    for _ in range(b.reps(1, 3)):
        srv = Server(b, kind, extra=["--max-connections", str(2 * w + 64)] if kind == "cpplaunch" else [])
        try:
            cpu0 = srv.cpu_seconds()
            r = store_load(b, ["storm", "--port", str(srv.port), "--clients", str(w), "--timeout-s",
                               str(budget_s), "--callback-sockets", "1" if callback else "0"],
                           timeout_s=budget_s + 30)
            r["server_cpu_s"] = srv.cpu_seconds() - cpu0
        finally:
            srv.stop()
        runs.append(r)
        if r.get("exit_code") != 0:
            log(f"  {kind} W={w}: {str(r)[:400]}")
            break  # a failed or timed-out size is not repeated
    return runs


def callback_sockets_fit(w):
    """True when W clients with their callback sockets (2·W descriptors) fit the file limit."""
    return 2 * w + 64 <= resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def summarize(runs):
    ok = [r for r in runs if r.get("exit_code") == 0]
    return {"total_s": stats([r["total_ms"] / 1000 for r in ok]),
            "server_cpu_s": stats([r.get("server_cpu_s") for r in ok]),
            "connect_calls_s": stats([r["connect_calls_ms"] / 1000 for r in ok]),
            "connected_s": stats([r["last_connected_ms"] / 1000 for r in ok]),
            "joined_s": stats([r["last_joined_ms"] / 1000 for r in ok]), "runs": runs}
