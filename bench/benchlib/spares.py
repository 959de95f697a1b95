"""Hot spares (issue 24) in network namespaces: 4 member hosts and 1 spare, real PyTorch DDP on
gloo (tests/multihost/ckpt_train.py, checkpointing every step), one member lost mid-training.
Five cases, interleaved repetition by repetition:

  c10d_kill       cpplaunch, c10d: SIGKILL of a member host's agent and workers (not the store's)
  etcd_kill       cpplaunch, etcd-v3 (one etcd member in the switch namespace): the same kill
  c10d_silent     cpplaunch, c10d: the member's link is cut (its connections stay open, nothing
                  arrives), so only the keep-alive window tells
  torchrun_kill   Debian's torchrun 1.13.1, c10d, the same 4 + 1 hosts and the same kill
  torchrun26_kill torchrun 2.6 from the root scripts/setup-torch26 builds (tests/e2e/torch26.py),
                  the same; skipped with the reason when that root is missing

Every worker is `sh -c` that stamps CLOCK_MONOTONIC (bench_worker stamp) and then execs the
trainer, so the worker-start time is the launcher's, not PyTorch's import; "DDP resumed" is when
rank 0 says it loaded the checkpoint (after gloo's init_process_group of every rank).
The namespaces, the etcd member and every process are removed on the way out, also on failure.
"""

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

from .config import PYTHON, ROOT, TORCHRUN, TORCHRUN_DEFAULT_STD
from .running import log, shell_join
from .stats import stats

sys.path.insert(0, str(ROOT / "tests/multihost"))
from agent_faults_test import TimedAgent, close  # noqa: E402
from multihost_test import (Failure, Job, Topology, check, checkpoint_step,  # noqa: E402
                            netns_unavailable)

TRAIN = str(ROOT / "tests/multihost/ckpt_train.py")
MEMBERS, NPROC = 4, 2
WORLD = MEMBERS * NPROC
STEPS, STEP_SLEEP, KILL_AT_STEP = 60, 0.1, 4
PORT = 29400
ETCD_PORT = 2379
# Short keep-alives for the silent host and the etcd lease; the defaults are torchrun's (5 s x 3).
SILENT_KEEP_ALIVE = (0.5, 2)  # keep_alive_interval s, keep_alive_max_attempt: a 1 s window
ETCD_KEEP_ALIVE = (1, 2)  # a 2 s lease TTL, the smallest cpplaunch accepts
LAST_CALL = 1
CASES = ("c10d_kill", "etcd_kill", "c10d_silent", "torchrun_kill", "torchrun26_kill")
TORCHRUNS = ("torchrun_kill", "torchrun26_kill")
# The line by which a survivor's agent shows that it noticed the loss, and the next round's.
NOTICED = {"torchrun_kill": "Worker group FAILED", "torchrun26_kill": "Worker group FAILED"}
ROUND = {"torchrun_kill": "Rendezvous complete for workers",
         "torchrun26_kill": "Rendezvous complete for workers"}
WORKER = ('d="$SB_STAMPS/$SB_HOST-$TORCHELASTIC_RESTART_COUNT-$LOCAL_RANK-$$"; mkdir -p "$d" && '
          '"$SB_WORKER" stamp "$d" && '
          'echo "$RANK $GROUP_RANK $WORLD_SIZE $TORCHELASTIC_RESTART_COUNT" > "$d/env.tmp" && '
          'mv "$d/env.tmp" "$d/env" && exec ' + PYTHON + ' "$SB_TRAIN"')


def keep_alive_ttl(pair):
    return pair[0] * pair[1]


def conf_of(case):
    conf = f"join_timeout=120,last_call_timeout={LAST_CALL}"
    if case == "c10d_silent":
        conf += ",keep_alive_interval={},keep_alive_max_attempt={}".format(*SILENT_KEEP_ALIVE)
    if case == "etcd_kill":
        conf += ",keep_alive_interval={},keep_alive_max_attempt={}".format(*ETCD_KEEP_ALIVE)
    return conf


class Place:
    """Where a case's files live: the bench scratch, or for torchrun 2.6 the scratch directory
    shared with the PyTorch 2.6 root (tests/e2e/torch26.py), holding copies of the trainer and
    bench_worker (the workers run inside that root)."""

    def __init__(self, base, worker, train, python26=None):
        self.base, self.worker, self.train, self.python26 = base, worker, train, python26


