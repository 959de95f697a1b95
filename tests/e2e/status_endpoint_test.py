"""The agent's status endpoint (--status-port) with real clients: curl on every endpoint, the
metrics read by Debian's prometheus_client parser, /healthz through a hang and its restart, a
slow client that must not touch supervision, usage errors, and a two-agent job with a secret
read by cpplaunch-status.

usage: status_endpoint_test.py CPPLAUNCH CPPLAUNCH_STATUS [unittest args]
"""
import hashlib
import hmac
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
STATUS_TOOL = os.path.abspath(sys.argv.pop(1))
PYTHON = "/usr/bin/python3"
ENDPOINT_LINE = re.compile(r"status endpoint on http://([0-9.]+:\d+)/")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def curl(address, path, *extra):
    """(HTTP code, body) of one request, with curl."""
    out = subprocess.run(["curl", "-sS", "-m", "5", "-w", "\n%{http_code}", *extra,
                          f"http://{address}{path}"], capture_output=True, text=True, timeout=10)
    body, _, code = out.stdout.rpartition("\n")
    return int(code or 0), body.removesuffix("\n")


class Agent:
    """cpplaunch with --status-port=0 in the background; `address` once it said where."""

    def __init__(self, args, env=None):
        self.log = tempfile.NamedTemporaryFile("w+", suffix=".log")
        self.proc = subprocess.Popen([CPPLAUNCH, "--status-port=0", *args], stdout=self.log,
                                     stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
        self.address = None
        deadline = time.time() + 20
        while time.time() < deadline and self.address is None:
            match = ENDPOINT_LINE.search(self.output())
            if match:
                self.address = match.group(1)
            elif self.proc.poll() is not None:
                raise AssertionError(f"cpplaunch exited {self.proc.returncode}:\n{self.output()}")
            time.sleep(0.02)
        if self.address is None:
            raise AssertionError(f"no endpoint line:\n{self.output()}")

    def output(self):
        with open(self.log.name) as f:
            return f.read()

    def wait(self, timeout=60):
        return self.proc.wait(timeout)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def script(text):
    f = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
    f.write(textwrap.dedent(text))
    f.close()
    return f.name


class StatusEndpointTest(unittest.TestCase):
    def agent(self, args, env=None):
        agent = Agent(args, env)
        self.addCleanup(agent.close)
        return agent

    def test_every_endpoint_with_curl_and_the_prometheus_parser(self):
        worker = script("""
            import os, sys, time
            print(f"rank {os.environ['RANK']} pid {os.getpid()}", flush=True)
            open(os.environ["PIDS"] + "/" + os.environ["RANK"], "w").write(str(os.getpid()))
            time.sleep(float(os.environ["SLEEP"]))
        """)
        pids = tempfile.mkdtemp()
        agent = self.agent(["--nproc-per-node=2", worker], env={"PIDS": pids, "SLEEP": "4"})
        deadline = time.time() + 20
        while len(os.listdir(pids)) < 2 and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # the first lines pass through the agent
        self.assertEqual(curl(agent.address, "/healthz"), (200, "ok"))
        self.assertEqual(curl(agent.address, "/readyz"), (200, "ready"))
        code, body = curl(agent.address, "/status")
        self.assertEqual(code, 200)
        status = json.loads(body)
        self.assertEqual(status["schema"], 1)
        self.assertEqual(status["agent"]["state"], "running")
        self.assertEqual(status["job"]["backend"], "none")
        self.assertEqual(status["host"]["world_size"], 2)
        ranks = status["ranks"]
        self.assertEqual([r["rank"] for r in ranks], [0, 1])
        for r in ranks:
            with open(f"{pids}/{r['rank']}") as f:
                self.assertEqual(r["pid"], int(f.read()))
            self.assertEqual(r["state"], "running")
            self.assertGreater(r["rss_bytes"], 1 << 20)
            self.assertIsNotNone(r["last_output_at"], body)
            self.assertLess(r["last_output_age_seconds"], 10)
        # Nothing of the environment or the command line in any answer.
        self.assertNotIn(pids, body)
        self.assertNotIn(worker, body)

        code, text = curl(agent.address, "/metrics")
        self.assertEqual(code, 200)
        from prometheus_client.parser import text_string_to_metric_families
        families = {f.name: f for f in text_string_to_metric_families(text + "\n")}
        self.assertEqual(families["cpplaunch_restarts"].type, "counter")
        self.assertEqual(families["cpplaunch_rendezvous_duration_seconds"].type, "histogram")
        running = [s.value for s in families["cpplaunch_workers_running"].samples]
        self.assertEqual(running, [2])
        rss = {s.labels["rank"]: s.value
               for s in families["cpplaunch_worker_resident_memory_bytes"].samples}
        self.assertEqual(sorted(rss), ["0", "1"])
        self.assertIn("cpplaunch_store_requests", families)
        self.assertEqual(curl(agent.address, "/nowhere")[0], 404)
        self.assertEqual(curl(agent.address, "/healthz", "-X", "POST")[0], 405)
        self.assertEqual(agent.wait(), 0, agent.output())
        # The job over, the endpoint is gone with the agent.
        self.assertEqual(curl(agent.address, "/healthz")[0], 0)

    def test_healthz_turns_503_in_a_hang_and_200_after_the_restart(self):
        # Attempt 0: both ranks sit silently; the hang's SIGABRT finds them slow to dump (1.5 s
        # within the stack grace), so the stalled attempt stays up long enough to be seen, and
        # their deaths are failures that restart the job. Attempt 1: both print and finish.
        worker = script("""
            import os, signal, time
            def slow_dump(*_):
                time.sleep(1.5)
                os._exit(1)
            if os.environ["TORCHELASTIC_RESTART_COUNT"] == "0":
                signal.signal(signal.SIGABRT, slow_dump)
                print("stalling", flush=True)
                time.sleep(600)
            for step in range(20):
                print("step", step, flush=True)
                time.sleep(0.2)
        """)
        agent = self.agent(["--nproc-per-node=2", "--hang-timeout=2", "--max-restarts=1",
                            worker])
        seen = []  # (seconds since start, code, restarts used)
        started = time.time()
        while agent.proc.poll() is None and time.time() - started < 60:
            # /status first: a health answer is then never older than the restart count.
            _, status = curl(agent.address, "/status")
            code, body = curl(agent.address, "/healthz")
            restarts = json.loads(status)["job"]["restarts_used"] if status else None
            if code:
                seen.append((round(time.time() - started, 1), code, restarts, body))
            time.sleep(0.1)
        self.assertEqual(agent.wait(), 0, agent.output())
        codes = [(code, restarts) for _, code, restarts, _ in seen]
        self.assertIn((503, 0), codes, seen)
        first_503 = next(t for t, code, _, _ in seen if code == 503)
        self.assertGreaterEqual(first_503, 2.0, seen)
        self.assertTrue(any("no progress from the workers" in body for *_, body in seen), seen)
        # Healthy before the hang, and again in the restarted attempt.
        self.assertEqual(seen[0][1], 200, seen)
        self.assertIn((200, 1), codes, seen)
        after = [code for _, code, restarts, _ in seen if restarts == 1]
        self.assertNotIn(503, after, seen)

    def test_a_slow_client_does_not_touch_supervision(self):
        worker = script("""
            import sys, time
            time.sleep(1.5)
            sys.exit(3)
        """)
        agent = self.agent(["--nproc-per-node=1", worker])
        host, port = agent.address.split(":")
        slow = []
        for _ in range(20):  # more than the endpoint holds
            s = socket.create_connection((host, int(port)))
            s.sendall(b"GET /status HTTP/1.1\r\nHo")
            slow.append(s)
        started = time.time()
        code = agent.wait(30)
        for s in slow:
            s.close()
        self.assertEqual(code, 1, agent.output())
        self.assertLess(time.time() - started, 10, agent.output())
        self.assertIn("exitcode: 3", agent.output())

    def test_usage_errors_are_one_line(self):
        for args, env, needle in [
            (["--status-port=70000"], {}, "--status-port 70000: need a TCP port, 0..65535"),
            ([], {"TORCHELASTIC_HEALTH_CHECK_PORT": "x1"},
             "TORCHELASTIC_HEALTH_CHECK_PORT x1: need a TCP port"),
            (["--status-port=0", "--status-addr=nowhere"], {},
             "--status-addr nowhere: not a numeric address"),
        ]:
            out = subprocess.run([CPPLAUNCH, *args, "--nproc-per-node=1", "--no-python", "true"],
                                 capture_output=True, text=True, env={**os.environ, **env},
                                 timeout=30)
            # One line, and the usage hint that follows every usage error.
            self.assertEqual(out.returncode, 2, out.stderr)
            lines = out.stderr.strip().splitlines()
            self.assertIn(needle, lines[0], (args, env))
            self.assertEqual(lines[1:], ["Try 'cpplaunch --help' for more information."])
        # A port in use: one line naming it, exit 1, nothing started.
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            out = subprocess.run([CPPLAUNCH, f"--status-port={port}", "--nproc-per-node=1",
                                  "--no-python", "true"], capture_output=True, text=True,
                                 timeout=30)
        self.assertEqual(out.returncode, 1, out.stderr)
        self.assertIn(f"cannot serve the status endpoint on 127.0.0.1:{port}: Address already "
                      "in use; choose another --status-port", out.stderr)

    def test_two_agents_with_a_secret_need_its_proof(self):
        secret_dir = tempfile.mkdtemp()
        secret_file = os.path.join(secret_dir, "secret")
        with open(secret_file, "w") as f:
            f.write("the-job-secret-of-two-agents\n")
        os.chmod(secret_file, 0o600)
        worker = script("""
            import time
            print("up", flush=True)
            time.sleep(5)
        """)
        port = free_port()
        common = ["--nnodes=2", "--nproc-per-node=1", "--rdzv-backend=c10d",
                  f"--rdzv-endpoint=127.0.0.1:{port}", "--rdzv-id=status-secret"]
        # With a secret an agent does not fall back to joining whatever holds the endpoint's
        # port (issue 23): the second agent on this host is told it is a client.
        a = self.agent(common + [f"--rdzv-conf=secret_file={secret_file}", worker])
        b = self.agent(common + [f"--rdzv-conf=secret_file={secret_file},is_host=0", worker])
        deadline = time.time() + 30
        while time.time() < deadline:
            code, body = curl(a.address, "/readyz")
            if code == 200:
                break
            time.sleep(0.1)
        code, body = curl(a.address, "/status")
        status = json.loads(body)
        self.assertEqual(status["job"]["backend"], "c10d")
        self.assertEqual(len(status["hosts"]), 2, body)
        other = [h for h in status["hosts"] if not h["self"]][0]
        self.assertIsNone(other["status_address"], body)
        self.assertIn("secret", status["hosts_hidden"])
        self.assertNotIn("the-job-secret", body)
        # With the proof (computed here from the contract), the other agent's endpoint shows.
        t = str(int(time.time()))
        mac = hmac.new(b"the-job-secret-of-two-agents", f"cpplaunch-status\n{t}\n/status".encode(),
                       hashlib.sha256).hexdigest()
        _, body = curl(a.address, "/status", "-H", f"X-Cpplaunch-Proof: {t}:{mac}")
        status = json.loads(body)
        other = [h for h in status["hosts"] if not h["self"]][0]
        self.assertIn(other["status_address"], (a.address, b.address), body)
        self.assertIsNone(status["hosts_hidden"])
        # cpplaunch-status with the secret file walks from one agent to both.
        out = subprocess.run([STATUS_TOOL, "--secret-file", secret_file, a.address],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertTrue(out.stdout.splitlines()[-1].startswith("2 of 2 hosts answered, 2 ranks"),
                        out.stdout)
        self.assertEqual(a.wait(), 0, a.output())
        self.assertEqual(b.wait(), 0, b.output())


if __name__ == "__main__":
    unittest.main(verbosity=2)
