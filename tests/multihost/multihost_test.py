"""Multi-host process tests: several cpplaunch agents, each a "host", on loopback or in network
namespaces joined by veth, running real PyTorch DDP workers.

usage: multihost_test.py CPPLAUNCH [--netns] [scenario ...]

Every scenario starts agents with subprocess, bounds every wait, kills whatever is left on the
way out, and checks that no worker (tagged through the environment) survives. Exit status: 0 all
passed, 1 a failure, 77 skipped (netns unavailable: the reason is printed).
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

PYTHON = "/usr/bin/python3"  # Debian's, with torch (not a pyenv python on PATH)
HERE = os.path.dirname(os.path.abspath(__file__))
DDP = os.path.join(HERE, "ddp_check.py")
SKIP = 77


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Agent:
    """One cpplaunch process ("host")."""

    def __init__(self, name, argv, env, netns=None):
        self.name = name
        self.argv = argv
        prefix = ["ip", "netns", "exec", netns] if netns else []
        self.started = time.time()
        self.proc = subprocess.Popen(prefix + argv, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        self.output = ""
        self.ended = None

    def wait(self, timeout):
        try:
            self.output, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self.output, _ = self.proc.communicate()
            raise Failure(f"{self.name} did not finish within {timeout} s; output:\n{self.output}")
        self.ended = time.time()
        return self.proc.returncode

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class Job:
    """A set of agents sharing one tag; cleans up on exit."""

    def __init__(self, cpplaunch, tag_env, netns_of=None):
        self.cpplaunch = cpplaunch
        self.tag = uuid.uuid4().hex
        self.agents = []
        self.tag_env = tag_env
        self.netns_of = netns_of or (lambda i: None)
        self.stamp_dir = tempfile.mkdtemp(prefix="cpplaunch-mh-")
        # The agents' TMPDIR: each run makes its log directory (torchelastic_*) there, as
        # torchrun does in /tmp, and close() removes it with everything in it.
        self.tmp_dir = tempfile.mkdtemp(prefix="cpplaunch-mh-tmp-")

    def env(self, extra=None):
        env = dict(os.environ)
        env.update({"MH_TEST_TAG": self.tag, "MH_STAMP_DIR": self.stamp_dir,
                    "PYTHON_EXEC": PYTHON, "OMP_NUM_THREADS": "1", "LOGLEVEL": "INFO",
                    "TMPDIR": self.tmp_dir})
        env.update(self.tag_env)
        env.update(extra or {})
        return env

    def start(self, index, args, script_args=None, extra_env=None, no_python=False):
        argv = [self.cpplaunch] + args
        argv += ["--no-python"] + script_args if no_python else [DDP] + (script_args or [])
        agent = Agent(f"host{index}", argv, self.env(extra_env), self.netns_of(index))
        self.agents.append(agent)
        return agent

    def wait_all(self, timeout):
        deadline = time.time() + timeout
        codes = []
        for agent in self.agents:
            codes.append(agent.wait(max(1, deadline - time.time())))
        return codes

    def tagged(self, *entries):
        """Processes whose environment holds this job's tag and each of `entries` ("NAME=value"),
        wherever their sessions are."""
        wanted = [f"MH_TEST_TAG={self.tag}".encode(), *(e.encode() for e in entries)]
        found = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    env = f.read().split(b"\0")
            except OSError:
                continue
            if all(entry in env for entry in wanted):
                found.append(int(pid))
        return found

    def leftovers(self):
        """Processes still carrying this job's tag (workers that outlived their agent)."""
        return self.tagged()

    def close(self):
        for agent in self.agents:
            if agent.proc.poll() is None:
                agent.kill()
                agent.proc.communicate()
        deadline = time.time() + 5
        while self.leftovers() and time.time() < deadline:
            time.sleep(0.05)
        left = self.leftovers()
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for name in os.listdir(self.stamp_dir):
            os.unlink(os.path.join(self.stamp_dir, name))
        os.rmdir(self.stamp_dir)
        shutil.rmtree(self.tmp_dir)
        check(not left, f"workers outlived their agents: pids {left}")

    def output(self):
        return "\n".join(f"--- {a.name} (exit {a.proc.returncode}):\n{a.output}"
                         for a in self.agents)


