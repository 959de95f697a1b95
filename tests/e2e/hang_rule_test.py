"""--hang-timeout's rule and its blind spots (issue 23, item 11), with real processes and short
timeouts: a silent phase in which one rank computes while the other waits idle is taken for a
hang (a line of output per phase covers it), ranks that all spin silently are not (the
file-timer watchdog covers it), and a worker that ignores SIGABRT is named for what it did and
still makes the hang a failure that uses a restart. docs/user-guide.md#hangs-and---hang-timeout
says the same in words. Plain Python workers (no torch).

usage: hang_rule_test.py CPPLAUNCH [unittest args]
"""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

from launcher_env import clean_env

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
PYTHON = "/usr/bin/python3"
HANG_LINE = "no worker made progress for 1 s (--hang-timeout"


def env(**extra):
    return clean_env(**{"PYTHON_EXEC": PYTHON, **extra})


class HangRule(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cpplaunch-hang-rule-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def script(self, text):
        path = os.path.join(self.tmp, "worker.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    def launch(self, *args, **extra_env):
        started = time.monotonic()
        p = subprocess.run([CPPLAUNCH, "--nproc-per-node=2", "--master-port=0", *args],
                           env=env(**extra_env), capture_output=True, text=True, timeout=60)
        return p, time.monotonic() - started

    # Rank 0 computes silently for `seconds` while rank 1 waits idle (a barrier's pattern);
    # with `every` set, rank 0 prints a line that often.
    def one_rank_computes(self, seconds, every=None):
        return self.script(f"""\
            import os, time
            end = time.monotonic() + {seconds}
            if os.environ["RANK"] == "0":
                next_line = time.monotonic()
                while time.monotonic() < end:
                    if {every!r} is not None and time.monotonic() >= next_line:
                        print("step", flush=True)
                        next_line += {every or 0}
            else:
                time.sleep({seconds})
            """)

    def test_a_silent_phase_with_one_rank_waiting_is_taken_for_a_hang(self):
        # The repro at a quarter of its times: 12 s of silent work, --hang-timeout=5.
        p, took = self.launch("--hang-timeout=1", self.one_rank_computes(6))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(HANG_LINE, p.stderr)
        # 1 s, a tick of 0.2 s, the dumps (Python dies of the SIGABRT at once), the teardown.
        self.assertLess(took, 5, p.stderr)

    def test_a_line_per_phase_covers_a_silent_phase(self):
        p, _ = self.launch("--hang-timeout=1", self.one_rank_computes(3, every=0.3))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("no worker made progress", p.stderr)

    def test_ranks_spinning_silently_are_not_taken_for_a_hang(self):
        # The second repro (a spinning deadlock's pattern) at a tenth of its 40 s.
        worker = self.script("""\
            import time
            end = time.monotonic() + 4
            while time.monotonic() < end:
                pass
            """)
        p, took = self.launch("--hang-timeout=1", worker)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("no worker made progress", p.stderr)
        self.assertGreater(took, 4)

    def test_the_file_timer_watchdog_covers_spinning_ranks(self):
        # What torch's FileTimerClient writes (launcher/watchdog/timer_request.h), by hand: a
        # 1 s deadline around a step that spins for ever.
        worker = self.script("""\
            import json, os, time
            request = {"version": 1, "pid": os.getpid(), "scope_id": "step",
                       "expiration_time": time.time() + 1, "signal": 9}
            with open(os.environ["TORCHELASTIC_TIMER_FILE"], "w") as fifo:
                fifo.write(json.dumps(request) + "\\n")
            end = time.monotonic() + 30
            while time.monotonic() < end:
                pass
            """)
        p, took = self.launch("--hang-timeout=1", worker, TORCHELASTIC_ENABLE_FILE_TIMER="1")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("overran watchdog timer 'step'", p.stderr)
        self.assertNotIn("no worker made progress", p.stderr)
        self.assertLess(took, 15, p.stderr)

    def test_a_worker_ignoring_sigabrt_is_named_and_its_hang_is_a_failure(self):
        # Attempt 0 hangs with SIGABRT ignored; attempt 1 succeeds: only a restart gets there.
        worker = self.script("""\
            import os, signal, sys, time
            if os.environ["TORCHELASTIC_RESTART_COUNT"] != "0":
                sys.exit(0)
            signal.signal(signal.SIGABRT, signal.SIG_IGN)
            time.sleep(60)
            """)
        p, took = self.launch("--hang-timeout=1", "--max-restarts=1", worker)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(HANG_LINE, p.stderr)
        self.assertIn("it did not answer the stack request (SIGABRT ignored or blocked?)", p.stderr)
        self.assertNotIn("not a Python worker", p.stderr)
        # 1 s, a tick, the 2 s the dumps are allowed, then the teardown; not the 60 s sleep.
        self.assertLess(took, 15, p.stderr)

    def test_without_restarts_a_worker_ignoring_sigabrt_fails_the_job(self):
        worker = self.script("""\
            import signal, time
            signal.signal(signal.SIGABRT, signal.SIG_IGN)
            time.sleep(60)
            """)
        p, _ = self.launch("--hang-timeout=1", worker)
        self.assertEqual(p.returncode, 1, p.stderr)
        for rank in (0, 1):
            self.assertIn(f"cpplaunch:   rank {rank}: <no stack: it did not answer the stack "
                          "request (SIGABRT ignored or blocked?)>", p.stderr)


if __name__ == "__main__":
    unittest.main()
