"""Report section 2 (teardown latency): prose, the table, the figure and the teardown goal."""

from ..plots import plot_bars
from ..stats import fmt, fmt_stats, ok_cell, ratio_cell

HEADER = ["launcher", "failure → all gone, ms", "failure → launcher exit, ms", "left after exit",
          "vs cpplaunch", "ok runs"]


def prose(n, delays):
    return [
        f"{n} workers (`bench_worker fail-or-sleep`): local rank 0 sleeps a delay, writes its CLOCK_MONOTONIC "
        f"time to a file and exits with status 1; its {n - 1} siblings sleep until signalled, as ranks blocked "
        "in a collective would. Teardown is the time from that stamp to the moment the launcher has exited "
        "*and* every process of the job is gone (proc_run is the subreaper of the job and reaps stragglers; "
        "'left after exit' counts job processes still running when the launcher had exited).",
        f"The failure comes {min(delays)}–{max(delays)} ms after the worker starts, drawn once from a seeded "
        "generator, the same sequence for every launcher, so that a polling launcher's phase is not always the "
        "same. A run is ok when the launcher exits non-zero and nothing needed a SIGKILL from proc_run.",
    ]


def rows_for(raw):
    base = (raw.get("cpplaunch") or {}).get("teardown_ms")
    rows = []
    for label, d in raw.items():
        td = d["teardown_ms"]
        ratio = td["median"] / base["median"] if (base and td and label != "cpplaunch") else None
        rows.append([label, fmt_stats(td), fmt_stats(d["exit_ms"]),
                     str(sum(r["alive_after_exit"] for r in d["runs"])),
                     ratio_cell(ratio, label == "cpplaunch", ",.0f"), ok_cell(d["runs"])])
    return rows


def goal(raw):
    cp = raw.get("cpplaunch")
    if not (cp and cp["teardown_ms"]):
        return ("Teardown under 50 ms", "cpplaunch not available", None)
    median = cp["teardown_ms"]["median"]
    return ("Teardown under 50 ms", f"{fmt(median)} ms median", median < 50)


def build(b, data):
    raw = data["raw"]["teardown"]
    sec = {"title": "2. Teardown latency", "id": "teardown", "text": prose(data["n"], data["delays"]),
           "tables": [(HEADER, rows_for(raw))], "commands": [d["command"] for d in raw.values()]}
    sec["plots"] = [plot_bars(b, "teardown", "Teardown: worker failure to every process gone (8 workers)",
                              "ms (log scale)", [(label, d["teardown_ms"]) for label, d in raw.items()],
                              logy=True)]
    return sec, [goal(raw)]