class Topology:
    """Where the hosts live: all on 127.0.0.1, or one network namespace each."""

    def __init__(self, netns):
        self.netns = netns
        self.names = []
        self.prefix = "cpl" + uuid.uuid4().hex[:6]

    def address(self, index):
        return f"10.231.{os.getpid() % 200}.{index + 1}" if self.netns else "127.0.0.1"

    def gloo_env(self, index):
        return {"GLOO_SOCKET_IFNAME": f"v{index}"} if self.netns else {}

    def namespace(self, index):
        return self.names[index] if self.netns else None

    def create(self, count):
        """Namespaces host0..hostN-1, each with one veth end on a bridge in namespace 'sw'."""
        if not self.netns:
            return
        sw = self.prefix + "sw"
        run(["ip", "netns", "add", sw])
        self.names.append(sw)
        run(["ip", "-n", sw, "link", "add", "br0", "type", "bridge"])
        run(["ip", "-n", sw, "link", "set", "br0", "up"])
        hosts = []
        for i in range(count):
            ns = f"{self.prefix}h{i}"
            run(["ip", "netns", "add", ns])
            hosts.append(ns)
            self.names.append(ns)
            run(["ip", "link", "add", f"{self.prefix}a{i}", "netns", ns, "type", "veth",
                 "peer", "name", f"{self.prefix}b{i}", "netns", sw])
            run(["ip", "-n", ns, "link", "set", f"{self.prefix}a{i}", "name", f"v{i}"])
            run(["ip", "-n", ns, "addr", "add", f"{self.address(i)}/24", "dev", f"v{i}"])
            run(["ip", "-n", ns, "link", "set", f"v{i}", "up"])
            run(["ip", "-n", ns, "link", "set", "lo", "up"])
            run(["ip", "-n", sw, "link", "set", f"{self.prefix}b{i}", "master", "br0"])
            run(["ip", "-n", sw, "link", "set", f"{self.prefix}b{i}", "up"])
        self.names = hosts + [sw]

    def destroy(self):
        for ns in self.names:
            subprocess.run(["ip", "netns", "delete", ns], stderr=subprocess.DEVNULL)
        self.names = []


def run(argv):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        raise Failure(f"{' '.join(argv)} failed: {result.stdout.strip()}")


