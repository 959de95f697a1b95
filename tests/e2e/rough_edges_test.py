"""The rough edges a torchrun user hits in the first hour (issue 13), each reproduced against the
real cpplaunch binary: a service that is not a store on the store's port, a worker that ignores
SIGTERM, a second Ctrl-C, missing scripts, two agents with one --node-rank, and the small
things (did-you-mean, PET_* errors, the failure box, empty temporary directories).

usage: rough_edges_test.py CPPLAUNCH [unittest args]
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from launcher_env import clean_env

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def env(**extra):
    return clean_env(**{"PYTHON_EXEC": "/usr/bin/python3", **extra})


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(*args, timeout=60, **kw):
    return subprocess.run([CPPLAUNCH, *args], env=kw.pop("env", env()), capture_output=True,
                          text=True, timeout=timeout, **kw)


def cpplaunch_lines(text):
    return [line for line in text.splitlines() if line.startswith("cpplaunch:")]


class Server:
    """A TCP service on a loopback port that is not a store, stopped with the test. "http"
    answers the first bytes it gets with a 400 at once, as a web server that parses requests
    as they arrive does (nginx); "close" hangs up without a byte."""

    HTTP_400 = (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    def __init__(self, kind):
        self.kind = kind
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            try:
                conn.recv(64)
                if self.kind == "http":
                    conn.sendall(self.HTTP_400)
            except OSError:
                pass
            conn.close()

    def stop(self):
        self.sock.close()


class NotAStoreOnThePort(unittest.TestCase):
    """Item 1: about 950 identical lines per second for the whole timeout, before."""

    def run_against(self, kind, backend):
        server = Server(kind)
        self.addCleanup(server.stop)
        try:
            if backend == "static":
                args = ["--nnodes=2", "--node-rank=1", "--master-addr=127.0.0.1",
                        f"--master-port={server.port}"]
            else:
                args = ["--nnodes=2", "--rdzv-backend=c10d",
                        f"--rdzv-endpoint=127.0.0.1:{server.port}"]
            start = time.monotonic()
            r = launch(*args, "--rdzv-conf=timeout=60", "--no-python", "/bin/true")
            return r, time.monotonic() - start
        finally:
            server.stop()

    def test_http_answer_is_named_at_once(self):
        for backend in ("static", "c10d"):
            with self.subTest(backend=backend):
                r, elapsed = self.run_against("http", backend)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertLess(elapsed, 10, r.stderr)
                lines = cpplaunch_lines(r.stderr)
                self.assertLessEqual(len(lines), 3, r.stderr)
                self.assertIn('is not a store: it answered "HTTP/1.1 400 Bad Request"', r.stderr)

    def test_silent_close_backs_off_and_gives_up(self):
        for backend in ("static", "c10d"):
            with self.subTest(backend=backend):
                r, elapsed = self.run_against("close", backend)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertLess(elapsed, 30, r.stderr)
                # Backoff, and a progress line every few seconds at most.
                self.assertLessEqual(len(cpplaunch_lines(r.stderr)), 6, r.stderr)
                self.assertIn("closed it without answering the store handshake", r.stderr)


class Teardown(unittest.TestCase):
    """Items 2 and 3: what the agent says while workers are stopped."""

    def start(self, script, *args, nproc=2):
        return subprocess.Popen([CPPLAUNCH, f"--nproc-per-node={nproc}", *args, "--no-python",
                                 "/bin/sh", "-c", script], env=env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def read_until(self, agent, needle, seconds):
        """Lines of the agent's stderr up to the one containing `needle`, within `seconds`."""
        seen = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            line = agent.stderr.readline()
            if not line:
                break
            seen.append(line)
            if needle in line:
                return seen
        self.fail(f"no {needle!r} within {seconds} s:\n{''.join(seen)}")

    def finish(self, agent):
        try:
            out, err = agent.communicate(timeout=60)
        finally:
            if agent.poll() is None:
                agent.kill()
                agent.communicate()
        return err

    def test_failure_is_told_at_once_and_sigkilled_ranks_are_named(self):
        # Local rank 0 fails; rank 1 ignores SIGTERM and needs SIGKILL after the 4 s grace.
        agent = self.start('if [ "$LOCAL_RANK" = 0 ]; then sleep 0.5; exit 3; fi; '
                           "trap '' TERM; sleep 30", "--shutdown-timeout=4")
        start = time.monotonic()
        lines = self.read_until(agent, "failed: exited with code 3", 10)
        self.assertLess(time.monotonic() - start, 3, "".join(lines))
        self.assertIn("stopping the other 1 worker: SIGTERM now, SIGKILL in 4 s", lines[-1])
        err = "".join(lines) + self.finish(agent)
        self.assertEqual(agent.returncode, 1, err)
        self.assertIn("local rank 1 did not stop within 4 s of SIGTERM and was SIGKILLed", err)
        self.assertIn("rank 1 (pid ", err)  # the victim, on the shared line of the box

    def test_second_ctrl_c_kills_at_once_and_the_last_line_says_so(self):
        ready = tempfile.NamedTemporaryFile(dir="/tmp", delete=False)
        ready.close()
        os.unlink(ready.name)
        agent = self.start(f"trap '' INT; echo $$ >> {ready.name}; sleep 60",
                           "--shutdown-timeout=30")
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                if os.path.exists(ready.name):
                    with open(ready.name) as f:
                        if len(f.read().split()) == 2:
                            break
                time.sleep(0.05)
            agent.send_signal(signal.SIGINT)
            lines = self.read_until(agent, "received SIGINT", 10)
            self.assertIn("press Ctrl-C again to SIGKILL them now", lines[-1])
            start = time.monotonic()
            agent.send_signal(signal.SIGINT)
            err = "".join(lines) + self.finish(agent)
            self.assertLess(time.monotonic() - start, 5, err)
        finally:
            if os.path.exists(ready.name):
                os.unlink(ready.name)
        self.assertEqual(agent.returncode, 1, err)
        self.assertIn("received SIGINT again; SIGKILL to every worker now", err)
        last = cpplaunch_lines(err)[-1]
        self.assertEqual(last, "cpplaunch: workers stopped after SIGINT, then SIGKILL at the "
                               "second signal (local ranks 0, 1); exiting with code 1")


