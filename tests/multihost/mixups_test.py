"""Two agents on this host that must not make one job (issue 27, items 4 and 5), on loopback:
  * two jobs with the same --rdzv-id and --nnodes=1:2 but different scripts: the second is
    refused, and both agents say so in one line, instead of training together; hosts of one
    job whose arguments and script directories differ (as torchrun allows) are not;
  * a job whose agents advertise different addresses, on a host whose name resolves to a
    loopback address (Debian's /etc/hosts): the agent with the real address warns at start,
    with GLOO_SOCKET_IFNAME and its interface, and names the cause again after a worker's
    gloo "connect [127.0.0.1]:NNNN: Connection refused" (printed here by the worker itself).
Workers are plain Python scripts (no torch needed).

usage: mixups_test.py CPPLAUNCH [unittest args]
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from launcher_env import clean_env  # noqa: E402

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
PYTHON = "/usr/bin/python3"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def real_address():
    """A non-loopback IPv4 address of this host, or None."""
    out = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
    return next((a for a in out if "." in a and not a.startswith("127.")), None)


class MixupsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cpplaunch-mixups-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.procs = []
        self.addCleanup(self.kill_all)

    def kill_all(self):
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, 9)
                p.wait()

    def script(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def start(self, args, **env):
        # TMPDIR: each run's log directory (torchelastic_*) goes with the test's files.
        p = subprocess.Popen([CPPLAUNCH, *args],
                             env=clean_env(PYTHON_EXEC=PYTHON, TMPDIR=self.tmp, **env),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True, cwd=self.tmp)
        self.procs.append(p)
        return p

    def finish(self, p, timeout=60):
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err

    def test_hosts_with_their_own_arguments_and_paths_make_one_job(self):
        # As with torchrun: each host may pass its own arguments (a local data path) and keep
        # the script in its own directory; only the script's name is compared.
        say = "import os, sys\nprint('rank', os.environ['RANK'], sys.argv[1:])\n"
        here = self.script("train.py", say)
        os.makedirs(os.path.join(self.tmp, "elsewhere"))
        there = self.script(os.path.join("elsewhere", "train.py"), say)
        args = ["--nnodes=2", "--nproc-per-node=1", "--rdzv-backend=c10d", "--rdzv-id=own-args",
                f"--rdzv-endpoint=127.0.0.1:{free_port()}"]
        hosts = [self.start([*args, here, "--data=/local/shard0"]),
                 self.start([*args, there, "--data=/local/shard1"])]
        results = [self.finish(p) for p in hosts]
        self.assertEqual([code for code, _, _ in results], [0, 0], results)
        said = sorted(out.strip() for _, out, _ in results)
        self.assertEqual(len(said), 2, results)
        self.assertTrue(any("--data=/local/shard0" in line for line in said), said)
        self.assertTrue(any("--data=/local/shard1" in line for line in said), said)

    def test_a_second_job_with_the_same_rdzv_id_and_another_script_is_refused(self):
        stamp = os.path.join(self.tmp, "running")
        first = self.script("first.py", f"import time\nopen({stamp!r}, 'w').close()\n"
                                        "time.sleep(30)\n")
        second = self.script("second.py", "print('the second job trained')\n")
        args = ["--nnodes=1:2", "--nproc-per-node=1", "--rdzv-backend=c10d", "--rdzv-id=same",
                f"--rdzv-endpoint=127.0.0.1:{free_port()}", "--rdzv-conf=last_call_timeout=1"]
        a = self.start([*args, first])
        deadline = time.time() + 60
        while not os.path.exists(stamp):
            self.assertIsNone(a.poll(), a.communicate()[1] if a.poll() is not None else "")
            self.assertLess(time.time(), deadline, "the first job's worker never started")
            time.sleep(0.1)
        started = time.time()
        b = self.start([*args, second])
        line = ("this host's workers run another script than the job's first host's: two jobs "
                "with the same --rdzv-id? give each job its own --rdzv-id")
        code_b, out_b, err_b = self.finish(b)
        code_a, _, err_a = self.finish(a)
        self.assertEqual(code_b, 1, err_b)
        self.assertIn(line, err_b)
        self.assertNotIn("the second job trained", out_b)
        self.assertEqual(code_a, 1, err_a)
        self.assertIn(line, err_a)
        # The first job stopped on the refusal, not at the end of its 30 s script.
        self.assertLess(time.time() - started, 25, err_a)

    def test_a_host_name_on_loopback_is_warned_about_and_named_after_a_refused_connect(self):
        addr = real_address()
        if addr is None:
            self.skipTest("this host has no non-loopback IPv4 address")
        name_addr = socket.getaddrinfo(socket.gethostname(), None, 0, socket.SOCK_STREAM)[0][4][0]
        on_loopback = name_addr.startswith("127.") or name_addr == "::1"
        worker = self.script("gloo.py", (
            "import os, sys\n"
            "if os.environ.get('FAIL_LIKE_GLOO'):\n"
            "    print('RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] '\n"
            "          'connect [127.0.0.1]:1935: Connection refused', file=sys.stderr)\n"
            "    sys.exit(1)\n"))
        port = free_port()
        args = ["--nnodes=2", "--nproc-per-node=1", "--rdzv-backend=c10d", "--rdzv-id=lo",
                f"--rdzv-endpoint={addr}:{port}", "-t", "3"]
        # Agent a advertises loopback (as every agent does on one host), agent b the real one.
        a = self.start(["--local-addr=127.0.0.1", *args, worker])
        b = self.start([f"--local-addr={addr}", *args, worker], FAIL_LIKE_GLOO="1")
        code_b, _, err_b = self.finish(b)
        code_a, _, err_a = self.finish(a)
        self.assertEqual(code_b, 1, err_b)
        warning = (f"cpplaunch: warning: this host's name {socket.gethostname()} resolves to "
                   f"{name_addr}, which the workers' gloo would give the other hosts as their "
                   "address; set GLOO_SOCKET_IFNAME=")
        if on_loopback:
            self.assertIn(warning, err_b)
            self.assertIn(f"(the interface of {addr}, this host's address in the job) on every "
                          f"host, or map {socket.gethostname()} to {addr} in /etc/hosts", err_b)
        else:
            self.assertNotIn("warning: this host's name", err_b)
        self.assertIn("cpplaunch: a worker's gloo connect to 127.0.0.1:1935 was refused: a worker "
                      "on another host advertised a loopback address", err_b)
        # The agent on loopback itself is not the one to warn.
        self.assertNotIn("warning: this host's name", err_a)
        self.assertEqual(code_a, 1, err_a)


if __name__ == "__main__":
    unittest.main()
