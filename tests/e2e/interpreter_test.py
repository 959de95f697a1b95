"""The workers' Python and the hints that name it (issue 27, items 1-3), with real PyTorch
workers: a python3 without torch first on PATH (a venv made by hand: a link to the system's
python3 beside a pyvenv.cfg without system site packages), under cpplaunch and under the drop-in
torchrun; the interpreter hint only on evidence; a full $TMPDIR named as such (a tiny tmpfs in a
private mount namespace: root and unshare needed, else that test skips).

usage: interpreter_test.py CPPLAUNCH [unittest args]
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from launcher_env import clean_env

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
SYSTEM_PYTHON = "/usr/bin/python3"
SYSTEM_TORCHRUN = "/usr/bin/torchrun"


def has_torch(python):
    return subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0


class InterpreterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not has_torch(SYSTEM_PYTHON):
            raise unittest.SkipTest("needs python3-torch")

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cpplaunch-interpreter-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        # A venv without torch: what `python3 -m venv` makes, without needing python3-venv.
        real = os.path.realpath(SYSTEM_PYTHON)
        self.venv = os.path.join(self.tmp, "venv")
        os.makedirs(os.path.join(self.venv, "bin"))
        self.venv_python = os.path.join(self.venv, "bin", "python3")
        os.symlink(real, self.venv_python)
        version = subprocess.run([real, "-c", "import platform; print(platform.python_version())"],
                                 capture_output=True, text=True).stdout.strip()
        with open(os.path.join(self.venv, "pyvenv.cfg"), "w") as f:
            f.write(f"home = {os.path.dirname(real)}\ninclude-system-site-packages = false\n"
                    f"version = {version}\n")
        # The premise: this python3 cannot import torch.
        self.assertFalse(has_torch(self.venv_python))
        self.show = self.script("show.py", "import sys, torch\nprint('executable', sys.executable)\n")

    def script(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def run_launcher(self, argv, path, **env):
        environment = clean_env(PATH=path, OMP_NUM_THREADS="1", **env)
        if "PYTHON_EXEC" not in env:
            environment.pop("PYTHON_EXEC", None)
        return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=self.tmp,
                              env=environment)

    # Item 1: cpplaunch.
    def test_cpplaunch_runs_a_python3_with_torch_and_says_which(self):
        p = self.run_launcher([CPPLAUNCH, "--nproc-per-node=2", self.show],
                              f"{self.venv}/bin:/usr/bin:/bin")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"cpplaunch: the workers run /usr/bin/python3: the python3 on PATH, "
                      f"{self.venv_python}, has no module 'torch' (PYTHON_EXEC chooses another)\n",
                      p.stderr)
        self.assertEqual(p.stdout.count("executable /usr/bin/python3\n"), 2, p.stdout)

    def test_a_python3_with_torch_first_is_kept_without_a_word(self):
        p = self.run_launcher([CPPLAUNCH, "--nproc-per-node=1", self.show], "/usr/bin:/bin")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("the workers run", p.stderr)

    # Item 1: the drop-in torchrun.
    def test_dropin_torchrun_runs_the_interpreter_of_the_torchrun_it_shadows(self):
        if not os.path.exists(SYSTEM_TORCHRUN):
            self.skipTest("needs python3-torch's /usr/bin/torchrun")
        with open(SYSTEM_TORCHRUN) as f:
            interpreter = f.readline()[2:].split()[0]
        dropin = os.path.join(self.tmp, "dropin")
        os.mkdir(dropin)
        os.symlink(CPPLAUNCH, os.path.join(dropin, "torchrun"))
        p = self.run_launcher(["torchrun", "--nproc-per-node=2", self.show],
                              f"{dropin}:{self.venv}/bin:/usr/bin:/bin")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.count(f"executable {interpreter}\n"), 2, p.stdout + p.stderr)
        self.assertNotIn("torch.distributed.elastic", p.stderr)  # cpplaunch ran, not torchrun
        self.assertNotIn("the workers run", p.stderr)

    # Item 2: the hint only on evidence.
    def test_the_hint_names_the_interpreter_after_torch_import_errors(self):
        p = self.run_launcher([CPPLAUNCH, "--nproc-per-node=2", "-t", "3", self.show],
                              "/usr/bin:/bin", PYTHON_EXEC=self.venv_python)
        self.assertEqual(p.returncode, 1)
        self.assertIn("cpplaunch: the workers failed at start-up with ModuleNotFoundError: No "
                      f"module named 'torch'; the interpreter was {self.venv_python} (PYTHON_EXEC)",
                      p.stderr)

    def test_no_hint_for_a_runtime_error_or_a_silent_exit_1(self):
        raising = self.script("raise.py", "raise RuntimeError('epoch 2 went wrong')\n")
        silent = self.script("silent.py", "import sys\nsys.exit(1)\n")
        for argv in ([raising], ["-t", "3", raising], [silent], ["-r", "3", silent]):
            with self.subTest(argv=argv):
                p = self.run_launcher([CPPLAUNCH, "--nproc-per-node=2", *argv], "/usr/bin:/bin")
                self.assertEqual(p.returncode, 1)
                self.assertIn("exitcode  : 1", p.stderr)
                self.assertNotIn("the interpreter was", p.stderr)

    # Item 3: a full $TMPDIR.
    def test_full_tmpdir_says_no_space_left_and_where(self):
        if os.geteuid() != 0 or shutil.which("unshare") is None:
            self.skipTest("needs root and unshare for a private tmpfs")
        tiny = os.path.join(self.tmp, "tiny")
        os.mkdir(tiny)
        show = self.script("hello.py", "print('hello')\n")
        command = (f"mount -t tmpfs -o size=64k tmpfs {tiny} && "
                   f"dd if=/dev/zero of={tiny}/fill bs=4k 2>/dev/null; "
                   f"exec {CPPLAUNCH} --nproc-per-node=2 -t 3 {show}")
        p = self.run_launcher(["unshare", "-m", "--propagation", "private", "sh", "-c", command],
                              "/usr/bin:/bin:/usr/sbin:/sbin", TMPDIR=tiny,
                              PYTHON_EXEC=SYSTEM_PYTHON)
        if "mount:" in p.stderr or "unshare:" in p.stderr:
            self.skipTest("cannot mount a tmpfs here: " + p.stderr.strip())
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertRegex(p.stderr, r"cpplaunch: No space left on device: the workers' log files in "
                         + tiny + r"/\S+/attempt_0 could not be written \(\d+ bytes free there\)")
        self.assertNotIn("the interpreter was", p.stderr)


if __name__ == "__main__":
    unittest.main()
