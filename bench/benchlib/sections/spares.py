"""Report section: hot spares (issue 24) in network namespaces with PyTorch DDP, a member host
lost mid-training on c10d, on etcd and silently, beside torchrun; the goal verdicts, with the
measured reason for a miss."""

from ..stats import fmt_stats, med

LABELS = {"c10d_kill": ("cpplaunch", "c10d", "SIGKILL agent + workers"),
          "etcd_kill": ("cpplaunch", "etcd-v3", "SIGKILL agent + workers"),
          "c10d_silent": ("cpplaunch", "c10d", "link cut (silent host)"),
          "torchrun_kill": ("torchrun 1.13.1", "c10d", "SIGKILL agent + workers"),
          "torchrun26_kill": ("torchrun 2.6", "c10d", "SIGKILL agent + workers")}
HEADER = ["launcher", "backend", "loss", "loss → survivors noticed, s", "loss → next round, s",
          "loss → every worker running, s", "loss → DDP resumed, s", "ok runs", "same world",
          "survivors' ranks kept", "fifth host took the lost group rank", "resumed from checkpoint",
          "job ended 0"]
CHECKS = ("same_world", "ranks_kept", "spare_took_slot", "resumed_ckpt", "ended_0")


def intro(s):
    return (
        f"{s['members']} member hosts and 1 spare, each in its own network namespace (one veth each "
        "on a bridge; tests/multihost's Topology), run real PyTorch DDP on gloo "
        f"(tests/multihost/ckpt_train.py: {s['steps']} steps, {s['step_sleep_s']} s apart, rank 0 "
        f"checkpoints every step, every rank resumes from it) with `--nnodes={s['members']}:"
        f"{s['members']} --nproc-per-node={s['nproc']} --max-restarts=1` and "
        f"`last_call_timeout={s['last_call_s']}`. The fifth host is started once the four run, so the "
        "round is full and it waits (cpplaunch: as a spare; torchrun, which has no spares, keeps it "
        "polling outside the round). After the checkpoint reached step "
        f"{s['kill_at_step']}, the member with group rank 1 (never the store's host) is lost: its "
        "agent's process group and every other process of that host are SIGKILLed at once (the "
        "agent and its workers: torchrun 2.6 starts its workers in sessions of their own), or, for the silent host, its "
        "namespace's veth is set down, so its connections stay open and nothing arrives "
        f"(`keep_alive_interval={s['silent_keep_alive'][0]},keep_alive_max_attempt="
        f"{s['silent_keep_alive'][1]}`: a {s['silent_window_s']:g} s window). etcd: one etcd member "
        "in the bridge's namespace, a lease TTL of "
        f"{s['etcd_ttl_s']:g} s (`keep_alive_interval={s['etcd_keep_alive'][0]},"
        f"keep_alive_max_attempt={s['etcd_keep_alive'][1]}`, the smallest accepted). Every worker is "
        "`sh -c` that writes a CLOCK_MONOTONIC stamp (`bench_worker stamp`) and then execs the "
        "trainer, so *every worker running* is the launcher's time, from the loss to the last "
        "of the 8 ranks' first stamp after it; *DDP resumed* is when rank 0 printed that it loaded "
        "the checkpoint, after gloo's init_process_group of all 8 ranks: PyTorch's import in 8 "
        "fresh processes on this machine's cores dominates it. *Survivors noticed* is the first "
        "survivor line ending the attempt (torchrun: `Worker group FAILED`), *next round* the first "
        "line of the next round's completion (cpplaunch's INFO line; torchrun's `Rendezvous "
        "complete`). The hosts run under their own hostnames (a UTS namespace and an /etc/hosts per "
        "namespace), which torchrun needs: it passes its hostname as MASTER_ADDR. torchrun is told "
        "its store's host with `is_host=1` on host 0 (0 elsewhere).")


def count_cell(d, key):
    return d["checks"][key]


def row(case, d):
    launcher, backend, loss = LABELS[case]
    ok = sum(bool(r["ok"]) for r in d["runs"])
    return [launcher, backend, loss, fmt_stats(d["noticed_s"], digits=2),
            fmt_stats(d["round_line_s"], digits=2), fmt_stats(d["worker_s"], digits=2),
            fmt_stats(d["resumed_s"], digits=1), f"{ok}/{len(d['runs'])}"] + \
        [count_cell(d, k) for k in CHECKS]


def correct(d, cpplaunch=True):
    keys = CHECKS if cpplaunch else ("same_world", "resumed_ckpt", "ended_0")
    runs = d["runs"]
    return bool(runs) and all(r.get(k) for r in runs for k in keys) and all(r["ok"] for r in runs)


