"""docs/ci.md's worked example, run as written: the block between its ci-example markers runs in
bash, in a copy of the repository's examples/ci, with /usr/lib/cpplaunch/bin replaced by a
directory whose `torchrun` is this build's cpplaunch. PyTorch workers (Debian's python3-torch)
run Debian's pytest; the CI exit-code semantics are checked by breaking the suite on purpose.

usage: ci_example_test.py CPPLAUNCH [unittest args]
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from launcher_env import clean_env

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
SOURCE = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PYTHON = "/usr/bin/python3"


def documented_block():
    with open(os.path.join(SOURCE, "docs", "ci.md")) as f:
        text = f.read()
    found = re.search(r"<!-- ci-example:[^>]*-->\n```\n(.*?)```\n<!-- /ci-example -->", text, re.S)
    if not found:
        raise AssertionError("docs/ci.md has no ci-example block")
    return found.group(1)


class CiExampleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        probe = subprocess.run([PYTHON, "-c", "import torch.distributed, pytest"],
                               capture_output=True)
        if probe.returncode != 0:
            raise unittest.SkipTest("needs python3-torch and python3-pytest")

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="cpplaunch-ci-example-")
        self.addCleanup(shutil.rmtree, self.work)
        shutil.copytree(os.path.join(SOURCE, "examples", "ci"),
                        os.path.join(self.work, "examples", "ci"))
        self.dropin = os.path.join(self.work, "dropin")
        os.mkdir(self.dropin)
        os.symlink(CPPLAUNCH, os.path.join(self.dropin, "torchrun"))

    def run_block(self, block, python_exec=PYTHON, **env):
        script = "set -e\n" + block.replace("/usr/lib/cpplaunch/bin", self.dropin)
        environment = clean_env(**env)
        environment.pop("PYTHON_EXEC", None)
        if python_exec:
            environment["PYTHON_EXEC"] = python_exec
        return subprocess.run(
            ["bash", "--norc", "--noprofile", "-c", script], cwd=self.work, capture_output=True,
            text=True, timeout=240, env=environment)

    def test_documented_block_with_a_python3_without_torch_first_on_path(self):
        # pyenv, setup-python or a venv first on PATH: the drop-in still runs the workers with
        # the interpreter of the torchrun it shadows (python3-torch's /usr/bin/torchrun).
        if not os.path.exists("/usr/bin/torchrun"):
            self.skipTest("needs python3-torch's /usr/bin/torchrun")
        venv = os.path.join(self.work, "venv")
        os.makedirs(os.path.join(venv, "bin"))
        real = os.path.realpath(PYTHON)
        os.symlink(real, os.path.join(venv, "bin", "python3"))
        with open(os.path.join(venv, "pyvenv.cfg"), "w") as f:
            f.write(f"home = {os.path.dirname(real)}\ninclude-system-site-packages = false\n")
        bare = subprocess.run([os.path.join(venv, "bin", "python3"), "-c", "import torch"],
                              capture_output=True)
        self.assertNotEqual(bare.returncode, 0, "the venv's python3 must lack torch")
        out = self.run_block(documented_block(), python_exec=None,
                             PATH=f"{venv}/bin:/usr/bin:/bin")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        for rank in (0, 1):
            self.assertRegex(out.stdout, rf"\[default{rank}\]:3 passed")

    def test_documented_block_passes_with_reports_and_logs(self):
        out = self.run_block(documented_block())
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        for rank in (0, 1):
            self.assertRegex(out.stdout, rf"\[default{rank}\]:3 passed")
            self.assertTrue(os.path.isfile(os.path.join(self.work, f"junit-{rank}.xml")))
            logs = glob.glob(os.path.join(self.work, "rank-logs", "*", "attempt_0", str(rank),
                                          "stdout.log"))
            self.assertEqual(len(logs), 1, os.listdir(os.path.join(self.work, "rank-logs")))
            with open(logs[0]) as f:
                self.assertIn("3 passed", f.read())
        # The drop-in ran, not a torchrun from PATH.
        self.assertNotIn("torch.distributed.elastic", out.stderr)

    def test_a_failing_rank_fails_the_job_and_is_named(self):
        out = self.run_block(documented_block(), CI_EXAMPLE_BREAK_RANK="1")
        self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
        self.assertRegex(out.stdout, r"\[default1\]:.*1 failed, 2 passed")
        self.assertRegex(out.stdout, r"\[default0\]:3 passed")
        self.assertRegex(out.stderr, r"rank\s*:\s*1 ")
        self.assertRegex(out.stderr, r"exitcode\s*:\s*1 ")

    def test_no_tests_collected_keeps_pytest_5_with_exit_code_worker(self):
        block = documented_block().replace("examples/ci", "-k no_such_test examples/ci")
        default = self.run_block(block.replace("export PET_EXIT_CODE=worker\n", ""))
        self.assertEqual(default.returncode, 1, default.stdout + default.stderr)
        worker = self.run_block(block)
        self.assertEqual(worker.returncode, 5, worker.stdout + worker.stderr)


if __name__ == "__main__":
    unittest.main()
