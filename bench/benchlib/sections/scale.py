"""Report section 8 (rendezvous at scale by simulation): prose, the table of sizes (rendezvous,
store CPU and peak RSS, heartbeat load, failure fan-out), torchrun's published figures beside it,
the figure, and the goals (10,000 agents under 2 s and linear; fan-out at 10,000 under 1 s); then
hot spares (scale_spares.py), with their goal."""

from . import scale_spares
from ..scale import requests_per_agent
from ..plots import plot_lines
from ..running import rel
from ..stats import fit_exponent, fmt

HEADER = ["agents N", "processes", "last join → all holding the round, s", "first join → all holding, s",
          "store CPU during the rendezvous, s", "store peak RSS, MB", "simulating processes' CPU, s",
          "heartbeat load: store CPU share at keep-alive 5 s", "failure → every agent told, s", "ok"]
TORCHRUN = ("torchrun's published figures: "
            "the c10d rendezvous took 373 s at 4,000 hosts before "
            "[pytorch#124982](https://github.com/pytorch/pytorch/pull/124982) made it O(n) and about 10 s after; "
            "TCPStore timed out at 96K ranks before its libuv backend (about 100 s after; PyTorch's TCPStore libuv tutorial, [pytorch/tutorials#2966](https://github.com/pytorch/tutorials/pull/2966)).")


def intro(data):
    return [
        "`bench/rendezvous_sim`: N simulated agents, each running the agent's real code "
        "(`rendezvous/c10d/dynamic_rendezvous`, then the round's `rendezvous/c10d/job_channel`, as "
        "`launcher/multihost/multi_host_session` uses them) with its own connections to one real store "
        "(`cpplaunch-store`, a fresh one per size): `--nnodes=N`, all agents call `Next()` at once. "
        f"Up to 2,000 agents share a process (one io_context each); each agent dials the store at its own "
        "loopback address (127.2.x.y), as hosts of a real job have distinct addresses. Times are "
        "CLOCK_MONOTONIC stamps of the agents, compared across processes.",
        f"After the rendezvous every agent opens its job channel; the channels then run for "
        f"{data.get('hold_s', 0):g} s at the default keep-alive (5 s: one heartbeat ADD and one read of the "
        "peers' counters per agent every 1.25 s), while the store's CPU is sampled: the heartbeat load. Then "
        "agent 0 ends the round with a worker-failure notice; the fan-out is the time until every agent's "
        "end handler ran. An agent holds one store connection (the rendezvous', which its job channel shares: "
        f"tagged requests, docs/store_protocol.md): with a file limit of {data.get('fd_limit', '?')} per "
        f"process, sizes above {data.get('fd_limit', 0) - 100:,} agents run the rendezvous only.",
        TORCHRUN,
    ]


def row(n, r):
    return [f"{int(n):,}", str(r["processes"]), fmt(r.get("rdzv_s"), 3), fmt(r.get("all_joined_s"), 3),
            fmt(r.get("store_cpu_rdzv_s"), 2), fmt(r.get("store_peak_rss_mb"), 0), fmt(r.get("sim_cpu_s"), 2),
            (f"{r['heartbeat_store_cpu_share'] * 100:.1f}%" if r.get("heartbeat_store_cpu_share") is not None
             else "–" if not r["channel"] else "n/a") +
            (f", round ended during the hold ({r['ended_during_hold']} agents)" if r.get("ended_during_hold") else ""),
            fmt(r.get("fanout_s"), 3) if r["channel"] else "– (fd limit)",
            "yes" if r["ok"] else "no: " + "; ".join(r["errors"])[:200]]