def command(b, case, endpoint, rdzv_id, host, place):
    """The launcher command line of host `host` (the same on every host but torchrun's is_host:
    the namespaces share one hostname, so torchrun cannot tell the store's host by its name)."""
    tail = ["/bin/sh", "-c", WORKER]
    if case == "torchrun26_kill":
        return [place.python26, str(place.base / "torchrun26.py"), f"--nnodes={MEMBERS}:{MEMBERS}",
                f"--nproc-per-node={NPROC}", "--rdzv-backend=c10d", f"--rdzv-endpoint={endpoint}",
                f"--rdzv-id={rdzv_id}", "--max-restarts=1",
                f"--rdzv-conf=join_timeout=120,last_call_timeout={LAST_CALL},"
                f"is_host={int(host == 0)}", "--no-python", *tail]
    if case == "torchrun_kill":
        return [TORCHRUN, f"--nnodes={MEMBERS}:{MEMBERS}", f"--nproc_per_node={NPROC}",
                "--rdzv_backend=c10d", f"--rdzv_endpoint={endpoint}", f"--rdzv_id={rdzv_id}",
                "--max_restarts=1", f"--rdzv_conf=join_timeout=120,last_call_timeout={LAST_CALL},"
                f"is_host={int(host == 0)}", *TORCHRUN_DEFAULT_STD, "--no_python", *tail]
    backend = "etcd-v3" if case == "etcd_kill" else "c10d"
    return [b.tool("cpplaunch"), f"--nnodes={MEMBERS}:{MEMBERS}", f"--nproc-per-node={NPROC}",
            f"--rdzv-backend={backend}", f"--rdzv-endpoint={endpoint}", f"--rdzv-id={rdzv_id}",
            "--max-restarts=1", f"--rdzv-conf={conf_of(case)}", "--no-python", *tail]


class Network:
    """5 host namespaces on one bridge (tests/multihost Topology, prefix 'sb'), plus an address
    on the bridge in the switch namespace where the etcd member runs."""

    def __init__(self):
        self.topo = Topology(True)
        self.topo.prefix = "sb" + uuid.uuid4().hex[:6]
        self.etcd = None

    def __enter__(self):
        try:
            self.topo.create(MEMBERS + 1)
            self.write_hosts_files()
        except BaseException:
            self.__exit__()
            raise
        return self

    def hostname(self, i):
        return f"{self.topo.prefix}-host{i}"

    def write_hosts_files(self):
        """Each host namespace gets its own /etc/hosts (`ip netns exec` mounts
        /etc/netns/NAME/hosts over it) naming every host, so that a launcher that passes its
        hostname as MASTER_ADDR (torchrun) is reachable by it; the agents run with their own
        hostname (a UTS namespace, see `in_host`)."""
        lines = ["127.0.0.1 localhost"] + [f"{self.topo.address(i)} {self.hostname(i)}"
                                            for i in range(MEMBERS + 1)]
        for ns in self.topo.names[:-1]:
            os.makedirs(f"/etc/netns/{ns}", exist_ok=True)
            with open(f"/etc/netns/{ns}/hosts", "w") as f:
                f.write("\n".join(lines) + "\n")

    def restore_links(self):
        """Every host's link up again (a silent-host run cut one)."""
        for i, ns in enumerate(self.topo.names[:-1]):
            subprocess.run(["ip", "-n", ns, "link", "set", f"v{i}", "up"], check=True)

    def in_host(self, i, argv):
        """argv run in host i's network namespace under its own hostname."""
        return (["ip", "netns", "exec", self.topo.names[i], "unshare", "--uts", "/bin/sh", "-c",
                 'hostname "$0" && exec "$@"', self.hostname(i)] + argv)

    @property
    def switch(self):
        return self.topo.names[-1]

    def etcd_address(self):
        return self.topo.address(199)

    def start_etcd(self, scratch):
        sw = self.switch
        subprocess.run(["ip", "-n", sw, "addr", "add", f"{self.etcd_address()}/24", "dev", "br0"],
                       check=True)
        subprocess.run(["ip", "-n", sw, "link", "set", "lo", "up"], check=True)
        url = f"http://{self.etcd_address()}:{ETCD_PORT}"
        data = scratch / f"etcd-{uuid.uuid4().hex[:6]}"
        argv = ["ip", "netns", "exec", sw, "etcd", "--name", "sb0", "--data-dir", str(data),
                "--listen-client-urls", url, "--advertise-client-urls", url,
                "--listen-peer-urls", "http://127.0.0.1:2380",
                "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
                "--initial-cluster", "sb0=http://127.0.0.1:2380", "--log-level", "warn",
                "--heartbeat-interval", "50", "--election-timeout", "500"]
        self.etcd = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            probe = subprocess.run(["ip", "netns", "exec", sw, "curl", "-sf", "-m", "1",
                                    url + "/health"], capture_output=True, text=True)
            if '"health":"true"' in probe.stdout:
                return
            check_alive(self.etcd, "etcd")
            time.sleep(0.2)
        raise Failure("the etcd member did not become healthy within 30 s")

    def __exit__(self, *exc):
        if self.etcd is not None and self.etcd.poll() is None:
            os.killpg(self.etcd.pid, 9)
            self.etcd.wait()
        for ns in self.topo.names:
            shutil.rmtree(f"/etc/netns/{ns}", ignore_errors=True)
        try:
            os.rmdir("/etc/netns")  # only when empty: other namespaces may have files there
        except OSError:
            pass
        self.topo.destroy()


