"""Report section 10 (the status endpoint's cost): prose, the off/on table with a verdict per
row, the commands and the goal that launch, store and idle stay within noise with the endpoint on."""

from ..launch import FLOOR
from ..running import rel, shell_join
from ..stats import fmt, fmt_stats, stats
from ..status import OFF, ON, PERIOD_S, SCRAPED

HEADER = ["measure", "endpoint off", "endpoint on", "on/off (min – max)", "verdict"]
GOAL = "Status endpoint on and scraped once a second: launch, store and idle within noise of off"


def prose(data):
    reps = data["reps"]
    return [
        "The agent with `--status-port=0` beside the agent without it, in the same run and interleaved. "
        f"\"Scraped\" means a client in the harness GETs `/metrics` and `/status` once every {PERIOD_S:g} s "
        "(a new connection per request, as `urllib` does), on the same cores as everything else.",
        "**Launch** is benchmark 1's measurement (`bench/proc_run`: fork of the launcher to its exit, N "
        f"workers running `/bin/true`, static rendezvous) for N = {', '.join(map(str, data['ns']))}, "
        f"{reps['launch']} interleaved repetitions of: the sh floor, the endpoint off, on and not scraped, "
        "on and scraped. A launch lasts milliseconds, so a scraper on a fixed one-second beat would almost "
        "never meet one; the scraped runs are the worst case instead: the agent's stderr is a FIFO the "
        "harness reads, and the first GETs go out the moment the agent announces its endpoint, during the "
        "launch (then once a second while the launcher lives).",
        "**Store** is benchmark 4's load (`bench/store_load throughput`, K clients of set/wait/get/add, "
        f"{data['seconds']:g} s windows after 0.5 s of warm-up) against the store an agent hosts for its own "
        "one-host job (`--master_port`), whose worker sleeps. Both agents run side by side for the whole "
        f"benchmark, the endpoint of one scraped throughout; {reps['store']} repetitions alternate between them. "
        "The agent's CPU per request is its user+system time over the load run divided by the requests answered.",
        "**Idle** is benchmark 9's count (voluntary + involuntary context switches of each agent of a 2-agent "
        "c10d job at the default keep-alive whose workers sleep) for three such jobs at the same time: endpoint "
        f"off, on and not scraped, on and scraped (both agents); counted over the same {data['window_s']:g} s "
        f"window, {reps['idle']} repetitions with new jobs. The scraped job's agents necessarily wake for the "
        "scraper's requests: they are counted and reported per request, not subtracted.",
        "Cells are median (min – max). The ratio is on over off per repetition (each repetition runs both), "
        "median (min – max) of those ratios. A row is *within noise* when the off and on ranges overlap, or "
        "when the median ratio differs from 1 by less than the off runs' own spread ((max − min) / median).",
    ]


def pair_ratios(off, on):
    """stats of on/off per repetition, over the repetitions where both have a value."""
    return stats([b / a for a, b in zip(off, on) if a and b is not None])


def noise(off_s, on_s, ratio_s):
    """(within noise, why) for off and on stats() and the pair ratios."""
    if not (off_s and on_s and ratio_s):
        return None, "not measured"
    if off_s["n"] < 2 or on_s["n"] < 2:
        return None, "one repetition: no spread to judge the noise by"
    if on_s["min"] <= off_s["max"] and off_s["min"] <= on_s["max"]:
        return True, "within noise (the ranges overlap)"
    if on_s["max"] < off_s["min"]:
        # The goal bounds what the endpoint costs; a whole range below off's is no cost, and
        # only says how noisy the machine was.
        return True, "no cost (every run with the endpoint on was below every run without)"
    spread = (off_s["max"] - off_s["min"]) / off_s["median"]
    if abs(ratio_s["median"] - 1) <= spread:
        return True, f"within noise (ratio within the off runs' spread of {spread * 100:.0f}%)"
    return False, ""


