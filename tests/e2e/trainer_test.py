"""The LibTorch example trainer (examples/trainer.cpp) as a real data-parallel job under cpplaunch:
2 and 4 workers train (loss falls, replicas match, exit 0), a SIGKILLed worker is recovered from
the checkpoint with --max-restarts=1, a diverged replica fails the job, and the same run under
Debian's torchrun ends with bit-identical weights.

usage: trainer_test.py CPPLAUNCH TRAINER [unittest args]
"""
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
TRAINER = os.path.abspath(sys.argv.pop(1))
TORCHRUN = "/usr/bin/torchrun"
# Launchers put their log directories under $TMPDIR; this one is removed at exit.
SCRATCH = tempfile.TemporaryDirectory(prefix="cpplaunch-e2e-")
JOB_TIMEOUT = 90  # seconds; a healthy run takes a few

EPOCH = re.compile(r"epoch +(\d+)/(\d+) +loss ([0-9.]+) +train acc +([0-9.]+)% +test acc +([0-9.]+)%")
REPLICA_OK = re.compile(r"replica check: OK, all (\d+) replicas hold identical parameters "
                        r"\((\d+) values, checksum ([-0-9.e+]+)\)")
RESUMED = re.compile(r"resumed from checkpoint (\S+) after epoch (\d+); continuing at epoch (\d+)")
HOLDING = re.compile(r"rank (\d+) \(pid (\d+)\): holding after epoch (\d+)")
ATTEMPT = re.compile(r"trainer: (\d+) workers meet in the launcher's store at \S+ \(attempt (\d+)\)")


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PET_", "TORCHELASTIC_", "RANK", "LOCAL_RANK", "WORLD_SIZE",
                                "MASTER_"))}
    env["TMPDIR"] = SCRATCH.name
    return env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpplaunch(nproc, *trainer_args, restarts=0):
    return [CPPLAUNCH, f"--nproc-per-node={nproc}", "--master-port=0", f"--max-restarts={restarts}",
            "--no-python", TRAINER, *trainer_args]


def torchrun(nproc, *trainer_args):
    # Debian's 1.13 torchrun needs -r/-t values it can parse (see docs/troubleshooting.md).
    return [TORCHRUN, "-r", "9:1", "-t", "9:1", f"--nproc_per_node={nproc}",
            f"--master_port={free_port()}", "--no_python", TRAINER, *trainer_args]


