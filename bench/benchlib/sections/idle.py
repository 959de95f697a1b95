"""Report section 9 (idle cost): prose, the wake-up and RSS tables, and the two idle goals."""

from ..stats import fmt

HEADER_WAKE = ["agent", "window, s", "heartbeat ticks (keep-alive 5 s)",
               "context switches (of which involuntary)", "switches per tick", "allowed per tick (+ one tick per window)"]
HEADER_RSS = ["agent", "heartbeat ticks (an hour at 5 s)", "RSS after 1 s, KB",
              "RSS after a tenth, KB", "RSS at the end, KB", "growth after the first tenth, KB"]
# What one heartbeat tick may cost an agent in wake-ups: its timer, the replies to its ADD and
# to its read of the peers' counters; the agent hosting the store also wakes for each of the
# peer's two requests.
WAKES_PER_TICK = {True: 5, False: 3}  # by whether the agent hosts the store
RSS_SLACK_KB = 64  # a few pages of allocator noise; a leak per heartbeat would be far above it


def prose(data):
    return [
        "A 2-agent c10d job on loopback (`--nnodes=2 --nproc_per_node=1`, the store hosted by one of them) "
        "whose workers (`bench_worker`) stamp their start and sleep. Nothing happens in the job but "
        "heartbeats: each agent's tick (every keep_alive_interval / 4) adds to its counter and reads its "
        "peer's. The agents' wake-ups are their context switches (voluntary + involuntary, "
        f"`/proc/<pid>/status`) over {data.get('window_s', 0):g} s from 1 s after the workers started; a tick "
        "may cost the agent its timer and the replies to its two requests (3 wake-ups), and the agent that "
        "hosts the store 2 more for the peer's requests; a window may hold one tick more than its length allows. More than that would be a wake-up beyond heartbeats.",
        "RSS: the same job with `--rdzv_conf keep_alive_interval=0.1,keep_alive_max_attempt=10` runs an "
        "hour's worth of default heartbeats (2,880 ticks at 1.25 s) in 72 s; the agents' VmRSS is read 1 s "
        "after the workers started, after a tenth of the window (the allocator's steady state) and at the end.",
    ]


def build(b, data):
    sec = {"title": "9. Idle cost", "id": "idle", "text": prose(data)}
    goals_out = []
    if data["status"] != "ran":
        sec["text"].append("**Not available:** the cpplaunch binary was not built in this run.")
        return sec, [("Idle agent: no wake-ups beyond heartbeats", "not available", None)]
    wake, rss = data["raw"]["idle"]["wakeups"], data["raw"]["idle"]["rss"]
    tables = []
    if wake.get("switches"):
        rows, met = [], wake.get("alive", False)
        for i, sw in enumerate(wake["switches"]):
            host = wake["hosts_store"][i]
            per_tick = sw / wake["ticks"]
            # A window can hold one tick more than its length divided by the tick.
            met = met and sw <= WAKES_PER_TICK[host] * (wake["ticks"] + 1)
            rows.append([f"{i}{' (hosts the store)' if host else ''}", fmt(wake["elapsed_s"], 1),
                         fmt(wake["ticks"], 1), f"{sw} ({wake['involuntary'][i]})", fmt(per_tick, 2),
                         str(WAKES_PER_TICK[host])])
        tables.append((HEADER_WAKE, rows))
        goals_out.append(("Idle agent: no wake-ups beyond heartbeats",
                          ", ".join(f"agent {i}: {r[4]} per tick (allowed {r[5]})" for i, r in enumerate(rows)),
                          met))
    else:
        goals_out.append(("Idle agent: no wake-ups beyond heartbeats",
                          f"no run: {wake.get('error', 'workers did not start')}", False))
    if rss.get("rss_kb_end"):
        rows, growth_max = [], 0
        for i in range(2):
            growth = rss["rss_kb_end"][i] - rss["rss_kb_early"][i]
            growth_max = max(growth_max, growth)
            rows.append([str(i), f"{rss['ticks']:,.0f}", f"{rss['rss_kb_start'][i]:,}",
                         f"{rss['rss_kb_early'][i]:,}", f"{rss['rss_kb_end'][i]:,}", f"{growth:+,}"])
        tables.append((HEADER_RSS, rows))
        goals_out.append((f"Idle agent: RSS does not grow over {rss['ticks']:,.0f} heartbeats",
                          f"largest growth {growth_max:+,} KB (allowed {RSS_SLACK_KB} KB)",
                          rss.get("alive", False) and growth_max <= RSS_SLACK_KB))
    else:
        goals_out.append(("Idle agent: RSS does not grow over an hour of heartbeats",
                          f"no run: {rss.get('error', 'workers did not start')}", False))
    sec["tables"] = tables
    sec["commands"] = ["scripts/bench --only idle"]
    return sec, goals_out