class ScriptChecks(unittest.TestCase):
    """Item 6: refused before any worker starts and before any restart is spent."""

    def test_missing_script(self):
        r = launch("--max-restarts=3", "--nproc-per-node=2", "/nonexistent/train.py")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(cpplaunch_lines(r.stderr), [
            "cpplaunch: error: the training script /nonexistent/train.py does not exist (in "
            f"{os.getcwd()}); check the path"])

    def test_not_executable_with_no_python(self):
        with tempfile.TemporaryDirectory() as d:
            program = os.path.join(d, "train.sh")
            with open(program, "w") as f:
                f.write("#!/bin/sh\ntouch %s/ran\n" % d)
            os.chmod(program, 0o644)
            r = launch("--max-restarts=2", "--no-python", program)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn("is not executable (chmod +x it", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "ran")))


class DuplicateNodeRank(unittest.TestCase):
    """Item 7: every agent of the job stops, not only the one that lost the claim."""

    def test_every_agent_stops_with_one_line(self):
        port = free_port()
        agents = []
        try:
            for rank in (0, 1, 1):
                agents.append(subprocess.Popen(
                    [CPPLAUNCH, "--nnodes=3", f"--node-rank={rank}", "--master-addr=127.0.0.1",
                     f"--master-port={port}", "--rdzv-conf=timeout=60", "--no-python",
                     "/bin/true"], env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    text=True))
                time.sleep(0.3)  # the store's host first
            start = time.monotonic()
            results = [a.communicate(timeout=40) for a in agents]
            elapsed = time.monotonic() - start
        finally:
            for a in agents:
                if a.poll() is None:
                    a.kill()
                    a.communicate()
        for a, (_, err) in zip(agents, results):
            self.assertEqual(a.returncode, 1, err)
            self.assertIn("two hosts were started with --node-rank=1", err)
        self.assertLess(elapsed, 20)


