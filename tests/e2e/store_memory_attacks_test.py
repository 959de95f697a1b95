"""Memory attacks on the store a real cpplaunch agent hosts (issue 15, "What broke" item 1), with
the agent and its workers inside a memory cgroup whose limit is well above the store's budget.
Each attack is the repro as reported; the job, its workers and a probing client (a PING every
10 ms, answered within 1 s throughout) must survive, with the agent's peak RSS under 1.5 GiB.

  1. one 1.2 MB MULTI_GET naming one 8 MiB key 131,072 times (a 1 TiB reply if built);
  2. 2,000 duplicate WATCH_KEYs on one key, then one 8 MiB SET of it;
  3. 24 clients that never read, each asking for 31 x 8 MiB;
  4. one client storing distinct 8 MiB values until the budget refuses it.

usage: store_memory_attacks_test.py CPPLAUNCH     (exit 77: no writable memory cgroup)
Needs root for the cgroup (cgroup v2 memory.max, or v1's memory controller).
"""
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from launcher_env import clean_env

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
GiB = 1 << 30
MiB = 1 << 20
CGROUP_LIMIT = 4 * GiB  # well above the 1 GiB budget: the budget, not the cgroup, must stop it
PEAK_RSS_LIMIT = 1.5 * GiB
MAGIC = struct.pack("<I", 0x3C85F7CE)
# Modern command bytes (docs/store_protocol.md); WATCH_KEY is legacy only.
SET, MULTI_GET, PING = 1, 10, 13
LEGACY_SET, LEGACY_WATCH_KEY = 0, 7


def blob(data):
    return struct.pack("<Q", len(data)) + data


def modern():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(b"\x00" + MAGIC)
    return s


def modern_set(s, key, value):
    s.sendall(bytes([SET]) + blob(key) + blob(value))


def multi_get(keys):
    return bytes([MULTI_GET]) + struct.pack("<Q", len(keys)) + b"".join(blob(k) for k in keys)


def closed_by_server(s, seconds):
    """True when the server closes `s` within `seconds` (whatever it sent before)."""
    s.settimeout(seconds)
    try:
        while s.recv(1 << 20):
            pass
        return True
    except (socket.timeout, TimeoutError):
        return False
    except ConnectionResetError:
        return True


def recv_exactly(s, n, seconds=10):
    s.settimeout(seconds)
    got = b""
    while len(got) < n:
        chunk = s.recv(min(1 << 20, n - len(got)))
        if not chunk:
            break
        got += chunk
    return got


# ---- The memory cgroup


def make_cgroup():
    """A fresh memory cgroup limited to CGROUP_LIMIT: (path, procs file, peak reader), or a skip
    reason. v2 where /sys/fs/cgroup is the unified hierarchy, else v1's memory controller."""
    name = f"cpplaunch-store-attack-{os.getpid()}"
    v2 = "/sys/fs/cgroup/cgroup.controllers"
    if os.path.exists(v2):
        with open(v2) as f:
            if "memory" not in f.read().split():
                return None, "cgroup v2 without the memory controller"
        path = f"/sys/fs/cgroup/{name}"
        limit_file, peak_file = "memory.max", "memory.peak"
    elif os.path.isdir("/sys/fs/cgroup/memory"):
        path = f"/sys/fs/cgroup/memory/{name}"
        limit_file, peak_file = "memory.limit_in_bytes", "memory.max_usage_in_bytes"
    else:
        return None, "no memory cgroup (neither v2 memory.max nor v1 /sys/fs/cgroup/memory)"
    try:
        os.mkdir(path)
        with open(os.path.join(path, limit_file), "w") as f:
            f.write(str(CGROUP_LIMIT))
    except OSError as e:
        if os.path.isdir(path):
            os.rmdir(path)
        return None, f"cannot create a memory cgroup at {path}: {e.strerror}"
    return (path, os.path.join(path, "cgroup.procs"), os.path.join(path, peak_file)), None


