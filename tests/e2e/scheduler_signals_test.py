"""Signals as schedulers and containers send them, to the real cpplaunch binary with real
workers: --forward-signals (preemption notices that must not end the job), its usage errors,
and cpplaunch as PID 1 of a PID namespace (a container's init: orphans reaped, SIGTERM and
SIGINT handled although the kernel drops unhandled signals to PID 1).

usage: scheduler_signals_test.py CPPLAUNCH TEST_WORKER [unittest args]
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from launcher_env import clean_env

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
WORKER = os.path.abspath(sys.argv.pop(1))


def env(**extra):
    return clean_env(**extra)


def launch(*args, timeout=60):
    return subprocess.run([CPPLAUNCH, *args], env=env(), capture_output=True, text=True,
                          timeout=timeout)


def lines_of(path):
    try:
        with open(path) as f:
            return f.read().split()
    except FileNotFoundError:
        return []


def wait_for_lines(path, count, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if len(lines_of(path)) >= count:
            return lines_of(path)
        time.sleep(0.01)
    raise AssertionError(f"only {lines_of(path)} in {path} after {seconds}s")


def stat_fields(pid):
    """(state, ppid) of `pid`, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return fields[0], int(fields[1])
    except (OSError, IndexError):
        return None


def command_of(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return os.path.basename(f.read().split(b"\0")[0].decode())
    except OSError:
        return None


def children_of(pid):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat_fields(int(entry))
            if fields and fields[1] == pid:
                found.append((int(entry), fields[0]))
    return found


# A worker that records every SIGUSR1 and SIGUSR2 it gets in rec.<local rank> and exits 0 once
# it has both. `sleep` runs in the worker's process group and dies of the forwarded signal too:
# the loop goes on, and the worker's own exit status is set explicitly.
RECORDING_WORKER = r"""
n=0
trap 'echo USR1 >> "$D/rec.$LOCAL_RANK"; n=$((n+1))' USR1
trap 'echo USR2 >> "$D/rec.$LOCAL_RANK"; n=$((n+1))' USR2
echo $$ >> "$D/ready"
while [ "$n" -lt 2 ]; do sleep 0.05; done
exit 0
"""


class ForwardSignals(unittest.TestCase):
    def test_listed_signals_reach_every_worker_and_the_job_ends_zero(self):
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.Popen([CPPLAUNCH, "--nproc-per-node=3",
                                  "--forward-signals=SIGUSR1,SIGUSR2", "--no-python", "/bin/sh",
                                  "-c", RECORDING_WORKER],
                                 env=env(D=d), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, start_new_session=True)
            try:
                wait_for_lines(os.path.join(d, "ready"), 3)
                p.send_signal(signal.SIGUSR1)
                for rank in range(3):
                    wait_for_lines(os.path.join(d, f"rec.{rank}"), 1)
                p.send_signal(signal.SIGUSR2)
                out, err = p.communicate(timeout=30)
            finally:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.communicate()
            self.assertEqual(p.returncode, 0, err)
            for rank in range(3):
                self.assertEqual(lines_of(os.path.join(d, f"rec.{rank}")), ["USR1", "USR2"])
            self.assertIn("cpplaunch: received SIGUSR1; passed it to the workers "
                          "(--forward-signals); the job keeps running", err)
            self.assertIn("received SIGUSR2; passed it", err)

    def test_usage_errors_are_one_line_and_exit_two(self):
        for args, expected in [
            (["--forward-signals=USR1"], "'USR1' is not a signal name"),
            (["--forward-signals=SIGKILL"], "cannot forward SIGKILL"),
            (["--forward-signals=SIGUSR1,SIGTERM"],
             "SIGTERM is in both --forward-signals and --signals-to-handle"),
        ]:
            r = launch(*args, "--no-python", "/bin/true")
            self.assertEqual(r.returncode, 2, r.stderr)
            lines = r.stderr.strip().splitlines()
            self.assertEqual(len(lines), 2, r.stderr)  # the error, then argparse's --help hint
            self.assertIn(expected, lines[0])


def pid1_unavailable():
    if os.geteuid() != 0:
        return "needs root for unshare --pid"
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    r = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return f"unshare --pid does not work here: {r.stderr.strip()}"
    return None


# Each worker double-forks short-lived orphans (they exit after 1 s, reparented to the agent), then says it is ready and waits for SIGTERM, which it reports and exits 0 on.
ORPHANING_WORKER = r"""
for i in 1 2 3 4; do (sleep 1 &); done
trap 'echo "$LOCAL_RANK" >> "$D/term"; exit 0' TERM
echo $$ >> "$D/ready"
while true; do sleep 0.05; done
"""


@unittest.skipIf(pid1_unavailable(), pid1_unavailable())
class Pid1(unittest.TestCase):
    """cpplaunch as PID 1 of a new PID namespace, as in a container without an init."""

    def start(self, d):
        outer = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", CPPLAUNCH,
                                  "--nproc-per-node=2", "--shutdown-timeout=5", "--no-python",
                                  "/bin/sh", "-c", ORPHANING_WORKER],
                                 env=env(D=d), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, start_new_session=True)
        self.addCleanup(self.kill, outer)
        wait_for_lines(os.path.join(d, "ready"), 2)
        inner = [pid for pid, _ in children_of(outer.pid)]
        self.assertEqual(len(inner), 1, "unshare --fork has one child, the namespace's PID 1")
        return outer, inner[0]

    @staticmethod
    def kill(outer):
        if outer.poll() is None:
            os.killpg(outer.pid, signal.SIGKILL)
            outer.communicate()

    def assert_orphans_reaped(self, agent):
        """The orphans become the agent's children (it is PID 1 and a subreaper) and are
        reaped when they exit: no zombie is left."""
        adopted = [pid for pid, _ in children_of(agent) if command_of(pid) == "sleep"]
        self.assertGreater(len(adopted), 0, "the orphans were not reparented to PID 1")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            children = children_of(agent)
            zombies = [pid for pid, state in children if state == "Z"]
            orphans = [pid for pid, _ in children if command_of(pid) == "sleep"]
            if not zombies and not orphans:
                return
            time.sleep(0.05)
        self.fail(f"under PID 1: zombies {zombies}, orphans {orphans}")

    def check_signal_ends_the_job(self, signo):
        with tempfile.TemporaryDirectory() as d:
            outer, agent = self.start(d)
            self.assert_orphans_reaped(agent)
            start = time.monotonic()
            os.kill(agent, signo)
            out, err = outer.communicate(timeout=30)
            elapsed = time.monotonic() - start
            self.assertEqual(outer.returncode, 1, err)
            self.assertLess(elapsed, 5, "the workers trap SIGTERM and exit at once")
            # The signal itself is forwarded: the workers trap only TERM, INT kills them.
            expected = ["0", "1"] if signo == signal.SIGTERM else []
            self.assertEqual(sorted(lines_of(os.path.join(d, "term"))), expected)
            self.assertIn(f"received {signal.Signals(signo).name}; forwarding it", err)

    def test_orphans_are_reaped_and_sigterm_tears_down(self):
        self.check_signal_ends_the_job(signal.SIGTERM)

    def test_sigint_tears_down(self):
        self.check_signal_ends_the_job(signal.SIGINT)


if __name__ == "__main__":
    unittest.main(verbosity=2)
