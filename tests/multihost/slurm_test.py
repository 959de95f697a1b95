"""cpplaunch under a real Slurm: slurmctld and four slurmd (Debian's slurm-wlm) on this machine.

usage: slurm_test.py CPPLAUNCH [case ...]   cases: ddp scancel killwait usr1 batch_usr1 status
                                            spares spare_replaces (default: all)

The cluster: one network namespace per node (ctl for slurmctld and the client commands, n1 to
n4 for the slurmd), joined by veth through a bridge in a sixth namespace, with addresses in
10.233.x.0/24 that exist only there. Every daemon runs in its own mount and UTS namespace with
hostname ctl/n1/.../n4 and a bind-mounted hosts file naming the five, so the nodes resolve to
distinct addresses, as on a real cluster. Most cases use two nodes, spares three, and
spare_replaces all four. AuthType=auth/none, CredType=cred/none,
ProctrackType=proctrack/pgid (a task's signals reach only its process group: cpplaunch must
pass them on), all state in a temporary directory. Daemons are started and stopped by pid;
namespaces, processes and files are removed on every way out.

Exit status: 0 all passed, 1 a failure, 77 skipped (the reason is printed).
"""
import glob
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

PYTHON = "/usr/bin/python3"  # Debian's, with torch
HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "slurm_worker.py")
SKIP = 77
KILL_WAIT = 5  # slurm.conf KillWait: SIGTERM, then SIGKILL this many seconds later
SHUTDOWN_TIMEOUT = 2  # cpplaunch's, inside KillWait as the user guide recommends
NODES = ("n1", "n2", "n3", "n4")


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def run(argv, timeout=30):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=timeout)
    if result.returncode != 0:
        raise Failure(f"{' '.join(argv)} failed ({result.returncode}): {result.stdout.strip()}")
    return result.stdout


