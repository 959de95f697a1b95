"""The migration example: examples/ddp_train.py, a plain PyTorch DDP script (gloo, CPU), runs
unchanged under Debian's torchrun and under cpplaunch and ends with the same weights; under
cpplaunch it also resumes from its checkpoint to exactly the weights of an uninterrupted run.

usage: ddp_example_test.py CPPLAUNCH [unittest args]
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import unittest

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                      "ddp_train.py")
PYTHON = "/usr/bin/python3"  # Debian's, with torch (a pyenv python3 may come first on PATH)
TORCHRUN = "/usr/bin/torchrun"
# Launchers put their log directories under $TMPDIR; this one is removed at exit.
SCRATCH = tempfile.TemporaryDirectory(prefix="cpplaunch-e2e-")
JOB_TIMEOUT = 120

EPOCH = re.compile(r"epoch +(\d+)/(\d+) +loss ([0-9.]+) ")
REPLICA_OK = re.compile(r"replica check: OK, all (\d+) replicas hold identical parameters "
                        r"\((\d+) values, checksum ([-0-9.e+]+)\)")
RESUMED = re.compile(r"resumed from checkpoint (\S+) after epoch (\d+); continuing at epoch (\d+)")
ARGS = ("--epochs=3", "--samples=1024")


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PET_", "TORCHELASTIC_", "RANK", "LOCAL_RANK", "WORLD_SIZE",
                                "MASTER_"))}
    env["PYTHON_EXEC"] = PYTHON
    env["TMPDIR"] = SCRATCH.name
    return env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(argv):
    p = subprocess.run(argv, env=clean_env(), capture_output=True, text=True,
                       timeout=JOB_TIMEOUT, start_new_session=True)
    return p.returncode, p.stdout, f"--- stdout\n{p.stdout}--- stderr\n{p.stderr}"


def cpplaunch(*args):
    return run([CPPLAUNCH, "--nproc-per-node=2", "--master-port=0", SCRIPT, *args])


def torchrun(*args):
    # Debian's 1.13 torchrun needs -r/-t values it can parse (see docs/troubleshooting.md).
    return run([TORCHRUN, "-r", "9:1", "-t", "9:1", "--nproc_per_node=2",
                f"--master_port={free_port()}", SCRIPT, *args])


class DdpExampleTest(unittest.TestCase):
    def result(self, run_result, epochs):
        """(losses, checksum) of a successful run that reported every epoch up to `epochs`."""
        rc, out, text = run_result
        self.assertEqual(rc, 0, text)
        first = int(m[3]) if (m := RESUMED.search(out)) else 1
        found = list(EPOCH.finditer(out))
        self.assertEqual([int(m[1]) for m in found], list(range(first, epochs + 1)), text)
        replica = REPLICA_OK.search(out)
        self.assertIsNotNone(replica, text)
        self.assertEqual(replica[1], "2", text)
        return [float(m[3]) for m in found], replica[3]

    def test_same_script_same_result_under_both_launchers(self):
        ours = self.result(cpplaunch(*ARGS), 3)
        theirs = self.result(torchrun(*ARGS), 3)
        self.assertLess(ours[0][-1], ours[0][0], "loss did not decrease")
        self.assertEqual(ours, theirs)

    def test_resume_from_checkpoint_under_cpplaunch(self):
        with tempfile.TemporaryDirectory(prefix="cpplaunch-ddp-test-") as tmp:
            checkpoint = os.path.join(tmp, "ddp.pt")
            self.result(cpplaunch(*ARGS[1:], "--epochs=2", f"--checkpoint={checkpoint}"), 2)
            resumed = cpplaunch(*ARGS, f"--checkpoint={checkpoint}")
            match = RESUMED.search(resumed[1])
            self.assertIsNotNone(match, resumed[2])
            self.assertEqual(match.groups(), (checkpoint, "2", "3"))
            _, resumed_sum = self.result(resumed, 3)
        _, straight_sum = self.result(cpplaunch(*ARGS), 3)
        self.assertEqual(resumed_sum, straight_sum)

    def test_without_a_launcher_explains_itself(self):
        p = subprocess.run([PYTHON, SCRIPT], env=clean_env(), capture_output=True, text=True,
                           timeout=JOB_TIMEOUT)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("not set", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
