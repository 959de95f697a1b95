"""The cpplaunch binary as a user meets it: exit codes, errors, signals, teardown, restarts,
descriptor hygiene and containment. Real processes throughout.

usage: launcher_behaviour_test.py CPPLAUNCH TEST_WORKER [unittest args]
"""
import glob
import os
import pathlib
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


def launch(*args, timeout=60, **kw):
    return subprocess.run([CPPLAUNCH, *args], env=kw.pop("env", env()), capture_output=True,
                          text=True, timeout=timeout, **kw)


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes: it holds nothing but a process-table slot.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pids, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return []
        time.sleep(0.01)
    return [p for p in pids if alive(p)]


def read_pids(path):
    try:
        with open(path) as f:
            return [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return []


def wait_for_lines(path, count, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if len(read_pids(path)) >= count:
            return read_pids(path)
        time.sleep(0.01)
    raise AssertionError(f"only {read_pids(path)} in {path} after {seconds}s")


class Launcher(subprocess.Popen):
    """cpplaunch in the background; killed with its process group if a test fails early."""

    def __init__(self, *args):
        super().__init__([CPPLAUNCH, *args], env=env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)

    def __exit__(self, *exc):
        if self.poll() is None:
            os.killpg(self.pid, signal.SIGKILL)
        return super().__exit__(*exc)


class ExitCodes(unittest.TestCase):
    def test_success_is_zero(self):
        r = launch("--nproc-per-node=4", "--no-python", WORKER, "--exit", "0")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_worker_failure_is_one_whatever_its_code(self):
        r = launch("--nproc-per-node=2", "--no-python", WORKER, "--exit", "7")
        self.assertEqual(r.returncode, 1)
        self.assertIn("exitcode  : 7", r.stderr)
        self.assertIn("failed (exitcode: 7)", r.stderr)
        self.assertNotIn("Traceback", r.stderr)

    def test_unknown_option_is_usage_error_with_hint(self):
        r = launch("--nproc-per-nod=2", "--bogus", "x.py")
        self.assertEqual(r.returncode, 2)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 2, r.stderr)
        self.assertIn("--bogus", lines[0])
        self.assertIn("--help", lines[1])

    def test_missing_script_is_usage_error(self):
        r = launch("--nproc-per-node=2")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--help", r.stderr)

    def test_bad_nnodes_is_one(self):
        r = launch("--nnodes=2:1", "x.py")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_help_lists_both_spellings(self):
        r = launch("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("--nproc-per-node", r.stdout)
        self.assertIn("--nproc_per_node", r.stdout)

    def test_program_that_does_not_exist(self):
        # Refused before any worker starts (issue 13): one line, usage exit code.
        r = launch("--no-python", "/nonexistent/trainer")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("/nonexistent/trainer", r.stderr)
        self.assertIn("No such file", r.stderr)

    def test_compiled_program_without_no_python_is_explained(self):
        r = launch("--nproc-per-node=2", WORKER)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("--no-python", r.stderr)

    def test_unsupported_option_is_refused_not_ignored(self):
        r = launch("--logs-specs=json", "--no-python", WORKER)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--logs-specs", r.stderr)

    def test_numa_binding_without_gpus_is_one_line(self):
        if any(pathlib.Path(d, "vendor").read_text().strip() == "0x10de"
               for d in glob.glob("/sys/bus/pci/devices/*")):
            self.skipTest("this host has an NVIDIA device")
        r = launch("--numa-binding=node", "--nproc-per-node=2", "--no-python", WORKER)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("--numa-binding=node: this host has no NVIDIA GPU", r.stderr)


class Teardown(unittest.TestCase):
    def test_first_failure_stops_sleeping_siblings_quickly(self):
        start = time.monotonic()
        r = launch("--nproc-per-node=4", "--no-python", "/bin/sh", "-c",
                   f'if [ "$LOCAL_RANK" = 2 ]; then exec {WORKER} --sleep 100 --exit 3; fi; '
                   f'exec {WORKER} --sleep 30000')
        elapsed = time.monotonic() - start
        self.assertEqual(r.returncode, 1)
        self.assertLess(elapsed, 10, "siblings were not stopped")
        self.assertIn("Root Cause", r.stderr)
        root = r.stderr.split("Root Cause")[1]
        self.assertIn("rank      : 2 (local_rank: 2)", root)
        self.assertIn("stopped by cpplaunch", r.stderr.split("Root Cause")[0])

    def test_worker_ignoring_sigterm_is_killed_after_shutdown_timeout(self):
        start = time.monotonic()
        r = launch("--nproc-per-node=2", "--shutdown-timeout=1", "--no-python", "/bin/sh", "-c",
                   f'if [ "$LOCAL_RANK" = 0 ]; then exec {WORKER} --sleep 100 --exit 1; fi; '
                   f'exec {WORKER} --ignore-term --sleep 60000')
        elapsed = time.monotonic() - start
        self.assertEqual(r.returncode, 1)
        self.assertGreater(elapsed, 0.9)
        self.assertLess(elapsed, 10)
        self.assertIn("SIGKILL", r.stderr)

    def test_grandchildren_die_with_the_job(self):
        with tempfile.TemporaryDirectory() as d:
            pids = os.path.join(d, "pids")
            r = launch("--nproc-per-node=2", "--no-python", "/bin/sh", "-c",
                       f'if [ "$LOCAL_RANK" = 0 ]; then exec {WORKER} --pid-file {pids} --children 2 '
                       f'--sleep 300 --exit 1; fi; exec {WORKER} --pid-file {pids} --children 2 --sleep 60000')
            self.assertEqual(r.returncode, 1)
            grandchildren = read_pids(pids)
            self.assertEqual(len(grandchildren), 4)
            self.assertEqual(wait_gone(grandchildren, 1), [])


    def test_children_the_agent_inherited_are_not_the_jobs(self):
        # `cpplaunch ... > >(tee log)` makes tee a child of the exec'd agent: a teardown must
        # leave it alone, or the next attempt's output dies with SIGPIPE.
        with tempfile.TemporaryDirectory() as d:
            pid_file = os.path.join(d, "bystander")
            r = subprocess.run(["/bin/sh", "-c", f'sleep 30 >/dev/null 2>&1 & echo $! > {pid_file}; exec "$0" "$@"',
                                CPPLAUNCH, "--nproc-per-node=2", "--max-restarts=1", "--no-python",
                                WORKER, "--sleep", "50", "--exit", "1"],
                               env=env(), capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 1, r.stderr)
            bystander = read_pids(pid_file)[0]
            try:
                self.assertTrue(alive(bystander), "the teardown killed a process the job never started")
            finally:
                os.kill(bystander, signal.SIGKILL)


class Signals(unittest.TestCase):
    def run_and_signal(self, signo, extra=()):
        with tempfile.TemporaryDirectory() as d:
            ready = os.path.join(d, "ready")
            with Launcher("--nproc-per-node=2", *extra, "--no-python", WORKER, "--pid-file", ready,
                          "--children", "1", "--trap-term", "0", "--sleep", "60000") as p:
                wait_for_lines(ready, 2)
                start = time.monotonic()
                p.send_signal(signo)
                out, err = p.communicate(timeout=30)
                return p.returncode, out, err, time.monotonic() - start

    def test_sigterm_is_forwarded_and_exit_is_one(self):
        code, out, err, elapsed = self.run_and_signal(signal.SIGTERM)
        self.assertEqual(code, 1)
        self.assertEqual(out.count("trapped SIGTERM"), 2, out)
        self.assertLess(elapsed, 5)
        self.assertIn("SIGTERM", err)

    def test_sigusr1_forwarded_when_listed(self):
        with tempfile.TemporaryDirectory() as d:
            ready = os.path.join(d, "ready")
            with Launcher("--nproc-per-node=2", "--signals-to-handle=SIGTERM,SIGUSR1",
                          "--no-python", "/bin/sh", "-c",
                          f"trap 'echo got-usr1; exit 0' USR1; echo 1 >> {ready}; "
                          f"while true; do sleep 0.05; done") as p:
                wait_for_lines(ready, 2)
                p.send_signal(signal.SIGUSR1)
                out, err = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 1)
            self.assertEqual(out.count("got-usr1"), 2, out + err)

    def test_agent_sigkill_leaves_nothing_behind(self):
        with tempfile.TemporaryDirectory() as d:
            pids = os.path.join(d, "pids")
            p = subprocess.Popen([CPPLAUNCH, "--nproc-per-node=3", "--no-python", WORKER,
                                  "--pid-file", pids, "--children", "2", "--daemons", "1",
                                  "--sleep", "60000"],
                                 env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            descendants = wait_for_lines(pids, 9)
            workers = [int(x) for x in subprocess.run(
                ["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()]
            p.kill()
            p.wait()
            left = wait_gone(descendants + workers, 1.0)
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            self.assertEqual(left, [], "processes outlived the SIGKILLed agent")


class Hygiene(unittest.TestCase):
    def test_no_agent_descriptor_leaks_into_workers(self):
        # --tee makes the agent hold pipes; the store's listening socket is always open.
        r = launch("--nproc-per-node=3", "--tee=3", "--no-python", WORKER, "--check-fds")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_busy_chosen_port_is_one_clear_line(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen()
            port = s.getsockname()[1]
            r = launch(f"--master-port={port}", "--no-python", WORKER)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(f"127.0.0.1:{port}", r.stderr)
            self.assertIn("--master-port=0", r.stderr)

    def test_master_port_zero_picks_a_free_port(self):
        r = launch("--master-port=0", "--no-python", "/bin/sh", "-c", 'echo "port=$MASTER_PORT"')
        self.assertEqual(r.returncode, 0, r.stderr)
        port = int(r.stdout.split("port=")[1])
        self.assertGreater(port, 0)

    def test_store_listens_on_master_addr_only(self):
        r = launch("--master-port=0", "--no-python", "/bin/sh", "-c",
                   'ss -ltnH "sport = :$MASTER_PORT"')
        self.assertEqual(r.returncode, 0, r.stderr)
        local_addresses = [line.split()[3] for line in r.stdout.splitlines()]
        self.assertEqual(len(local_addresses), 1, r.stdout)
        self.assertTrue(local_addresses[0].startswith("127.0.0.1:"), r.stdout)

    def test_an_ipv6_master_addr_in_brackets_is_bound_and_passed_on_bare(self):
        # As torchrun 1.13 does: PyTorch's workers resolve "::1", not "[::1]".
        try:
            with socket.socket(socket.AF_INET6) as probe:
                probe.bind(("::1", 0))
        except OSError as e:
            self.skipTest(f"no IPv6 loopback here: {e}")
        r = launch("--master-addr=[::1]", "--master-port=0", "--no-python", "/bin/sh", "-c",
                   'echo "addr=$MASTER_ADDR"; ss -ltnH "sport = :$MASTER_PORT"')
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(lines[0], "addr=::1", r.stdout)
        self.assertEqual([line.split()[3].rsplit(":", 1)[0] for line in lines[1:]], ["[::1]"],
                         r.stdout)


class WorkerStore(unittest.TestCase):
    def test_rank0_store_port_is_free_and_not_the_agents(self):
        r = launch("--master-port=0", "--worker-store=rank0", "--no-python", "/bin/sh", "-c",
                   'echo "use=$TORCHELASTIC_USE_AGENT_STORE"; ss -ltnH "sport = :$MASTER_PORT"')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(), ["use=False"], "MASTER_PORT is in use")

    def test_hosts_that_disagree_fail_with_one_line(self):
        port = socket.socket()
        port.bind(("127.0.0.1", 0))
        number = port.getsockname()[1]
        port.close()
        agents = [subprocess.Popen(
            [CPPLAUNCH, "--nnodes=2", f"--node-rank={node}", f"--master-port={number}",
             "--no-python", "/bin/true"],
            env=env(PET_WORKER_STORE="rank0" if node == 0 else "agent"),
            stderr=subprocess.PIPE, text=True, start_new_session=True) for node in (0, 1)]
        try:
            errs = [agent.communicate(timeout=60)[1] for agent in agents]
        finally:
            for agent in agents:
                if agent.poll() is None:
                    os.killpg(agent.pid, signal.SIGKILL)
                    agent.wait()
        self.assertEqual([a.returncode for a in agents], [1, 1], errs)
        self.assertIn("hosts disagree about --worker-store: this host has rank0, node rank 1",
                      errs[0])
        self.assertIn("hosts disagree about --worker-store: this host has agent, node rank 0",
                      errs[1])


class Restarts(unittest.TestCase):
    def test_restart_gets_next_attempt_and_fresh_directory(self):
        with tempfile.TemporaryDirectory() as d:
            r = launch("--nproc-per-node=2", "--max-restarts=2", f"--log-dir={d}", "--no-python",
                       "/bin/sh", "-c",
                       'echo "attempt=$TORCHELASTIC_RESTART_COUNT max=$TORCHELASTIC_MAX_RESTARTS '
                       'err=$TORCHELASTIC_ERROR_FILE"; [ "$TORCHELASTIC_RESTART_COUNT" = 1 ]')
            self.assertEqual(r.returncode, 0, r.stderr)
            # The first failure may stop the sibling before it prints.
            self.assertGreaterEqual(r.stdout.count("attempt=0 max=2"), 1)
            self.assertEqual(r.stdout.count("attempt=1 max=2"), 2)
            self.assertIn("/attempt_1/", r.stdout)
            run_dirs = os.listdir(d)
            self.assertEqual(len(run_dirs), 1)
            self.assertEqual(sorted(os.listdir(os.path.join(d, run_dirs[0]))),
                             ["agent.log", "attempt_0", "attempt_1"])

    def test_restarts_exhausted_fail(self):
        r = launch("--nproc-per-node=1", "--max-restarts=1", "--no-python", WORKER, "--exit", "4")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.count("failed (exitcode: 4)"), 2, r.stderr)


class ErrorFiles(unittest.TestCase):
    def test_worker_error_file_in_summary_and_agent_error_file(self):
        with tempfile.TemporaryDirectory() as d:
            agent_file = os.path.join(d, "agent_error.json")
            script = os.path.join(d, "boom.py")
            with open(script, "w") as f:
                f.write("from torch.distributed.elastic.multiprocessing.errors import record\n"
                        "@record\n"
                        "def main():\n"
                        "    raise ValueError('the answer is not 41')\n"
                        "main()\n")
            r = launch("--nproc-per-node=1", script,
                       env=env(TORCHELASTIC_ERROR_FILE=agent_file))
            self.assertEqual(r.returncode, 1)
            self.assertIn("ValueError: the answer is not 41", r.stderr)
            self.assertIn("error.json", r.stderr)
            import json
            with open(agent_file) as f:
                doc = json.load(f)
            self.assertEqual(doc["message"]["errorCode"], 1)
            self.assertIn("ValueError", doc["message"]["message"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
