"""Section 8's hot-spares part (scale_spares.py's data): the prose, the table of sizes (the
replacement round, the kill to the loss being known, store and simulation CPU, the seats kept), the
profile of the largest size (its requests by phase), and the goal (1,000 + 8 under 0.5 s)."""

from ..report import table_md
from ..scale_spares import phases
from ..stats import fmt, fmt_stats

GOAL = "Replacement round of 1,000 simulated agents + 8 spares under 0.5 s after the loss is known"
HEADER = ["members N + spares", "ok runs", "loss known → every agent holding the next round, s",
          "kill → loss known, s", "kill → every agent holding, s",
          "the same agents' first rendezvous just before (last join → all holding), s", "store CPU over the replacement, s",
          "simulating processes' CPU over it, s", "spare got the lost seat, no survivor moved",
          "load average (1 min) at the runs"]
PROFILE_HEADER = ["phase (in the order it began)", "store requests", "per survivor", "first answered, ms",
                  "last answered, ms"]


def intro(data):
    return (f"**Hot spares** (issue 24). The same simulation with `--lose`: N member agents (`--nnodes=N:N`) "
            f"and {data['spares']} spares, agents started once the round runs, which call `Next()` as the agent "
            "does and wait in the rendezvous state's spare list. Once every spare is listed, member N/2's "
            "store connection is closed, as a SIGKILLed agent's is: its will ends the round, and every "
            "survivor does what the agent does with that end (`MultiHostJob::Decide`: close the channel, "
            "`AfterRoundEnd`, `Next()` with the lost seat named), without workers to stop first. Timed: from "
            "the loss being known (the first survivor told) to every survivor and the spare that took the "
            "lost seat holding the next round (returned from `Next()`: joined, completed, armed, released). "
            "Checked in every run: the spare holds the lost member's group rank and every survivor its own. "
            "The store's CPU is read from /proc (10 ms ticks) at the kill and when the last agent holds the "
            f"round. {data['reps']} repetitions per size, a fresh store each; cells are median (min – max).")


def row(n, s, spares):
    return [f"{int(n):,} + {spares}", f"{s['ok']}/{s['runs']}", fmt_stats(s["replace_s"], digits=3),
            fmt_stats(s["kill_to_told_s"], digits=3), fmt_stats(s["kill_to_holding_s"], digits=3),
            fmt_stats(s["first_rdzv_s"], digits=3),
            fmt_stats(s["store_cpu_s"], digits=2), fmt_stats(s["sim_cpu_s"], digits=2),
            "yes" if s["seats_kept"] else "no" + (": " + "; ".join(s["errors"])[:200] if s["errors"] else ""),
            fmt_stats(s["load_1min"], digits=1)]


def profile_md(profile, spares):
    """The profiled run's requests by phase, and its sentence, or [] when it did not complete."""
    if not profile or not profile.get("requests") or not profile.get("ok"):
        return []
    survivors = profile["n"] - 1
    rows = [[name, f"{count:,}", fmt(count / survivors, 1), str(first), str(last)]
            for name, count, first, last in phases(profile["requests"])]
    total = sum(c for c, _, _ in profile["requests"].values())
    text = (f"Where the time goes, one more run at {profile['n']:,} + {spares} "
            f"counting the store requests answered from the kill on (`--count-requests 1`; the counting itself "
            f"slows the agents): {total:,} requests, {total / survivors:.1f} per survivor; the replacement "
            f"took {fmt(profile.get('replace_s'), 3)} s from the loss being known, with the store at "
            f"{fmt(profile.get('store_cpu_s'), 2)} s of CPU and the simulating process at "
            f"{fmt(profile.get('sim_cpu_s'), 2)} s. The phases overlap (agents progress at their own pace):")
    return [text, "\n".join(table_md(PROFILE_HEADER, rows)).rstrip()]


def notes(data):
    """The hot-spares paragraphs and tables, for section 8's notes."""
    out = [intro(data)]
    rows = [row(n, s, data["spares"]) for n, s in data["summary"].items()]
    out.append("\n".join(table_md(HEADER, rows)).rstrip())
    out += profile_md(data.get("profile"), data["spares"])
    return out


def goals(data):
    s = data["summary"].get("1000")
    if not s:
        return [(GOAL, "not run (a quick run measures 100 + 8 only)", None)]
    if not s["replace_s"]:
        return [(GOAL, "not reached (" + ("; ".join(s["errors"])[:200] or "no run completed") + ")", False)]
    med = s["replace_s"]["median"]
    return [(GOAL, f"{med:.3f} s (median of {s['ok']}; {fmt(s['replace_s']['min'], 3)} – "
                   f"{fmt(s['replace_s']['max'], 3)}), spare in the lost seat and no survivor moved: "
                   f"{'yes' if s['seats_kept'] else 'no'}", med < 0.5 and s["seats_kept"])]