def goals(raw, data):
    ok = {int(n): r for n, r in raw.items() if r.get("rdzv_s") is not None and r["ok"]}
    largest = max(ok) if ok else None
    reason = f"largest size run: {largest:,} agents" if largest else "no size completed"
    if data.get("skipped"):
        reason += f"; stopped after {data['skipped']['after']:,} ({data['skipped']['why']})"
    out = []
    r10k = ok.get(10000)
    out.append(("Rendezvous of 10,000 simulated agents under 2 s",
                f"{r10k['rdzv_s']:.2f} s" if r10k else f"not reached ({reason})",
                (r10k["rdzv_s"] < 2) if r10k else False))
    if len(ok) >= 3:
        k = fit_exponent([(n, r["rdzv_s"]) for n, r in sorted(ok.items()) if n >= 256] or
                         [(n, r["rdzv_s"]) for n, r in sorted(ok.items())])
        out.append(("Rendezvous time growing no faster than linearly (N^k, k <= 1.2)",
                    f"k = {k:.2f} over {', '.join(f'{n:,}' for n in sorted(ok) if n >= 256)}", k <= 1.2))
    fan = {n: r["fanout_s"] for n, r in ok.items() if r.get("fanout_s") is not None}
    big = max(fan) if fan else None
    out.append(("Failure fan-out at 10,000 agents under 1 s",
                f"{fan[10000]:.3f} s" if 10000 in fan else
                (f"not reached (largest: {fan[big]:.3f} s at {big:,} agents; {reason})" if big else
                 f"not reached ({reason})"),
                (fan[10000] < 1) if 10000 in fan else False))
    return out


def build(b, data):
    sec = {"title": "8. Rendezvous at scale (simulated agents)", "id": "scale", "text": intro(data)}
    if data.get("missing"):
        sec["text"].append("**Not available:** `rendezvous_sim` or `cpplaunch-store` was not built in this run.")
        return sec, [("Rendezvous of 10,000 simulated agents under 2 s", "not available", None),
                     (scale_spares.GOAL, "not available", None)]
    raw = data["raw"]["scale"]
    sec["tables"] = [(HEADER, [row(n, r) for n, r in raw.items()])]
    if data.get("skipped"):
        sk = data["skipped"]
        sec["text"].append(f"Larger sizes were not run: the run stopped after {sk['after']:,} agents, which "
                           f"{sk['why']}.")
    sec["commands"] = ["scripts/bench --only scale"] + [rel(r["command"]) for r in list(raw.values())[:1]]
    pts = {"last join → all holding": [(int(n), single(r.get("rdzv_s"))) for n, r in raw.items()],
           "failure fan-out": [(int(n), single(r.get("fanout_s"))) for n, r in raw.items()]}
    sec["plots"] = [plot_lines(b, "scale", "Rendezvous of N simulated agents (one store)", "agents (N)",
                               "seconds", pts, logx=True, logy=True)]
    counted = profile_text(data.get("profile"))
    if counted:
        sec["text"].append(counted)
        sec["commands"].append(rel(data["profile"]["command"]))
    spares = data.get("spares")
    if spares:
        sec["notes"] = scale_spares.notes(spares)
        sec["commands"].append(rel(spares["runs"][str(spares["sizes"][-1])][0]["command"]))
    return sec, goals(raw, data) + (scale_spares.goals(spares) if spares else [])


def profile_text(profile):
    """Where an agent's store requests go, from the counted run; None without one."""
    per = requests_per_agent(profile)
    if not per:
        return None
    common = [(kind, c) for kind, c in per if c >= 0.5]
    rare = sum(c for _, c in per if c < 0.5)
    return (f"Where an agent's requests go: one more run of {profile['n']:,} agents in one process, with "
            f"each agent's store requests counted (`--count-requests 1`; {fmt(profile.get('rdzv_s'), 3)} s, "
            f"the counting included): {sum(c for _, c in per):.1f} requests per agent "
            "besides the two handshake messages, in the order they began: " +
            ", ".join(f"`{kind}` {c:.2f}" for kind, c in common) +
            f", and {rare:.2f} of rarer ones (mostly the admitting agent's batch writes). `APPEND` and `MULTI_SET` have no "
            "reply; every other request is a round trip. `ARM` is the round's arming in one request "
            "(docs/store_protocol.md), which took five before.")


def single(v):
    """One measurement as a stats() summary (the plots take medians with min-max bars)."""
    return None if v is None else {"median": v, "min": v, "max": v, "n": 1}
