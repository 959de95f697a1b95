"""Report section: the etcd v3 rendezvous beside c10d (agent counts), and the time from a host's
SIGKILL to the survivors' workers running again."""

from ..stats import fmt_stats

HEADER = ["agents A", "backend", "last agent start → all workers started, s", "all workers started",
          "clean runs", "agent error messages (numbers replaced by N)"]
INTRO = (
    "A agents start on loopback (one `proc_run` each, back to back) and form one job of A hosts, "
    "either through a 3-member etcd cluster on loopback (`--rdzv-backend=etcd-v3 "
    "--rdzv-endpoint=E1,E2,E3`, data on /dev/shm) or through c10d (`--rdzv-backend=c10d`, the first "
    "agent's store). The figure is the time from the last agent's fork to the last worker's start "
    "(`bench_worker stamp`), as in the rendezvous-scale section.")
KILL = (
    "Host loss: 3 agents `--nnodes=2:3 --max-restarts=1` through etcd with a 3 s lease "
    "(`keep_alive_interval=1,keep_alive_max_attempt=3`) and `last_call_timeout=1`; once every "
    "worker runs, the agent of group rank 0 (which hosts the workers' store) is SIGKILLed. The "
    "figure is the time from the kill to both survivors' workers having started again in the new "
    "round: the lease TTL (3 s) plus the last call (1 s) plus the restart. Under c10d the same "
    "kill ends the job.")


def row(key, d):
    backend, a = key.split("/")
    runs = d["runs"]
    errors = sorted({e for r in runs if not r["ok"] for e in r["errors"]})
    return [a, backend, fmt_stats(d["rdzv_s"], digits=3),
            f"{sum(r['started_ok'] for r in runs)}/{len(runs)}",
            f"{sum(r['ok'] for r in runs)}/{len(runs)}", "; ".join(errors)[:300]]


def build(b, data):
    sec = {"title": "etcd rendezvous", "id": "etcd", "text": [INTRO]}
    if data["status"] == "no-binary":
        sec["text"].append("**Not available:** the cpplaunch binary was not built in this run.")
        return sec, []
    if data["status"] == "no-etcd":
        sec["text"].append(f"**Not measured:** {data['why']}.")
        return sec, []
    raw = data["raw"]["etcd"]
    rows = [row(k, d) for k, d in raw.items() if k != "kill"]
    sec["tables"] = [(HEADER, rows)]
    kill = raw["kill"]
    sec["text"].append(KILL)
    failed = [r.get("error", "") for r in kill["runs"] if not r["ok"]]
    sec["tables"].append((["SIGKILL of the store's host → survivors' workers running, s", "ok runs",
                           "failures"],
                          [[fmt_stats(kill["back_s"], digits=2),
                            f"{len(kill['runs']) - len(failed)}/{len(kill['runs'])}",
                            "; ".join(sorted(set(failed))) or "–"]]))
    sec["commands"] = [d["runs"][0]["command"] for d in raw.values() if d["runs"]]
    return sec, []
