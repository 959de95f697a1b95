"""Report section 7 (output throughput): prose, the table of modes, the figure and the --tee goal."""

from ..output import DIRECT
from ..plots import plot_bars
from ..stats import fmt_stats, ok_cell

HEADER = ["mode", "MiB/s", "relative to direct", "worker start → launcher exit, s", "CPU s", "ok runs"]
GOAL = "--tee within 20% of a direct file write"
REDIRECT_GOAL = "--redirects within 5% of a direct file write"


def prose(size):
    return [
        f"One worker (`bench_worker write`) writes {size // 1048576} MiB of 100-byte lines to its stdout in "
        "64 KiB writes. The launcher's own stdout is a file; `--tee`/`--redirects` write per-rank log files "
        "under `--log_dir`; every file is on tmpfs (/dev/shm), so the disk is not what is measured. Throughput "
        "is the byte count over the time from the worker's start (a CLOCK_MONOTONIC stamp it writes first) to "
        "the moment the last of its destination files stopped growing (the harness polls their sizes every "
        "2 ms while the launcher runs), i.e. until every byte has reached every file. The launcher's exit "
        "latency is not part of it (that is benchmark 2); the time to the launcher's exit is shown beside it. "
        "A run is ok when the console file (unless redirected) and the log file (with tee or redirect) hold "
        "at least all the bytes.",
        "torchrun runs with `--monitor_interval=0.1` here, so that its exit is not delayed by up to 5 s after "
        "the worker is done. Debian's 1.13 torchrun needs the single-stream values (`-t 1`, `-r 1`) with "
        "a `9:1` map for the other flag.",
        "CPU s is wait4's user + system time of the launcher and its reaped children (the worker included), "
        "so the difference to the direct row is what the launcher spent on the output.",
    ]


def rows_for(raw, direct):
    rows = []
    for label, d in raw.items():
        tp = d["mib_per_s"]
        rel_tp = tp["median"] / direct["median"] if (tp and direct) else None
        rows.append([label, fmt_stats(tp), f"{rel_tp * 100:.0f}%" if rel_tp else "–",
                     fmt_stats(d["exit_s"], digits=2), fmt_stats(d["cpu_s"], digits=2), ok_cell(d["runs"])])
    return rows


def goal(raw, direct):
    tee = raw.get("cpplaunch --tee 1")
    if not (tee and tee["mib_per_s"] and direct):
        return (GOAL, "cpplaunch not available", None)
    rel_tee = tee["mib_per_s"]["median"] / direct["median"]
    return (GOAL, f"{rel_tee * 100:.0f}% of direct throughput", rel_tee >= 0.8)


def redirect_goal(raw, direct):
    red = raw.get("cpplaunch --redirects 1")
    if not (red and red["mib_per_s"] and direct):
        return (REDIRECT_GOAL, "cpplaunch not available", None)
    rel = red["mib_per_s"]["median"] / direct["median"]
    return (REDIRECT_GOAL, f"{rel * 100:.0f}% of direct throughput", rel >= 0.95)


def build(b, data):
    raw, size = data["raw"]["output"], data["size"]
    direct = raw[DIRECT]["mib_per_s"]
    sec = {"title": "7. Output throughput", "id": "output", "text": prose(size),
           "tables": [(HEADER, rows_for(raw, direct))], "commands": [d["command"] for d in raw.values()]}
    sec["plots"] = [plot_bars(b, "output", f"Writing {size // 1048576} MiB of lines: throughput", "MiB/s",
                              [(label, raw[label]["mib_per_s"]) for label in data["modes"]])]
    return sec, [goal(raw, direct), redirect_goal(raw, direct)]
