"""Report section 8b (the etcd rendezvous at scale by simulation): prose, the table of sizes
(rendezvous, etcd's CPU, peak RSS and request counts), the figure, the limit one etcd member hits
on this machine (why the sizes stopped), and the commands."""

from ..plots import plot_lines
from ..running import rel
from ..stats import fit_exponent, fmt
from .scale import single

HEADER = ["agents N", "last join → all holding the round, s", "etcd CPU during the rendezvous, s",
          "etcd peak RSS, MB", "etcd requests (of them Txn)", "etcd watch events", "simulating process CPU, s",
          "etcd warnings logged", "ok"]


def intro(data):
    return [
        "`bench/rendezvous_sim --backend etcd`: N simulated agents in one process, each running the etcd "
        "backend's real code (`rendezvous/etcd/etcd_rendezvous` with its own `rendezvous/etcd/etcd_link`: its own "
        "client connections, lease and watch, as `launcher/multihost/multi_host_session` creates them for "
        "`--rdzv-backend=etcd-v3`, lease TTL 15 s from torchrun's default keep-alive) against ONE etcd "
        "member on loopback (`tests/etcd/etcd_cluster.py`, data on /dev/shm, a fresh member per size): "
        "`--nnodes=N`, all agents call `Next()` at once. Each agent puts its join request under its own key, "
        "the agent holding the admitter key applies the queued requests in batches (one transaction each), "
        "and each agent watches only its own inbox: its answer, its round's epoch steps and, at the "
        "completion, its assignment with its few peers' records (one watch per agent, no read). etcd's figures come from its `/proc` entry (CPU, VmHWM), its "
        "`/metrics` (request and watch-event counts, differences over the size's run) and its log.",
        f"Sizes grow ({', '.join(f'{n:,}' for n in data['sizes'])}) until one fails (the agents' join "
        f"timeout is {data.get('budget_s', 0):g} s) or takes over half of it; where they stopped, and why, "
        "is the limit stated below.",
    ]


def row(n, r):
    e = r.get("etcd", {})
    warnings = r.get("etcd_log", {})
    kinds = r.get("etcd_kinds", {})
    per_agent = ", ".join(f"{k} {v / int(n):.2f}" for k, v in sorted(kinds.items()) if v / int(n) >= 0.01)
    cpu = r.get("etcd_cpu_rdzv_s")
    return [f"{int(n):,}", fmt(r.get("rdzv_s"), 3),
            fmt(cpu, 2) + (f" ({1000 * cpu / int(n):.1f} ms per agent)" if cpu else ""),
            fmt(r.get("etcd_peak_rss_mb"), 0),
            (f"{fmt(e.get('requests'), 0)} ({fmt(e.get('txns'), 0)})" +
             (f"; per agent: {per_agent}" if per_agent else "")) if e else "n/a",
            fmt(e.get("watch_events"), 0) if e else "n/a", fmt(r.get("sim_cpu_s"), 2),
            "; ".join(f"{k} ×{v}" for k, v in sorted(warnings.items(), key=lambda kv: -kv[1])
                      if k != "simple token is not cryptographically signed")[:200] or "none",
            "yes" if r["ok"] else "no: " + "; ".join(r["errors"])[:200]]


MEMBERS_HEADER = ["agents N", "members", "last join → all holding the round, s",
                  "etcd CPU during the rendezvous, s (per member)", "the same on one member, s and CPU s", "ok"]


def members_row(n, r, one):
    cpu = r.get("etcd_cpu_s")
    return [f"{int(n):,}", str(r["members"]), fmt(r.get("rdzv_s"), 3),
            (fmt(cpu, 2) + f" ({1000 * cpu / int(n):.1f} ms per agent; " +
             ", ".join(f"{c:.2f}" for c in r.get("cpu_per_member_s", [])) + ")") if cpu else "n/a",
            f"{fmt(one.get('rdzv_s'), 3)}, {fmt(one.get('etcd_cpu_rdzv_s'), 2)}",
            "yes" if r["ok"] else "no: " + "; ".join(r["errors"])[:200]]


def members_text(members, raw):
    if not members:
        return None
    parts = []
    for n, r in members.items():
        one = raw.get(n, {})
        if r.get("rdzv_s") and one.get("rdzv_s") and r.get("etcd_cpu_s") and one.get("etcd_cpu_rdzv_s"):
            parts.append(f"at {int(n):,} agents {r['rdzv_s']:.2f} s against {one['rdzv_s']:.2f} s, etcd's CPU "
                         f"{r['etcd_cpu_s'] / one['etcd_cpu_rdzv_s']:.2f} times one member's")
        elif not r["ok"]:
            parts.append(f"at {int(n):,} agents the run failed")
    return (f"**What {next(iter(members.values()))['members']} members change here:** the same job with its "
            "agents spread evenly over the members (each simulating process reaches one): " +
            "; ".join(parts) + ". Each member holds a third of the connections and answers a third of the "
            "reads and watches, but every write is replicated and applied by every member, and the "
            "members share the same 2 cores with the simulated agents.")