def check_alive(proc, name):
    if proc.poll() is not None:
        raise Failure(f"{name} exited with {proc.returncode}")


def workers(stamp_dir):
    """Every worker started so far: [{host, restart, rank, group_rank, world, ns}]."""
    found = []
    for name in os.listdir(stamp_dir):
        d = os.path.join(stamp_dir, name)
        try:
            with open(os.path.join(d, "env")) as f:
                rank, group_rank, world, restart = (int(v) for v in f.read().split())
            with open(os.path.join(d, str(rank))) as f:
                ns = int(f.read())
        except (OSError, ValueError):
            continue
        found.append({"host": name.split("-")[0], "restart": restart, "rank": rank,
                      "group_rank": group_rank, "world": world, "ns": ns})
    return found


def all_running(stamp_dir, after_ns):
    """CLOCK_MONOTONIC ns at which the WORLD workers of one attempt started after `after_ns`
    were all running (first start of each RANK), or None."""
    firsts = {}
    for w in sorted(workers(stamp_dir), key=lambda w: w["ns"]):
        if w["ns"] > after_ns and w["world"] == WORLD:
            firsts.setdefault(w["rank"], w["ns"])
    return max(firsts.values()) if len(firsts) == WORLD else None


def ranks_of(ws, host, after_ns=None, before_ns=None):
    """{RANK: GROUP_RANK} of the workers of `host` started in the window."""
    return {w["rank"]: w["group_rank"] for w in ws if w["host"] == host
            and (after_ns is None or w["ns"] > after_ns) and (before_ns is None or w["ns"] < before_ns)}


def wait_until(what, predicate, timeout, agents):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        for a in agents:
            if a.proc.poll() is not None:
                raise Failure(f"{a.name} exited with {a.proc.returncode} while waiting for {what}:\n"
                              + "\n".join(a.output.splitlines()[-8:]))
        time.sleep(0.01)
    raise Failure(f"timed out after {timeout} s waiting for {what}")


def start_host(b, job, net, i, argv_of, run_dir, place):
    env = {"SB_HOST": f"h{i}", "SB_STAMPS": str(run_dir / "stamps"), "SB_WORKER": place.worker,
           "SB_TRAIN": place.train, "MH_CKPT": str(run_dir / "ckpt.pt"), "MH_STEPS": str(STEPS),
           "MH_STEP_SLEEP": str(STEP_SLEEP), "GLOO_SOCKET_IFNAME": f"v{i}",
           "TMPDIR": "/tmp" if place.python26 else str(b.scratch), "PATH": "/usr/bin:/bin:/usr/sbin:/sbin",
           "USE_LIBUV": "0"}
    agent = TimedAgent(f"h{i}", net.in_host(i, argv_of(i)), job.env(env))
    job.agents.append(agent)
    return agent