def failure(r):
    """One failed run in a line: the harness's error and the agents' own words."""
    cause = " / ".join(r.get("cause") or [])
    return r["error"] + (f" (agents said: {cause})" if cause else "")


def why_missed(d, limit):
    """The measured reason for a miss: failed checks, or where the time went."""
    failed = sorted({failure(r) for r in d["runs"] if not r["ok"]})
    if failed:
        return f"{len(failed)} kind(s) of failed run: " + "; ".join(failed)[:600]
    n, rd, w = med(d["noticed_s"]), med(d["round_line_s"]), med(d["worker_s"])
    parts = [f"median {w:.2f} s against {limit:g} s"]
    if n is not None:
        parts.append(f"the survivors noticed the loss after {n:.2f} s")
    if rd is not None:
        parts.append(f"the next round completed at {rd:.2f} s")
    if rd is not None and w is not None:
        parts.append(f"the workers were all running {w - rd:.2f} s after that")
    return ", ".join(parts)


def goal(text, d, limit, what):
    if d is None:
        return (text, "not measured", None)
    w = d["worker_s"]
    if w is None:
        return (text, why_missed(d, limit), False)
    met = med(w) <= limit and correct(d)
    result = (f"{fmt_stats(w, digits=2)} s to every worker running, DDP resumed "
              f"{fmt_stats(d['resumed_s'], digits=1)} s ({what}); ranks kept "
              f"{d['checks']['ranks_kept']}, spare took the slot {d['checks']['spare_took_slot']}, "
              f"ended 0 {d['checks']['ended_0']}")
    if not met:
        result += f"; missed: {why_missed(d, limit)}"
    return (text, result, met)


def torchrun_goal(d, version, why_not):
    text = f"Hot spares against torchrun {version}: the same kill, side by side"
    if d is None or d["worker_s"] is None:
        if d is None:
            return (text, f"not measured: {why_not}", None)
        return (text, f"no time: torchrun {version} never had every worker running again after "
                      f"the kill; {why_missed(d, 0)}", None)
    moved = sum(bool(r.get("moved")) for r in d["runs"] if "worker_s" in r)
    return (text, f"torchrun {version}: {fmt_stats(d['worker_s'], digits=1)} s to every worker "
                  f"running, DDP resumed {fmt_stats(d['resumed_s'], digits=1)} s; survivors' ranks "
                  f"moved in {moved}/{len(d['runs'])} runs", True)


def build(b, data):
    sec = {"title": "Hot spares", "id": "hot-spares", "text": []}
    if data["status"] == "no-binary":
        sec["text"].append("**Not available:** cpplaunch or bench_worker was not built in this run.")
        return sec, []
    if data["status"] == "no-netns":
        sec["text"].append(f"**Not measured:** {data['why']}.")
        return sec, []
    s, cases = data["settings"], data["cases"]
    sec["text"].append(intro(s))
    sec["tables"] = [(HEADER, [row(c, d) for c, d in cases.items()])]
    for case, note in data["notes"].items():
        sec["text"].append(f"{LABELS[case][0]} ({LABELS[case][1]}) not measured: {note}.")
    goals = [
        goal("Hot spares, c10d: SIGKILL of a member host → every worker of the next attempt running "
             "≤ 1 s (4 hosts + 1 spare in network namespaces, DDP on gloo)", cases.get("c10d_kill"),
             1.0, "4 + 1 hosts, netns"),
        goal(f"Hot spares, etcd: the same kill ≤ lease TTL + 1 s ({s['etcd_ttl_s']:g} s TTL: "
             f"≤ {s['etcd_ttl_s'] + 1:g} s)", cases.get("etcd_kill"), s["etcd_ttl_s"] + 1.0,
             f"TTL {s['etcd_ttl_s']:g} s"),
        goal(f"Hot spares, c10d, silent host (link cut) ≤ keep-alive window + 1 s "
             f"({s['silent_window_s']:g} s window: ≤ {s['silent_window_s'] + 1:g} s)",
             cases.get("c10d_silent"), s["silent_window_s"] + 1.0,
             f"{s['silent_window_s']:g} s keep-alive window"),
        torchrun_goal(cases.get("torchrun_kill"), "1.13.1", data["notes"].get("torchrun_kill",
                                                                              "not run")),
        torchrun_goal(cases.get("torchrun26_kill"), "2.6",
                      data["notes"].get("torchrun26_kill", "not run")),
    ]
    for text, result, met in goals:
        mark = "met" if met else ("not measured" if met is None else "NOT met")
        sec["text"].append(f"- **{mark}**: {text}. Measured: {result}.")
    sec["commands"] = [next(r["command"] for r in d["runs"]) for d in cases.values() if d["runs"]]
    return sec, goals