def netns_unavailable():
    if os.geteuid() != 0:
        return "network namespaces need root (ip netns add)"
    probe = "cplprobe" + uuid.uuid4().hex[:6]
    result = subprocess.run(["ip", "netns", "add", probe], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        return f"'ip netns add' does not work here: {result.stdout.strip()}"
    subprocess.run(["ip", "netns", "delete", probe])
    return None


# ---- scenarios --------------------------------------------------------------------------------

def static_args(topo, port, nnodes, rank, nproc=1, conf="timeout=30", extra=()):
    return [f"--nnodes={nnodes}", f"--node-rank={rank}", f"--master-addr={topo.address(0)}",
            f"--master-port={port}", f"--nproc-per-node={nproc}", f"--rdzv-conf={conf}",
            *extra]


def checkpoint_step(path):
    """The step of ckpt_train.py's checkpoint at `path` (0 while there is none). torch is
    imported here only: the callers that never read a checkpoint do not need it."""
    import torch
    try:
        return torch.load(path)["step"]
    except Exception:  # not written yet, or being replaced
        return 0


def wait_for_stamps(job, names, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if all(os.path.exists(os.path.join(job.stamp_dir, n)) for n in names):
            return
        if any(a.proc.poll() is not None for a in job.agents):
            break
        time.sleep(0.05)
    raise Failure(f"workers did not start ({names})")


def scenario_static_ddp(cpplaunch, topo, report):
    """Hosts with different --nproc-per-node run one DDP job: world = sum of local sizes."""
    sizes = [2, 1, 1] if not topo.netns else [2, 1]
    port = free_port()
    job = make_job(cpplaunch, topo)
    try:
        for i, nproc in enumerate(sizes):
            job.start(i, static_args(topo, port, len(sizes), i, nproc),
                      extra_env=topo.gloo_env(i))
        codes = job.wait_all(120)
        out = job.output()
        check(codes == [0] * len(sizes), f"exit codes {codes}\n{out}")
        world = sum(sizes)
        base = 0
        for i, nproc in enumerate(sizes):
            for local in range(nproc):
                line = (f"ddp rank={base + local} world={world} group_rank={i} "
                        f"local_rank={local} restart=0 allreduce=ok")
                check(line in job.agents[i].output, f"missing '{line}'\n{out}")
            base += nproc
    finally:
        job.close()


def scenario_dynamic_ddp(cpplaunch, topo, report):
    """c10d rendezvous (--nnodes=N) of N agents; every rank present once, DDP works."""
    n = 3 if not topo.netns else 2
    port = free_port()
    job = make_job(cpplaunch, topo)
    try:
        for i in range(n):
            job.start(i, [f"--nnodes={n}", "--rdzv-backend=c10d", "--rdzv-id=dyn",
                          f"--rdzv-endpoint={topo.address(0)}:{port}", "--nproc-per-node=1"],
                      extra_env=topo.gloo_env(i))
        codes = job.wait_all(120)
        out = job.output()
        check(codes == [0] * n, f"exit codes {codes}\n{out}")
        for rank in range(n):
            check(f"ddp rank={rank} world={n} group_rank={rank} " in out, f"rank {rank}\n{out}")
    finally:
        job.close()


def scenario_worker_failure(cpplaunch, topo, report):
    """A worker fails on host 1: every host stops within a second, names the root cause."""
    port = free_port()
    job = make_job(cpplaunch, topo)
    try:
        for i in range(2):
            job.start(i, static_args(topo, port, 2, i),
                      extra_env={**topo.gloo_env(i), "MH_FAIL_RANK": "1", "MH_SLEEP": "120"})
        codes = job.wait_all(120)
        out = job.output()
        check(codes == [1, 1], f"exit codes {codes}\n{out}")
        with open(os.path.join(job.stamp_dir, "fail-1")) as f:
            failed_at = float(f.read())
        teardown = job.agents[0].ended - failed_at
        report(f"cross-host teardown (failure on host 1 -> host 0 agent exited): "
               f"{teardown * 1000:.0f} ms")
        check(teardown < 1.5, f"host 0 took {teardown:.2f} s to stop\n{out}")
        for agent in job.agents:
            check("root cause: worker rank 1 (local rank 0) on " in agent.output and
                  "node rank 1) failed: exited with code 3" in agent.output,
                  f"{agent.name} does not name the root cause\n{out}")
    finally:
        job.close()


def scenario_agent_killed(cpplaunch, topo, report):
    """SIGKILL of host 1's agent: its workers die, host 0 notices by heartbeats and stops."""
    port = free_port()
    job = make_job(cpplaunch, topo)
    conf = "timeout=30,keep_alive_interval=0.5,keep_alive_max_attempt=2"
    try:
        for i in range(2):
            job.start(i, static_args(topo, port, 2, i, conf=conf),
                      extra_env={**topo.gloo_env(i), "MH_SLEEP": "120"})
        wait_for_stamps(job, ["started-0-0", "started-1-0"], 60)
        killed_at = time.time()
        os.kill(job.agents[1].proc.pid, signal.SIGKILL)
        codes = job.wait_all(30)
        out = job.output()
        check(codes[0] == 1 and codes[1] == -signal.SIGKILL, f"exit codes {codes}\n{out}")
        noticed = job.agents[0].ended - killed_at
        report(f"agent SIGKILL noticed and job stopped on the other host after "
               f"{noticed * 1000:.0f} ms (keep_alive 0.5 s x 2)")
        check(noticed < 4, f"host 0 took {noticed:.1f} s\n{out}")
        check("lost the agent on" in job.agents[0].output or "failed:" in job.agents[0].output,
              f"host 0 does not say why\n{out}")
    finally:
        job.close()


def scenario_host_never_comes(cpplaunch, topo, report):
    port = free_port()
    job = make_job(cpplaunch, topo)
    try:
        job.start(0, static_args(topo, port, 2, 0, conf="timeout=2"))
        codes = job.wait_all(30)
        out = job.output()
        check(codes == [1], f"exit codes {codes}\n{out}")
        check("1 of 2 hosts joined" in out and "missing node ranks 1" in out, out)
    finally:
        job.close()


def scenario_wrong_master_address(cpplaunch, topo, report):
    port = free_port()
    wrong = "127.0.0.2" if not topo.netns else topo.address(9)
    job = make_job(cpplaunch, topo)
    try:
        job.start(0, static_args(topo, port, 2, 0, conf="timeout=3"))
        args = static_args(topo, port, 2, 1, conf="timeout=2")
        args[2] = f"--master-addr={wrong}"
        job.start(1, args)
        codes = job.wait_all(30)
        out = job.output()
        check(codes == [1, 1], f"exit codes {codes}\n{out}")
        check(f"cannot reach the store at {wrong}:{port}" in job.agents[1].output, out)
        check("missing node ranks 1" in job.agents[0].output, out)
    finally:
        job.close()


def scenario_nnodes_mismatch(cpplaunch, topo, report):
    port = free_port()
    job = make_job(cpplaunch, topo)
    try:
        job.start(0, static_args(topo, port, 2, 0, conf="timeout=10"))
        job.start(1, static_args(topo, port, 3, 1, conf="timeout=10"))
        codes = job.wait_all(30)
        out = job.output()
        check(codes == [1, 1], f"exit codes {codes}\n{out}")
        for agent in job.agents:
            check("--nnodes=3" in agent.output and "--nnodes=2" in agent.output,
                  f"{agent.name} does not explain the mismatch\n{out}")
        check(all(a.ended - a.started < 8 for a in job.agents), "mismatch found only by timeout")
    finally:
        job.close()


def scenario_restart(cpplaunch, topo, report):
    """--max-restarts=1: one job-wide restart, the same TORCHELASTIC_RESTART_COUNT everywhere."""
    port = free_port()
    job = make_job(cpplaunch, topo)
    try:
        for i in range(2):
            job.start(i, static_args(topo, port, 2, i, extra=["--max-restarts=1"]),
                      extra_env={**topo.gloo_env(i), "MH_FAIL_RANK": "1", "MH_FAIL_ONCE": "1",
                                 "MH_SLEEP": "0.5"})
        codes = job.wait_all(120)
        out = job.output()
        check(codes == [0, 0], f"exit codes {codes}\n{out}")
        for rank in range(2):
            check(f"ddp rank={rank} world=2 group_rank={rank} local_rank=0 restart=1 "
                  "allreduce=ok" in out, f"rank {rank} not restarted\n{out}")
    finally:
        job.close()


def scenario_elastic_join(cpplaunch, topo, report):
    """--nnodes=2:3: a third host joining a running job triggers a membership restart."""
    if topo.netns:
        return "loopback only (the namespaces test the addressing, not elasticity)"
    port = free_port()
    job = make_job(cpplaunch, topo)
    args = ["--nnodes=2:3", "--rdzv-backend=c10d", "--rdzv-id=elastic",
            f"--rdzv-endpoint=127.0.0.1:{port}", "--nproc-per-node=1",
            "--rdzv-conf=last_call_timeout=1"]
    try:
        for i in range(2):
            job.start(i, args, extra_env={"MH_SLEEP": "4"})
        wait_for_stamps(job, ["started-0-0", "started-1-0"], 60)
        job.start(2, args, extra_env={"MH_SLEEP": "1"})
        codes = job.wait_all(120)
        out = job.output()
        check(codes == [0, 0, 0], f"exit codes {codes}\n{out}")
        check(out.count("world=3") == 3, f"not every rank ran in the 3-host round\n{out}")
        check("restart=1" not in out, f"a membership change consumed a restart\n{out}")
    finally:
        job.close()


def scenario_rendezvous_speed(cpplaunch, topo, report, agents=None):
    """N agents, c10d --nnodes=N: time from the last agent's start to the last worker's start."""
    if topo.netns:
        return "loopback only"
    n = agents or int(os.environ.get("MH_SPEED_AGENTS", "16"))
    port = free_port()
    job = make_job(cpplaunch, topo)
    try:
        for i in range(n):
            job.start(i, [f"--nnodes={n}", "--rdzv-backend=c10d", "--rdzv-id=speed",
                          f"--rdzv-endpoint=127.0.0.1:{port}", "--nproc-per-node=1"],
                      script_args=["/bin/sh", "-c", 'echo "started $(date +%s.%N)"'],
                      no_python=True)
        last_start = time.time()
        codes = job.wait_all(120)
        out = job.output()
        check(codes == [0] * n, f"exit codes {codes}\n{out}")
        starts = [float(line.split()[1]) for line in out.splitlines()
                  if line.startswith("started ")]
        check(len(starts) == n, out)
        elapsed = max(starts) - last_start
        report(f"{n} agents on loopback: last worker started {elapsed * 1000:.0f} ms after the "
               f"last agent was started")
        check(elapsed < 1.0 + 0.05 * n, f"rendezvous of {n} agents took {elapsed:.2f} s")
    finally:
        job.close()


def scenario_one_connection_per_agent(cpplaunch, topo, report):
    """c10d job of N agents: while it runs, the store host holds exactly one connection per
    agent (the rendezvous' connection carries the job channel too). The workers do not connect
    to the store, so every connection on the port is an agent's."""
    n = 3 if not topo.netns else 2
    port = free_port()
    job = make_job(cpplaunch, topo)
    try:
        for i in range(n):
            job.start(i, [f"--nnodes={n}", "--rdzv-backend=c10d", "--rdzv-id=conns",
                          f"--rdzv-endpoint={topo.address(0)}:{port}", "--nproc-per-node=1"],
                      script_args=["/bin/sh", "-c", 'touch "$MH_STAMP_DIR/conn$RANK"; sleep 2'],
                      no_python=True)
        wait_for_stamps(job, [f"conn{r}" for r in range(n)], 60)
        time.sleep(0.3)  # every job channel is open once the workers run; let heartbeats flow
        prefix = ["ip", "netns", "exec", topo.namespace(0)] if topo.netns else []
        listing = subprocess.run(prefix + ["ss", "-tnH", "state", "established",
                                           f"( sport = :{port} )"],
                                 stdout=subprocess.PIPE, text=True, check=True)
        connections = [line for line in listing.stdout.splitlines() if line.strip()]
        report(f"{n} agents: {len(connections)} connections at the store host")
        check(len(connections) == n,
              f"{len(connections)} connections to the store for {n} agents:\n{listing.stdout}")
        codes = job.wait_all(60)
        check(codes == [0] * n, f"exit codes {codes}\n{job.output()}")
    finally:
        job.close()


def write_secret(job, name, text, mode=0o600):
    path = os.path.join(job.stamp_dir, name)
    with open(path, "w") as f:
        f.write(text + "\n")
    os.chmod(path, mode)
    return path


def scenario_shared_secret(cpplaunch, topo, report):
    """A secret file (docs/security.md): hosts sharing it restart and finish a DDP job, with an
    allow-list on the store port; a host with another secret is refused in one line; a
    world-readable file is a usage error; the secret never reaches a worker's environment."""
    port = free_port()
    job = make_job(cpplaunch, topo)
    secret_text = "multihost-" + uuid.uuid4().hex
    peers = "10.231.0.0/16" if topo.netns else "127.0.0.0/8"
    try:
        secret = write_secret(job, "secret", secret_text)
        for i in range(2):
            conf = f"timeout=30,allowed_peers={peers}"
            extra_env = {**topo.gloo_env(i), "MH_FAIL_RANK": "1", "MH_FAIL_ONCE": "1",
                         "MH_SLEEP": "0.5"}
            if i == 0:
                conf += f",secret_file={secret}"
            else:  # the environment variable names the file on this host
                extra_env["CPPLAUNCH_RDZV_SECRET_FILE"] = secret
            job.start(i, static_args(topo, port, 2, i, conf=conf, extra=["--max-restarts=1"]),
                      extra_env=extra_env)
        codes = job.wait_all(120)
        out = job.output()
        check(codes == [0, 0], f"exit codes {codes}\n{out}")
        for rank in range(2):
            check(f"ddp rank={rank} world=2 group_rank={rank} local_rank=0 restart=1 "
                  "allreduce=ok" in out, f"rank {rank} not restarted with the secret\n{out}")
    finally:
        job.close()

    port = free_port()
    job = make_job(cpplaunch, topo)
    try:
        right = write_secret(job, "right", secret_text)
        wrong = write_secret(job, "wrong", "another secret, not the job's")
        for i, path in enumerate([right, wrong]):
            job.start(i, static_args(topo, port, 2, i, conf=f"timeout=4,secret_file={path}"),
                      extra_env=topo.gloo_env(i))
        codes = job.wait_all(60)
        out = job.output()
        check(codes == [1, 1], f"exit codes {codes}\n{out}")
        # The handshake is mutual (issue 23): host 1 finds the store's proof wrong first, and
        # tells the store, which logs the refusal; the store's host ends naming it.
        check("did not prove this job's secret: its secret_file differs from this host's"
              in job.agents[1].output, f"host1 does not say why it stopped\n{out}")
        check("refused an agent handshake from" in job.agents[0].output and
              "its secret differs from this store's" in job.agents[0].output,
              f"the store host does not log the refusal\n{out}")
        last = job.agents[0].output.strip().splitlines()[-1]
        check("this host's store refused" in last and "agent handshake" in last,
              f"the store host's last line does not name the refusal: {last!r}\n{out}")

        loose = write_secret(job, "loose", secret_text, 0o644)
        job.agents = []
        job.start(0, ["--nnodes=1", f"--rdzv-conf=secret_file={loose}"],
                  script_args=["/bin/true"], no_python=True)
        code = job.agents[0].wait(30)
        check(code == 2 and "is readable or writable by other users (mode 0644); run chmod 600"
              in job.agents[0].output, f"exit {code}\n{job.agents[0].output}")

        job.agents = []
        job.start(0, ["--nnodes=1", "--nproc-per-node=2", f"--rdzv-conf=secret_file={right}"],
                  script_args=["/bin/sh", "-c", "env; echo worker-env-done"], no_python=True)
        code = job.agents[0].wait(30)
        env_out = job.agents[0].output
        check(code == 0 and env_out.count("worker-env-done") == 2, f"exit {code}\n{env_out}")
        check(secret_text not in env_out, f"the secret reached a worker's environment\n{env_out}")
    finally:
        job.close()


SCENARIOS = {
    "static_ddp": scenario_static_ddp,
    "dynamic_ddp": scenario_dynamic_ddp,
    "worker_failure": scenario_worker_failure,
    "agent_killed": scenario_agent_killed,
    "host_never_comes": scenario_host_never_comes,
    "wrong_master_address": scenario_wrong_master_address,
    "nnodes_mismatch": scenario_nnodes_mismatch,
    "restart": scenario_restart,
    "elastic_join": scenario_elastic_join,
    "rendezvous_speed": scenario_rendezvous_speed,
    "shared_secret": scenario_shared_secret,
    "one_connection_per_agent": scenario_one_connection_per_agent,
}


def make_job(cpplaunch, topo):
    return Job(cpplaunch, {}, topo.namespace)


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    cpplaunch = os.path.abspath(argv[1])
    netns = "--netns" in argv[2:]
    names = [a for a in argv[2:] if not a.startswith("--")] or list(SCENARIOS)
    topo = Topology(netns)
    if netns:
        why = netns_unavailable()
        if why:
            print(f"SKIP: network-namespace tests skipped: {why}")
            return SKIP
        topo.create(3)
    failed = []
    try:
        for name in names:
            started = time.time()
            try:
                skipped = SCENARIOS[name](cpplaunch, topo,
                                          lambda line: print(f"  measured: {line}", flush=True))
                if skipped:
                    print(f"SKIP {name}: {skipped}", flush=True)
                else:
                    print(f"PASS {name} ({time.time() - started:.1f} s)", flush=True)
            except Failure as e:
                failed.append(name)
                print(f"FAIL {name}: {e}", flush=True)
    finally:
        topo.destroy()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
