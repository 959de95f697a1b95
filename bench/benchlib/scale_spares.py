"""Benchmark 8's hot-spares part (issue 24): N member agents (`--nnodes=N:N`) and S spares, each
running the agent's real DynamicRendezvous and JobChannel in bench/rendezvous_sim (--lose), against
a fresh cpplaunch-store per repetition. Once the round runs and the spares wait in the state, one
member's store connection is closed, as a SIGKILLed agent's is; its will ends the round, and the
survivors do what the agent does with that end. Per repetition: the time from the loss being known
(the first survivor told) to every survivor and the spare that took the lost seat holding the next
round, the kill to the first survivor told, the store's and the simulating processes' CPU over the
replacement, the same agents' first rendezvous just before (how fast the machine was then), and the
checks (the spare got the lost member's group rank, no survivor moved). One more run at the largest
size counts the store requests of the replacement by kind and when they were answered: where the
time goes. Returns data only."""

import os
import time

from . import scale  # its run helpers; scale.measure calls this module's measure
from .running import log
from .servers import Server
from .stats import stats

SPARES = 8


def measure(b):
    """{"sizes", "spares", "reps", "runs": {"N": [run, ...]}, "summary": {"N": {...}},
    "profile": {...} or None}"""
    log("hot spares at scale (simulated agents)")
    sizes = [100] if b.quick else [100, 1000]
    reps = b.reps(1, 5)  # the machine's load varies from one repetition to the next
    timeout_s = b.reps(30, 60)
    runs = {}
    for n in sizes:
        runs[str(n)] = [run_once(b, n, timeout_s) for _ in range(reps)]
    largest = sizes[-1]
    profile = run_once(b, largest, timeout_s, count_requests=True)
    return {"sizes": sizes, "spares": SPARES, "reps": reps, "runs": runs,
            "summary": {n: summarize(rs) for n, rs in runs.items()}, "profile": profile}


def run_once(b, n, timeout_s, count_requests=False):
    """One job of n members and SPARES spares (all in the last process) against a fresh store;
    member n // 2 is lost."""
    fd_limit = scale.soft_fd_limit()
    processes = -(-n // scale.AGENTS_PER_PROCESS)
    per_process = -(-n // processes)
    lose = n // 2
    srv = Server(b, "cpplaunch", extra=["--max-connections", str(fd_limit)])
    load = os.getloadavg()[0]
    try:
        parts, argv = scale.run_sims(
            b, srv, n, per_process, f"spares{n}x{time.monotonic_ns()}", timeout_s,
            lambda p: ["--channel", "1", "--lose", str(lose),
                       "--spares", str(SPARES if p == processes - 1 else 0),
                       *(["--count-requests", "1"] if count_requests else [])])
    finally:
        srv.stop()
    r = result(n, processes, parts, argv)
    r["load_1min"] = load
    log(f"  N={n}+{SPARES}: " + (f"replaced in {r['replace_s']:.3f} s" if r.get("replace_s") is not None
                                 else "failed: " + "; ".join(r["errors"])[:200]))
    return r


def result(n, processes, parts, argv):
    ok = all(d.get("ok") for d in parts)
    r = {"n": n, "processes": processes, "ok": ok, "parts": parts,
         "command": " ".join(str(a) for a in argv),
         "errors": sorted({d.get("first_error", "")[:200] for d in parts if d.get("first_error")})}
    if not all("last_holding_next_ns" in d for d in parts):
        return r
    losing = [d for d in parts if d.get("kill_ns")]
    placing = [d for d in parts if d.get("spares")]
    told = [d["first_told_ns"] for d in parts if d.get("first_told_ns")]
    if not (losing and placing and told):
        return r
    kill_ns, holding_ns = losing[0]["kill_ns"], max(d["last_holding_next_ns"] for d in parts)
    r.update({
        "kill_to_told_s": (min(told) - kill_ns) / 1e9,
        # The same agents' first rendezvous, just before: how fast this machine was at the time.
        "first_rdzv_s": (max(d["last_holding_ns"] for d in parts) - max(d["last_join_ns"] for d in parts)) / 1e9,
        "replace_s": (holding_ns - min(told)) / 1e9 if ok else None,
        "kill_to_holding_s": (holding_ns - kill_ns) / 1e9 if ok else None,
        "store_cpu_s": max(d["store_cpu_replaced_s"] for d in parts) - losing[0]["store_cpu_loss_s"],
        "sim_cpu_s": sum(d.get("sim_cpu_replacement_s", 0) for d in parts),
        "lost_rank": placing[0]["lost_rank"], "spare_rank": placing[0]["spare_rank"],
        "moved": sum(d["moved"] for d in parts),
        "restart_count": placing[0]["next_restart_count"],
        "requests": merge_requests(parts),
    })
    return r


def merge_requests(parts):
    """{kind: [count, first ms, last ms]} over the processes (ms after each one's loss or start
    of counting, which the single process of a profiled size shares), or None."""
    out = {}
    for d in parts:
        for kind, (count, first, last) in (d.get("requests") or {}).items():
            c = out.setdefault(kind, [0, first, last])
            c[0] += count
            c[1], c[2] = min(c[1], first), max(c[2], last)
    return out or None


def summarize(rs):
    ok = [r for r in rs if r["ok"]]
    return {"runs": len(rs), "ok": len(ok),
            "replace_s": stats([r.get("replace_s") for r in ok]),
            "kill_to_told_s": stats([r.get("kill_to_told_s") for r in ok]),
            "kill_to_holding_s": stats([r.get("kill_to_holding_s") for r in ok]),
            "first_rdzv_s": stats([r.get("first_rdzv_s") for r in ok]),
            "store_cpu_s": stats([r.get("store_cpu_s") for r in ok]),
            "sim_cpu_s": stats([r.get("sim_cpu_s") for r in ok]),
            "load_1min": stats([r.get("load_1min") for r in rs]),
            "seats_kept": all(r.get("moved") == 0 and r.get("spare_rank") == r.get("lost_rank")
                              for r in ok) and bool(ok),
            "errors": sorted({e for r in rs for e in r["errors"]})}


# Which phase of the replacement a request kind belongs to: the first rule whose pattern is in
# the kind wins (kinds as rendezvous_sim counts them: command and key with the run id cut, digits
# '#' except a round's; the lost member's round is r0, the replacement r1).
PHASES = [("the loss told: each survivor's WAIT on the round's end, then reading the notice", ("'r0/",)),
          ("arming: ARM (will, heartbeat, armed mark and count), all armed",
           ("ARM ", "CANCEL_WILLS", "WILL ", "hb/", "armed", "'r1/end")),
          ("release: the previous workers' keys cleared, go", ("CLEAR_WORKER_KEYS", "/go")),
          ("reading the peers' records", ("dynamic/node",)),
          ("the round formed by one survivor: the former role and its word", ("/former", "/formed")),
          ("the round's completion and the assignments", ("assign", "dynamic/epoch", "dynamic/summary")),
          ("rejoining: liveness key, queued join, the admission and its answers", ("",))]


def phases(requests):
    """The replacement's phases in the order they began, from a profiled run's request counts:
    [(phase, requests, first ms, last ms)] (ms after the loss)."""
    out = {}
    for kind, (count, first, last) in requests.items():
        name = next(name for name, patterns in PHASES if any(p in kind for p in patterns))
        c = out.setdefault(name, [0, first, last])
        c[0] += count
        c[1], c[2] = min(c[1], first), max(c[2], last)
    return sorted(((name, *c) for name, c in out.items()), key=lambda row: row[2])
