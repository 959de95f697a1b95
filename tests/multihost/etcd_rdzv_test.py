"""The etcd v3 rendezvous (issue 11) with real agents, real PyTorch DDP workers and a real etcd
cluster from Debian's etcd-server (tests/etcd/etcd_cluster.py: members on loopback, data on
/dev/shm, started and removed by this test). One 3-member cluster serves every scenario but the
TLS one, which starts its own TLS member.

  store_host_killed       3 agents --nnodes=2:3 --max-restarts=2 train with checkpoints; the agent
                          hosting the workers' store is SIGKILLed mid-training (the sentinel
                          kills its workers): the other two notice through its etcd lease, form a
                          new round, start workers with a new MASTER_ADDR:MASTER_PORT and resume
                          from the checkpoint (one restart); a host that comes back then joins
                          the next round (a membership change, no restart), and the job finishes
                          with exit 0 and the reference weights
  store_host_killed_c10d  the same kill under --rdzv-backend=c10d ends the job (the contrast
                          docs/multi-host.md documents): the survivors exit 1
  etcd_member_killed      one etcd member (the first endpoint) is killed mid-training: the job
                          finishes without a restart
  etcd_unreachable        no etcd member answers: one line naming the endpoints, exit 1, within
                          the join timeout
  tls                     a TLS-only etcd with a CA and client certificates made by the fixture:
                          a 2-host job over https
  quarantine              (issue 24) spares_test's quarantine over etcd: a member whose
                          workers fail first twice is set aside for the waiting spare
  segment_match           (issue 24) spares_test's segment_match over etcd: a lost member's
                          slot goes to the spare of its segment, not the one that waited first
  out_of_space            (issue 23) an etcd with a small --quota-backend-bytes filled until it
                          refuses writes (NOSPACE), then a worker fails: its peer names the lost
                          agent and etcd's refusal, not "etcd is gone"

usage: etcd_rdzv_test.py CPPLAUNCH [scenario ...]
Exit status: 0 all passed, 1 a failure, 77 skipped (etcd not installed: the reason is printed).
"""
import os
import signal
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "etcd"))

from agent_faults_test import TimedAgent, close, output  # noqa: E402
from multihost_test import (DDP, Failure, Job, check, checkpoint_step,  # noqa: E402
                            free_port, wait_for_stamps)

TRAIN = os.path.join(HERE, "ckpt_train.py")
SKIP = 77
STEPS = 40
# Short keep-alives (lease TTL 3 s) and last call (2 s) keep the test fast; the defaults are
# torchrun's (15 s, 30 s).
CONF = "last_call_timeout=2,keep_alive_interval=1,keep_alive_max_attempt=3,join_timeout=60"


def etcd_args(endpoints, nnodes="2:3", conf=CONF, max_restarts=2):
    return [f"--nnodes={nnodes}", "--nproc-per-node=1", f"--max-restarts={max_restarts}",
            "--rdzv-backend=etcd-v3", "--rdzv-endpoint=" + ",".join(endpoints),
            f"--rdzv-id=etcd-{uuid.uuid4().hex[:8]}", f"--rdzv-conf={conf}"]


def start(job, name, args, script, extra_env=None):
    agent = TimedAgent(name, [job.cpplaunch] + args + [script], job.env(extra_env))
    agent.env_extra = extra_env
    job.agents.append(agent)
    return agent


