"""Logs worth keeping (issue 27): line prefixes that show global ranks on a console shared by
several hosts (TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE), a configurable exit barrier
(--exit-barrier-timeout), and the agent's own log (LOGLEVEL, agent.log in the log directory). Real cpplaunch agents on loopback with shell workers (no PyTorch
needed); the prefix is also compared with torchrun 2.6's where the PyTorch 2.6 root of
tests/e2e/torch26.py exists.

usage: logs_test.py CPPLAUNCH [unittest args]
"""
import glob
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

from launcher_env import clean_env

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch26  # noqa: E402

TEMPLATE = "[${role_name}${rank}|${local_rank}]:"
SAY_RANK = ["--no-python", "/bin/sh", "-c", 'echo "rank $RANK"']


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Agents:
    """Two agents of a job on loopback (--nnodes=2): static, node rank 0 hosting the store, or
    with `c10d` the dynamic backend, the first to bind hosting it. `args[node]` are that agent's
    options and program; every agent is killed with its process group on exit."""

    def __init__(self, args, env=None, c10d=False):
        port = free_port()
        self.procs = [subprocess.Popen(
            [CPPLAUNCH, "--nnodes=2",
             *(["--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{port}"] if c10d else
               [f"--node-rank={node}", f"--master-port={port}"]),
             "--rdzv-id=logs", *args[node]],
            env=env or clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True) for node in (0, 1)]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


def prefixed(text, word):
    return sorted(line for line in text.splitlines() if word in line)


class LinePrefixTemplate(unittest.TestCase):
    def run_two_hosts(self, template):
        env = clean_env()
        if template is not None:
            env["TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE"] = template
        common = ["--nproc-per-node=2", "--log-dir=/dev/null", "-t", "3", *SAY_RANK]
        with Agents([common, common], env) as agents:
            outs = [proc.communicate(timeout=60) for proc in agents.procs]
            codes = [proc.returncode for proc in agents.procs]
        self.assertEqual(codes, [0, 0], outs)
        return [prefixed(out, "rank ") for out, _ in outs]

    def test_template_shows_global_ranks_on_every_host(self):
        host0, host1 = self.run_two_hosts(TEMPLATE)
        self.assertEqual(host0, ["[default0|0]:rank 0", "[default1|1]:rank 1"])
        self.assertEqual(host1, ["[default2|0]:rank 2", "[default3|1]:rank 3"])

    def test_without_a_template_or_with_an_empty_one_the_local_rank(self):
        # torchrun tests the template's truth: "" is no template.
        for template in (None, ""):
            with self.subTest(template=template):
                self.assertEqual(self.run_two_hosts(template)[1],
                                 ["[default0]:rank 2", "[default1]:rank 3"])

    def test_same_prefix_as_torchrun_2_6(self):
        reason = torch26.skip_reason()
        if reason:
            self.skipTest(reason)
        script = "import os\nprint('rank', os.environ['RANK'], flush=True)\n"
        lines = {}
        with torch26.Scratch("prefix26") as scratch:
            with open(scratch.path("say.py"), "w") as f:
                f.write(script)
            with open(scratch.path("torchrun26.py"), "w") as f:
                f.write(TORCHRUN26_ENTRY)
            env = clean_env(PYTHON_EXEC=scratch.python, TMPDIR=scratch.dir,
                            TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE=TEMPLATE, USE_LIBUV="0")
            for name, launcher in (("torchrun", [scratch.python, scratch.path("torchrun26.py")]),
                                   ("cpplaunch", [CPPLAUNCH])):
                run_env = dict(env, PYTHON_EXEC="/usr/bin/python3") if name == "torchrun" else env
                proc = subprocess.run(
                    launcher + ["--nproc_per_node=2", f"--master_port={free_port()}",
                                "--tee=3", "--role=t", scratch.path("say.py")],
                    env=run_env, capture_output=True, text=True, timeout=180, cwd=scratch.dir)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                lines[name] = prefixed(proc.stdout, "rank ")
        self.assertEqual(lines["torchrun"], ["[t0|0]:rank 0", "[t1|1]:rank 1"])
        self.assertEqual(lines["cpplaunch"], lines["torchrun"])


# Debian's torchrun 2.6 with its static store made without libuv (this build has none), as in
# torch26_env_compare.py.
TORCHRUN26_ENTRY = """\
import functools
import sys

import torch.distributed as dist
import torch.distributed.elastic.rendezvous.static_tcp_rendezvous as static

static.TCPStore = functools.partial(dist.TCPStore, use_libuv=False)
from torch.distributed.run import main

sys.exit(main())
"""


class ExitBarrierTimeout(unittest.TestCase):
    def test_exit_barrier_timeout_bounds_the_wait(self):
        # Node 1's worker is done at once; node 0's (the store's host) takes a minute. With the
        # option node 1 stops waiting after 1 s and exits 0, saying so; torchrun would wait
        # 300 s.
        slow = ["--no-python", "/bin/sleep", "60"]
        quick = ["--exit-barrier-timeout=1", "--no-python", "/bin/true"]
        with Agents([slow, quick]) as agents:
            started = time.monotonic()
            _, err = agents.procs[1].communicate(timeout=60)
            elapsed = time.monotonic() - started
        self.assertEqual(agents.procs[1].returncode, 0, err)
        self.assertIn("exit barrier: not every host finished within 1.0 s "
                      "(--exit-barrier-timeout); this host's workers succeeded, exiting", err)
        self.assertLess(elapsed, 30, err)

    def test_environment_variable_sets_it_and_bad_values_are_one_line(self):
        r = subprocess.run([CPPLAUNCH, "--nnodes=2", "--exit-barrier-timeout=0", "--no-python",
                            "/bin/true"], env=clean_env(), capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr.strip().splitlines(), [
            "cpplaunch: error: --exit-barrier-timeout 0: need a positive number of seconds "
            "(default 300)"])
        slow = ["--no-python", "/bin/sleep", "60"]
        quick = ["--no-python", "/bin/true"]
        env = clean_env(TORCH_ELASTIC_EXIT_BARRIER_TIMEOUT="0.5")
        with Agents([slow, quick], env) as agents:
            _, err = agents.procs[1].communicate(timeout=60)
        self.assertEqual(agents.procs[1].returncode, 0, err)
        self.assertIn("not every host finished within 0.5 s (--exit-barrier-timeout)", err)


STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} [+-]\d\d:\d\d (debug|info|warning|error): ")
# Rank 1 fails with code 3 after rank 0 listed its open descriptors.
FAIL_RANK_1 = ["--no-python", "/bin/sh", "-c",
               'ls -l /proc/self/fd/; [ "$LOCAL_RANK" = 1 ] && exit 3; sleep 30']


class AgentLog(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name

    def launch(self, args, **env):
        return subprocess.run([CPPLAUNCH, *args], env=clean_env(TMPDIR=self.tmp, **env),
                              capture_output=True, text=True, timeout=60)

    def agent_log(self, log_dir):
        found = glob.glob(os.path.join(log_dir, "*", "agent.log"))
        self.assertEqual(len(found), 1, os.listdir(log_dir))
        with open(found[0]) as f:
            return f.read().splitlines()

    def test_agent_log_keeps_a_failed_run_for_the_post_mortem(self):
        log_dir = os.path.join(self.tmp, "logs")
        r = self.launch(["--nproc-per-node=2", f"--log-dir={log_dir}", *FAIL_RANK_1])
        self.assertEqual(r.returncode, 1, r.stderr)
        # The console at the default level: no INFO lines.
        self.assertNotIn("pids", r.stderr)
        lines = self.agent_log(log_dir)
        for line in lines:
            self.assertRegex(line, STAMP)
        text = "\n".join(STAMP.sub(r"\1: ", line) for line in lines)
        self.assertRegex(text, r"info: run id none; store on 127\.0\.0\.1:\d+; log directory ")
        self.assertRegex(text, r"info: attempt 0: pids \d+ \(rank 0\), \d+ \(rank 1\)")
        self.assertRegex(text, r"info: local rank 1 \(pid \d+\) exited with code 3")
        self.assertIn("warning: failed (exitcode: 3) local_rank: 1", text)
        self.assertIn("error: Root Cause (first observed failure):", text)
        self.assertEqual(lines[-1].split(" ", 3)[3], "info: the agent exits with status 1")
        # The workers do not inherit the log's descriptor: their listings show none.
        self.assertIn(" -> ", r.stdout)
        self.assertNotIn("agent.log", r.stdout)

    def test_debug_traces_each_rendezvous_and_store_step(self):
        log_dirs = [os.path.join(self.tmp, f"host{i}") for i in (0, 1)]
        args = [[f"--log-dir={log_dir}", "--no-python", "/bin/true"] for log_dir in log_dirs]
        with Agents(args, clean_env(LOGLEVEL="DEBUG"), c10d=True) as agents:
            errs = [proc.communicate(timeout=60)[1] for proc in agents.procs]
            codes = [proc.returncode for proc in agents.procs]
        self.assertEqual(codes, [0, 0], errs)
        both = "\n".join(errs)
        self.assertRegex(both, r"cpplaunch: store: CLAIM 'cpplaunch/logs/dynamic/alive/[^']+' "
                               r"answered in \d+ us")
        self.assertIn("cpplaunch: rendezvous: join queue: admitted", both)
        self.assertIn("cpplaunch: rendezvous round 0 complete", both)
        for log_dir in log_dirs:
            text = "\n".join(self.agent_log(log_dir))
            self.assertRegex(text, r"debug: store: \w+ '[^']*' answered in \d+ us")
            self.assertIn("debug: rendezvous: join queue:", text)

    def test_levels_as_torchrun_reads_them_and_nothing_left_without_a_log_dir(self):
        # --master-port=0: a free port, so that another job on the default 29500 (a test running
        # beside this one) does not add its "port 29500 is busy" line to the quiet run.
        argv = ["--nproc-per-node=1", "--master-port=0", "--no-python", "/bin/true"]
        quiet = self.launch(argv)
        info = self.launch(argv, LOGLEVEL="info")
        debug = self.launch(argv, LOGLEVEL="DEBUG")
        chatty = self.launch(argv, LOGLEVEL="chatty")
        for r in (quiet, info, debug, chatty):
            self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(quiet.stderr, "")
        self.assertIn("cpplaunch: attempt 0: pids ", info.stderr)
        self.assertNotIn("exited with code 0", info.stderr)  # a clean exit is a DEBUG line
        self.assertRegex(debug.stderr, r"cpplaunch: local rank 0 \(pid \d+\) exited with code 0")
        self.assertEqual(chatty.stderr.splitlines(), [
            "cpplaunch: LOGLEVEL=chatty is not a log level (DEBUG, INFO, WARNING, ERROR or "
            "CRITICAL); using WARNING"])
        # Without --log-dir no agent.log, and the temporary run directory is gone.
        self.assertEqual(os.listdir(self.tmp), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