def limit_text(raw, data):
    ok = {int(n): r for n, r in raw.items() if r["ok"] and r.get("rdzv_s") is not None}
    stopped = data.get("stopped")
    largest = max(ok) if ok else None
    if not stopped:
        return (f"**Limit:** none reached up to {largest:,} agents (the largest size of this run)."
                if largest else "**Limit:** no size completed.")
    last = raw[str(stopped["after"])]
    return (f"**Limit of one etcd member here:** the run stopped after {stopped['after']:,} agents, which "
            f"{stopped['why']}" + (f"; the largest size that completed in time: {largest:,}" if largest
                                    and largest != stopped["after"] else "") +
            f". At {stopped['after']:,} agents: {last.get('diagnosis', 'n/a')}." + growth_text(raw))


def growth_text(raw):
    """How etcd's work grows with N: the fitted exponents of its transaction and watch-event counts,
    and what one agent costs it."""
    pts = {key: [(int(n), r["etcd"][key]) for n, r in raw.items() if r.get("etcd", {}).get(key)]
           for key in ("txns", "watch_events")}
    if min(len(p) for p in pts.values()) < 2:
        return ""
    return (f" etcd's transactions grow as N^{fit_exponent(pts['txns']):.2f} and its watch events as "
            f"N^{fit_exponent(pts['watch_events']):.2f}: each agent costs etcd about the same requests "
            "whatever N, and one member answers them one core's worth at a time. Each is a gRPC call on "
            "the agent's one HTTP/2 connection; the longer the round, the more the agents' keep-alives "
            "(every 5 s each) and their checks on a silent admitter add to its queue.")


def goals(raw, data):
    ok = {int(n): r for n, r in raw.items() if r["ok"] and r.get("rdzv_s") is not None}
    out = []
    if len(ok) >= 3:
        pts = [(n, r["rdzv_s"]) for n, r in sorted(ok.items()) if n >= 64]
        k = fit_exponent(pts)
        out.append(("etcd rendezvous growing no faster than linearly (N^k, k <= 1.2)",
                    f"k = {k:.2f} over {', '.join(f'{n:,}' for n, _ in pts)}", k <= 1.2))
    stopped = data.get("stopped")
    for n, limit in ((1000, 3), (10000, 20)):
        r = ok.get(n)
        if r:
            result = f"{r['rdzv_s']:.2f} s"
        elif str(n) in raw:
            result = "failed: " + ("; ".join(raw[str(n)].get("errors", [])) or "no error text")[:200]
        else:
            result = (f"not run: the run stopped after {stopped['after']:,} agents" if stopped
                      else "not run")
        out.append((f"etcd rendezvous of {n:,} agents under {limit} s (one member)", result,
                    (r["rdzv_s"] < limit) if r else False))
    largest = max(ok) if ok else None
    out.append(("etcd rendezvous measured up to the size one etcd member takes, the limit stated",
                (f"{largest:,} agents in {ok[largest]['rdzv_s']:.2f} s; " if largest else "no size completed; ") +
                (f"stopped after {stopped['after']:,}" if stopped else "no limit reached"),
                largest is not None))
    return out


def build(b, data):
    sec = {"title": "8b. The etcd rendezvous at scale (simulated agents, one etcd member, then three)", "id": "etcd_scale",
           "text": intro(data)}
    if data["status"] != "ran":
        why = data.get("why", "`rendezvous_sim` was not built in this run")
        sec["text"].append(f"**Not available:** {why}.")
        return sec, [("etcd rendezvous measured up to the size one etcd member takes, the limit stated",
                      "not available", None)]
    raw = data["raw"]["etcd_scale"]
    sec["tables"] = [(HEADER, [row(n, r) for n, r in raw.items()])]
    sec["text"].append(limit_text(raw, data))
    members = data["raw"].get("etcd_scale_members") or {}
    if members:
        sec["tables"].append((MEMBERS_HEADER, [members_row(n, r, raw.get(n, {})) for n, r in members.items()]))
        sec["text"].append(members_text(members, raw))
    sec["commands"] = ["scripts/bench --only etcd_scale"] + [rel(r["command"]) for r in list(raw.values())[:1]]
    pts = {"etcd: last join → all holding": [(int(n), single(r.get("rdzv_s"))) for n, r in raw.items()],
           "etcd member's CPU": [(int(n), single(r.get("etcd_cpu_rdzv_s"))) for n, r in raw.items()]}
    sec["plots"] = [plot_lines(b, "etcd_scale", "etcd rendezvous of N simulated agents (one member)",
                               "agents (N)", "seconds", pts, logx=True, logy=True)]
    return sec, goals(raw, data)
