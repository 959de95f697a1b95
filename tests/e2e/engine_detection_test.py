"""Engine detection end to end: the real cpplaunch binary under made-up Slurm, Open MPI and
LeaderWorkerSet environments (variables only), two agents on loopback forming one world.

usage: engine_detection_test.py CPPLAUNCH [unittest args]
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

from launcher_env import clean_env

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
ENV_DUMP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "env_dump.py")
PYTHON = "/usr/bin/python3"


def engine_free_env(**extra):
    """This process's environment without any engine's variables, plus `extra`."""
    return clean_env(**{"PYTHON_EXEC": PYTHON, **extra})


def port_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slurm_job_with_free_port(step=0):
    """A job id whose derived port (20000 + (job mod 1000) * 12 + step) is free here."""
    base = 100000 + (os.getpid() % 1000) * 1000
    for job in range(base, base + 1000):
        port = 20000 + (job % 1000) * 12 + step % 12
        if port_free(port):
            return job, port
    raise unittest.SkipTest("no free port in the derived range")


def slurm_step(job, node_id, nodes=2, nodelist="localhost,n2", tasks_per_node="1(x2)"):
    return {
        "SLURM_JOB_ID": str(job), "SLURM_STEP_ID": "0", "SLURM_NODEID": str(node_id),
        "SLURM_PROCID": str(node_id), "SLURM_LOCALID": "0", "SLURM_NNODES": str(nodes),
        "SLURM_STEP_NUM_NODES": str(nodes), "SLURM_JOB_NUM_NODES": str(nodes),
        "SLURM_NTASKS": str(nodes), "SLURM_JOB_NODELIST": nodelist,
        "SLURM_STEP_NODELIST": nodelist, "SLURM_STEP_TASKS_PER_NODE": tasks_per_node,
        # The login node: a launcher that trusted it would never find the store.
        "SLURM_LAUNCH_NODE_IPADDR": "192.0.2.1",
    }


class Agents:
    """cpplaunch processes started in their own process groups; killed if still alive."""

    def __init__(self):
        self.procs = []

    def start(self, args, env, wrap=()):
        p = subprocess.Popen([*wrap, CPPLAUNCH, *args], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.procs.append(p)
        return p

    def finish(self, timeout=60):
        results = []
        for p in self.procs:
            out, err = p.communicate(timeout=timeout)
            results.append((p.returncode, out, err))
        return results

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


class EngineDetectionTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cpplaunch-engine-")
        self.agents = Agents()

    def tearDown(self):
        self.agents.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def out_dir(self, name):
        path = os.path.join(self.tmp, name)
        os.makedirs(path, exist_ok=True)
        return path

    def worker_args(self, node):
        return ["--nproc-per-node=2", "--log-dir=/dev/null", ENV_DUMP, self.out_dir(node)]

    def world(self, nodes):
        """{global rank: worker env} from the env_dump files of `nodes`."""
        ranks = {}
        for node in nodes:
            d = os.path.join(self.tmp, node)
            for name in sorted(os.listdir(d)):
                with open(os.path.join(d, name)) as f:
                    e = json.load(f)["env"]
                ranks[int(e["RANK"])] = e
        return ranks

    def run_two(self, envs, args=(), wrap=()):
        # One worker command for both agents (a c10d job refuses a host whose workers run
        # another); each agent's environment says where its workers write.
        for i, e in enumerate(envs):
            self.agents.start([*args, *self.worker_args("shared")],
                              {**e, "ENV_DUMP_DIR": self.out_dir(f"node{i}")}, wrap)
        results = self.agents.finish()
        for code, out, err in results:
            self.assertEqual(code, 0, err)
        return results

    def assert_one_world_of_4(self, master_addr, master_port, run_id):
        world = self.world(["node0", "node1"])
        self.assertEqual(sorted(world), [0, 1, 2, 3])
        for rank, e in world.items():
            self.assertEqual(e["WORLD_SIZE"], "4")
            self.assertEqual(e["GROUP_RANK"], str(rank // 2))
            self.assertEqual(e["LOCAL_RANK"], str(rank % 2))
            self.assertEqual(e["MASTER_ADDR"], master_addr)
            self.assertEqual(e["MASTER_PORT"], str(master_port))
            self.assertEqual(e["TORCHELASTIC_RUN_ID"], run_id)

    def test_slurm_step_forms_one_world_without_flags(self):
        job, port = slurm_job_with_free_port()
        results = self.run_two([engine_free_env(**slurm_step(job, n)) for n in (0, 1)])
        self.assert_one_world_of_4("localhost", port, f"{job}.0")
        for node, (_, _, err) in enumerate(results):
            self.assertIn(f"cpplaunch: Slurm step {job}.0: 2 nodes, this is node {node}, "
                          f"rendezvous on localhost:{port}\n", err)

    def test_slurm_step_with_c10d_elects_node_0(self):
        job, port = slurm_job_with_free_port()
        self.run_two([engine_free_env(**slurm_step(job, n)) for n in (1, 0)],
                     args=["--rdzv-backend=c10d"])
        world = self.world(["node0", "node1"])
        self.assertEqual(sorted(world), [0, 1, 2, 3])
        self.assertEqual({e["WORLD_SIZE"] for e in world.values()}, {"4"})

    def test_contradiction_is_one_line_exit_2(self):
        job, _ = slurm_job_with_free_port()
        p = subprocess.run([CPPLAUNCH, "--nnodes=3", *self.worker_args("x")],
                           env=engine_free_env(**slurm_step(job, 0)), capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr, f"cpplaunch: error: --nnodes=3 contradicts Slurm step {job}.0, "
                         "which has 2 nodes (drop --nnodes, or use --engine=none to ignore the "
                         "engine)\n")

    def test_several_tasks_per_node_is_refused(self):
        job, _ = slurm_job_with_free_port()
        p = subprocess.run([CPPLAUNCH, *self.worker_args("x")],
                           env=engine_free_env(**slurm_step(job, 0, tasks_per_node="4(x2)")),
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
        self.assertIn("srun -N2 --ntasks-per-node=1 cpplaunch --nproc-per-node=4", p.stderr)

    def test_batch_script_detects_nothing_and_says_so(self):
        p = subprocess.run([CPPLAUNCH, *self.worker_args("x")],
                           env=engine_free_env(SLURM_JOB_ID="77", SLURM_NNODES="2", SLURM_NODEID="0",
                                         SLURM_JOB_NODELIST="n[1-2]"),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("cpplaunch: Slurm job 77, but not inside an srun step", p.stderr)
        self.assertEqual(sorted(self.world(["x"])), [0, 1])  # one node of 2 workers

    def test_engine_none_ignores_the_step(self):
        job, _ = slurm_job_with_free_port()
        p = subprocess.run([CPPLAUNCH, "--engine=none", *self.worker_args("x")],
                           env=engine_free_env(**slurm_step(job, 1)), capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("Slurm", p.stderr)
        self.assertEqual(self.world(["x"])[0]["WORLD_SIZE"], "2")

    def test_open_mpi_world_with_master_addr(self):
        port = free_port()
        envs = [engine_free_env(OMPI_COMM_WORLD_RANK=str(r), OMPI_COMM_WORLD_SIZE="2",
                          OMPI_COMM_WORLD_LOCAL_SIZE="1", OMPI_COMM_WORLD_LOCAL_RANK="0",
                          OMPI_COMM_WORLD_NODE_RANK="0", PMIX_RANK=str(r),
                          **slurm_step(5, 1 - r))  # Slurm's step variables disagree: MPI wins
                for r in (0, 1)]
        results = self.run_two(envs, args=["--master-addr=127.0.0.1", f"--master-port={port}",
                                           "--rdzv-id=mpi"])
        self.assert_one_world_of_4("127.0.0.1", port, "mpi")
        self.assertIn(f"cpplaunch: Open MPI job: 2 nodes, this is node 1, rendezvous on "
                      f"127.0.0.1:{port}\n", results[1][2])

    def test_open_mpi_without_endpoint_names_the_flag(self):
        p = subprocess.run([CPPLAUNCH, *self.worker_args("x")],
                           env=engine_free_env(OMPI_COMM_WORLD_RANK="0", OMPI_COMM_WORLD_SIZE="2",
                                         OMPI_COMM_WORLD_LOCAL_SIZE="1"),
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
        self.assertIn("add --master-addr=HOST", p.stderr)
        self.assertIn("--rdzv-endpoint=HOST:PORT", p.stderr)

    def test_leader_worker_set(self):
        port = free_port()
        envs = [engine_free_env(KUBERNETES_SERVICE_HOST="10.96.0.1", LWS_LEADER_ADDRESS="localhost",
                          LWS_GROUP_SIZE="2", LWS_WORKER_INDEX=str(i),
                          PET_MASTER_PORT=str(port)) for i in (0, 1)]
        results = self.run_two(envs)
        self.assert_one_world_of_4("localhost", port, "none")
        self.assertIn(f"cpplaunch: LeaderWorkerSet group: 2 nodes, this is node 0, rendezvous on "
                      f"localhost:{port}\n", results[0][2])

    def test_store_host_name_is_awaited_until_it_resolves(self):
        """The leader's name resolves only after a while (a headless service published late):
        the agents wait for it, saying so, then form the world. Each agent runs in its own mount
        namespace whose /etc/hosts and nsswitch.conf are test files (files only: the unresolved
        name never reaches DNS)."""
        if shutil.which("unshare") is None or os.geteuid() != 0:
            self.skipTest("needs root and unshare(1) for a private /etc/hosts")
        hosts = os.path.join(self.tmp, "hosts")
        with open(hosts, "w") as f:
            f.write("127.0.0.1 localhost\n")
        nsswitch = os.path.join(self.tmp, "nsswitch.conf")
        with open(nsswitch, "w") as f:
            f.write("hosts: files\n")
        probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest("unshare --mount is not permitted here: " + probe.stderr.decode())
        wrap = ["unshare", "--mount", "sh", "-c",
                f"mount --bind {hosts} /etc/hosts && mount --bind {nsswitch} /etc/nsswitch.conf"
                ' && exec "$@"', "sh"]
        port = free_port()
        leader = "engine-test-leader"

        def lws_env(index):
            return engine_free_env(KUBERNETES_SERVICE_HOST="10.96.0.1", LWS_LEADER_ADDRESS=leader,
                             LWS_GROUP_SIZE="2", LWS_WORKER_INDEX=str(index),
                             PET_MASTER_PORT=str(port))

        # Node 1 first, alone: it waits for the name. Its stderr goes to a file to be watched.
        log_path = os.path.join(self.tmp, "node1.err")
        with open(log_path, "w") as log:
            node1 = subprocess.Popen([*wrap, CPPLAUNCH, *self.worker_args("node1")],
                                     env=lws_env(1), stdout=subprocess.DEVNULL, stderr=log,
                                     start_new_session=True)
        self.agents.procs.append(node1)
        # The first progress line comes after the first 5 s of attempts.
        expected = f"waiting for the name {leader} to resolve"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and node1.poll() is None:
            with open(log_path) as f:
                if expected in f.read():
                    break
            time.sleep(0.1)
        with open(log_path) as f:
            self.assertIn(expected, f.read())
        with open(hosts, "a") as f:  # the same inode: the bind mounts see the new line
            f.write(f"127.0.0.1 {leader}\n")
        node0 = self.agents.start(self.worker_args("node0"), lws_env(0), wrap)
        out, err = node0.communicate(timeout=60)
        self.assertEqual(node0.returncode, 0, err)
        self.assertEqual(node1.wait(timeout=60), 0)
        self.assert_one_world_of_4(leader, port, "none")


if __name__ == "__main__":
    unittest.main()
