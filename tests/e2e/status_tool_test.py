"""cpplaunch-status end to end: the real binary against canned agents.

The agents here are a second implementation of the status endpoint's server side (Python's
http.server on loopback ports, serving schema-1 /status documents written by hand): enough to
test the crawl, the table, --json, --watch, the proof header (checked with Python's hmac) and
the errors without a running job. The endpoint's own tests run a real agent.

usage: status_tool_test.py CPPLAUNCH_STATUS [unittest args]
"""
import hashlib
import hmac
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

STATUS_TOOL = os.path.abspath(sys.argv.pop(1))
HIDDEN = "other hosts' addresses are hidden: this job has a secret (--rdzv-conf secret_file)"


def dead_address():
    """A loopback address nothing listens on (a port bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def rank(local, global_rank, pid, age, rss=512 << 20, cpu=0.97, started=None):
    now = time.time()
    return {"local_rank": local, "rank": global_rank, "pid": pid, "state": "running",
            "started_at": started if started is not None else now - 630,
            "last_output_at": None if age is None else now - age,
            "last_output_age_seconds": age, "rss_bytes": rss, "cpu_share": cpu,
            "exit_code": None, "signal": None, "reason": None}


def verify_proof(secret, header, path):
    """The contract's check, written again from its text: t within 300 s, HMAC over the path."""
    if not header or ":" not in header:
        return False
    t, mac = header.split(":", 1)
    if not t.isdigit() or abs(time.time() - int(t)) > 300:
        return False
    message = b"cpplaunch-status\n" + t.encode() + b"\n" + path.encode()
    return hmac.compare_digest(hmac.new(secret, message, hashlib.sha256).hexdigest(), mac)