def start_job(b, job, net, case, argv_of, run_dir, place):
    """Starts the 4 members, waits for their attempt-0 workers, starts the spare (host 4) and
    waits until it waits and the training checkpointed KILL_AT_STEP steps."""
    cpplaunch = case not in TORCHRUNS
    agents = {"h0": start_host(b, job, net, 0, argv_of, run_dir, place)}
    if cpplaunch and case != "etcd_kill":
        wait_until("host 0's store", lambda: agents["h0"].first("serves the job's store"), 60,
                   agents.values())
    for i in range(1, MEMBERS):
        agents[f"h{i}"] = start_host(b, job, net, i, argv_of, run_dir, place)
    stamps = str(run_dir / "stamps")
    wait_until("every worker of attempt 0", lambda: all_running(stamps, 0), 120, agents.values())
    agents["h4"] = spare = start_host(b, job, net, MEMBERS, argv_of, run_dir, place)
    spare_started = time.monotonic()
    if cpplaunch:
        wait_until("the spare waiting", lambda: spare.first("waits for a free place"), 60,
                   agents.values())
    ckpt = str(run_dir / "ckpt.pt")
    # torchrun's fifth host says nothing while it waits: give it 5 s to import and join.
    wait_until(f"checkpoint step {KILL_AT_STEP}",
               lambda: time.monotonic() - spare_started > (0 if cpplaunch else 5) and
               checkpoint_step(ckpt) >= KILL_AT_STEP, 120, agents.values())
    check(not any(w["host"] == "h4" for w in workers(stamps)), "the fifth host ran workers "
               "before the loss")
    return agents


def host_pids(job, host):
    """Every process of the job's host `host` (its environment carries the job's tag and
    SB_HOST): the agent and its workers, wherever their sessions are (torchrun 2.6 starts its
    workers in their own sessions, out of the agent's process group)."""
    return job.tagged(f"SB_HOST={host}")


def lose(net, case, victim_index, agent, pids):
    """The loss: SIGKILL of the agent's process group and every process of that host, or the
    link cut."""
    if case == "c10d_silent":
        subprocess.run(["ip", "-n", net.topo.names[victim_index], "link", "set",
                        f"v{victim_index}", "down"], check=True)
        return
    agent.kill()
    for pid in pids:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


def first_line(agents, needle, after):
    times = [t for t in (a.first(needle, after=after) for a in agents) if t is not None]
    return min(times) if times else None


def run_once(b, net, case, rep, place):
    run_dir = place.base / f"spares-{case}-{rep}"
    (run_dir / "stamps").mkdir(parents=True)
    stamps = str(run_dir / "stamps")
    endpoint = (f"{net.etcd_address()}:{ETCD_PORT}" if case == "etcd_kill" else
                f"{net.topo.address(0)}:{PORT + 10 * rep + CASES.index(case)}")
    rdzv_id = f"sb-{case}-{rep}-{uuid.uuid4().hex[:6]}"
    argv_of = lambda host: command(b, case, endpoint, rdzv_id, host, place)  # noqa: E731
    r = {"case": case, "rep": rep, "ok": False, "command": shell_join(argv_of(1)), "error": ""}
    job = Job(argv_of(0)[0], {})
    try:
        agents = start_job(b, job, net, case, argv_of, run_dir, place)
        before = workers(stamps)
        victim = next(w["host"] for w in before if w["group_rank"] == 1)
        vi = int(victim[1:])
        others = [a for name, a in agents.items() if name != victim]
        pids = host_pids(job, victim)
        kill_ns, kill_wall = time.monotonic_ns(), time.time()
        lose(net, case, vi, agents[victim], pids)
        running_ns = wait_until("every worker of the next attempt",
                                lambda: all_running(stamps, kill_ns), 120, others)
        resumed = wait_until("rank 0 resumed from the checkpoint",
                             lambda: first_line(others, "resumed from step", kill_wall), 120, [])
        codes = {a.name: a.wait(180) for a in others}
        agents[victim].kill()
        agents[victim].wait(30)
        r.update(judge(case, agents, others, before, workers(stamps), victim, kill_ns, kill_wall))
        r.update({"worker_s": (running_ns - kill_ns) / 1e9, "resumed_s": resumed - kill_wall,
                  "codes": codes, "ended_0": all(c == 0 for c in codes.values()) and
                  "done steps=" in "\n".join(a.output for a in others)})
        r["ok"] = r["ended_0"] and r["resumed_ckpt"] and r["same_world"] and (
            case in TORCHRUNS or (r["ranks_kept"] and r["spare_took_slot"]))
        if not r["ok"]:
            r["error"] = failed_checks(r)
        if os.environ.get("SB_DEBUG"):
            r["output"] = "\n".join(f"--- {a.name}:\n{a.output}" for a in job.agents)
    except Failure as e:
        r["error"] = str(e).splitlines()[0][:300]
        r["tail"] = "\n".join(f"--- {a.name}: " + "\n".join(a.output.splitlines()[-6:])
                              for a in job.agents)
        r["cause"] = causes(job.agents)
        if os.environ.get("SB_DEBUG"):
            r["output"] = "\n".join(f"--- {a.name}:\n{a.output}" for a in job.agents)
    finally:
        try:
            close(job)
        except Failure as e:
            r["ok"], r["error"] = False, (r["error"] + "; " + str(e))[:300]
        net.restore_links()  # the next run uses the same namespaces
    return r


