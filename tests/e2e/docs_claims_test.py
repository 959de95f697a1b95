"""What the docs say a user will see, checked against the real cpplaunch (issue 27, item 14): the
symptom docs/migrating.md quotes for workers started by a PYTHON_EXEC without torch, the port of a
one-node Slurm step (docs/engines/slurm.md), and agents of one c10d job sharing a host
(docs/multi-host.md). The quoted texts are read from the pages themselves, so a page that goes
stale fails here. No PyTorch needed.

usage: docs_claims_test.py CPPLAUNCH [unittest args]
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

from launcher_env import clean_env

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs")


def page(name):
    with open(os.path.join(DOCS, name)) as f:
        return " ".join(f.read().split())  # quotes may wrap across lines


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MigratingSymptom(unittest.TestCase):
    def test_workers_under_a_python_without_torch_say_what_the_page_quotes(self):
        text = page("migrating.md")
        symptom = text.split("Symptom if the interpreter is still wrong", 1)[1].split("2. **", 1)[0]
        quoted = re.findall(r"`([^`]+)`", symptom)[-2:]  # the worker's line, then cpplaunch's
        with tempfile.TemporaryDirectory() as d:
            # A python3 first on PATH without torch: Debian's, without its site directories.
            python = os.path.join(d, "python3")
            with open(python, "w") as f:
                f.write('#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n')
            os.chmod(python, 0o755)
            script = os.path.join(d, "train.py")
            with open(script, "w") as f:
                f.write("import torch\n")
            # Unset, PYTHON_EXEC would make cpplaunch pass this python3 by for one with torch;
            # the page's symptom is for one named there.
            env = clean_env(PATH=d + os.pathsep + os.environ["PATH"], PYTHON_EXEC=python)
            r = subprocess.run([CPPLAUNCH, "--nproc-per-node=2", "-t", "3", script], env=env,
                               capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stderr)
        err = " ".join(r.stderr.split())
        self.assertIn(quoted[0], err)
        self.assertIn(quoted[1].replace("/path/to/python3", python), err)


class SlurmOneNodeStep(unittest.TestCase):
    def test_one_node_step_uses_29500_or_says_where_it_moved(self):
        self.assertIn("it runs as a single host on torchrun's port 29500", page("engines/slurm.md"))
        step = {"SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "0", "SLURM_NODEID": "0",
                "SLURM_PROCID": "0", "SLURM_LOCALID": "0", "SLURM_NNODES": "1",
                "SLURM_STEP_NUM_NODES": "1", "SLURM_JOB_NUM_NODES": "1", "SLURM_NTASKS": "1",
                "SLURM_JOB_NODELIST": "localhost", "SLURM_STEP_NODELIST": "localhost",
                "SLURM_STEP_TASKS_PER_NODE": "1"}
        r = subprocess.run([CPPLAUNCH, "--no-python", "/bin/sh", "-c", 'echo "port=$MASTER_PORT"'],
                           env=clean_env(**step), capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Slurm", r.stderr)
        port = r.stdout.strip()
        if port != "port=29500":  # another job holds 29500 now: the page says what happens
            self.assertIn("port 29500 is busy; the store listens on port "
                          f"{port.split('=')[1]} instead", r.stderr)


class AgentsSharingAHost(unittest.TestCase):
    def test_first_to_bind_serves_the_store_the_other_joins_it(self):
        quoted = re.search(r"`(HOST:PORT is taken[^`]+)`", page("multi-host.md")).group(1)
        port = free_port()
        agents = [subprocess.Popen(
            [CPPLAUNCH, "--nnodes=2", "--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{port}",
             "--rdzv-id=shared", "--no-python", "/bin/true"],
            env=clean_env(LOGLEVEL="INFO"), stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
        errs = [agent.communicate(timeout=60)[1] for agent in agents]
        self.assertEqual([agent.returncode for agent in agents], [0, 0], errs)
        serving = [("this host serves the job's store on 127.0.0.1:%d" % port) in err
                   for err in errs]
        self.assertEqual(sorted(serving), [False, True], errs)
        client = " ".join(errs[serving.index(False)].split())
        self.assertIn(quoted.replace("HOST:PORT", f"127.0.0.1:{port}"), client)


if __name__ == "__main__":
    if shutil.which("sh") is None:
        sys.exit(77)
    unittest.main(verbosity=2)