def row(label, off, on, digits=None, scale_by=1.0, reason=lambda o, n, r: ""):
    """A table row for per-repetition values off and on (None where a run failed)."""
    off_s, on_s, ratio_s = stats(off), stats(on), pair_ratios(off, on)
    within, text = noise(off_s, on_s, ratio_s)
    if within is False:
        text = f"**not within noise**: {reason(off_s, on_s, ratio_s)}"
    ratio_cell = fmt_stats(ratio_s, digits=2) + "x" if ratio_s else "n/a"
    return [label, fmt_stats(off_s, scale_by, digits), fmt_stats(on_s, scale_by, digits), ratio_cell, text], within


def launch_values(d):
    return [r["wall_ms"] if r["ok"] else None for r in d["runs"]]


def launch_rows(raw, ns):
    rows, verdicts = [], []
    for n in ns:
        per = raw[str(n)]
        off, on, scraped = (launch_values(per[k]) for k in (OFF, ON, SCRAPED))
        floor = per[FLOOR]["wall_ms"]
        on_s = stats(on)

        def why_on(o, n_, r):
            return f"{n_['median'] - o['median']:+.2f} ms median with the endpoint on and nobody asking"

        def why_scraped(o, n_, r, on_s=on_s):
            alone = on_s["median"] - o["median"] if on_s else float("nan")
            return (f"{n_['median'] - o['median']:+.2f} ms median, of which {alone:+.2f} ms with the endpoint "
                    "on and not scraped; the rest is the scrape landing during the launch (the scraper "
                    "shares the cores)")
        sc = per[SCRAPED]
        label = (f"launch, N = {n}, wall ms (sh floor {fmt(floor['median'])} ms); on = scraped during the "
                 f"launch ({sc['scrapes_answered']} requests answered, {sc['scrapes_failed']} refused after "
                 "the agent left)")
        r, w = row(label, off, scraped, reason=why_scraped)
        rows.append(r)
        verdicts.append((f"launch N={n}", w))
        r, w = row(f"launch, N = {n}, wall ms; on = not scraped", off, on, reason=why_on)
        rows.append(r)
        verdicts.append((f"launch N={n} (not scraped)", w))
    return rows, verdicts


def store_rows(st, ks):
    rows, verdicts = [], []
    for k in ks:
        off_d, on_d = st.get(f"off/{k}"), st.get(f"on/{k}")
        if not (off_d and on_d):
            continue

        def vals(d, key):
            return [r.get(key) if r.get("exit_code") == 0 else None for r in d["runs"]]

        def why(o, n_, r, off_d=off_d, on_d=on_d):
            co, cn = off_d["cpu_us"], on_d["cpu_us"]
            cpu = (f"; the agent's CPU per request {cn['median']:.1f} µs on against {co['median']:.1f} µs off"
                   if co and cn else "")
            more = "fewer" if r["median"] < 1 else "more"
            return f"on answers {abs(1 - r['median']) * 100:.0f}% {more} requests/s{cpu}"
        r, w = row(f"store, K = {k}, kops/s", vals(off_d, "ops_per_s"), vals(on_d, "ops_per_s"),
                   digits=1, scale_by=1 / 1000, reason=why)
        rows.append(r)
        verdicts.append((f"store K={k}", w))
        r, _ = row(f"store, K = {k}, the agent's CPU µs/request", vals(off_d, "agent_cpu_us_per_op"),
                   vals(on_d, "agent_cpu_us_per_op"), digits=2,
                   reason=lambda o, n_, r: f"{(r['median'] - 1) * 100:+.0f}% CPU per request with the endpoint on")
        rows.append(r)
    return rows, verdicts


def agent_switches(run, host):
    """The switches of the agent that hosts the store (host) or of the other one in one run."""
    if "switches" not in run:
        return None
    flags = run["hosts_store"]
    i = flags.index(True) if True in flags else 0
    return run["switches"][i if host else 1 - i]