def causes(agents):
    """The agents' distinct lines saying what went wrong (torchrun's restarts and exceptions),
    without their timestamps and pids, for the report."""
    found = []
    for agent in agents:
        for _, line in agent.lines:
            if any(k in line for k in ("Detected", "AssertionError", "Error:", "error:")):
                text = line.split("] ", 1)[-1].strip()[:200]
                if text not in found:
                    found.append(text)
    return found[:4]


def judge(case, agents, others, before, after, victim, kill_ns, kill_wall):
    """The checks of one run, from the workers' stamps and the agents' lines."""
    pre = {w["rank"]: w for w in before if w["restart"] == 0}
    post = {}
    for w in sorted(after, key=lambda w: w["ns"]):
        if w["ns"] > kill_ns and w["world"] == WORLD:
            post.setdefault(w["rank"], w)
    hosts_pre = {h: {k: (w["group_rank"]) for k, w in pre.items() if w["host"] == h}
                 for h in agents}
    hosts_post = {h: {k: (w["group_rank"]) for k, w in post.items() if w["host"] == h}
                  for h in agents}
    survivors = [a.name for a in others if a.name != "h4"]
    text = "\n".join(a.output for a in others)
    resumed_at = text.split("resumed from step ", 1)[1].split()[0] if "resumed from step " in text \
        else "0"
    moved = [h for h in survivors if hosts_post[h] != hosts_pre[h]]
    return {"same_world": len(post) == WORLD and all(w["world"] == WORLD for w in post.values()),
            "ranks_kept": not moved, "moved": moved,
            "spare_took_slot": hosts_post["h4"] == hosts_pre[victim] and bool(hosts_pre[victim]),
            "lost_group_rank": 1, "spare_group_rank": sorted(set(hosts_post["h4"].values())),
            "resumed_ckpt": int(resumed_at) >= 1, "resumed_step": int(resumed_at),
            "round_line_s": rel(first_line(others, ROUND.get(case, "complete: node rank"),
                                           kill_wall), kill_wall),
            "noticed_s": rel(first_line(others, NOTICED.get(case, "attempt 0 ended"), kill_wall),
                             kill_wall)}


def rel(t, t0):
    return None if t is None else t - t0


def failed_checks(r):
    names = {"ended_0": "the job did not end 0", "resumed_ckpt": "no resume from the checkpoint",
             "same_world": "the world size changed", "ranks_kept": f"ranks moved on {r.get('moved')}",
             "spare_took_slot": f"the spare got group rank {r.get('spare_group_rank')}, not 1"}
    return "; ".join(v for k, v in names.items() if not r.get(k, True))


def summary(runs):
    ok = [r for r in runs if r["ok"]]
    count = lambda key: f"{sum(bool(r.get(key)) for r in runs if 'worker_s' in r)}/{len(runs)}"
    return {"runs": runs, "worker_s": stats([r["worker_s"] for r in ok]),
            "resumed_s": stats([r["resumed_s"] for r in ok]),
            "round_line_s": stats([r.get("round_line_s") for r in ok]),
            "noticed_s": stats([r.get("noticed_s") for r in ok]),
            "checks": {k: count(k) for k in ("same_world", "ranks_kept", "spare_took_slot",
                                              "resumed_ckpt", "ended_0")}}


