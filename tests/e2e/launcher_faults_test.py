"""Faults the launcher survives or names (issue 15): the root cause of a two-host restart, the
agent's file-descriptor limit, error-file temporaries, full log disks, PID limits and empty
addresses. Real processes throughout; two "hosts" are two agents on loopback.

usage: launcher_faults_test.py CPPLAUNCH TEST_WORKER [unittest args]
"""
import os
import re
import resource
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
WORKER = os.path.abspath(sys.argv.pop(1))
PYTHON = "/usr/bin/python3"


def env(**extra):
    return clean_env(**{"PYTHON_EXEC": PYTHON, **extra})


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(*args, timeout=60, **kw):
    return subprocess.run([CPPLAUNCH, *args], env=kw.pop("env", env()), capture_output=True,
                          text=True, timeout=timeout, **kw)


class RootCause(unittest.TestCase):
    # Attempt 0: global rank FAIL exits 3 after a moment; its siblings sleep until the teardown
    # stops them (SIGTERM). Attempt 1: everybody succeeds.
    NPROC = 8
    FAIL = NPROC  # local rank 0 of node 1
    SCRIPT = ('if [ "$TORCHELASTIC_RESTART_COUNT" = 0 ]; then '
              '  if [ "$RANK" = "%d" ]; then sleep 0.2; exit 3; fi; exec sleep 30; fi; exit 0')

    def run_job(self):
        port = free_port()
        agents = []
        try:
            for node in range(2):
                argv = [CPPLAUNCH, "--nnodes=2", f"--node-rank={node}",
                        "--master-addr=127.0.0.1", f"--master-port={port}",
                        f"--nproc-per-node={self.NPROC}", "--max-restarts=1",
                        "--rdzv-conf=timeout=20", "--no-python", "/bin/sh", "-c",
                        self.SCRIPT % self.FAIL]
                agents.append(subprocess.Popen(argv, env=env(), stdout=subprocess.PIPE,
                                               stderr=subprocess.STDOUT, text=True))
            return [(a.communicate(timeout=60)[0], a.returncode) for a in agents]
        finally:
            for a in agents:
                if a.poll() is None:
                    a.kill()
                    a.communicate()

    def test_twelve_restarts_name_the_failed_worker_on_every_host(self):
        # Before the fix about one run in six had the failing host name a sibling its own
        # teardown had stopped ("killed by SIGTERM") while the other host named the real one.
        for run in range(12):
            for node, (out, code) in enumerate(self.run_job()):
                self.assertEqual(code, 0, f"run {run}, node {node}:\n{out}")
                causes = re.findall(r"root cause: (.*?)\); restarting", out)
                self.assertEqual(len(causes), 1, f"run {run}, node {node}:\n{out}")
                self.assertIn(f"worker rank {self.FAIL} (local rank 0) on ", causes[0])
                self.assertTrue(causes[0].endswith("failed: exited with code 3"),
                                f"run {run}, node {node}: {causes[0]}")


class FileDescriptors(unittest.TestCase):
    """A soft RLIMIT_NOFILE of 1,024 (a common default) and 1,100 idle clients on the store."""
    # Attempt 0: both workers report their soft fd limit, then rank 0 waits for the test's go
    # and fails. Attempt 1: both print a line and succeed (their log files must open).
    SCRIPT = ('echo "limit $(ulimit -n)"; '
              'if [ "$TORCHELASTIC_RESTART_COUNT" = 0 ]; then '
              '  while [ ! -e "$GO" ]; do sleep 0.02; done; '
              '  if [ "$LOCAL_RANK" = 0 ]; then exit 3; fi; exec sleep 30; fi; echo restarted')
    HELD = 1100

    def run_with_limit(self, soft, hard):
        d = tempfile.mkdtemp(prefix="cpplaunch-fd-")
        self.addCleanup(shutil.rmtree, d, True)
        go = os.path.join(d, "go")
        port = free_port()
        argv = [CPPLAUNCH, "--nproc-per-node=2", "--max-restarts=1", "--tee=3",
                f"--log-dir={d}/logs", "--master-addr=127.0.0.1", f"--master-port={port}",
                "--no-python", "/bin/sh", "-c", self.SCRIPT]
        agent = subprocess.Popen(
            argv, env=env(GO=go), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard)))
        held = []
        try:
            deadline = time.monotonic() + 20
            while len(held) < self.HELD and time.monotonic() < deadline:
                s = socket.socket()
                try:
                    s.connect(("127.0.0.1", port))
                    held.append(s)
                except ConnectionRefusedError:  # the store is not up yet
                    s.close()
                    time.sleep(0.02)
            self.assertEqual(len(held), self.HELD)
            time.sleep(0.5)  # the agent accepts (or refuses) them all
            agent_fds = len(os.listdir(f"/proc/{agent.pid}/fd"))
            with open(go, "w"):
                pass
            out, err = agent.communicate(timeout=60)
        finally:
            for s in held:
                s.close()
            if agent.poll() is None:
                os.killpg(agent.pid, signal.SIGKILL)
                agent.communicate()
        return agent.returncode, out, err, agent_fds

    def check_restarted(self, code, out, err):
        self.assertEqual(code, 0, err)
        self.assertEqual(out.count("restarted"), 2, out + err)
        # The workers have the soft limit they were started with, as under torchrun.
        self.assertEqual(out.count("limit 1024"), 4, out)
        self.assertNotIn("Too many open files", err)

    def test_soft_limit_is_raised_so_held_connections_leave_room_for_a_tee_restart(self):
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        if hard != resource.RLIM_INFINITY and hard < 4096:
            self.skipTest(f"the hard fd limit ({hard}) leaves nothing to raise to")
        code, out, err, agent_fds = self.run_with_limit(1024, hard)
        self.check_restarted(code, out, err)
        self.assertGreater(agent_fds, self.HELD)  # every connection held beside the job

    def test_an_unraisable_limit_caps_the_store_below_it(self):
        code, out, err, agent_fds = self.run_with_limit(1024, 1024)
        self.check_restarted(code, out, err)
        # min(16384, 1024 - (256 + 2 x 8)) connections; the rest are closed at once.
        self.assertLess(agent_fds, 1024 - 200)


