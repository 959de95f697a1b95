"""Inputs, leftovers and identities (issue 23, items 5, 9 and 10) against the real binary: long
or odd option values are one short usage error that leaves nothing on disk, --local-ranks-filter
and the duplicate filters leave no directory of empty log files, and two agents behind one
address with one pid (each PID 1 of its own PID namespace, as containers with host networking
run them) form one job of two hosts.

usage: inputs_and_leftovers_test.py CPPLAUNCH [unittest args]
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

from launcher_env import clean_env

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))


class Scratch(unittest.TestCase):
    """Every run gets TMPDIR=<an empty directory>: what the run leaves behind is in it."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cpplaunch-inputs-")
        self.tmpdir = os.path.join(self.tmp, "tmp")
        os.mkdir(self.tmpdir)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def launch(self, *args, timeout=60, **extra_env):
        env = clean_env(TMPDIR=self.tmpdir, PYTHON_EXEC="/usr/bin/python3", **extra_env)
        return subprocess.run([CPPLAUNCH, *args], env=env, capture_output=True, text=True,
                              timeout=timeout)

    def left_behind(self):
        found = []
        for root, dirs, files in os.walk(self.tmpdir):
            found += [os.path.join(root, name) for name in dirs + files]
        return found


class LongAndOddValues(Scratch):
    def assert_refused(self, result, *words):
        self.assertEqual(result.returncode, 2, result.stderr)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.stderr[:2000])
        self.assertLess(len(lines[0]), 300, lines[0][:2000])
        for word in words:
            self.assertIn(word, lines[0])
        self.assertEqual(self.left_behind(), [])

    def test_a_9_kb_run_id_is_one_short_usage_error(self):
        # The repro: exit 1 from the store ("CLAIM '<9 KB>' failed"), a 120 KB line and
        # an empty torchelastic_* directory in /tmp.
        huge = "x" * 9000
        job = ["--no-python", "/bin/true"]
        self.assert_refused(self.launch(f"--rdzv-id={huge}", *job), "--rdzv-id", "9000 bytes")
        self.assert_refused(self.launch("--nnodes=1:2", "--rdzv-backend=c10d",
                                        "--rdzv-endpoint=127.0.0.1:0", f"--rdzv-id={huge}", *job),
                            "9000 bytes")
        self.assert_refused(self.launch(*job, PET_RDZV_ID=huge), "PET_RDZV_ID", "9000 bytes")
        # Too long for the run's log directory name (the first failure was mkdir's).
        self.assert_refused(self.launch("--rdzv-id=" + "y" * 300, *job), "300 bytes", "246")

    def test_odd_run_ids_are_refused_and_usual_ones_run(self):
        job = ["--no-python", "/bin/true"]
        self.assert_refused(self.launch("--rdzv-id=team/job", *job), "'/'")
        self.assert_refused(self.launch("--rdzv-id=job\n7", *job), "control character")
        for run_id in ("1234567_12", "trainer-7f9c4d5b6-x2kqz",
                       "3f2b8c1e-9a4d-4b7e-8f21-6c0d5e4a7b93", "run 7"):
            r = self.launch(f"--rdzv-id={run_id}", *job)
            self.assertEqual(r.returncode, 0, f"{run_id}: {r.stderr}")
        self.assertEqual(self.left_behind(), [])

    def test_other_long_values_are_refused_alike(self):
        huge = "z" * 9000
        job = ["--no-python", "/bin/true"]
        for option in ("--role", "--log-dir", "--rdzv-backend", "--rdzv-endpoint",
                       "--master-addr", "--local-ranks-filter", "--rdzv-conf"):
            with self.subTest(option=option):
                self.assert_refused(self.launch(f"{option}={huge}", *job), option, "9000 bytes")
        self.assert_refused(self.launch("--log-dir=" + "d" * 5000, *job), "5000 bytes")
        self.assert_refused(self.launch("--role=a\nb", *job), "--role", "control character")


class NoEmptyLogFiles(Scratch):
    def test_a_filter_hiding_rank_0_leaves_nothing_behind(self):
        # The repro: an empty stderr.log of each hidden rank kept /tmp/torchelastic_*.
        r = self.launch("--nproc-per-node=2", "--local-ranks-filter=1", "--no-python",
                        "/bin/echo", "hello")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.count("hello"), 1, r.stdout)
        self.assertEqual(self.left_behind(), [])

    def test_duplicate_filters_that_match_nothing_leave_nothing_behind(self):
        r = self.launch("--nproc-per-node=2", "--tee=3", "--duplicate-stdout-filters=loss",
                        "--duplicate-stderr-filters=warn", "--no-python", "/bin/echo", "hello")
        self.assertEqual(r.returncode, 0, r.stderr)
        # The tee'd per-rank logs were asked for and stay; no empty filtered_*.log beside them.
        logs = self.left_behind()
        self.assertTrue(any(p.endswith("stdout.log") for p in logs), logs)
        self.assertFalse([p for p in logs if "filtered_" in p], logs)

    def test_a_hidden_rank_that_fails_keeps_its_traceback(self):
        r = self.launch("--nproc-per-node=2", "--local-ranks-filter=1", "--no-python",
                        "/bin/sh", "-c", '[ "$LOCAL_RANK" = 0 ] && { echo boom >&2; exit 3; }; '
                        "exit 0")
        self.assertEqual(r.returncode, 1, r.stderr)
        stderr_logs = [p for p in self.left_behind() if p.endswith("stderr.log")]
        self.assertEqual(len(stderr_logs), 1, stderr_logs)
        with open(stderr_logs[0]) as f:
            self.assertEqual(f.read(), "boom\n")


class NodeIdsBehindOneAddress(Scratch):
    """Two agents on one address, each PID 1 of its own PID namespace: before issue 23 both
    were node "127.0.0.1_1", one participant, and --nnodes=2 waited for the join timeout."""

    def test_two_agents_with_one_address_and_pid_form_a_job_of_two(self):
        if os.geteuid() != 0 or shutil.which("unshare") is None:
            self.skipTest("needs root and unshare(1) for PID namespaces")
        probe = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"],
                               capture_output=True)
        if probe.returncode != 0:
            self.skipTest("cannot make a PID namespace here: " + probe.stderr.decode())
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        worker = 'echo "pid=$$ group_rank=$GROUP_RANK world_size=$WORLD_SIZE"'
        agents = [subprocess.Popen(
            ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", CPPLAUNCH,
             "--nnodes=2", "--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{port}",
             "--rdzv-id=pid1", "--rdzv-conf=join_timeout=20,last_call_timeout=1",
             "--no-python", "/bin/sh", "-c", worker],
            env=clean_env(TMPDIR=self.tmpdir), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True) for _ in range(2)]
        try:
            results = [a.communicate(timeout=60) for a in agents]
        finally:
            for a in agents:
                if a.poll() is None:
                    a.kill()
                    a.communicate()
        ranks = set()
        for a, (out, err) in zip(agents, results):
            self.assertEqual(a.returncode, 0, err)
            self.assertIn("world_size=2", out, out + err)
            ranks.add(out.split("group_rank=")[1].split()[0])
        self.assertEqual(ranks, {"0", "1"}, results)


if __name__ == "__main__":
    unittest.main()