def wait_for_step(path, step, agents, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if checkpoint_step(path) >= step:
            return
        check(all(a.proc.poll() is None for a in agents), "an agent ended before the kill")
        time.sleep(0.1)
    raise Failure(f"training did not reach step {step} within {timeout} s")


def store_host(agents, line, timeout):
    """The agent that printed `line` first (its round 0 hosts the store)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for agent in agents:
            if agent.first(line) is not None:
                return agent
        time.sleep(0.05)
    raise Failure(f"no agent said '{line}'")


def masters(agent):
    """MASTER_ADDR:MASTER_PORT per restart count, from the workers' "started" lines."""
    found = {}
    for _, line in agent.lines:
        if "started rank=" in line:
            fields = dict(f.split("=", 1) for f in line.split("started ", 1)[1].split())
            found[int(fields["restart"])] = fields["master"]
    return found


def training_job(cpplaunch, args, ckpt_dir, extra_env=None):
    job = Job(cpplaunch, {})
    env = {"MH_CKPT": os.path.join(ckpt_dir, "ckpt.pt"), "MH_STEPS": str(STEPS),
           "MH_STEP_SLEEP": "0.25"}
    env.update(extra_env or {})
    agents = [start(job, f"host{i}", args, TRAIN, env) for i in range(3)]
    return job, agents, env["MH_CKPT"]


def scenario_store_host_killed(cpplaunch, cluster, report):
    import ckpt_train
    with tempfile.TemporaryDirectory(prefix="cpplaunch-etcd-") as ckpt_dir:
        args = etcd_args(cluster.endpoints)
        job, agents, ckpt = training_job(cpplaunch, args, ckpt_dir)
        try:
            host = store_host(agents, "serves the workers' store of round 0", 60)
            wait_for_step(ckpt, 6, agents, 90)
            killed_at = time.time()
            os.kill(host.proc.pid, signal.SIGKILL)  # the agent only: its sentinel does the rest
            survivors = [a for a in agents if a is not host]
            deadline = time.time() + 60
            while time.time() < deadline and not all(
                    a.first("started rank=", after=killed_at) for a in survivors):
                time.sleep(0.05)
            back = max(a.first("started rank=", after=killed_at) or 1e18 for a in survivors)
            check(back < 1e18, f"the survivors' workers did not start again:\n{output(job)}")
            report(f"SIGKILL of the store's host -> survivors' workers running again: "
                   f"{back - killed_at:.1f} s (lease TTL 3 s, last call 2 s)")
            # A host that comes back joins the next round (a membership change: no restart).
            returned = start(job, "returned", args, TRAIN, job.agents[0].env_extra)
            codes = [a.wait(150) for a in survivors + [returned]]
            host.wait(10)
            text = output(job)
            check(codes == [0, 0, 0], f"survivors and returned host exited {codes}:\n{text}")
            check("resumed from step" in text, f"no worker resumed from the checkpoint:\n{text}")
            resumed = int(text.split("resumed from step ", 1)[1].split()[0])
            check(resumed >= 6, f"resumed from step {resumed}, trained past 6:\n{text}")
            before = masters(host).get(0)
            after = {m for a in survivors for r, m in masters(a).items() if r >= 1}
            check(after and before not in after, f"round 0 master {before}, later {after}:\n{text}")
            restarts = {r for a in survivors + [returned] for r in masters(a)}
            check(restarts == {0, 1}, f"restart counts seen {restarts}, expected 0 then 1:\n{text}")
            check(any(r == 1 for r in masters(returned)), f"the returned host did not train:\n{text}")
            done = [line for a in job.agents for _, line in a.lines if "done steps=" in line]
            check(len(done) == 1, f"expected one 'done' line:\n{text}")
            got = [float(w) for w in done[0].split("weights=", 1)[1].split(",")]
            want = ckpt_train.reference_weights(STEPS)
            check(all(abs(g - w) < 1e-9 for g, w in zip(got, want)),
                  f"weights {got}, reference {want}")
        finally:
            close(job)


def scenario_store_host_killed_c10d(cpplaunch, cluster, report):
    port = free_port()
    args = ["--nnodes=2:3", "--nproc-per-node=1", "--max-restarts=2", "--rdzv-backend=c10d",
            f"--rdzv-endpoint=127.0.0.1:{port}", f"--rdzv-id=c10d-{uuid.uuid4().hex[:8]}",
            "--rdzv-conf=last_call_timeout=1,keep_alive_interval=1,keep_alive_max_attempt=3"]
    with tempfile.TemporaryDirectory(prefix="cpplaunch-etcd-") as ckpt_dir:
        job, agents, ckpt = training_job(cpplaunch, args, ckpt_dir)
        try:
            host = store_host(agents, "this host serves the job's store", 60)
            wait_for_step(ckpt, 6, agents, 90)
            os.kill(host.proc.pid, signal.SIGKILL)
            survivors = [a for a in agents if a is not host]
            codes = [a.wait(60) for a in survivors]
            host.wait(10)
            text = output(job)
            check(codes == [1, 1], f"c10d survivors exited {codes}, expected 1:\n{text}")
            check(all("lost the rendezvous store" in a.output for a in survivors),
                  f"no lost-store message:\n{text}")
        finally:
            close(job)


def scenario_etcd_member_killed(cpplaunch, cluster, report):
    with tempfile.TemporaryDirectory(prefix="cpplaunch-etcd-") as ckpt_dir:
        job, agents, ckpt = training_job(cpplaunch, etcd_args(cluster.endpoints), ckpt_dir)
        try:
            wait_for_step(ckpt, 4, agents, 90)
            cluster.stop(0)  # the first endpoint: the one every agent talks to
            codes = [a.wait(120) for a in agents]
            text = output(job)
            check(codes == [0, 0, 0], f"agents exited {codes}:\n{text}")
            check(not any("restart=1" in line for a in agents for _, line in a.lines),
                  f"the job restarted:\n{text}")
            check("done steps=" in text, f"training did not finish:\n{text}")
        finally:
            close(job)
            cluster.start(0)


def scenario_etcd_unreachable(cpplaunch, cluster, report):
    endpoints = [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]
    job = Job(cpplaunch, {})
    try:
        agent = start(job, "host0", etcd_args(endpoints, conf="join_timeout=3"), DDP)
        code = agent.wait(30)
        elapsed = agent.ended - agent.started
        errors = [line for _, line in agent.lines if "error" in line.lower()]
        check(code == 1, f"exit {code}, expected 1:\n{agent.output}")
        check(elapsed < 15, f"took {elapsed:.1f} s with join_timeout=3")
        check(len(errors) == 1 and all(e in errors[0] for e in endpoints),
              f"expected one error line naming {endpoints}:\n{agent.output}")
        check("Traceback" not in agent.output, agent.output)
        report(f"etcd unreachable: exit 1 after {elapsed:.1f} s (join_timeout 3 s)")
    finally:
        close(job)


def scenario_tls(cpplaunch, cluster, report):
    from etcd_cluster import EtcdCluster
    with EtcdCluster(members=1, tls=True) as tls:
        conf = (f"protocol=https,cacert={tls.certs['ca']},cert={tls.certs['cert']},"
                f"key={tls.certs['key']},join_timeout=60")
        job = Job(cpplaunch, {})
        try:
            args = etcd_args(tls.endpoints, nnodes="2", conf=conf, max_restarts=0)
            for i in range(2):
                start(job, f"host{i}", args, DDP)
            codes = [a.wait(120) for a in job.agents]
            check(codes == [0, 0], f"TLS job exited {codes}:\n{output(job)}")
            plain = etcd_args(tls.endpoints, nnodes="2", conf="join_timeout=2", max_restarts=0)
            refused = start(job, "plain", plain, DDP)
            check(refused.wait(30) == 1, f"plain http to a TLS etcd:\n{refused.output}")
        finally:
            close(job)


def fill_etcd(endpoint, limit=400):
    """Puts 256 KiB values until etcd refuses for space; returns its refusal."""
    import base64
    import json
    import urllib.error
    import urllib.request
    value = base64.b64encode(os.urandom(256 * 1024)).decode()
    for i in range(limit):
        body = json.dumps({"key": base64.b64encode(f"/filler/{i}".encode()).decode(),
                           "value": value}).encode()
        request = urllib.request.Request(f"http://{endpoint}/v3/kv/put", data=body,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                answer.read()
        except urllib.error.HTTPError as error:
            text = error.read().decode(errors="replace")
            if "space exceeded" in text:
                return text
            raise Failure(f"etcd refused a filler put otherwise: {text}")
    raise Failure(f"etcd took {limit} x 256 KiB without running out of space")


def scenario_out_of_space(cpplaunch, cluster, report):
    from etcd_cluster import EtcdCluster
    with EtcdCluster(members=1, extra_args=["--quota-backend-bytes", str(16 * 1024 * 1024)]) \
            as small:
        job = Job(cpplaunch, {})
        gate = os.path.join(job.stamp_dir, "gate")
        try:
            conf = "keep_alive_interval=1,keep_alive_max_attempt=2,join_timeout=60"
            args = etcd_args(small.endpoints, nnodes="2", conf=conf, max_restarts=0)
            env = {"MH_FAIL_RANK": "1", "MH_FAIL_GATE": gate, "MH_SLEEP": "120"}
            for i in range(2):
                start(job, f"host{i}", args, DDP, env)
            wait_for_stamps(job, ["started-0-0", "started-1-0"], 60)
            refusal = fill_etcd(small.endpoints[0])
            filled_at = time.time()
            open(gate, "w").close()
            codes = [a.wait(60) for a in job.agents]
            out = output(job)
            check(codes == [1, 1], f"exit codes {codes}\n{out}")
            check("is gone" not in out, f"an agent blamed etcd as gone while it answers\n{out}")
            peers = [a for a in job.agents if "lost the agent on" in a.output]
            check(peers and all("database space exceeded" in a.output and
                                "the etcd cluster is out of space" in a.output for a in peers),
                  f"the peer does not name the lost agent and etcd's refusal\n{out}")
            said = min(a.first("lost the agent on") or 1e18 for a in peers)
            report(f"etcd out of space ({refusal.strip()[:60]}...): the peer named the lost agent "
                   f"and etcd's refusal {said - filled_at:.1f} s after the failure")
        finally:
            close(job)


def scenario_quarantine(cpplaunch, cluster, report):
    """spares_test's quarantine over etcd: m2's workers fail first twice; with a spare waiting,
    m2 is set aside (one line, exit 1) and the spare takes its slot; the others keep theirs."""
    import spares_test as st  # its worker, stamps and agents
    job = Job(cpplaunch, {"MH_FAILING": "m2", "MH_LONG_UNTIL": "2"})
    try:
        args = ["--nnodes=3:3", "--rdzv-backend=etcd-v3",
                f"--rdzv-endpoint={','.join(cluster.endpoints)}",
                f"--rdzv-id=quarantine-{uuid.uuid4().hex[:8]}", "--max-restarts=2",
                f"--nproc-per-node={st.NPROC}", "--rdzv-conf=join_timeout=60,quarantine_after=2"]
        members = ["m0", "m1", "m2"]
        agents = {name: st.start(job, name, args) for name in members}
        st.wait_workers(job, members, 0, 60)
        before = {h: st.stamps(job, h, 0) for h in members}
        agents["spare"] = st.start(job, "spare", args)
        check(agents["spare"].wait_line("waits for a free place", 30) is not None,
              f"the spare never said it waits\n{output(job)}")
        open(os.path.join(job.stamp_dir, "fail-now"), "w").close()
        st.wait_workers(job, ["m0", "m1", "spare"], 2, 60)
        codes = {name: agent.wait(60) for name, agent in agents.items()}
        out = output(job)
        check(codes == {"m0": 0, "m1": 0, "m2": 1, "spare": 0}, f"exit codes {codes}\n{out}")
        check(st.stamps(job, "spare", 2) == before["m2"], f"the spare did not get m2's ranks\n{out}")
        for host in ("m0", "m1"):
            check(st.stamps(job, host, 2) == before[host], f"{host}'s ranks moved\n{out}")
        check("is set aside for the rest of the job: its workers failed first in 2 attempt(s)"
              in agents["m2"].output, f"m2 does not say why it stops\n{out}")
        report("etcd: m2 set aside after 2 failures, the spare took its slot, ranks kept")
    finally:
        close(job)


def scenario_segment_match(cpplaunch, cluster, report):
    """spares_test's segment_match over etcd: the lost rack-b member's slot goes to the rack-b
    spare, though the rack-a spare waited first (its lease lapses: TTL 3 s)."""
    import spares_test as st
    st.segment_match(cpplaunch, report,
                     ["--rdzv-backend=etcd-v3", f"--rdzv-endpoint={','.join(cluster.endpoints)}",
                      f"--rdzv-id=segments-{uuid.uuid4().hex[:8]}"], conf=CONF)


SCENARIOS = {
    "store_host_killed": scenario_store_host_killed,
    "store_host_killed_c10d": scenario_store_host_killed_c10d,
    "etcd_unreachable": scenario_etcd_unreachable,
    "tls": scenario_tls,
    "out_of_space": scenario_out_of_space,
    "quarantine": scenario_quarantine,
    "segment_match": scenario_segment_match,
    "etcd_member_killed": scenario_etcd_member_killed,  # last: it restarts a member
}


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    cpplaunch = os.path.abspath(argv[1])
    try:
        from etcd_cluster import EtcdCluster, skip_reason
    except ImportError as e:
        print(f"SKIP: tests/etcd/etcd_cluster.py unavailable ({e})")
        return SKIP
    why = skip_reason()
    if why:
        print(f"SKIP: {why}")
        return SKIP
    names = [a for a in argv[2:] if not a.startswith("--")] or list(SCENARIOS)
    failed = []
    with EtcdCluster(members=3) as cluster:
        for name in names:
            started = time.time()
            try:
                SCENARIOS[name](cpplaunch, cluster,
                                lambda line: print(f"  measured: {line}", flush=True))
                print(f"PASS {name} ({time.time() - started:.1f} s)", flush=True)
            except Failure as e:
                failed.append(name)
                print(f"FAIL {name}: {e}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
