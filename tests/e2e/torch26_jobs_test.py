"""Jobs of PyTorch 2.6 workers (Debian trixie's, in the root of tests/e2e/torch26.py) under
cpplaunch. Debian's 2.6 is built without libuv yet asks for it on the agent's store, so these
jobs run with --worker-store=rank0 and USE_LIBUV=0 (docs/compatibility.md), and the default
(agent store) must fail with the one-line hint.

  collectives: every gloo collective, send/recv and a DDP run (torch_gloo_worker.py), four
    workers under `cpplaunch --nproc-per-node=4`, replicas identical.
  ddp: examples/ddp_train.py on two workers to identical replicas, and the same job as two
    agents on loopback (static rendezvous) ending with the very same weights.

usage: torch26_jobs_test.py CPPLAUNCH [unittest args]
Exit status 77 (skipped, the reason printed) without a PyTorch 2.6 root.
"""
import os
import re
import socket
import subprocess
import sys
import unittest

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch26  # noqa: E402

GLOO_WORKER = os.path.join(HERE, "..", "rendezvous", "store", "torch_gloo_worker.py")
DDP_SCRIPT = os.path.join(HERE, "..", "..", "examples", "ddp_train.py")
JOB_TIMEOUT = 240
LIBUV_HINT = "cpplaunch: every worker failed because this PyTorch has no libuv"
REPLICA_OK = re.compile(r"replica check: OK, all (\d+) replicas hold identical parameters "
                        r"\((\d+) values, checksum ([-0-9.e+]+)\)")
DDP_ARGS = ["--epochs=2", "--samples=512"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Torch26Jobs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = torch26.Scratch("jobs26", [GLOO_WORKER, DDP_SCRIPT])

    @classmethod
    def tearDownClass(cls):
        cls.scratch.__exit__(None, None, None)

    def env(self, **extra):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PET_", "TORCHELASTIC_", "RANK", "LOCAL_RANK", "WORLD_SIZE",
                                    "MASTER_", "USE_LIBUV"))}
        env["PYTHON_EXEC"] = self.scratch.python
        env["TMPDIR"] = self.scratch.dir  # log dirs and error files, seen by the workers too
        env.update(extra)
        return env

    def launch(self, args, env):
        p = subprocess.run([CPPLAUNCH, *args], env=env, capture_output=True, text=True,
                           timeout=JOB_TIMEOUT, start_new_session=True, cwd=self.scratch.dir)
        return p.returncode, p.stdout, p.stderr, f"--- stdout\n{p.stdout}--- stderr\n{p.stderr}"

    def replicas(self, out, text, count):
        match = REPLICA_OK.search(out)
        self.assertIsNotNone(match, text)
        self.assertEqual(match[1], str(count), text)
        return match[3]

    # ---- collectives

    def test_every_collective_with_rank0_store(self):
        rc, out, err, text = self.launch(
            ["--nproc-per-node=4", "--master-port=0", "--worker-store=rank0", "--tee=3",
             self.scratch.path("torch_gloo_worker.py")], self.env(USE_LIBUV="0"))
        passed = sorted(line for line in out.splitlines() if line.endswith("all checks passed"))
        self.assertEqual(rc, 0, text)
        self.assertEqual(passed, [f"[default{r}]:rank {r}: all checks passed" for r in range(4)],
                         text)
        self.assertNotIn(LIBUV_HINT, err, text)

    def test_agent_store_fails_with_one_line_hint(self):
        rc, _, err, text = self.launch(
            ["--nproc-per-node=2", "--master-port=0", "--tee=3",
             self.scratch.path("torch_gloo_worker.py")], self.env(USE_LIBUV="0"))
        self.assertEqual(rc, 1, text)
        self.assertIn("use_libuv was requested but PyTorch was build without libuv", err, text)
        hints = [line for line in err.splitlines() if line.startswith(LIBUV_HINT)]
        self.assertEqual(len(hints), 1, text)
        self.assertIn("--worker-store=rank0 and USE_LIBUV=0", hints[0])

    def test_rank0_store_without_use_libuv_0_gets_its_hint(self):
        # ddp_train.py has @record: the message comes from its error file (no -r/-t here).
        rc, _, err, text = self.launch(
            ["--nproc-per-node=2", "--master-port=0", "--worker-store=rank0",
             self.scratch.path("ddp_train.py"), *DDP_ARGS], self.env())
        self.assertEqual(rc, 1, text)
        hints = [line for line in err.splitlines() if line.startswith(LIBUV_HINT)]
        self.assertEqual(len(hints), 1, text)
        self.assertIn("set USE_LIBUV=0", hints[0])

    # ---- DDP

    def test_ddp_single_host_and_two_agents_same_weights(self):
        script = self.scratch.path("ddp_train.py")
        env = self.env(USE_LIBUV="0")
        rc, out, _, text = self.launch(
            ["--nproc-per-node=2", "--master-port=0", "--worker-store=rank0", script, *DDP_ARGS],
            env)
        self.assertEqual(rc, 0, text)
        single = self.replicas(out, text, 2)

        port = free_port()
        agents = [subprocess.Popen(
            [CPPLAUNCH, "--nnodes=2", f"--node-rank={node}", "--nproc-per-node=1",
             "--master-addr=127.0.0.1", f"--master-port={port}", script, *DDP_ARGS],
            env=dict(env, PET_WORKER_STORE="rank0"), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True, cwd=self.scratch.dir)
            for node in (0, 1)]
        outputs = []
        try:
            for agent in agents:
                outputs.append(agent.communicate(timeout=JOB_TIMEOUT)[0])
        finally:
            for agent in agents:
                if agent.poll() is None:
                    os.killpg(agent.pid, 9)
                    agent.wait()
        text = "\n".join(f"--- agent {n}\n{o}" for n, o in enumerate(outputs))
        self.assertEqual([a.returncode for a in agents], [0, 0], text)
        self.assertIn(f"store 127.0.0.1:", outputs[0], text)
        self.assertNotIn(f"store 127.0.0.1:{port} ", outputs[0], "rank 0 used the agent's port")
        self.assertEqual(self.replicas(outputs[0], text, 2), single,
                         "two agents ended with other weights than one host")


if __name__ == "__main__":
    reason = torch26.skip_reason()
    if reason:
        print(f"SKIP: {reason}")
        sys.exit(torch26.SKIP)
    unittest.main(verbosity=2)