def remove_cgroup(path):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.rmdir(path)
            return
        except OSError:
            time.sleep(0.05)  # the last member's exit is still being accounted


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class Probe(threading.Thread):
    """PINGs the store every 10 ms on its own connection; records the slowest answer."""

    def __init__(self):
        super().__init__(daemon=True)
        self.worst = 0.0
        self.failure = None
        self.pings = 0
        self.stop = threading.Event()

    def run(self):
        try:
            s = modern()
            s.settimeout(5)
            nonce = 0
            while not self.stop.is_set():
                nonce += 1
                start = time.monotonic()
                s.sendall(bytes([PING]) + struct.pack("<I", nonce))
                answer = recv_exactly(s, 4, seconds=5)
                if answer != struct.pack("<I", nonce):
                    raise AssertionError(f"PING {nonce} answered {answer!r}")
                self.worst = max(self.worst, time.monotonic() - start)
                self.pings += 1
                time.sleep(0.01)
        except Exception as e:  # reported by the test, on the main thread
            self.failure = repr(e)


def start_attacked_agent(cls, prefix, extra_args=()):
    """Starts the agent under attack in the memory cgroup, with two real workers that record
    their PIDs and run until the test releases them, then the probe; sets cls.cgroup,
    cgroup_peak, tmp, release, pids, stderr, agent, workers and probe, and the module's PORT.
    Exits 77 (skipped) without a writable memory cgroup."""
    global PORT
    cgroup, reason = make_cgroup()
    if cgroup is None:
        print(f"SKIP: {reason}")
        sys.exit(77)
    cls.cgroup, procs, cls.cgroup_peak = cgroup
    PORT = free_port()
    cls.tmp = tempfile.mkdtemp(prefix=prefix)
    cls.release = os.path.join(cls.tmp, "release")
    cls.pids = os.path.join(cls.tmp, "pids")
    cls.stderr = open(os.path.join(cls.tmp, "agent.err"), "w+")
    worker = os.path.join(cls.tmp, "worker.sh")
    with open(worker, "w") as f:
        f.write(f'echo $$ >> {cls.pids}\nwhile [ ! -e {cls.release} ]; do sleep 0.05; done\n')
    cls.agent = subprocess.Popen(
        ["/bin/sh", "-c", f'echo $$ > {procs} && exec "$0" "$@"', CPPLAUNCH,
         "--nproc-per-node=2", f"--master-port={PORT}", *extra_args, "--no-python",
         "/bin/sh", worker],
        env=clean_env(), stdout=subprocess.DEVNULL, stderr=cls.stderr, start_new_session=True)
    try:
        cls.workers = StoreMemoryAttacks.wait_for_workers.__func__(cls)
    except BaseException:
        StoreMemoryAttacks.tearDownClass.__func__(cls)
        raise
    cls.probe = Probe()
    cls.probe.start()