class Files(unittest.TestCase):
    def test_full_log_disk_is_the_workers_write_error_and_the_console_shows_the_file(self):
        if os.geteuid() != 0 or not shutil.which("unshare"):
            self.skipTest("needs root and unshare to mount a tiny tmpfs in a private namespace")
        d = tempfile.mkdtemp(prefix="cpplaunch-enospc-")
        self.addCleanup(shutil.rmtree, d, True)
        # 64 KiB of tmpfs; the worker writes 400 KB to stdout and 300 lines to stderr, fails.
        argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                'mount -t tmpfs -o size=64k tmpfs "$0" && exec "$@"', d,
                CPPLAUNCH, "--nproc-per-node=1", "--tee=3", f"--log-dir={d}",
                "--no-python", WORKER, "--stdout-bytes", "400000", "--stderr-lines", "300",
                "--exit", "1"]
        r = subprocess.run(argv, env=env(), capture_output=True, text=True, timeout=60)
        if "mount:" in r.stderr and r.returncode != 1:
            self.skipTest(f"cannot mount a tmpfs here: {r.stderr.strip()}")
        self.assertEqual(r.returncode, 1, r.stderr[-2000:])
        self.assertIn("ChildFailedError", r.stderr)
        # The worker writes its tee'd log files itself (as under torchrun, and as with
        # --redirects): the full disk is the worker's write error, not the agent's.
        self.assertNotIn("cannot write the log file", r.stderr)
        self.assertNotIn("log file cut short", r.stderr)
        # The console shows what reached the file, prefixed: some of it, not all of it.
        lines = r.stdout.splitlines()
        self.assertTrue(lines)
        self.assertTrue(all(line.startswith("[default0]:") for line in lines), lines[:3])
        self.assertGreater(r.stdout.count("x"), 0)
        self.assertLess(r.stdout.count("x"), 64 * 1024)


class Inputs(unittest.TestCase):
    def test_empty_master_addr_is_a_usage_error(self):
        for args, extra in ((["--master-addr="], {}), ([], {"PET_MASTER_ADDR": ""})):
            r = launch(*args, "--no-python", WORKER, env=env(**extra))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("cpplaunch: error: --master-addr is empty", r.stderr)
            self.assertEqual(r.stdout, "")

    def test_nproc_above_the_hosts_pid_limits_is_one_line(self):
        limits = []
        for name in ("pid_max", "threads-max"):
            with open(f"/proc/sys/kernel/{name}") as f:
                limits.append(int(f.read()))
        if min(limits) >= 100000:
            self.skipTest(f"kernel.pid_max and threads-max ({limits}) allow 100,000 workers")
        with tempfile.TemporaryDirectory() as d:
            stamp = os.path.join(d, "started")
            r = launch("--nproc-per-node=100000", "--no-python", "/bin/sh", "-c",
                       f"touch {stamp}", timeout=30)
            self.assertEqual(r.returncode, 2, r.stderr)
            lines = r.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertTrue(lines[0].startswith(
                "cpplaunch: error: --nproc-per-node=100000 is more than this host can start: "),
                lines[0])
            self.assertFalse(os.path.exists(stamp))

    def test_nproc_above_a_pids_cgroup_limit_names_the_cgroup(self):
        cgroup = None
        for root in ("/sys/fs/cgroup/pids", "/sys/fs/cgroup"):
            if os.path.exists(os.path.join(root, "cgroup.procs")) and \
                    (root.endswith("pids") or os.path.exists(os.path.join(root, "pids.current"))
                     or "pids" in open(os.path.join(root, "cgroup.subtree_control")).read()):
                cgroup = os.path.join(root, f"cpplaunch-test-{os.getpid()}")
                break
        if cgroup is None or os.geteuid() != 0:
            self.skipTest("needs root and a pids cgroup controller")
        try:
            os.mkdir(cgroup)
            with open(os.path.join(cgroup, "pids.max"), "w") as f:
                f.write("20")
        except OSError as e:
            self.skipTest(f"cannot create a pids cgroup: {e}")
        self.addCleanup(os.rmdir, cgroup)

        def join():
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                f.write("0")
        r = subprocess.run([CPPLAUNCH, "--nproc-per-node=64", "--no-python", "/bin/true"],
                           env=env(), capture_output=True, text=True, timeout=30,
                           preexec_fn=join)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(f"the pids cgroup {cgroup} allows", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


if __name__ == "__main__":
    unittest.main()