def idle_rows(idle):
    rows, verdicts = [], []
    scraper = idle.get("scraper", [])
    for host in (True, False):
        who = "the agent hosting the store" if host else "the other agent"
        off = [agent_switches(r, host) for r in idle["off"]]
        on = [agent_switches(r, host) for r in idle["on"]]
        scraped = [agent_switches(r, host) for r in idle["scraped"]]
        window = stats([r.get("elapsed_s") for r in idle["off"]])
        w_s = f"{window['median']:.0f} s" if window else "the window"
        r, w = row(f"idle wake-ups over {w_s}, {who}; on = not scraped", off, on,
                   reason=lambda o, n_, r: f"{n_['median'] - o['median']:+.0f} wake-ups with nobody asking")
        rows.append(r)
        verdicts.append((f"idle ({who}, not scraped)", w))
        # Both scraped agents get the same requests: half of the scraper's in the window each.
        per_agent = [s.get("requests_in_window", 0) / 2 for s in scraper]
        extra = [s - o for o, s in zip(on, scraped) if o is not None and s is not None]
        per_request = stats([e / q for e, q in zip(extra, per_agent) if q])

        def why(o, n_, r, per_agent=per_agent, per_request=per_request):
            req = stats(per_agent)
            return (f"the scraper's own {req['median']:.0f} requests to this agent in the window wake it; "
                    f"over the unscraped job that is {fmt(per_request['median'])} "
                    f"({fmt(per_request['min'])} – {fmt(per_request['max'])}) wake-ups per request"
                    if req and per_request else "the scraper's requests wake it")
        r, w = row(f"idle wake-ups over {w_s}, {who}; on = scraped", off, scraped, reason=why)
        rows.append(r)
        verdicts.append((f"idle ({who}, scraped)", w))
    return rows, verdicts


# The rows the goal counts: launch as scraped, every store row, idle as not scraped.
COUNTED = {"launch N=1", "launch N=4", "idle (the agent hosting the store, not scraped)",
           "idle (the other agent, not scraped)"}


def goal(verdicts):
    """Launch (scraped), store and idle (not scraped: a scraped agent must wake to answer) within noise."""
    counted = [(name, w) for name, w in verdicts if name in COUNTED or name.startswith("store")]
    if any(w is None for _, w in counted):
        return GOAL, "not every row was measured", None
    missed = [name for name, w in counted if not w]
    return (GOAL, "all within noise (idle counted without scraping; the scraped agent's wake-ups are its "
                  "requests')" if not missed else "not within noise: " + ", ".join(missed), not missed)


def build(b, data):
    sec = {"title": "10. The status endpoint's cost", "id": "status"}
    if data["status"] != "ran":
        sec["text"] = ["**Not available:** the cpplaunch or bench_worker binary was not built in this run."]
        return sec, [(GOAL, "not available", None)]
    sec["text"] = prose(data)
    raw = data["raw"]["status"]
    rows, verdicts = launch_rows(raw["launch"], data["ns"])
    st = raw["store"]
    if "error" in st:
        sec["text"].append(f"**Store not measured:** {st['error']}")
    else:
        more, v = store_rows(st, data["ks"])
        rows += more
        verdicts += v
        checks = "; ".join(f"{k}: {'ok' if c.get('ok') else 'FAILED ' + str(c)}" for k, c in st["checks"].items())
        sec["text"].append(f"`store_load check` against both agents' stores before the load: {checks}. The "
                           f"scraper's requests to the scraped agent during the store benchmark: "
                           f"{st['scraper']['answered']} answered, {st['scraper']['failed']} failed.")
    more, v = idle_rows(raw["idle"])
    rows += more
    verdicts += v
    sec["tables"] = [(HEADER, rows)]
    sec["commands"] = (["scripts/bench --only status"] +
                       [raw["launch"][str(data["ns"][-1])][k]["command"] for k in (OFF, SCRAPED)] +
                       list(st.get("commands", {}).values()) +
                       [shell_join([rel(b.bin["store_load"]), "throughput", "--port", "PORT", "--clients", "K",
                                    "--seconds", str(data["seconds"]), "--warmup-ms", "500"])])
    return sec, [goal(verdicts)]