class WhichPython(unittest.TestCase):
    """Item 4: a python3 first on PATH that lacks torch (a venv, pyenv)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="which_python_")
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", self.dir]))
        bin_dir = os.path.join(self.dir, "venv", "bin")
        os.makedirs(bin_dir)
        self.python = os.path.join(bin_dir, "python3")
        with open(self.python, "w") as f:  # a real Python without site-packages: no torch
            f.write('#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n')
        os.chmod(self.python, 0o755)
        self.script = os.path.join(self.dir, "train.py")
        with open(self.script, "w") as f:
            f.write("import torch\n")
        environment = env(PATH=bin_dir + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
        del environment["PYTHON_EXEC"]
        self.env = environment

    def test_import_error_on_every_rank_names_the_interpreter(self):
        r = launch("--nproc-per-node=2", "-r", "3", self.script, env=self.env)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(f"of binary: {self.python}", r.stderr)
        self.assertIn("cpplaunch: the workers failed at start-up with ModuleNotFoundError: No "
                      f"module named 'torch'; the interpreter was {self.python} (python3 on PATH; "
                      "set PYTHON_EXEC to choose one)", r.stderr)

    def test_without_logs_the_workers_own_words_show_and_no_guess_is_added(self):
        # Deliberately changed (issue 27, item 2): a quick exit 1 without the workers' texts
        # proves nothing about the interpreter, so no hint; the import error itself reaches the
        # console, and the failure lines name the binary.
        r = launch("--nproc-per-node=2", self.script, env=self.env)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("ModuleNotFoundError: No module named 'torch'", r.stderr)
        self.assertIn(f"of binary: {self.python}", r.stderr)
        self.assertNotIn("the interpreter was", r.stderr)


class Logs(unittest.TestCase):
    """Item 5: where the logs are, and the root cause's traceback kept and shown."""

    FAIL = ('import os, sys\n'
            'if os.environ["LOCAL_RANK"] == "1":\n'
            '    raise ValueError("boom from rank 1")\n')
    RECORD = ('from torch.distributed.elastic.multiprocessing.errors import record\n'
              '@record\n'
              'def main():\n'
              '    raise ValueError("recorded boom")\n'
              'main()\n')

    def script(self, text):
        d = tempfile.mkdtemp(prefix="rough_logs_")
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", d]))
        path = os.path.join(d, "train.py")
        with open(path, "w") as f:
            f.write(text)
        return d, path

    def test_redirects_name_the_log_directory_and_show_the_stderr_tail(self):
        d, script = self.script(self.FAIL)
        r = launch("--nproc-per-node=2", "-r", "3", f"--log-dir={d}/logs", script)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(f"cpplaunch: worker logs: {d}/logs/", r.stderr)
        self.assertIn(f"cpplaunch: the workers' log and error files are in {d}/logs/", r.stderr)
        self.assertIn("cpplaunch: rank 1 wrote no error file; the last lines of its "
                      f"{d}/logs/", r.stderr)
        self.assertIn("  ValueError: boom from rank 1", r.stderr)

    def test_local_ranks_filter_keeps_the_hidden_root_cause_traceback(self):
        d, script = self.script(self.FAIL)
        r = launch("--nproc-per-node=2", "--local-ranks-filter=0", f"--log-dir={d}/logs", script)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("  ValueError: boom from rank 1", r.stderr)  # in the summary's tail
        logs = [os.path.join(root, name) for root, _, names in os.walk(f"{d}/logs")
                for name in names if name == "stderr.log"]
        self.assertEqual(len(logs), 1, logs)
        with open(logs[0]) as f:
            self.assertIn("ValueError: boom from rank 1", f.read())

    def test_log_dir_dev_null_keeps_the_recorded_traceback(self):
        d, script = self.script(self.RECORD)
        with tempfile.TemporaryDirectory() as tmp:
            r = launch("--log-dir=/dev/null", "-r", "3", script, env=env(TMPDIR=tmp))
            self.assertEqual(r.returncode, 1, r.stderr)
            root = r.stderr.split("Root Cause")[1]
            self.assertIn("ValueError: recorded boom", root)
            self.assertIn("error_file: " + tmp + "/cpplaunch_errors_", root)
            self.assertEqual(os.listdir(tmp), [])  # the private error files are gone