class FakeAgent:
    """One agent's status endpoint on a free loopback port. `document(agent, proven)` builds
    the /status answer; `proofs` keeps every X-Cpplaunch-Proof header received."""

    def __init__(self, document, secret=None, status=200):
        self.document, self.secret, self.status = document, secret, status
        self.proofs = []
        agent = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                proof = self.headers.get("X-Cpplaunch-Proof")
                agent.proofs.append(proof)
                proven = agent.secret is not None and verify_proof(agent.secret, proof, self.path)
                if self.path != "/status" or agent.status != 200:
                    self.send_response(404 if agent.status == 200 else agent.status)
                    self.end_headers()
                    return
                body = json.dumps(agent.document(agent, proven)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.address = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def status_document(name, group_rank, address, ranks, hosts, hidden=None, restarts=1,
                    group_world_size=4):
    return {
        "schema": 1,
        "agent": {"hostname": name, "pid": 1000 + group_rank, "state": "running",
                  "uptime_seconds": 600.0, "status_address": address},
        "job": {"run_id": "fixture", "backend": "c10d", "nnodes": "4", "restarts_used": restarts,
                "restarts_left": 2, "max_restarts": 3, "round": restarts},
        "host": {"group_rank": group_rank, "slot": group_rank, "group_world_size": group_world_size,
                 "world_size": 8, "base_rank": 2 * group_rank, "local_world_size": 2},
        "ranks": ranks, "last_failure": None, "hosts": hosts, "hosts_hidden": hidden,
    }


def member(name, group_rank, address, self_=False):
    return {"group_rank": group_rank, "hostname": name, "address": "127.0.0.1",
            "status_address": address, "self": self_}


class JobOfFour:
    """vm-a names itself and vm-b; vm-b names every host, vm-c (live) and vm-d (dead) among
    them, so both are reached only through vm-b. vm-b's rank 3 is silent for 90 s; vm-c's
    rank 5 has written nothing in the 630 s since it started."""

    def __init__(self):
        self.dead = dead_address()
        self.a = FakeAgent(lambda agent, proven: status_document(
            "vm-a", 0, agent.address, [rank(0, 0, 4000, 1.2), rank(1, 1, 4001, 3.4)],
            [member("vm-a", 0, agent.address, True), member("vm-b", 1, self.b.address)]))
        self.b = FakeAgent(lambda agent, proven: status_document(
            "vm-b", 1, agent.address, [rank(0, 2, 4100, 2.0), rank(1, 3, 4101, 90.0)],
            [member("vm-a", 0, self.a.address), member("vm-b", 1, agent.address, True),
             member("vm-c", 2, self.c.address), member("vm-d", 3, self.dead)]))
        self.c = FakeAgent(lambda agent, proven: status_document(
            "vm-c", 2, agent.address, [rank(0, 4, 4200, 0.5), rank(1, 5, 4201, None)],
            [member("vm-c", 2, agent.address, True), member("vm-d", 3, self.dead)]))

    def close(self):
        for agent in (self.a, self.b, self.c):
            agent.close()


def run_tool(*args, timeout=30):
    return subprocess.run([STATUS_TOOL, *args], capture_output=True, text=True, timeout=timeout)


def table_rows(stdout):
    """{host: [line, ...]} for the table's lines (the header and summary left out)."""
    rows = {}
    for line in stdout.splitlines()[1:-1]:
        words = line.lstrip("! ").split()
        rows.setdefault(words[0], []).append(line)
    return rows


class CrawlTest(unittest.TestCase):
    def setUp(self):
        self.job = JobOfFour()
        self.addCleanup(self.job.close)

    def test_table_shows_every_host_reached_through_the_others(self):
        result = run_tool(self.job.a.address)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, "")
        lines = result.stdout.splitlines()
        self.assertEqual(lines[0].split(), ["HOST", "NODE", "RANK", "LOCAL", "PID", "STATE",
                                            "RESTARTS", "LAST", "OUTPUT", "RSS", "CPU", "NOTE"])
        rows = table_rows(result.stdout)
        self.assertEqual(len(rows["vm-a"]), 2)
        self.assertEqual(rows["vm-a"][0].split(),
                         ["vm-a", "0", "0", "0", "4000", "running", "1", "1", "s", "512.0", "MiB",
                          "97%"])
        self.assertEqual(len(rows["vm-c"]), 2)  # named only by vm-b
        silent = rows["vm-b"][1]
        self.assertTrue(silent.startswith("!"), silent)
        self.assertIn("silent for 90 s", silent)
        quiet = rows["vm-c"][1]
        self.assertIn("no output yet", quiet)
        self.assertIn("silent: nothing written in 10 min", quiet)
        dead = rows["vm-d"][0]
        self.assertTrue(dead.startswith("!"), dead)
        self.assertIn(f"vm-d ({self.job.dead})", dead)
        self.assertIn("no answer: Connection refused", dead)
        self.assertEqual(lines[-1], "3 of 4 hosts answered, 6 ranks, 2 silent "
                                    "(no output for over 60 s)")

    def test_silent_after_moves_the_mark(self):
        result = run_tool(self.job.b.address, "--silent-after", "100000")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(result.stdout.splitlines()[-1].startswith("3 of 4 hosts answered, 6 ranks, "
                                                                  "0 silent"))

    def test_json_has_every_answer_and_the_unreachable_host(self):
        result = run_tool(self.job.a.address, "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        document = json.loads(result.stdout)
        self.assertEqual(sorted(h["agent"]["hostname"] for h in document["hosts"]),
                         ["vm-a", "vm-b", "vm-c"])
        self.assertEqual(document["unreachable"], [
            {"status_address": self.job.dead, "hostname": "vm-d", "group_rank": 3,
             "error": "Connection refused"}])
        self.assertEqual(document["summary"], {"hosts_answered": 3, "hosts_known": 4,
                                               "hosts_not_asked": 0, "ranks": 6, "silent": 2})

    def test_each_address_is_asked_once(self):
        result = run_tool(self.job.a.address, self.job.b.address)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([len(x.proofs) for x in (self.job.a, self.job.b, self.job.c)], [1, 1, 1])
        self.assertEqual(self.job.a.proofs, [None])  # no secret, no proof header

    def test_watch_refreshes_until_sigint_then_exits_0(self):
        tool = subprocess.Popen([STATUS_TOOL, self.job.a.address, "--watch=0.2"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        while len(self.job.c.proofs) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        tool.send_signal(signal.SIGINT)
        out, err = tool.communicate(timeout=20)
        self.assertEqual(tool.returncode, 0, err)
        summaries = [line for line in out.splitlines() if "hosts answered" in line]
        self.assertGreaterEqual(len(summaries), 3)
        self.assertNotIn("\x1b[", out)  # not a terminal: tables one after another


class SecretTest(unittest.TestCase):
    """A job with a secret: other hosts' addresses only for a request with a valid proof."""

    def setUp(self):
        # Hex, not raw bytes: a raw secret ends in "\n" once in 256 runs, and the reader drops
        # one trailing newline (base/crypto/secret_file.h), so the proofs would differ.
        self.secret = os.urandom(32).hex().encode()
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.secret_file = os.path.join(self.tmp.name, "secret")
        with open(os.open(self.secret_file, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
            f.write(self.secret)

        def document(name, group_rank, peer_name, peer_rank, peer):
            def build(agent, proven):
                peer_address = peer().address if proven else None
                return status_document(
                    name, group_rank, agent.address, [rank(0, group_rank, 5000 + group_rank, 1.0)],
                    [member(name, group_rank, agent.address, True),
                     member(peer_name, peer_rank, peer_address)],
                    hidden=None if proven else HIDDEN, group_world_size=2)
            return build

        self.a = FakeAgent(document("vm-a", 0, "vm-b", 1, lambda: self.b), self.secret)
        self.b = FakeAgent(document("vm-b", 1, "vm-a", 0, lambda: self.a), self.secret)
        self.addCleanup(self.a.close)
        self.addCleanup(self.b.close)

    def test_without_the_secret_other_hosts_are_hidden(self):
        result = run_tool(self.a.address)
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = table_rows(result.stdout)
        self.assertIn("address hidden: use --secret-file", rows["vm-b"][0])
        self.assertEqual(result.stdout.splitlines()[-1],
                         f"1 of 2 hosts answered, 1 ranks, 0 silent; {HIDDEN}")
        self.assertEqual(self.b.proofs, [])

    def test_with_the_secret_file_the_proof_opens_every_host(self):
        result = run_tool(self.a.address, "--secret-file", self.secret_file)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.splitlines()[-1], "2 of 2 hosts answered, 2 ranks, 0 silent")
        for agent in (self.a, self.b):
            self.assertEqual(len(agent.proofs), 1)
            self.assertTrue(verify_proof(self.secret, agent.proofs[0], "/status"), agent.proofs)

    def test_a_wrong_secret_proves_nothing(self):
        with open(self.secret_file, "wb") as f:
            f.write(b"not the job's secret")
        result = run_tool(self.a.address, "--secret-file", self.secret_file)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("1 of 2 hosts answered", result.stdout)
        self.assertFalse(verify_proof(self.secret, self.a.proofs[0], "/status"))

    def test_an_unreadable_secret_file_is_bad_usage(self):
        os.chmod(self.secret_file, 0o644)
        result = run_tool(self.a.address, "--secret-file", self.secret_file)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
        self.assertTrue(result.stderr.startswith("cpplaunch-status: --secret-file: "))


class ErrorTest(unittest.TestCase):
    def assert_one_line(self, result, code, start):
        self.assertEqual(result.returncode, code, result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
        self.assertTrue(result.stderr.startswith(start), result.stderr)
        self.assertNotIn("Traceback", result.stderr)

    def test_no_agent_reachable_is_one_line_and_exit_1(self):
        address = dead_address()
        result = run_tool(address)
        self.assert_one_line(result, 1, f"cpplaunch-status: cannot reach {address}: "
                                         "Connection refused; is the agent running with "
                                         "--status-port?")

    def test_an_agent_that_never_answers_times_out(self):
        with socket.socket() as listener:  # connections wait in the backlog, never answered
            listener.bind(("127.0.0.1", 0))
            listener.listen(8)
            address = f"127.0.0.1:{listener.getsockname()[1]}"
            started = time.monotonic()
            result = run_tool(address, "--timeout", "0.5")
            self.assertLess(time.monotonic() - started, 5)
        self.assert_one_line(result, 1, f"cpplaunch-status: cannot reach {address}: "
                                        "no answer within 0.5 s")

    def test_another_server_on_the_port_is_named(self):
        other = FakeAgent(lambda agent, proven: {}, status=404)
        self.addCleanup(other.close)
        result = run_tool(other.address)
        self.assert_one_line(result, 1, f"cpplaunch-status: no status from {other.address}: "
                                        "answered HTTP 404, not a status document; is that "
                                        "the agent's --status-port?")

    def test_bad_usage_is_one_line_and_exit_2(self):
        for args in ([], ["--bogus", "127.0.0.1:1"], ["localhost"], ["127.0.0.1:99999"],
                     ["127.0.0.1:1", "--timeout", "0"], ["127.0.0.1:1", "--watch", "5"],
                     ["127.0.0.1:1", "--silent-after"]):
            with self.subTest(args=args):
                self.assert_one_line(run_tool(*args), 2, "cpplaunch-status: ")

    def test_help_prints_usage_and_exits_0(self):
        result = run_tool("--help")
        self.assertEqual(result.returncode, 0)
        self.assertTrue(result.stdout.startswith("usage: cpplaunch-status HOST:PORT"))
        self.assertIn("--secret-file PATH", result.stdout)


if __name__ == "__main__":
    unittest.main()
