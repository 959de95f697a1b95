"""Failures that explain themselves (issue 12): a kernel OOM kill in a memory cgroup the test
makes, a job hung in gloo's all_reduce under --hang-timeout (and the same job without it), the
root cause's own exit code under --exit-code=worker, and a worker killed from outside, dumping
core, or that cannot be run. Real processes throughout; torch 1.13 from /usr/bin/python3.

usage: diagnosis_test.py CPPLAUNCH [unittest args]
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

from launcher_env import clean_env

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
PYTHON = "/usr/bin/python3"


def env(**extra):
    return clean_env(**{"PYTHON_EXEC": PYTHON, "OMP_NUM_THREADS": "1", **extra})


def launch(*args, timeout=60, **kw):
    return subprocess.run([CPPLAUNCH, *args], env=kw.pop("env", env()), capture_output=True,
                          text=True, timeout=timeout, **kw)


def has_torch():
    return subprocess.run([PYTHON, "-c", "import torch.distributed"],
                          capture_output=True).returncode == 0


class Scratch(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cpplaunch-diagnosis-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def script(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path


# ---- OOM in a memory cgroup


def make_memory_cgroup(limit):
    """A fresh memory cgroup limited to `limit` bytes: (path, None), or (None, skip reason).
    v2 memory.max where /sys/fs/cgroup is the unified hierarchy with the memory controller,
    else v1's memory controller (this machine's hybrid layout)."""
    name = f"cpplaunch-oom-{os.getpid()}"
    v2 = "/sys/fs/cgroup/cgroup.controllers"
    if os.path.exists(v2):
        with open(v2) as f:
            if "memory" not in f.read().split():
                return None, "cgroup v2 without the memory controller"
        path, limit_file = f"/sys/fs/cgroup/{name}", "memory.max"
    elif os.path.isdir("/sys/fs/cgroup/memory"):
        path, limit_file = f"/sys/fs/cgroup/memory/{name}", "memory.limit_in_bytes"
    else:
        return None, "no memory cgroup (neither v2 memory.max nor v1 /sys/fs/cgroup/memory)"
    try:
        os.mkdir(path)
        with open(os.path.join(path, limit_file), "w") as f:
            f.write(str(limit))
        if limit_file == "memory.limit_in_bytes":
            # Without swap accounting limits, a v1 cgroup may swap instead of killing.
            swap = os.path.join(path, "memory.memsw.limit_in_bytes")
            if os.path.exists(swap):
                with open(swap, "w") as f:
                    f.write(str(limit))
    except OSError as e:
        remove_cgroup(path)
        return None, f"cannot create a memory cgroup at {path}: {e.strerror}"
    return path, None


def remove_cgroup(path):
    deadline = time.monotonic() + 10
    while os.path.isdir(path) and time.monotonic() < deadline:
        try:
            os.rmdir(path)
        except OSError:
            time.sleep(0.05)  # the last member's exit is still being accounted


class OomKill(Scratch):
    LIMIT = 256 << 20

    def test_worker_past_the_memory_limit_is_named_an_oom_kill(self):
        cgroup, reason = make_memory_cgroup(self.LIMIT)
        if cgroup is None:
            self.skipTest(reason)
        try:
            hog = self.script("hog.py", """\
                import os, time
                if os.environ["RANK"] == "1":
                    chunks = []
                    while True:
                        chunks.append(bytearray(16 << 20))
                time.sleep(60)
                """)
            procs = os.path.join(cgroup, "cgroup.procs")
            p = subprocess.run(
                ["/bin/sh", "-c", f'echo $$ > {procs} && exec "$0" "$@"', CPPLAUNCH,
                 "--nproc-per-node=2", "--master-port=0", "--shutdown-timeout=2", hog],
                env=env(), capture_output=True, text=True, timeout=60)
        finally:
            remove_cgroup(cgroup)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertRegex(p.stderr, r"exitcode  : -9 \(pid: \d+\) SIGKILL\n  reason    : killed by "
                         r"the kernel's OOM killer \(memory limit 256\.0 MiB, peak [\d.]+ MiB\)")
        # Rank 0 was stopped by the teardown: no reason of its own.
        self.assertEqual(p.stderr.count("OOM killer"), 1, p.stderr)


# ---- Hangs


HANG_JOB = """\
    import os, time
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    t = torch.ones(4)
    for step in range(3):
        dist.all_reduce(t)
    print(f"rank {rank}: warmed up", flush=True)
    if rank == 3:
        time.sleep(3600)  # stops calling all_reduce
    dist.all_reduce(t)
    print(f"rank {rank}: never here", flush=True)
    """


class Hang(Scratch):
    def setUp(self):
        if not has_torch():
            self.skipTest(f"no torch.distributed in {PYTHON}")
        super().setUp()
        self.job = self.script("stuck.py", HANG_JOB)

    def start(self, *options):
        return subprocess.Popen([CPPLAUNCH, "--nproc-per-node=4", "--master-port=0", *options,
                                 self.job], env=env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)

    def wait_warmed_up(self, p):
        # Counted in the text, not per line: under `python -u` print() writes a line and its
        # newline apart, so four ranks sharing the pipe can interleave them.
        seen = ""
        while seen.count("warmed up") < 4:
            line = p.stdout.readline()
            self.assertTrue(line, "the job ended before every rank warmed up")
            seen += line
        return time.monotonic()

    def test_hang_timeout_ends_the_job_with_each_rank_stack(self):
        p = self.start("--hang-timeout=5")
        try:
            warmed_up = self.wait_warmed_up(p)
            out, err = p.communicate(timeout=60)
            ended = time.monotonic()
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate()
        # 5 s without progress, detected by a 1 s tick, 2 s at most for the dumps, teardown.
        self.assertLess(ended - warmed_up, 5 + 1 + 2 + 4, err)
        self.assertGreater(ended - warmed_up, 4.5, err)
        self.assertEqual(p.returncode, 1, err)
        self.assertIn("cpplaunch: no worker made progress for 5 s (--hang-timeout", err)
        places = dict(re.findall(r"cpplaunch:   rank (\d): (.*)\n", err))
        self.assertEqual(places, {"0": "all_reduce at stuck.py:13",
                                  "1": "all_reduce at stuck.py:13",
                                  "2": "all_reduce at stuck.py:13",
                                  "3": "<module> at stuck.py:12"}, err)
        for rank in range(4):
            self.assertIn(f"cpplaunch: rank {rank} (local rank {rank}), most recent call first:\n"
                          f'    File "', err)
        self.assertEqual(err.count("  reason    : no progress for 5 s (--hang-timeout); stopped "
                                   "with SIGABRT for its stack: "), 4, err)
        self.assertNotIn("never here", out)

    def test_two_hosts_each_collect_their_own_stacks(self):
        # Two agents on loopback, two workers each; global rank 3 (host 1) stops calling
        # all_reduce. Whichever agent notices first ends the round naming the hang; the other,
        # stalled too, collects its own workers' stacks before stopping.
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        agents = [subprocess.Popen(
            [CPPLAUNCH, "--nnodes=2", f"--node-rank={node}", "--nproc-per-node=2",
             "--master-addr=127.0.0.1", f"--master-port={port}", "--hang-timeout=5", self.job],
            env=env(GLOO_SOCKET_IFNAME="lo"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, start_new_session=True) for node in range(2)]
        try:
            results = [a.communicate(timeout=90) for a in agents]
        finally:
            for a in agents:
                if a.poll() is None:
                    os.killpg(a.pid, signal.SIGKILL)
                    a.communicate()
        expected = [{"0": "all_reduce at stuck.py:13", "1": "all_reduce at stuck.py:13"},
                    {"2": "all_reduce at stuck.py:13", "3": "<module> at stuck.py:12"}]
        for node, (a, (_, err)) in enumerate(zip(agents, results)):
            self.assertEqual(a.returncode, 1, err)
            self.assertEqual(dict(re.findall(r"cpplaunch:   rank (\d): (.*)\n", err)),
                             expected[node], f"node {node}:\n{err}")
        # One host declared the hang and named it to the other.
        declared = [("no worker made progress for 5 s" in err) for _, err in results]
        self.assertIn(True, declared, results)
        other = results[declared.index(True) ^ 1][1] if declared.count(True) == 1 else None
        if other is not None:
            self.assertIn("stopped: no worker made progress for 5 s (--hang-timeout", other)
            self.assertIn("this host's workers made no progress either", other)

    def test_without_the_option_the_hung_job_runs_on(self):
        p = self.start()
        try:
            self.wait_warmed_up(p)
            with self.assertRaises(subprocess.TimeoutExpired):
                p.wait(timeout=8)  # past a 5 s timeout and its teardown
            os.killpg(p.pid, signal.SIGTERM)
            out, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate()
        self.assertNotIn("--hang-timeout", err)
        self.assertNotIn("Fatal Python error", err)

    def test_a_healthy_job_is_untouched_by_the_option(self):
        busy = self.script("busy.py", """\
            import time
            import torch
            import torch.distributed as dist
            dist.init_process_group("gloo")
            t = torch.ones(1 << 16)
            end = time.monotonic() + 4
            while True:  # quiet but busy: CPU, no output
                dist.all_reduce(t)
                t.div_(dist.get_world_size())
                # Every rank leaves after the same iteration: the slowest clock decides.
                going = torch.tensor([1.0 if time.monotonic() < end else 0.0])
                dist.all_reduce(going, op=dist.ReduceOp.MIN)
                if going.item() == 0:
                    break
            """)
        p = launch("--nproc-per-node=4", "--master-port=0", "--hang-timeout=1.5", busy)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("no worker made progress", p.stderr)


class HangAtExit(Scratch):
    def test_worker_stuck_after_its_last_line_is_caught_and_named(self):
        # docs/troubleshooting.md: PyTorch 1.13's gloo sometimes deadlocks while Python exits,
        # after the script's last line. That cannot be had on demand, so the same state is made
        # for certain: an atexit callback written in C (libc's pause) runs after the last line,
        # with no Python frame, and never returns. No torch needed.
        job = self.script("exits.py", """\
            import atexit, ctypes
            atexit.register(ctypes.CDLL(None).pause)
            print("last line", flush=True)
            """)
        r = launch("--nproc-per-node=2", "--master-port=0", "--hang-timeout=1", job)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout.count("last line"), 2, r.stdout)
        after = "after the script's last line (no Python frame: stuck while Python exits)"
        self.assertEqual(dict(re.findall(r"cpplaunch:   rank (\d): (.*)\n", r.stderr)),
                         {"0": after, "1": after}, r.stderr)
        self.assertIn("stopped with SIGABRT for its stack: " + after, r.stderr)
        self.assertIn("most recent call first:\n    <no Python frame>\n", r.stderr)


# ---- Exit codes and plain words


class ExitCodes(Scratch):
    def test_exit_code_worker_keeps_pytest_5_default_stays_1(self):
        job = ("--nproc-per-node=2", "--no-python", "/bin/sh", "-c",
               '[ "$RANK" = 1 ] && exit 5; sleep 30')
        self.assertEqual(launch("--exit-code=worker", *job).returncode, 5)
        self.assertEqual(launch(*job, env=env(PET_EXIT_CODE="worker")).returncode, 5)
        self.assertEqual(launch(*job).returncode, 1)
        self.assertEqual(launch("--exit-code=torchrun", *job).returncode, 1)
        p = launch("--exit-code=pytest", *job)
        self.assertEqual(p.returncode, 2)
        self.assertIn("invalid choice: 'pytest'", p.stderr)


class PlainWords(Scratch):
    def test_killed_from_outside(self):
        pids = os.path.join(self.tmp, "pids")
        # A script file: cpplaunch substitutes "$$" in the arguments, as torchrun does.
        worker = self.script("worker.sh", f'echo "$RANK $$" >> {pids}\nexec sleep 30\n')
        for signo, name in ((signal.SIGKILL, "SIGKILL"), (signal.SIGTERM, "SIGTERM")):
            if os.path.exists(pids):
                os.unlink(pids)
            p = subprocess.Popen([CPPLAUNCH, "--nproc-per-node=2", "--master-port=0",
                                  "--no-python", "/bin/sh", worker],
                                 env=env(), stderr=subprocess.PIPE, text=True)
            try:
                victim = self.wait_for_pids(pids)["1"]
                os.kill(int(victim), signo)
                _, err = p.communicate(timeout=60)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
            self.assertEqual(p.returncode, 1, err)
            self.assertRegex(err, rf"reason    : killed by {name}[ ,].*not sent by cpplaunch")
            self.assertEqual(err.count("reason    :"), 1, err)  # rank 0: stopped by the teardown

    @staticmethod
    def wait_for_pids(path):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if os.path.exists(path):
                with open(path) as f:
                    lines = f.read().splitlines()
                if len(lines) == 2:
                    return dict(line.split() for line in lines)
            time.sleep(0.05)
        raise AssertionError("the workers did not start")

    def test_core_dump(self):
        p = launch("--no-python", "/bin/sh", "-c",
                   f'ulimit -c unlimited 2>/dev/null; exec {PYTHON} -c "import os; os.abort()"',
                   cwd=self.tmp)
        self.assertEqual(p.returncode, 1)
        # Whether a core is written depends on the host's limit and core_pattern; both are said.
        self.assertRegex(p.stderr, r"reason    : crashed with SIGABRT \((core dumped|no core dump)\)")

    def test_exec_failures_say_what_and_why(self):
        # A program that is missing or not executable is refused before any worker starts
        # (exit 2, one line); what reaches exec and still fails gets the plain-words reason.
        plain = self.script("plain.txt", "not a program\n")
        p = launch("--no-python", "/nonexistent/prog")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        p = launch("--no-python", plain)
        self.assertEqual(p.returncode, 2)
        orphan = self.script("orphan.sh", "#!/nonexistent/interpreter\nexit 0\n")
        os.chmod(orphan, 0o755)
        p = launch("--no-python", orphan)
        self.assertEqual(p.returncode, 1)
        self.assertIn(f"reason    : '{orphan}' is executable: the worker itself exited 127, or its "
                      "#! interpreter is missing", p.stderr)
        p = launch("--exit-code=worker", "--no-python", "/bin/sh", "-c", "exit 127")
        self.assertEqual(p.returncode, 127)
        self.assertIn("reason    : '/bin/sh' is executable: the worker itself exited 127", p.stderr)

if __name__ == "__main__":
    unittest.main()