class SmallThings(unittest.TestCase):
    """Item 8."""

    def test_did_you_mean(self):
        r = launch("--nprocs-per-node=2", "--no-python", "/bin/true")
        self.assertEqual(r.returncode, 2)
        self.assertIn("(did you mean --nproc-per-node?)", r.stderr)

    def test_pet_value_error_names_the_variable(self):
        r = launch("--no-python", "/bin/true", env=env(PET_MAX_RESTARTS="many"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("PET_MAX_RESTARTS=many", r.stderr)

    def test_tee_error_says_what_fits(self):
        r = launch("--tee=9", "--no-python", "/bin/true")
        self.assertEqual(r.returncode, 1)
        self.assertNotIn("<^", r.stderr)
        self.assertIn("give one of 0-3", r.stderr)

    def test_help_tells_the_truth(self):
        r = launch("--help")
        self.assertEqual(r.returncode, 0)
        self.assertNotIn("between checks", r.stdout)
        self.assertNotIn("FQDN", r.stdout)
        self.assertIn("PYTHON_EXEC", r.stdout)

    def test_multinode_launch_help_exits_0(self):
        r = subprocess.run([os.path.join(REPO, "scripts", "multinode-launch"), "--help"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--hosts", r.stdout)

    def test_after_k_restarts(self):
        r = launch("--max-restarts=2", "--no-python", "/bin/sh", "-c", "exit 3")
        self.assertEqual(r.returncode, 1)
        self.assertIn("worker group failed after 2 restarts (--max-restarts=2)", r.stderr)

    def test_no_empty_temporary_directory_is_left(self):
        with tempfile.TemporaryDirectory() as tmp:
            for script in ("exit 0", "exit 3"):
                r = launch("--nproc-per-node=2", "--no-python", "/bin/sh", "-c", script,
                           env=env(TMPDIR=tmp))
                self.assertIn(r.returncode, (0, 1), r.stderr)
                self.assertEqual(os.listdir(tmp), [], r.stderr)


class SecondPass(unittest.TestCase):
    """Issue 27, the first hour's second pass: what the binary says, one line each."""

    def test_single_host_c10d_job_says_so_and_a_second_names_rdzv_endpoint(self):
        endpoint = f"--rdzv-endpoint=127.0.0.1:{free_port()}"
        common = ["--nnodes=1", "--nproc-per-node=1", "--rdzv-backend=c10d", endpoint,
                  "--no-python"]
        first = subprocess.Popen([CPPLAUNCH, *common, "/bin/sleep", "5"], env=env(),
                                 stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(1)
            second = launch(*common, "/bin/true")
        finally:
            first.terminate()
            _, first_err = first.communicate(timeout=30)
        self.assertIn("cpplaunch: warning: --nnodes=1: a single-host job; --rdzv-backend=c10d "
                      "is not used", first_err)
        self.assertEqual(second.returncode, 1, second.stderr)
        self.assertIn("Address already in use; the port is --rdzv-endpoint's: give "
                      "--rdzv-endpoint another HOST:PORT", second.stderr)
        self.assertNotIn("--master-port", second.stderr)

    def test_did_you_mean_for_a_misspelled_last_word(self):
        r = launch("--master-adress=10.0.0.1", "--no-python", "/bin/true")
        self.assertEqual(r.returncode, 2)
        self.assertIn("(did you mean --master-addr?)", r.stderr)

    def test_nproc_per_node_typo_is_a_usage_error_listing_the_values(self):
        r = launch("--nproc-per-node=4x", "--no-python", "/bin/true")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("invalid value: '4x' (give an integer, or auto, cpu or gpu)", r.stderr)

    def test_log_dir_that_cannot_be_made_names_the_option(self):
        r = launch("--log-dir=/proc/cpplaunch_e2e/logs", "--no-python", "/bin/true")
        self.assertEqual(r.returncode, 1, r.stderr)
        lines = cpplaunch_lines(r.stderr)
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("--log-dir /proc/cpplaunch_e2e/logs: cannot create", lines[0])
        self.assertIn("--log-dir=/dev/null for no log files", lines[0])
        self.assertNotIn("filesystem error", r.stderr)

    def test_wrong_master_addr_says_how_to_wait_less_in_its_first_line(self):
        # TEST-NET-1 answers nothing: the agent retries until the timeout (first line after 5 s).
        r = launch("--nnodes=2", "--node-rank=1", "--master-addr=192.0.2.1",
                   f"--master-port={free_port()}", "--rdzv-conf=timeout=8",
                   "--no-python", "/bin/true", env=env(LOGLEVEL="INFO"))
        self.assertEqual(r.returncode, 1, r.stderr)
        progress = [line for line in r.stderr.splitlines() if "still trying" in line]
        self.assertTrue(progress, r.stderr)
        self.assertIn("giving up in", progress[0])
        self.assertIn("(--rdzv-conf timeout=SECONDS waits less)", progress[0])


class TlsModule(unittest.TestCase):
    """OpenSSL is in a module loaded for https endpoints only (etcd_client/tls_module.h)."""

    def etcd_https(self, conf, **extra):
        # Port 9 on loopback: nothing listens; the TLS set-up fails before any connection.
        return launch("--nnodes=1:2", "--rdzv-backend=etcd-v3", "--rdzv-endpoint=127.0.0.1:9",
                      f"--rdzv-conf=protocol=https,{conf}", "--no-python", "/bin/true",
                      env=env(**extra))

    def test_a_missing_module_is_one_line_with_the_fix(self):
        r = self.etcd_https("cacert=/etc/hostname", CPPLAUNCH_TLS_MODULE="/nonexistent/libtls.so")
        self.assertEqual(r.returncode, 1, r.stderr)
        lines = cpplaunch_lines(r.stderr)
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("https to etcd needs cpplaunch's TLS module, which cannot be loaded "
                      "(/nonexistent/libtls.so: cannot open shared object file", lines[0])
        self.assertIn("set CPPLAUNCH_TLS_MODULE to its path", lines[0])

    def test_files_the_module_cannot_use_are_named_with_the_cause(self):
        for conf, expected in (
                ("cacert=/nonexistent.pem", "the etcd CA file '/nonexistent.pem': No such file"),
                ("cacert=/etc/hostname", "the etcd CA file '/etc/hostname': no certificate"),
                ("cert=/etc/hostname,key=/etc/hostname",
                 "the etcd client certificate '/etc/hostname': not a PEM file"),
        ):
            r = self.etcd_https(conf)
            self.assertEqual(r.returncode, 1, r.stderr)
            lines = cpplaunch_lines(r.stderr)
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertIn("cannot use " + expected, lines[0])

    def test_a_plain_job_does_not_load_openssl(self):
        # The module is found beside the build's programs, yet a job that uses no https maps
        # neither it nor OpenSSL.
        script = "grep -c -E 'libssl|libcrypto|libcpplaunch-tls' /proc/$PPID/maps || true"
        r = launch("--nproc-per-node=1", "--no-python", "/bin/sh", "-c", script)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "0", r.stdout)


if __name__ == "__main__":
    unittest.main()
