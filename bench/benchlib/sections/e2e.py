"""Report section 3 (end-to-end training): prose, the wall-time table, failures and the figure."""

from ..config import PYTHON
from ..plots import plot_bars
from ..stats import fmt_stats, ok_cell, ratio_cell


def intro(epochs):
    return (f"A real 2-worker gloo job on CPU ({epochs} epochs of the examples' MLP task), total wall time "
            "from fork of the launcher to its exit, exit status 0 required. The Python script runs as "
            f"`{PYTHON} -u examples/ddp_train.py` under both launchers (PYTHON_EXEC is set for cpplaunch; "
            "torchrun uses its own interpreter, the same file).")


def rows_for(raw):
    rows = []
    for name, per in raw.items():
        base = (per.get("cpplaunch") or {}).get("wall_s")
        for label, d in per.items():
            wall = d["wall_s"]
            ratio = wall["median"] / base["median"] if (base and wall and label != "cpplaunch") else None
            rows.append([name, label, fmt_stats(wall, digits=2), ratio_cell(ratio, label == "cpplaunch", ",.2f"),
                         ok_cell(d["runs"])])
    return rows


def build(b, data):
    sec = {"title": "3. End-to-end training", "id": "e2e", "text": [intro(data["epochs"])]}
    if not data["jobs"]:
        sec["text"].append("**Not available yet:** neither examples/ddp_train.py nor the trainer binary exists.")
        return sec, []
    raw = data["raw"]["e2e"]
    sec["tables"] = [(["job", "launcher", "wall s", "vs cpplaunch", "ok runs"], rows_for(raw))]
    sec["notes"] = [f"**Failed:** {f}" for f in data["failures"]]
    sec["plots"] = [plot_bars(b, "e2e", "End-to-end: 2-worker training job, total wall time", "seconds",
                              [(f"{job}: {label}", d["wall_s"]) for job, per in raw.items()
                               for label, d in per.items()])]
    sec["commands"] = [d["command"] for job in raw.values() for d in job.values()]
    if not data["trainer"]:
        sec["text"].append("The LibTorch trainer binary was not built in this run, so only the Python job ran.")
    return sec, []
