"""torchrun features beyond the basics (issue 12), with real PyTorch 1.13 workers:
the file-timer watchdog driven by torch's own FileTimerClient, --duplicate-*-filters,
--event-log-handler=console (each line read back with torch's own Event.deserialize), and
--legacy-launch beside Debian's `python3 -m torch.distributed.launch`.

usage: parity_features_test.py CPPLAUNCH [unittest args]
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from launcher_env import clean_env

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
PYTHON = "/usr/bin/python3"

# A worker using torch 1.13's own FileTimerClient on the FIFO the launcher exports. Rank
# SLOW_RANK holds scope "slow_step" for 1 s and sleeps 60 s in it; every other rank holds
# "quick_step" for 1 s, leaves it after 0.2 s and lives on past the first timer's expiry.
TIMER_WORKER = r'''
import os, sys, time
from torch.distributed.elastic.timer import FileTimerClient, configure, expires
configure(FileTimerClient(os.environ["TORCHELASTIC_TIMER_FILE"]))
slow = int(os.environ["RANK"]) == int(sys.argv[1])
with expires(after=1, scope="slow_step" if slow else "quick_step"):
    time.sleep(60 if slow else 0.2)
time.sleep(2)
os.write(1, ("done %s %s\n" % (os.environ["RANK"], os.environ["TORCHELASTIC_TIMER_FILE"])).encode())
'''

# As YOLOv5's train.py reads it (argparse, --local_rank, default -1).
LEGACY_WORKER = r'''
import argparse, os, sys
parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--epochs", type=int, default=300)
opt = parser.parse_args()
# One write per line: the two workers share the launcher's stdout.
os.write(1, ("argv=%s local_rank=%d LOCAL_RANK=%s epochs=%d\n" % (
    sys.argv[1:], opt.local_rank, os.environ["LOCAL_RANK"], opt.epochs)).encode())
'''

# Lines on both streams; some match the filters.
CHATTY_WORKER = r'''
import os, sys
r = os.environ["LOCAL_RANK"]
print("step 1 loss=0.5 rank", r, flush=True)
print("nothing to see", flush=True)
print("ERROR, bad thing on rank", r, flush=True)
print("ERROR without comma", flush=True)
print("warn: slow rank", r, file=sys.stderr, flush=True)
print("quiet", file=sys.stderr, flush=True)
'''


def env(**extra):
    return clean_env(**{"PYTHON_EXEC": PYTHON, **extra})


class Scratch(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="parity_test_")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def script(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def launch(self, *args, timeout=90, **extra_env):
        return subprocess.run([CPPLAUNCH, *args], env=env(**extra_env), capture_output=True,
                              text=True, timeout=timeout, cwd=self.dir)


class Watchdog(Scratch):
    def test_expiring_scope_kills_the_worker_and_the_summary_names_it(self):
        worker = self.script("timer_worker.py", TIMER_WORKER)
        start = time.monotonic()
        r = self.launch("--nproc-per-node=2", worker, "1", TORCHELASTIC_ENABLE_FILE_TIMER="1")
        elapsed = time.monotonic() - start
        print(f"[measured] watchdog kill: job ended after {elapsed:.2f} s (timer: 1 s)",
              file=sys.stderr)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertLess(elapsed, 20, "the expired worker was not killed")
        self.assertRegex(r.stderr, r"watchdog: pid \d+ ran past its timer 'slow_step'; "
                                   r"sent it SIGKILL")
        self.assertRegex(r.stderr, r"cpplaunch: rank 1 \(local rank 1, pid \d+\) overran "
                                   r"watchdog timer 'slow_step', which allowed [01]\.\d s: "
                                   r"killed with SIGKILL")
        root = r.stderr.split("Root Cause")[1]
        self.assertIn("rank      : 1 (local_rank: 1)", root)
        self.assertIn("Signal 9 (SIGKILL)", root)
        # Issue 23 item 7: the reason names the watchdog, not a signal "from outside the job".
        self.assertIn("reason    : killed by SIGKILL from cpplaunch's file-timer watchdog (timer "
                      "'slow_step'", root)
        self.assertNotIn("from outside the job", r.stderr)

    def test_released_scope_does_not_kill(self):
        worker = self.script("timer_worker.py", TIMER_WORKER)
        fifo = os.path.join(self.dir, "my_timer_fifo")
        # No rank is slow: both leave their scope in time and outlive its expiry by 2 s.
        r = self.launch("--nproc-per-node=2", worker, "99", TORCHELASTIC_ENABLE_FILE_TIMER="1",
                        TORCHELASTIC_TIMER_FILE=fifo)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("overran", r.stderr)
        self.assertNotIn("watchdog:", r.stderr)
        # The user's path reached the workers, and the agent removed its FIFO at the end.
        self.assertEqual(sorted(r.stdout.split("\n")[:2]),
                         [f"done 0 {fifo}", f"done 1 {fifo}"])
        self.assertFalse(os.path.exists(fifo))

    def test_watchdog_events_read_back_with_torchs_event_class(self):
        worker = self.script("timer_worker.py", TIMER_WORKER)
        r = self.launch("--nproc-per-node=2", "--event-log-handler=console", worker, "0",
                        TORCHELASTIC_ENABLE_FILE_TIMER="1")
        self.assertEqual(r.returncode, 1, r.stderr)
        events = read_events(r.stderr)
        names = [e["name"] for e in events]
        self.assertEqual(names, ["watchdog started", "timer expired", "kill worker process",
                                 "watchdog stopped", "torchelastic.worker.status.SUCCEEDED"])
        inner = json.loads(events[1]["metadata"]["metadata"])
        self.assertEqual(inner["watchdog_event"], "timer expired")
        self.assertEqual(inner["scope_id"], "slow_step")
        self.assertEqual(inner["signal"], "9")
        self.assertTrue(inner["worker_pid"].isdigit())
        float(inner["expiration_time"])


def read_events(stderr):
    """Every line of `stderr` that is a JSON object, each checked by torch 1.13's own
    Event.deserialize (which rejects unknown fields and sources)."""
    lines = [line for line in stderr.splitlines() if line.startswith("{")]
    check = ("import json, sys\n"
             "from torch.distributed.elastic.events.api import Event\n"
             "out = []\n"
             "for line in sys.stdin.read().splitlines():\n"
             "    e = Event.deserialize(line)\n"
             "    assert e.serialize() == line, (e.serialize(), line)\n"
             "    out.append({'name': e.name, 'source': e.source.value,\n"
             "                'timestamp': e.timestamp, 'metadata': e.metadata})\n"
             "print(json.dumps(out))\n")
    r = subprocess.run([PYTHON, "-c", check], input="\n".join(lines), capture_output=True,
                       text=True, timeout=60)
    if r.returncode != 0:
        raise AssertionError("torch's Event.deserialize refused an event:\n" + r.stderr)
    return json.loads(r.stdout)


class Events(Scratch):
    # The metadata of torch's _construct_event (newest: with duration_ms), in its order.
    AGENT_KEYS = ["run_id", "global_rank", "group_rank", "worker_id", "role", "hostname",
                  "state", "total_run_time", "rdzv_backend", "raw_error", "metadata",
                  "agent_restarts", "duration_ms"]

    def test_console_prints_the_agents_final_event_as_torch_serializes_it(self):
        r = self.launch("--nproc-per-node=2", "--event-log-handler=console", "--rdzv-id=evjob",
                        "--no-python", "/bin/true")
        self.assertEqual(r.returncode, 0, r.stderr)
        events = read_events(r.stderr)
        self.assertEqual(len(events), 1, r.stderr)
        event = events[0]
        self.assertEqual(event["name"], "torchelastic.worker.status.SUCCEEDED")
        self.assertEqual(event["source"], "AGENT")
        self.assertEqual(event["timestamp"], 0)
        md = event["metadata"]
        self.assertEqual(list(md), self.AGENT_KEYS)
        self.assertEqual(md["run_id"], "evjob")
        self.assertEqual(md["state"], "SUCCEEDED")
        self.assertEqual(md["rdzv_backend"], "static")
        self.assertIsNone(md["raw_error"])
        self.assertEqual(json.loads(md["metadata"]),
                         {"group_world_size": 1, "entry_point": "true"})

    def test_a_signal_makes_the_final_event_failed(self):
        p = subprocess.Popen([CPPLAUNCH, "--event-log-handler=console", "--no-python",
                              "/bin/sleep", "30"], env=env(), stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        p.terminate()
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 1, err)
        events = read_events(err)
        self.assertEqual([e["name"] for e in events], ["torchelastic.worker.status.FAILED"])
        self.assertEqual(events[0]["metadata"]["raw_error"], "received SIGTERM")

    def test_null_and_dynamic_rendezvous_print_no_event(self):
        for handler in ("null", "dynamic_rendezvous"):
            r = self.launch(f"--event-log-handler={handler}", "--no-python", "/bin/true")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(read_events(r.stderr), [], handler)

    def test_an_unknown_handler_is_refused(self):
        r = self.launch("--event-log-handler=syslog", "--no-python", "/bin/true")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("null, console, dynamic_rendezvous", r.stderr)


class DuplicateFilters(Scratch):
    def test_matching_teed_lines_go_prefixed_to_the_attempts_filtered_logs(self):
        worker = self.script("chatty.py", CHATTY_WORKER)
        logs = os.path.join(self.dir, "logs")
        r = self.launch("--nproc-per-node=2", "--tee=3", f"--log-dir={logs}",
                        "--duplicate-stdout-filters=loss=,ERROR,, bad",
                        "--duplicate-stderr-filters=warn", worker)
        self.assertEqual(r.returncode, 0, r.stderr)
        [attempt] = glob.glob(os.path.join(logs, "none_*", "attempt_0"))
        with open(os.path.join(attempt, "filtered_stdout.log")) as f:
            out = f.read().splitlines()
        with open(os.path.join(attempt, "filtered_stderr.log")) as f:
            err = f.read().splitlines()
        for rank in "01":
            # In each rank's own order; ranks interleave as they come.
            mine = [line for line in out if line.startswith(f"[default{rank}]:")]
            self.assertEqual(mine, [f"[default{rank}]:step 1 loss=0.5 rank {rank}",
                                    f"[default{rank}]:ERROR, bad thing on rank {rank}"])
            self.assertIn(f"[default{rank}]:warn: slow rank {rank}", err)
        self.assertEqual(len(out), 4)
        self.assertEqual(len(err), 2)
        # The console and the per-rank logs still have everything.
        self.assertEqual(r.stdout.count("nothing to see"), 2)
        with open(os.path.join(attempt, "0", "stdout.log")) as f:
            self.assertIn("nothing to see", f.read())

    def test_without_filters_there_is_no_filtered_log(self):
        logs = os.path.join(self.dir, "logs")
        r = self.launch("--tee=3", f"--log-dir={logs}", "--no-python", "/bin/echo", "hi")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(glob.glob(os.path.join(logs, "*", "attempt_0", "filtered_*")), [])


def argv_lines(stdout):
    return sorted(line for line in stdout.splitlines() if line.startswith("argv="))


class LegacyLaunch(Scratch):
    def test_each_worker_gets_local_rank_as_torch_distributed_launch_passes_it(self):
        worker = self.script("train.py", LEGACY_WORKER)
        r = self.launch("--legacy-launch", "--nproc-per-node=2", worker, "--epochs", "3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(argv_lines(r.stdout), [
            "argv=['--local_rank=0', '--epochs', '3'] local_rank=0 LOCAL_RANK=0 epochs=3",
            "argv=['--local_rank=1', '--epochs', '3'] local_rank=1 LOCAL_RANK=1 epochs=3"])

    def test_same_arguments_as_debians_torch_distributed_launch(self):
        worker = self.script("train.py", LEGACY_WORKER)
        for extra in ([], ["--use_env"]):
            # Debian's 1.13 cannot take its own default -r 0 -t 0 (torchrun-reference.md).
            ref = subprocess.run([PYTHON, "-m", "torch.distributed.launch", "-r", "9:1", "-t",
                                  "9:1", "--nproc_per_node=2", "--master_port=0", *extra,
                                  worker, "--epochs", "3"], env=env(), capture_output=True,
                                 text=True, timeout=120, cwd=self.dir)
            if ref.returncode != 0:
                self.skipTest("torch.distributed.launch does not run here: " + ref.stderr[-300:])
            ours = self.launch("--legacy-launch", "--nproc-per-node=2", *extra, worker,
                               "--epochs", "3")
            self.assertEqual(ours.returncode, 0, ours.stderr)
            self.assertEqual(argv_lines(ours.stdout), argv_lines(ref.stdout), extra)

    def test_use_env_in_both_spellings_passes_nothing(self):
        worker = self.script("train.py", LEGACY_WORKER)
        for spelling in ("--use-env", "--use_env"):
            r = self.launch("--legacy-launch", spelling, worker)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(argv_lines(r.stdout),
                             ["argv=[] local_rank=-1 LOCAL_RANK=0 epochs=300"])

    def test_no_python_without_use_env_is_refused_as_the_module_does(self):
        r = self.launch("--legacy-launch", "--no-python", "/bin/true")
        self.assertEqual(r.returncode, 1)
        self.assertIn("you must also set the '--use-env' flag", r.stderr)
        r = self.launch("--legacy-launch", "--use-env", "--no-python", "/bin/true")
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main()
