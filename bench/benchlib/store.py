"""Benchmark 4, store throughput: K clients in closed loops of PyTorch's set/wait/get/add calls
against cpplaunch's store and LibTorch's TCPStore, run side by side and measured alternately;
requests per second, latency and CPU per request. Returns data only."""

from .running import log
from .servers import Server, available_servers, store_load
from .stats import stats

KS = [1, 10, 100, 1000]


def measure(b):
    """{"raw": {"store": {"kind/K": {...stats..., runs}}}?, "ks", "kinds", "seconds", "checks"}"""
    log("store throughput")
    kinds = available_servers(b)
    out = {"raw": {}, "ks": KS, "kinds": kinds, "seconds": b.reps(1.0, 2.0), "checks": {}}
    if not kinds:
        return out
    samples = run_servers(b, kinds, out)
    out["raw"]["store"] = {f"{kind}/{k}": summarize(samples[(kind, k)]) for k in KS for kind in kinds}
    return out


def run_servers(b, kinds, out):
    """Checks each server, then runs every K against each, repetition by repetition."""
    servers = {k: Server(b, k) for k in kinds}
    samples = {}
    try:
        for kind, srv in servers.items():
            out["checks"][kind] = store_load(b, ["check", "--port", str(srv.port)], timeout_s=60)
        for _ in range(b.reps(1, 5)):
            for k in KS:
                for kind, srv in servers.items():
                    samples.setdefault((kind, k), []).append(run_once(b, srv, k, out["seconds"]))
    finally:
        for srv in servers.values():
            srv.stop()
    return samples


def run_once(b, srv, k, seconds):
    user0, sys0 = srv.cpu_times()
    r = store_load(b, ["throughput", "--port", str(srv.port), "--clients", str(k),
                       "--seconds", str(seconds), "--warmup-ms", "500"], timeout_s=120)
    user1, sys1 = srv.cpu_times()
    if r.get("all_ops"):
        r["server_cpu_us_per_op"] = (user1 - user0 + sys1 - sys0) * 1e6 / r["all_ops"]
        r["server_sys_share"] = (sys1 - sys0) / max(user1 - user0 + sys1 - sys0, 1e-9)
    if r.get("exit_code") != 0:
        log(f"  {srv.kind} K={k}: {r}")
    return r


def summarize(runs):
    ok = [r for r in runs if r.get("exit_code") == 0]
    return {"ops_per_s": stats([r["ops_per_s"] for r in ok]), "p50_us": stats([r["p50_us"] for r in ok]),
            "p99_us": stats([r["p99_us"] for r in ok]),
            "cpu_us": stats([r.get("server_cpu_us_per_op") for r in ok]),
            "driver_cpu_us": stats([r.get("driver_cpu_us_per_op") for r in ok]),
            "sys_share": stats([r.get("server_sys_share") for r in ok]), "runs": runs}