def missing_requirement():
    if os.geteuid() != 0:
        return "needs root (network namespaces, slurmd as SlurmdUser=root)"
    for tool in ("slurmctld", "slurmd", "srun", "sbatch", "scancel", "squeue", "scontrol",
                 "ip", "nsenter", "unshare"):
        if shutil.which(tool) is None and not os.path.exists(f"/usr/sbin/{tool}"):
            return f"'{tool}' is not installed (scripts/setup installs slurmctld slurmd " \
                   f"slurm-client)"
    for plugin in ("auth_none.so", "cred_none.so", "proctrack_pgid.so"):
        if not glob.glob(f"/usr/lib/*/slurm-wlm/{plugin}"):
            return f"Slurm plugin {plugin} is missing (slurm-wlm-basic-plugins)"
    probe = "cplprobe" + uuid.uuid4().hex[:6]
    result = subprocess.run(["ip", "netns", "add", probe], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        return f"'ip netns add' does not work here: {result.stdout.strip()}"
    subprocess.run(["ip", "netns", "delete", probe])
    return None


class Cluster:
    """slurmctld + slurmd n1 to n4, each in its own network, mount and UTS namespace."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="cpplaunch-slurm-")
        self.prefix = "cps" + uuid.uuid4().hex[:5]
        self.subnet = f"10.233.{os.getpid() % 250}"
        self.address = {"ctl": f"{self.subnet}.1", "n1": f"{self.subnet}.2",
                        "n2": f"{self.subnet}.3", "n3": f"{self.subnet}.4",
                        "n4": f"{self.subnet}.5"}
        self.namespaces = []
        self.daemons = {}  # name -> Popen (the daemon itself: nsenter/unshare/sh all exec)
        self.conf = os.path.join(self.dir, "slurm.conf")
        self.hosts = os.path.join(self.dir, "hosts")

    # ---- setup

    def start(self):
        self._network()
        self._write_config()
        self.daemons["ctl"] = self._daemon("ctl", ["slurmctld", "-D", "-i"])
        # slurmctld must listen before the slurmd register, or they retry only much later.
        self._wait_for(lambda: self.client(["scontrol", "ping"], check_rc=False)[0] == 0,
                       10, "slurmctld did not answer scontrol ping")
        for node in NODES:
            self.daemons[node] = self._daemon(node, ["slurmd", "-D", "-N", node])
        self._wait_for(self._nodes_idle, 20, "the nodes did not become idle")

    def _network(self):
        sw = self.prefix + "sw"
        self._netns(sw)
        run(["ip", "-n", sw, "link", "add", "br0", "type", "bridge"])
        run(["ip", "-n", sw, "link", "set", "br0", "up"])
        for i, name in enumerate(["ctl", *NODES]):
            ns = self._netns(self.prefix + name)
            inner, outer = f"{self.prefix}a{i}", f"{self.prefix}b{i}"
            # Both ends are created inside namespaces: nothing appears in the host's network.
            run(["ip", "link", "add", inner, "netns", ns, "type", "veth", "peer", "name", outer,
                 "netns", sw])
            run(["ip", "-n", ns, "link", "set", inner, "name", "eth0"])
            run(["ip", "-n", ns, "addr", "add", f"{self.address[name]}/24", "dev", "eth0"])
            run(["ip", "-n", ns, "link", "set", "eth0", "up"])
            run(["ip", "-n", ns, "link", "set", "lo", "up"])
            run(["ip", "-n", sw, "link", "set", outer, "master", "br0"])
            run(["ip", "-n", sw, "link", "set", outer, "up"])

    def _netns(self, name):
        run(["ip", "netns", "add", name])
        self.namespaces.append(name)
        return name

    def _write_config(self):
        d = self.dir
        for sub in ("state", "log", *(f"spool_{n}" for n in NODES)):
            os.makedirs(os.path.join(d, sub))
        with open(self.hosts, "w") as f:
            f.write("127.0.0.1 localhost\n")
            for name, address in self.address.items():
                f.write(f"{address} {name}\n")
        nodes = "\n".join(f"NodeName={n} NodeHostname={n} NodeAddr={self.address[n]} CPUs=2 "
                          f"State=UNKNOWN" for n in NODES)
        with open(self.conf, "w") as f:
            f.write(f"""ClusterName=cpltest
SlurmctldHost=ctl({self.address['ctl']})
SlurmctldPort=6817
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
MpiDefault=none
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool_%n
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.%n.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.%n.log
ReturnToService=2
KillWait={KILL_WAIT}
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
{nodes}
PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
""")

    def env(self, extra=None):
        env = dict(os.environ)
        env.update({"SLURM_CONF": self.conf, "PYTHON_EXEC": PYTHON, "OMP_NUM_THREADS": "1"})
        env.update(extra or {})
        return env

    def _in_node(self, name, argv):
        """argv in node `name`: its network namespace, its own mount namespace with the
        cluster's hosts file, and its own UTS namespace with hostname `name`."""
        setup = f'mount --bind "{self.hosts}" /etc/hosts && hostname {name} && exec "$@"'
        return ["nsenter", f"--net=/run/netns/{self.prefix}{name}", "unshare", "--mount",
                "--uts", "--propagation", "private", "sh", "-c", setup, "sh", *argv]

    def _daemon(self, name, argv):
        log = open(os.path.join(self.dir, "log", f"{name}.out"), "w")
        return subprocess.Popen(self._in_node(name, argv), env=self.env(), stdout=log,
                                stderr=subprocess.STDOUT)

    def client(self, argv, extra_env=None, timeout=60, check_rc=True):
        """A client command (srun, sbatch, scancel...) on the control node: (code, output)."""
        result = subprocess.run(self._in_node("ctl", argv), env=self.env(extra_env),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                timeout=timeout)
        if check_rc and result.returncode != 0:
            raise Failure(f"{' '.join(argv)} exited {result.returncode}:\n{result.stdout}"
                          f"{self.logs()}")
        return result.returncode, result.stdout

    def _nodes_idle(self):
        code, out = self.client(["sinfo", "-h", "-N", "-o", "%N %t"], check_rc=False)
        states = dict(line.split() for line in out.splitlines() if len(line.split()) == 2)
        return code == 0 and all(states.get(n) == "idle" for n in NODES)

    def node_processes(self, node):
        """Pids of the processes in node `node` (its network namespace) but its slurmd."""
        inode = os.stat(f"/run/netns/{self.prefix}{node}").st_ino
        found = []
        for pid in os.listdir("/proc"):
            try:
                if pid.isdigit() and os.stat(f"/proc/{pid}/ns/net").st_ino == inode and \
                        int(pid) != self.daemons[node].pid and alive(int(pid)):
                    found.append(int(pid))
            except OSError:
                pass
        return found

    def _wait_for(self, condition, timeout, message):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for name, proc in self.daemons.items():
                check(proc.poll() is None, f"{name} daemon exited {proc.returncode}"
                                           f"{self.logs()}")
            if condition():
                return
            time.sleep(0.2)
        raise Failure(message + self.logs())

    def logs(self):
        text = ""
        for path in sorted(glob.glob(os.path.join(self.dir, "log", "*"))):
            with open(path, errors="replace") as f:
                tail = f.read()[-3000:]
            text += f"\n--- {os.path.basename(path)}:\n{tail}"
        return text

    # ---- jobs

    def job_state(self, job_id):
        code, out = self.client(["scontrol", "-o", "show", "job", job_id], check_rc=False)
        state = re.search(r"JobState=(\S+)", out)
        exit_code = re.search(r"ExitCode=(\S+)", out)
        return (state.group(1) if state else None), (exit_code.group(1) if exit_code else None)

    def wait_job_done(self, job_id, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            state, exit_code = self.job_state(job_id)
            if state not in (None, "PENDING", "RUNNING", "CONFIGURING", "COMPLETING"):
                return state, exit_code
            time.sleep(0.2)
        raise Failure(f"job {job_id} still {self.job_state(job_id)} after {timeout} s"
                      f"{self.logs()}")

    # ---- teardown

    def stop(self):
        """Daemons by pid (TERM, then KILL), then anything still tied to this cluster, then the
        namespaces and the directory."""
        for proc in self.daemons.values():
            if proc.poll() is None:
                proc.terminate()
        deadline = time.time() + 5
        for proc in self.daemons.values():
            try:
                proc.wait(max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for pid in processes_with_env(f"SLURM_CONF={self.conf}"):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for ns in self.namespaces:
            subprocess.run(["ip", "netns", "delete", ns], stderr=subprocess.DEVNULL)
        self.namespaces = []
        shutil.rmtree(self.dir, ignore_errors=True)


def processes_with_env(needle):
    """Pids of the processes whose environment holds `needle` ("KEY=VALUE")."""
    found = []
    key = needle.encode() + b"\0"
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if key in f.read() + b"\0":
                    found.append(int(pid))
        except OSError:
            pass
    return found


def stat_fields(pid):
    """The fields of /proc/<pid>/stat after the command's name: state, parent, ..."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def alive(pid):
    try:
        return stat_fields(pid)[0] != "Z"
    except OSError:
        return False


def parent(pid):
    return int(stat_fields(pid)[1])


class Stamps:
    """A directory the workers on both nodes write to (one file system)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="cpplaunch-slurm-stamps-")
        self.tag = uuid.uuid4().hex

    def env(self):
        return {"SW_STAMP_DIR": self.dir, "SW_TEST_TAG": self.tag}

    def read(self, name):
        with open(os.path.join(self.dir, name)) as f:
            return f.read()

    def task_outputs(self):
        """What each task (each node's cpplaunch and its workers) wrote, task 0 first."""
        return [self.read(f"task-{t}.out") for t in range(2)]

    def wait_for(self, names, timeout, what):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if all(os.path.exists(os.path.join(self.dir, n)) for n in names):
                return
            time.sleep(0.05)
        present = sorted(os.listdir(self.dir))
        raise Failure(f"{what}: only {present} after {timeout} s")

    def leftovers(self):
        return [p for p in processes_with_env(f"SW_TEST_TAG={self.tag}") if alive(p)]

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


# ---- cases ------------------------------------------------------------------------------------

def launcher(cpplaunch):
    """How a task starts cpplaunch: no flag for nodes, ranks or the rendezvous; cpplaunch
    reads them from the step (docs/engines/slurm.md)."""
    return [cpplaunch]


def case_ddp(cpplaunch, cluster, report):
    """srun -N2 --ntasks-per-node=1 cpplaunch --nproc-per-node=2 <DDP script>: one world of 4,
    identical replicas."""
    started = time.time()
    code, out = cluster.client(
        ["srun", "-N2", "--ntasks-per-node=1", "-K1", *launcher(cpplaunch),
         "--nproc-per-node=2", WORKER, "ddp", "5"], timeout=120, check_rc=False)
    report(f"srun -N2 DDP job of 4 ranks: {time.time() - started:.1f} s")
    check(code == 0, f"srun exited {code}:\n{out}{cluster.logs()}")
    lines = re.findall(r"slurm-ddp rank=(\d) world=(\d) node=(\S+) group_rank=(\d) "
                       r"checksum=(\S+)", out)
    check(sorted(int(r[0]) for r in lines) == [0, 1, 2, 3], f"ranks seen: {lines}\n{out}")
    check(all(r[1] == "4" for r in lines), f"not one world of 4: {lines}\n{out}")
    check({r[2] for r in lines} == set(NODES[:2]), f"not on both nodes: {lines}\n{out}")
    for rank, _, node, group_rank, _ in lines:
        check(group_rank == str(int(rank) // 2) and node == NODES[int(rank) // 2],
              f"rank {rank} on {node} has group rank {group_rank}\n{out}")
    check(len({r[4] for r in lines}) == 1, f"replicas differ: {lines}\n{out}")
    for node_id in range(2):
        check(re.search(rf"cpplaunch: Slurm step \d+\.0: 2 nodes, this is node {node_id}, "
                        rf"rendezvous on n1:\d+", out), f"no detection line of node {node_id}\n{out}")


def sbatch(cluster, stamps, cpplaunch_args, mode_args, extra_env=None, relay_usr1=False,
           nodes=2, slurm_args=()):
    """Submits a batch job of `nodes` nodes whose srun step runs cpplaunch on each; each task's
    output goes to task-<n>.out, written by slurmstepd (srun's own relay stops at a cancel).
    `slurm_args` go to both sbatch and srun."""
    out_path = os.path.join(stamps.dir, "job-%j.out")
    srun = shlex.join(["srun", f"-N{nodes}", "--ntasks-per-node=1", *slurm_args, "-o",
                       os.path.join(stamps.dir, "task-%t.out"), *cpplaunch_args, WORKER,
                       *mode_args])
    script = f"{srun}; echo \"srun exit=$?\""
    if relay_usr1:
        # The user guide's batch script for --signal=B:USR1: only the shell gets the notice;
        # it passes it to srun, which passes it to its tasks.
        script = (f"{srun} & pid=$!; trap 'kill -USR1 $pid' USR1; wait $pid; wait $pid; "
                  f"echo \"srun exit=$?\"")
    _, out = cluster.client(["sbatch", f"-N{nodes}", *slurm_args, "-o", out_path, "--wrap",
                             script],
                            extra_env={**stamps.env(), **(extra_env or {})})
    match = re.search(r"Submitted batch job (\d+)", out)
    check(match is not None, f"sbatch said: {out}")
    return match.group(1), out_path.replace("%j", match.group(1))


def agent_pids(stamps):
    """The cpplaunch agents of the job: parents of the workers that wrote started-<rank>."""
    agents = set()
    for rank in range(4):
        agents.add(parent(int(stamps.read(f"started-{rank}"))))
    return agents


def scancel_and_watch(cpplaunch, cluster, report, shutdown_timeout):
    """sbatch a job whose workers ignore SIGTERM, scancel it, and wait until every worker and
    agent is gone: (seconds it took, the job's output, its final state)."""
    stamps = Stamps()
    try:
        job_id, out_path = sbatch(
            cluster, stamps,
            [*launcher(cpplaunch), "--nproc-per-node=2", f"--shutdown-timeout={shutdown_timeout}"],
            ["wait", "120"], extra_env={"SW_IGNORE_TERM": "1"})
        stamps.wait_for([f"started-{r}" for r in range(4)], 60, "workers did not start")
        workers = [int(stamps.read(f"started-{r}")) for r in range(4)]
        agents = agent_pids(stamps)
        check(len(agents) == 2, f"expected two agents, found {agents}")
        everyone = workers + list(agents)
        cancelled = time.time()
        cluster.client(["scancel", job_id])
        deadline = cancelled + KILL_WAIT + 10
        while time.time() < deadline and any(alive(p) for p in everyone):
            time.sleep(0.05)
        gone = time.time() - cancelled
        report(f"scancel -> every worker and agent gone: {gone:.2f} s (workers ignore SIGTERM; "
               f"--shutdown-timeout={shutdown_timeout}, KillWait={KILL_WAIT})")
        state, _ = cluster.wait_job_done(job_id, 30)
        with open(out_path) as f:
            output = f.read()
        check(not any(alive(p) for p in everyone),
              f"still alive after {gone:.1f} s: {[p for p in everyone if alive(p)]}\n{output}")
        check(state == "CANCELLED", f"job state {state}\n{output}")
        check(stamps.leftovers() == [], f"left running: {stamps.leftovers()}\n{output}")
        return gone, output, stamps.task_outputs()
    finally:
        for pid in stamps.leftovers():
            os.kill(pid, signal.SIGKILL)
        stamps.close()


def case_scancel(cpplaunch, cluster, report):
    """sbatch + scancel: SIGTERM to each task; every agent tears its workers down (they ignore
    SIGTERM: SIGKILL after --shutdown-timeout, inside KillWait) and nothing is left anywhere."""
    gone, output, tasks = scancel_and_watch(cpplaunch, cluster, report, SHUTDOWN_TIMEOUT)
    check(gone < SHUTDOWN_TIMEOUT + 2.5, f"teardown took {gone:.1f} s\n{output}")
    for task in tasks:  # each node's agent says what it does
        check("received SIGTERM; forwarding it to the workers; workers still running after "
              f"{SHUTDOWN_TIMEOUT} s get SIGKILL" in task, task)


def case_killwait(cpplaunch, cluster, report):
    """--shutdown-timeout longer than KillWait: Slurm SIGKILLs the agents (their process
    groups, with proctrack/pgid) while their workers still ignore SIGTERM; the agents' sentinels
    and the workers' parent-death signal still leave nothing behind."""
    gone, output, _ = scancel_and_watch(cpplaunch, cluster, report, 60)
    check(KILL_WAIT - 1.5 < gone < KILL_WAIT + 3, f"gone after {gone:.1f} s\n{output}")


def case_usr1(cpplaunch, cluster, report):
    """scancel --signal=USR1 with --forward-signals=SIGUSR1: every worker gets it once, the job
    runs on and ends 0."""
    stamps = Stamps()
    try:
        job_id, out_path = sbatch(
            cluster, stamps,
            [*launcher(cpplaunch), "--nproc-per-node=2", "--forward-signals=SIGUSR1"],
            ["wait", "60"])
        stamps.wait_for([f"started-{r}" for r in range(4)], 60, "workers did not start")
        signalled = time.time()
        cluster.client(["scancel", "--signal=USR1", job_id])
        stamps.wait_for([f"usr1-{r}" for r in range(4)], 10, "SIGUSR1 did not reach every worker")
        report(f"scancel --signal=USR1 -> all 4 workers had it: {time.time() - signalled:.2f} s")
        state, exit_code = cluster.wait_job_done(job_id, 30)
        with open(out_path) as f:
            output = f.read()
        for rank in range(4):
            check(len(stamps.read(f"usr1-{rank}").splitlines()) == 1,
                  f"rank {rank} got SIGUSR1 {stamps.read(f'usr1-{rank}')!r}\n{output}")
        check("srun exit=0" in output, f"srun did not exit 0:\n{output}")
        check(state == "COMPLETED" and exit_code == "0:0", f"job {state} {exit_code}\n{output}")
        for task in stamps.task_outputs():
            check(task.count("received SIGUSR1; passed it to the workers") == 1, task)
        check(stamps.leftovers() == [], f"left running: {stamps.leftovers()}")
    finally:
        for pid in stamps.leftovers():
            os.kill(pid, signal.SIGKILL)
        stamps.close()


def case_batch_usr1(cpplaunch, cluster, report):
    """scancel --batch --signal=USR1 (what --signal=B:USR1@N sends at its time) to a batch
    script that relays it to srun: every worker gets it once, the job ends 0."""
    stamps = Stamps()
    try:
        job_id, out_path = sbatch(
            cluster, stamps,
            [*launcher(cpplaunch), "--nproc-per-node=2", "--forward-signals=SIGUSR1"],
            ["wait", "60"], relay_usr1=True)
        stamps.wait_for([f"started-{r}" for r in range(4)], 60, "workers did not start")
        cluster.client(["scancel", "--batch", "--signal=USR1", job_id])
        stamps.wait_for([f"usr1-{r}" for r in range(4)], 10, "SIGUSR1 did not reach every worker")
        state, exit_code = cluster.wait_job_done(job_id, 30)
        with open(out_path) as f:
            output = f.read()
        counts = [len(stamps.read(f"usr1-{rank}").splitlines()) for rank in range(4)]
        check(counts == [1, 1, 1, 1], f"SIGUSR1 per worker: {counts}\n{output}")
        check("srun exit=0" in output, f"srun did not exit 0:\n{output}")
        check(state == "COMPLETED" and exit_code == "0:0", f"job {state} {exit_code}\n{output}")
        check(stamps.leftovers() == [], f"left running: {stamps.leftovers()}")
    finally:
        for pid in stamps.leftovers():
            os.kill(pid, signal.SIGKILL)
        stamps.close()


def case_status(cpplaunch, cluster, report):
    """--status-port on both nodes of an sbatch job: from the control node, cpplaunch-status
    given one node's endpoint finds the other through the round and lists all 4 ranks; curl
    reads /readyz and /metrics from the other node."""
    tool = os.path.join(os.path.dirname(cpplaunch), "status_tool", "cpplaunch-status")
    stamps = Stamps()
    try:
        job_id, out_path = sbatch(
            cluster, stamps,
            [*launcher(cpplaunch), "--nproc-per-node=2", "--status-port=8931",
             "--status-addr=0.0.0.0"], ["wait", "60"])
        stamps.wait_for([f"started-{r}" for r in range(4)], 60, "workers did not start")
        asked = time.time()
        code, table = cluster.client([tool, "n1:8931"], check_rc=False)
        report(f"cpplaunch-status n1:8931 over both nodes: {time.time() - asked:.2f} s")
        check(code == 0, f"cpplaunch-status exited {code}:\n{table}")
        rows = [line.split() for line in table.splitlines()[1:-1]]
        check(sorted((r[0], r[1], r[2]) for r in rows) ==
              [("n1", "0", "0"), ("n1", "0", "1"), ("n2", "1", "2"), ("n2", "1", "3")],
              f"not every host and rank:\n{table}")
        check(all(r[5] == "running" for r in rows), f"not all running:\n{table}")
        check(table.splitlines()[-1].startswith("2 of 2 hosts answered, 4 ranks"), table)
        _, ready = cluster.client(["curl", "-sS", "-w", " %{http_code}", "http://n2:8931/readyz"])
        check(ready == "ready\n 200", f"n2's /readyz: {ready!r}")
        _, metrics = cluster.client(["curl", "-sS", "http://n2:8931/metrics"])
        check("\ncpplaunch_workers_running 2\n" in metrics, metrics)
        cluster.client(["scancel", job_id])
        state, _ = cluster.wait_job_done(job_id, 30)
        check(stamps.leftovers() == [], f"left running: {stamps.leftovers()}")
    finally:
        for pid in stamps.leftovers():
            os.kill(pid, signal.SIGKILL)
        stamps.close()


def case_spares(cpplaunch, cluster, report):
    """srun -N3 cpplaunch --spares=1 <DDP script>: the step's 3 nodes become 2 that run one world
    of 4 and 1 spare (issue 24); the job finishes without needing the spare, which exits 0, so
    that srun exits 0."""
    started = time.time()
    code, out = cluster.client(
        ["srun", "-N3", "--ntasks-per-node=1", *launcher(cpplaunch), "--spares=1",
         "--nproc-per-node=2", WORKER, "ddp", "5"], timeout=120, check_rc=False)
    report(f"srun -N3 --spares=1 DDP job of 4 ranks on 2 nodes, 1 spare: "
           f"{time.time() - started:.1f} s")
    check(code == 0, f"srun exited {code}:\n{out}{cluster.logs()}")
    for node_id in range(3):
        check(re.search(rf"cpplaunch: Slurm step \d+\.0: 2:2 nodes running and 1 spare, "
                        rf"this is node {node_id}, rendezvous on n1:\d+", out),
              f"no spares line of node {node_id}\n{out}")
    lines = re.findall(r"slurm-ddp rank=(\d) world=(\d) node=(\S+) group_rank=(\d) "
                       r"checksum=(\S+)", out)
    check(sorted(int(r[0]) for r in lines) == [0, 1, 2, 3], f"ranks seen: {lines}\n{out}")
    check(all(r[1] == "4" for r in lines), f"not one world of 4: {lines}\n{out}")
    ran = {r[2] for r in lines}
    # The first two hosts to join run (docs/multi-host.md); n1, which hosts the store, may be the
    # spare when the other two reach its store before its own agent joins.
    check(len(ran) == 2, f"workers ran on {sorted(ran)}, not two nodes\n{out}")
    check(len({r[4] for r in lines}) == 1, f"replicas differ: {lines}\n{out}")
    spare = re.search(r"finished without needing (\S+) at \S+, which waited as a spare; exiting",
                      out)
    check(spare is not None and spare.group(1) in NODES and spare.group(1) not in ran,
          f"the spare did not say it was not needed\n{out}")


def slot_views(stamps, attempt):
    """{node: {local rank: (RANK, GROUP_RANK, WORLD_SIZE, hostname, pid)}} of the workers that
    ran in `attempt` (slurm_worker.py slot)."""
    views = {}
    for name in os.listdir(stamps.dir):
        match = re.fullmatch(rf"slot-{attempt}-(\w+)-(\d+)", name)
        if match:
            rank, group_rank, world, host, pid = stamps.read(name).split()
            views.setdefault(match.group(1), {})[int(match.group(2))] = \
                (int(rank), int(group_rank), int(world), host, int(pid))
    return views


def wait_slot_views(stamps, attempt, nodes, timeout):
    """slot_views once every worker (2 a node) of `nodes` (a count, or the names) ran `attempt`."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        views = slot_views(stamps, attempt)
        ready = [n for n, v in views.items() if len(v) == 2]
        if (len(ready) == nodes if isinstance(nodes, int) else set(nodes) <= set(ready)):
            return views
        time.sleep(0.02)
    raise Failure(f"attempt {attempt}: only {slot_views(stamps, attempt)} after {timeout} s; "
                  f"task outputs:\n{task_texts(stamps)}")


def task_texts(stamps):
    return "\n".join(f"--- {name}:\n{stamps.read(name)}" for name in sorted(os.listdir(stamps.dir))
                     if name.startswith(("task-", "job-")))


def wait_text(path, needle, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                if needle in f.read():
                    return
        time.sleep(0.02)
    raise Failure(f"{os.path.basename(path)} did not say {needle!r} in {timeout} s")


def descendants(root):
    children = {}
    for pid in os.listdir("/proc"):
        try:
            children.setdefault(parent(pid), []).append(int(pid))
        except (OSError, ValueError):
            pass
    found, pending = [], [root]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def stopped_or_gone(pid):
    try:
        return stat_fields(pid)[0] in "TtZX"
    except OSError:
        return True


def lose_tree(root):
    """What a host loss does to a task: `root` and everything it started (agent, sentinel,
    workers) stop at once, then die. Each is SIGSTOPped, and the tree read again once all are
    stopped, until it grows no more; then all get SIGKILL. None of them sees another go first.
    Returns the pids."""
    stopped = []
    while True:
        new = [p for p in [root, *descendants(root)] if p not in stopped]
        if not new:
            break
        for pid in new:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                pass
            stopped.append(pid)
        deadline = time.time() + 5
        while not all(stopped_or_gone(p) for p in new):
            check(time.time() < deadline,
                  f"not stopped: {[p for p in new if not stopped_or_gone(p)]}")
            time.sleep(0.005)
    for pid in stopped:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return stopped


def case_spare_replaces(cpplaunch, cluster, report):
    """sbatch/srun -N4 --no-kill cpplaunch --spares=1 --max-restarts=1: 3 nodes run a world of 6
    and 1 waits as a spare. A member that does not serve the store (n1 does), the one with group
    rank 1 when it can be, loses its agent, sentinel and workers at once, as in a host loss. The
    spare takes its group rank and RANKs, the survivors keep theirs, each survivor names who took
    which slot (a line and a cpplaunch.slot.taken event), the job ends 0 after one restart, and
    nothing is left on any node. srun itself exits 137: Slurm counts the killed task (it names
    that task alone: every other task exited 0)."""
    stamps = Stamps()
    try:
        started = time.time()
        job_id, out_path = sbatch(
            cluster, stamps,
            [*launcher(cpplaunch), "--spares=1", "--max-restarts=1", "--nproc-per-node=2",
             "--event-log-handler=console"], ["slot", "60"], nodes=4, slurm_args=["--no-kill"])
        before = wait_slot_views(stamps, 0, 3, 60)
        members = sorted(before)
        spare = (set(NODES) - set(members)).pop()
        check("n1" in members, f"n1, the store's host, is not running: {before}")
        task = {node: os.path.join(stamps.dir, f"task-{NODES.index(node)}.out") for node in NODES}
        wait_text(task[spare], "this host waits for a free place", 20)
        group_rank = {node: views[0][1] for node, views in before.items()}
        victim = min((n for n in members if n != "n1"), key=lambda n: abs(group_rank[n] - 1))
        survivors = [n for n in members if n != victim]
        agent = parent(before[victim][0][4])
        lost_at = time.time()
        lost = lose_tree(agent)
        check(len(lost) >= 4, f"{victim}'s tree was {lost}: not an agent, a sentinel and 2 workers")
        after = wait_slot_views(stamps, 1, [*survivors, spare], 30)
        running = time.time() - lost_at
        state, exit_code = cluster.wait_job_done(job_id, 30)
        ended = time.time() - lost_at
        with open(out_path) as f:
            job_out = f.read()
        out = task_texts(stamps)
        report(f"srun -N4 --spares=1: {victim} (group rank {group_rank[victim]}) lost; {spare} "
               f"took its slot; attempt 1 running on every node {running:.2f} s and the job done "
               f"{ended:.2f} s after the loss ({time.time() - started:.1f} s in all)")
        for node in survivors:
            check({local: v[:3] for local, v in after[node].items()} ==
                  {local: v[:3] for local, v in before[node].items()},
                  f"{node}'s ranks moved: {before[node]} -> {after[node]}\n{out}")
        check({local: v[:3] for local, v in after[spare].items()} ==
              {local: v[:3] for local, v in before[victim].items()},
              f"the spare {spare} got {after[spare]}, not {victim}'s {before[victim]}\n{out}")
        check(all(v[3] == spare for v in after[spare].values()),
              f"the spare's workers ran on {after[spare]}\n{out}")
        check(victim not in after, f"the lost node ran attempt 1: {after.get(victim)}\n{out}")
        taker = f"{spare} at {cluster.address[spare]}"
        replaced = f"{victim} at {cluster.address[victim]}"
        for node in survivors:
            text = stamps.read(os.path.basename(task[node]))
            check(f"{taker} took group rank {group_rank[victim]}, the slot of {replaced}" in text,
                  f"{node} does not say {spare} took {victim}'s slot\n{out}")
            events = [json.loads(line) for line in text.splitlines()
                      if line.startswith('{"name": "cpplaunch.slot.taken"')]
            check(len(events) == 1, f"{node} recorded {len(events)} slot events\n{out}")
            slot = json.loads(events[0]["metadata"]["metadata"])
            check((slot["group_rank"], slot["host"], slot["replaced"]) ==
                  (group_rank[victim], taker, replaced), f"{node}'s slot event says {slot}\n{out}")
        # The job: every agent left ended 0; Slurm names the killed task alone.
        check(state == "COMPLETED" and exit_code == "0:0", f"job {state} {exit_code}\n{out}")
        errors = [line for line in job_out.splitlines() if line.startswith("srun: error:")]
        check(errors == [f"srun: error: {victim}: task {NODES.index(victim)}: Killed"],
              f"srun's errors: {errors}\n{job_out}\n{out}")
        check("srun exit=137" in job_out, f"srun's exit:\n{job_out}")
        check(stamps.leftovers() == [], f"left running: {stamps.leftovers()}")
        deadline = time.time() + 10
        while any(cluster.node_processes(n) for n in NODES) and time.time() < deadline:
            time.sleep(0.05)
        left = {n: cluster.node_processes(n) for n in NODES}
        check(not any(left.values()), f"left on the nodes: {left}")
    finally:
        for pid in stamps.leftovers():
            os.kill(pid, signal.SIGKILL)
        stamps.close()


CASES = {"ddp": case_ddp, "scancel": case_scancel, "killwait": case_killwait,
         "usr1": case_usr1, "batch_usr1": case_batch_usr1, "status": case_status,
         "spares": case_spares, "spare_replaces": case_spare_replaces}


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    cpplaunch = os.path.abspath(sys.argv[1])
    names = sys.argv[2:] or list(CASES)
    reason = missing_requirement()
    if reason:
        print(f"SKIP: {reason}")
        return SKIP
    cluster = Cluster()
    failed = []
    # ctest's timeout sends SIGTERM: clean up as on any other way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        started = time.time()
        cluster.start()
        print(f"[measured] cluster up (slurmctld + {len(NODES)} slurmd in namespaces): "
              f"{time.time() - started:.1f} s", flush=True)
        for name in names:
            t0 = time.time()
            try:
                CASES[name](cpplaunch, cluster,
                            lambda line: print(f"[measured] {line}", flush=True))
                print(f"ok   {name} ({time.time() - t0:.1f} s)", flush=True)
            except (Failure, subprocess.TimeoutExpired) as e:
                failed.append(name)
                print(f"FAIL {name}: {e}", flush=True)
    except Failure as e:
        print(f"FAIL cluster: {e}", flush=True)
        failed.append("cluster")
    finally:
        cluster.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
