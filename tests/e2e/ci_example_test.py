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

    def run_block(self, block, **env):
        script = "set -e\n" + block.replace("/usr/lib/cpplaunch/bin", self.dropin)
        return subprocess.run(
            ["bash", "--norc", "--noprofile", "-c", script], cwd=self.work, capture_output=True,
            text=True, timeout=240, env=clean_env(PYTHON_EXEC=PYTHON, **env))

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