def settings():
    return {"members": MEMBERS, "nproc": NPROC, "steps": STEPS, "step_sleep_s": STEP_SLEEP,
            "kill_at_step": KILL_AT_STEP, "last_call_s": LAST_CALL,
            "silent_keep_alive": SILENT_KEEP_ALIVE, "silent_window_s": keep_alive_ttl(SILENT_KEEP_ALIVE),
            "etcd_keep_alive": ETCD_KEEP_ALIVE, "etcd_ttl_s": keep_alive_ttl(ETCD_KEEP_ALIVE)}


# Debian's torchrun 2.6 with one change (as tests/e2e/torch26_env_compare.py): its c10d
# rendezvous stores (the backend's and the agent's shared one) are made without libuv, which this
# build lacks (TCPStore defaults to libuv).
TORCHRUN26_ENTRY = """\
import functools
import sys

import torch.distributed as dist
import torch.distributed.elastic.rendezvous.c10d_rendezvous_backend as c10d

dist.TCPStore = c10d.TCPStore = functools.partial(dist.TCPStore, use_libuv=False)
from torch.distributed.run import main

sys.exit(main())
"""


# The workers' side of the same change: 2.6's env:// rendezvous connects to the agent's store
# with TCPStore's default (libuv), which this build refuses; then the trainer, unchanged.
TRAIN26_ENTRY = """\
import functools
import importlib

import torch.distributed as dist

# The module, not torch.distributed's function of the same name.
rendezvous = importlib.import_module("torch.distributed.rendezvous")
rendezvous.TCPStore = functools.partial(dist.TCPStore, use_libuv=False)
import ckpt_train

ckpt_train.main()
"""


def torch26_place(b, notes):
    """The Place of torchrun 2.6 (a context manager), or None with the reason in notes."""
    sys.path.insert(0, str(ROOT / "tests/e2e"))
    import torch26
    why = torch26.skip_reason()
    if why:
        notes["torchrun26_kill"] = why
        return None
    scratch = torch26.Scratch("spares26", [TRAIN, b.tool("bench_worker")])
    for name, text in (("torchrun26.py", TORCHRUN26_ENTRY), ("train26.py", TRAIN26_ENTRY)):
        with open(scratch.path(name), "w") as f:
            f.write(text)
    return scratch, Place(Path(scratch.dir), scratch.path("bench_worker"),
                          scratch.path("train26.py"), scratch.python)


def measure(b):
    if not b.tool("cpplaunch") or not b.tool("bench_worker"):
        return {"status": "no-binary", "raw": {}}
    why = netns_unavailable()
    if why:
        return {"status": "no-netns", "why": why, "raw": {}}
    notes = {}
    cases = [c for c in CASES if c != "torchrun_kill" or os.path.exists(TORCHRUN)]
    if "torchrun_kill" not in cases:
        notes["torchrun_kill"] = f"{TORCHRUN} is not installed"
    places = dict.fromkeys(cases, Place(b.scratch, b.tool("bench_worker"), TRAIN))
    scratch26 = torch26_place(b, notes)
    if scratch26 is None:
        cases.remove("torchrun26_kill")
    else:
        places["torchrun26_kill"] = scratch26[1]
    runs = {c: [] for c in cases}
    try:
        with Network() as net:
            try:
                net.start_etcd(b.scratch)
            except (Failure, OSError, subprocess.CalledProcessError) as e:
                notes["etcd_kill"] = f"no etcd member could be started: {e}"
                cases.remove("etcd_kill")
            for rep in range(b.reps(1, 3)):
                for case in cases:
                    r = run_once(b, net, case, rep, places[case])
                    runs[case].append(r)
                    log(f"spares {case} #{rep}: " + (
                        f"workers {r['worker_s']:.2f} s, DDP resumed {r['resumed_s']:.2f} s"
                        if "worker_s" in r else "") + (f" FAILED: {r['error']}" if not r["ok"] else ""))
    finally:
        if scratch26 is not None:
            scratch26[0].__exit__(None, None, None)
    data = {c: summary(rs) for c, rs in runs.items() if rs}
    raw = {"spares": {"cases": data, "settings": settings(), "notes": notes}}
    return {"status": "ok", "raw": raw, "cases": data, "settings": settings(), "notes": notes}