class Job:
    """A launcher run in its own session; lines are collected as they arrive so a test can react
    to them, and the whole session is killed if the test ends early."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, env=clean_env(), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.lines = queue.Queue()
        self.stdout, self.stderr = [], []
        self.readers = [threading.Thread(target=self._read, args=(s, sink), daemon=True)
                        for s, sink in ((self.proc.stdout, self.stdout),
                                        (self.proc.stderr, self.stderr))]
        for r in self.readers:
            r.start()

    def _read(self, stream, sink):
        for line in stream:
            sink.append(line)
            self.lines.put(line)

    def wait_for(self, pattern, count, seconds):
        """The first `count` matches of `pattern` on either stream, waiting up to `seconds`."""
        found, deadline = [], time.monotonic() + seconds
        while len(found) < count:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"{len(found)}/{count} lines matching {pattern.pattern!r} "
                                     f"after {seconds}s\n{self.text()}")
            if m := pattern.search(line):
                found.append(m)
        return found

    def finish(self, seconds=JOB_TIMEOUT):
        try:
            self.proc.wait(timeout=seconds)
        finally:
            self.kill()
        for r in self.readers:
            r.join(timeout=5)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return self.proc.returncode

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def out(self):
        return "".join(self.stdout)

    def text(self):
        return f"--- stdout\n{''.join(self.stdout)}--- stderr\n{''.join(self.stderr)}"


def run(argv):
    job = Job(argv)
    return job.finish(), job


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class TrainerTest(unittest.TestCase):
    def assertTrained(self, job, world, epochs, first_epoch=1):
        """Every epoch reported once and in order, loss falling, a useful accuracy, and the
        replica check passed with `world` replicas."""
        out = job.out()
        found = [m for m in EPOCH.finditer(out)]
        if first_epoch > 1:  # epochs before the resume line belong to the failed attempt
            found = [m for m in found if m.start() > RESUMED.search(out).end()]
        self.assertEqual([int(m[1]) for m in found], list(range(first_epoch, epochs + 1)),
                         job.text())
        losses = [float(m[3]) for m in found]
        self.assertLess(losses[-1], losses[0], f"loss did not decrease: {losses}\n{job.text()}")
        self.assertGreater(float(found[-1][5]), 85.0, job.text())  # Bayes limit is about 94.5%
        replica = REPLICA_OK.search(out)
        self.assertIsNotNone(replica, job.text())
        self.assertEqual(int(replica[1]), world, job.text())
        return losses, replica[3]

    def check_training(self, world):
        rc, job = run(cpplaunch(world, "--epochs=6"))
        self.assertEqual(rc, 0, job.text())
        attempt = ATTEMPT.search(job.out())
        self.assertEqual((attempt[1], attempt[2]), (str(world), "0"), job.text())
        self.assertTrained(job, world, 6)

    def test_two_workers_train(self):
        self.check_training(2)

    def test_four_workers_train(self):
        self.check_training(4)

    def test_same_weights_as_under_torchrun(self):
        """Same seed, same world size: the launchers differ, the arithmetic must not."""
        args = ("--epochs=3", "--samples=1024")
        rc, ours = run(cpplaunch(2, *args))
        self.assertEqual(rc, 0, ours.text())
        rc, theirs = run(torchrun(2, *args))
        self.assertEqual(rc, 0, theirs.text())
        our_losses, our_sum = self.assertTrained(ours, 2, 3)
        their_losses, their_sum = self.assertTrained(theirs, 2, 3)
        self.assertEqual((our_losses, our_sum), (their_losses, their_sum))

    def test_killed_worker_resumes_from_checkpoint(self):
        with tempfile.TemporaryDirectory(prefix="cpplaunch-trainer-test-") as tmp:
            checkpoint = os.path.join(tmp, "ckpt.pt")
            job = Job(cpplaunch(2, "--epochs=5", f"--checkpoint={checkpoint}",
                                "--hold-at-epoch=2", "--timeout=40", restarts=1))
            try:
                holding = {int(m[1]): int(m[2]) for m in job.wait_for(HOLDING, 2, 60)}
                self.assertEqual(sorted(holding), [0, 1], job.text())
                self.assertTrue(os.path.exists(checkpoint))
                os.kill(holding[1], signal.SIGKILL)  # a real, external kill of rank 1
                rc = job.finish()
            finally:
                job.kill()
            self.assertEqual(rc, 0, job.text())
            out = job.out()
            resumed = RESUMED.search(out)
            self.assertIsNotNone(resumed, job.text())
            self.assertEqual((resumed[1], resumed[2], resumed[3]), (checkpoint, "2", "3"))
            before, after = out[:resumed.start()], out[resumed.end():]
            self.assertEqual([int(m[1]) for m in EPOCH.finditer(before)], [1, 2], job.text())
            self.assertEqual([int(m[1]) for m in EPOCH.finditer(after)], [3, 4, 5], job.text())
            self.assertEqual([m[2] for m in ATTEMPT.finditer(out)], ["0", "1"], job.text())
            _, resumed_sum = self.assertTrained(job, 2, 5, first_epoch=3)
            self.assertEqual([p for p in holding.values() if alive(p)], [], "attempt 0 outlived")
            self.assertEqual(os.listdir(tmp), ["ckpt.pt"])  # no torn temporary files
        # Model and optimizer state came back whole: the same weights as a run never killed.
        rc, straight = run(cpplaunch(2, "--epochs=5"))
        self.assertEqual(rc, 0, straight.text())
        self.assertEqual(self.assertTrained(straight, 2, 5)[1], resumed_sum)

    def test_killed_worker_without_restarts_fails_the_job(self):
        job = Job(cpplaunch(2, "--epochs=3", "--hold-at-epoch=1", "--timeout=40"))
        try:
            holding = {int(m[1]): int(m[2]) for m in job.wait_for(HOLDING, 2, 60)}
            os.kill(holding[1], signal.SIGKILL)
            rc = job.finish()
        finally:
            job.kill()
        self.assertEqual(rc, 1, job.text())
        self.assertNotIn("replica check: OK", job.out())
        self.assertIn("SIGKILL", "".join(job.stderr), job.text())

    def test_diverged_replica_fails_the_job(self):
        rc, job = run(cpplaunch(2, "--epochs=1", "--diverge-rank=1"))
        self.assertEqual(rc, 1, job.text())
        self.assertIn("replica check: FAILED on rank", "".join(job.stderr), job.text())
        self.assertNotIn("replica check: OK", job.out())

    def test_without_a_launcher_explains_itself(self):
        p = subprocess.run([TRAINER], env=clean_env(), capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("is not set", p.stderr)
        self.assertIn("cpplaunch --nproc-per-node=2", p.stderr)
        p = subprocess.run([TRAINER, "--epochs=many"], env=clean_env(), capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--epochs must be an integer", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