class StoreMemoryAttacks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_attacked_agent(cls, "cpplaunch-store-attack-")

    @classmethod
    def wait_for_workers(cls):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if os.path.exists(cls.pids):
                with open(cls.pids) as f:
                    pids = [int(p) for p in f.read().split()]
                if len(pids) == 2:
                    return pids
            time.sleep(0.02)
        raise AssertionError("the workers did not start")

    @classmethod
    def tearDownClass(cls):
        cls.probe.stop.set()
        if cls.agent.poll() is None:
            os.killpg(cls.agent.pid, signal.SIGKILL)
            cls.agent.wait()
        remove_cgroup(cls.cgroup)
        cls.stderr.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.probe.worst = 0.0

    def tearDown(self):
        print(f"  slowest PING during {self._testMethodName}: {self.probe.worst * 1000:.1f} ms",
              file=sys.stderr)

    def assertJobSurvives(self):
        self.assertIsNone(self.agent.poll(), self.agent_stderr())
        for pid in self.workers:
            self.assertTrue(alive(pid), f"worker {pid} died")
        self.assertIsNone(self.probe.failure)
        self.assertLess(self.probe.worst, 1.0, "the store stopped answering the probe")
        self.assertLess(status_kib(self.agent.pid, "VmHWM") * 1024, PEAK_RSS_LIMIT)

    def agent_stderr(self):
        self.stderr.flush()
        with open(self.stderr.name) as f:
            return f.read()

    def rss(self):
        return status_kib(self.agent.pid, "VmRSS") * 1024

    def test_1_multi_get_of_one_big_key_131072_times_is_refused(self):
        s = modern()
        modern_set(s, b"big", b"x" * (8 * MiB))
        request = multi_get([b"big"] * 131072)
        self.assertGreater(len(request), 1_200_000)
        start = time.monotonic()
        s.sendall(request)
        self.assertTrue(closed_by_server(s, 10))
        self.assertLess(time.monotonic() - start, 5)
        self.assertIn("store: refused MULTI_GET from 127.0.0.1:", self.agent_stderr())
        self.assertIn("reply limit", self.agent_stderr())
        self.assertJobSurvives()

    def test_2_duplicate_watches_collapse_into_one_notification(self):
        watcher = socket.create_connection(("127.0.0.1", PORT), timeout=10)
        watcher.sendall((bytes([LEGACY_WATCH_KEY]) + blob(b"watched")) * 2000)
        self.assertEqual(recv_exactly(watcher, 2000), b"\x03" * 2000)
        setter = socket.create_connection(("127.0.0.1", PORT), timeout=10)
        setter.sendall(bytes([LEGACY_SET]) + blob(b"watched") + blob(b"v" * (8 * MiB)))
        header = recv_exactly(watcher, 1 + 8 + 7 + 8 + 8)
        self.assertEqual(header[0], 1)  # KEY_CREATED
        self.assertEqual(struct.unpack("<Q", header[-8:])[0], 8 * MiB)
        self.assertEqual(len(recv_exactly(watcher, 8 * MiB)), 8 * MiB)
        watcher.settimeout(0.5)
        with self.assertRaises((socket.timeout, TimeoutError)):
            watcher.recv(1)  # one notification, not 2,000
        watcher.close()
        setter.close()
        self.assertJobSurvives()

    def test_3_clients_that_never_read_cannot_grow_memory(self):
        s = modern()
        modern_set(s, b"big31", b"y" * (8 * MiB))
        s.sendall(bytes([PING]) + struct.pack("<I", 1))
        self.assertEqual(recv_exactly(s, 4), struct.pack("<I", 1))
        before = self.rss()
        readers = []
        for _ in range(24):
            c = modern()
            c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            c.sendall(multi_get([b"big31"] * 31))  # 8.4 KB asking for 248 MiB
            readers.append(c)
        time.sleep(2)
        print(f"  slowest PING while 24 clients asked: {self.probe.worst * 1000:.1f} ms", file=sys.stderr)
        during = self.rss()
        self.assertJobSurvives()
        # Streamed as each client reads: a few MiB each, not 6 GiB in all.
        self.assertLess(during - before, 512 * MiB)
        for c in readers:
            c.close()
        time.sleep(0.5)
        after = self.rss()
        print(f"RSS: before {before / MiB:.0f} MiB, 24 non-reading clients {during / MiB:.0f} "
              f"MiB, after they left {after / MiB:.0f} MiB", file=sys.stderr)
        self.assertLess(after - before, 64 * MiB)
        s.close()

    def test_4_storing_distinct_values_stops_at_the_budget(self):
        s = modern()
        stored = 0
        value = b"z" * (8 * MiB)
        s.settimeout(30)
        try:
            for i in range(400):  # 3.2 GiB if nothing stopped it
                modern_set(s, b"fill/%d" % i, value)
                stored += 1
        except (BrokenPipeError, ConnectionResetError):
            pass
        # The budget (1 GiB) refused it: far fewer than 400 values, and about 1 GiB's worth.
        self.assertLess(stored, 200)
        self.assertGreater(stored, 64)
        self.assertTrue(closed_by_server(s, 10))
        err = self.agent_stderr()
        self.assertIn("store: refused SET from 127.0.0.1:", err)
        self.assertIn("memory budget of 1.0 GiB", err)
        self.assertJobSurvives()
        # Still serving: a small SET and GET from a new client work.
        c = modern()
        modern_set(c, b"after", b"ok")
        c.sendall(bytes([3]) + blob(b"after"))
        self.assertEqual(recv_exactly(c, 10), blob(b"ok"))
        c.close()

    def test_5_refusals_are_rate_limited_and_the_job_ends_well(self):
        lines = [l for l in self.agent_stderr().splitlines() if "store: refused" in l]
        self.assertGreater(len(lines), 0)
        self.assertLess(len(lines), 10, "\n".join(lines))
        print(f"probe: {self.probe.pings} pings, slowest {self.probe.worst * 1000:.1f} ms; agent "
              f"peak RSS {status_kib(self.agent.pid, 'VmHWM') / 1024:.0f} MiB", file=sys.stderr)
        self.assertJobSurvives()
        open(self.release, "w").close()
        self.assertEqual(self.agent.wait(timeout=30), 0, self.agent_stderr())
        self.assertLess(os.path.getsize(self.stderr.name), 100_000)


if __name__ == "__main__":
    unittest.main()
