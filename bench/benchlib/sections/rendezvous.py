"""Report section 6 (rendezvous scale): prose, the table of agent counts (rendezvous and
cross-host teardown), the unclean-run note, the figure and the 64-agent goal."""

from ..plots import plot_lines
from ..stats import fmt_stats

GOAL = "64-agent rendezvous under 1 s"
HEADER = ["agents A", "launcher", "last agent start → all workers started, s",
          "worker failure → all agents gone, s", "all workers started", "clean runs",
          "agent exit statuses after the failure", "agent error messages (numbers replaced by N)"]
INTRO = (
    "A agents start on loopback (one `proc_run` each, started back to back) and form one dynamic job: "
    "`--nnodes=A --nproc_per_node=1 --rdzv_backend=c10d --rdzv_endpoint=127.0.0.1:PORT`. Each worker "
    "(`bench_worker stamp`) writes its CLOCK_MONOTONIC start time; the figure is the time from the last "
    "agent's fork to the last worker's start. Cross-host teardown: the worker of the last global rank fails "
    "500 ms after its start while the others sleep; the figure is from its failure to the moment every "
    "agent has exited with all of its processes gone.")
CLEAN = (
    "The rendezvous time counts every run in which all A workers started, even when the "
    "agents then failed to exit cleanly. A run is clean when every agent exited 0 (rendezvous "
    "runs), or, in teardown runs, when every agent exited by itself (none timed out), nothing "
    "was left running and at least one agent reported the failure; the teardown time counts "
    "only clean runs. Messages of unclean runs are shown. torchrun (1.13, c10d backend) is "
    "run once per size, at A = 4 only: one of its runs takes 20 to 40 s here.")


def probe_failed(probe):
    return ("**Not available yet:** a 2-agent dynamic job did not complete with this build of "
            "cpplaunch (the dynamic rendezvous failed). First "
            "agent's stderr:\n\n```\n" + probe["stderr"].strip()[-400:] + "\n```\n\nThis benchmark "
            "runs automatically once `--rdzv_backend=c10d --nnodes=N` works.")


def row(key, d, timeout_s):
    launcher, a = key.split("/")
    runs, td_runs = d["runs"], d["teardown_runs"]
    label = launcher if launcher == "cpplaunch" else "torchrun (--monitor_interval=0.1)"
    errors = sorted({e for r in runs + td_runs if not r["ok"] for e in r["errors"]})
    td_cell = fmt_stats(d["teardown_s"], digits=3) if td_runs else "–"
    if td_runs and d["teardown_s"] is None and all(r["any_timeout"] for r in td_runs):
        td_cell = f"over {timeout_s} s: agents still running, killed by proc_run"
    return [a, label, fmt_stats(d["rdzv_s"], digits=3), td_cell,
            f"{sum(r['started_ok'] for r in runs)}/{len(runs)}",
            f"{sum(r['ok'] for r in runs + td_runs)}/{len(runs + td_runs)}",
            "; ".join(sorted({r["exit_codes"] for r in td_runs})) or "–", "; ".join(errors)[:300]]


def unclean_note(raw):
    runs = [r for k, v in raw.items() if k.startswith("cpplaunch/") for r in v["runs"] + v["teardown_runs"]]
    bad = sum(not r["ok"] for r in runs)
    if not bad:
        return None
    started = sum(r["started_ok"] for r in runs if not r["ok"])
    return (f"**cpplaunch's agents did not all end cleanly in {bad} of {len(runs)} runs** (see the "
            f"messages). In {started} of them every worker had started, so the failure lies in the "
            "agents' multi-host exit path (exit barrier, heartbeats, job channel) after the "
            "rendezvous that is timed here; such runs are left out of the teardown statistics.")


def build(b, data):
    sec = {"title": "6. Rendezvous scale", "id": "rendezvous", "text": [INTRO]}
    if data["status"] == "no-binary":
        sec["text"].append("**Not available yet:** the cpplaunch binary was not built in this run.")
        return sec, [(GOAL, "not available yet (no cpplaunch binary)", None)]
    if data["status"] == "probe-failed":
        sec["text"].append(probe_failed(data["probe"]))
        return sec, [(GOAL, "not available yet (dynamic rendezvous not working)", None)]
    raw = data["raw"]["rendezvous"]
    note = unclean_note(raw)
    if note:
        sec["text"].append(note)
    sec["tables"] = [(HEADER, [row(k, d, data["timeout_s"]) for k, d in raw.items()])]
    sec["text"].append(CLEAN)
    sec["commands"] = [d["runs"][0]["command"] for d in raw.values()]
    d = raw.get("cpplaunch/64", {}).get("rdzv_s")
    goal = (GOAL, f"{d['median']:.3f} s" if d else "no successful run", (d["median"] < 1) if d else False)
    sec["plots"] = [plot_lines(b, "rendezvous", "Rendezvous of A agents on loopback", "agents (A)", "seconds",
                               {"cpplaunch": [(a, raw[f"cpplaunch/{a}"]["rdzv_s"]) for a in data["agent_counts"]]},
                               logx=True)]
    return sec, [goal]
