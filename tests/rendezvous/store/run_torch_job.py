#!/usr/bin/python3
"""Runs torch_gloo_worker.py as a real N-process gloo job against cpplaunch-store, the way
torchrun's static backend sets workers up (agent store, every rank a client).

usage: run_torch_job.py STORE_BINARY [--workers N] [--hostile]

--hostile: while the job rendezvouses and trains, other connections misbehave: a half-sent
request left hanging, a request declaring a 1 GiB value, random bytes, hundreds of idle
connections, and a client that pipelines requests for a large value without reading. A probe
client measures round trips throughout; the store's RSS is sampled from /proc.
Checks: every rank passes, the 1 GiB request is refused by closing, no probe round trip stalls,
the store's memory stays bounded. Exit status 0 on success, 1 otherwise, 77 without torch.
"""
import os
import random
import socket
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "torch_gloo_worker.py")
PYTHON = "/usr/bin/python3"
JOB_TIMEOUT_S = 240
MAX_PROBE_STALL_S = 1.5  # generous: the test machine is shared; a blocked store stalls forever
MAX_STORE_RSS_MB = 200


def u64(n):
    return struct.pack("<Q", n)


def legacy_set(key, value):
    return b"\x00" + u64(len(key)) + key + u64(len(value)) + value


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Hostiles:
    """The misbehaving connections, plus the probe and the RSS sampler."""

    def __init__(self, port, store_pid):
        self.port, self.store_pid = port, store_pid
        self.sockets = []
        self.failures = []
        self.max_probe_s = 0.0
        self.probes = 0
        self.max_rss_mb = 0.0
        self.stop = threading.Event()
        self.threads = []

    def start(self):
        half = connect(self.port)
        half.sendall(b"\x00" + u64(16) + b"/half")  # SET with half a key, then nothing
        self.sockets.append(half)

        huge = connect(self.port)
        huge.sendall(b"\x00" + u64(2) + b"/h" + u64(1 << 30))  # a 1 GiB value announced
        huge.settimeout(5)
        try:
            if huge.recv(1) != b"":
                self.failures.append("the 1 GiB request got a reply instead of a close")
        except socket.timeout:
            self.failures.append("the 1 GiB request was not refused within 5 s")
        except ConnectionError:
            pass  # reset: refused
        huge.close()

        rng = random.Random(42)
        for _ in range(20):
            noisy = connect(self.port)
            noisy.sendall(bytes(rng.getrandbits(8) for _ in range(4096)))
            self.sockets.append(noisy)
        for _ in range(300):
            self.sockets.append(connect(self.port))

        big = connect(self.port)
        big.sendall(legacy_set(b"/hostile_big", b"x" * (4 << 20)) + b"\x06")
        read_exact(big, 8)
        get = b"\x02" + u64(12) + b"/hostile_big"
        big.sendall(get * 64)  # 256 MiB of replies requested, never read
        self.sockets.append(big)

        for target in (self.probe, self.sample_rss):
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            self.threads.append(thread)

    def probe(self):
        s = connect(self.port)
        while not self.stop.is_set():
            begin = time.monotonic()
            try:
                s.sendall(legacy_set(b"/probe", b"p") + b"\x06")  # SET + GETNUMKEYS
                read_exact(s, 8)
            except OSError as error:
                self.failures.append(f"probe failed: {error}")
                return
            self.max_probe_s = max(self.max_probe_s, time.monotonic() - begin)
            self.probes += 1
            time.sleep(0.01)
        s.close()

    def sample_rss(self):
        while not self.stop.is_set():
            self.max_rss_mb = max(self.max_rss_mb, rss_mb(self.store_pid))
            time.sleep(0.05)

    def finish(self):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=5)
        for s in self.sockets:
            s.close()
        if self.max_probe_s > MAX_PROBE_STALL_S:
            self.failures.append(f"a probe round trip took {self.max_probe_s:.2f} s")
        if self.max_rss_mb > MAX_STORE_RSS_MB:
            self.failures.append(f"store RSS reached {self.max_rss_mb:.0f} MB")
        print(f"hostile: {self.probes} probe round trips, slowest {self.max_probe_s * 1000:.1f} ms;"
              f" store RSS max {self.max_rss_mb:.1f} MB")
        return self.failures


def worker_env(rank, world, port):
    env = dict(os.environ)
    env.update({
        "RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(world),
        "LOCAL_WORLD_SIZE": str(world), "GROUP_RANK": "0", "ROLE_RANK": str(rank),
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
        "TORCHELASTIC_USE_AGENT_STORE": "True", "TORCHELASTIC_RESTART_COUNT": "0",
        "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1",
    })
    return env


def run_job(port, world):
    workers = [subprocess.Popen([PYTHON, WORKER], env=worker_env(r, world, port),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for r in range(world)]
    deadline = time.monotonic() + JOB_TIMEOUT_S
    failures = []
    for rank, worker in enumerate(workers):
        try:
            output, _ = worker.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for w in workers:
                w.kill()
            output, _ = worker.communicate()
            failures.append(f"rank {rank} timed out")
        lines = output.strip().splitlines()
        print(f"rank {rank} exit {worker.returncode}: {lines[-1] if lines else '(no output)'}")
        if worker.returncode != 0 or not lines or "all checks passed" not in lines[-1]:
            failures.append(f"rank {rank} failed:\n{output}")
    return failures


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    try:
        import torch  # noqa: F401
    except ImportError:
        print("SKIP: torch is not importable")
        return 77
    world = int(args[args.index("--workers") + 1]) if "--workers" in args else 4
    store = subprocess.Popen([args[0], "--host", "127.0.0.1", "--port", "0"],
                             stdout=subprocess.PIPE, text=True)
    hostiles = None
    try:
        port = int(store.stdout.readline())
        if "--hostile" in args:
            hostiles = Hostiles(port, store.pid)
            hostiles.start()
        started = time.monotonic()
        failures = run_job(port, world)
        print(f"job of {world} ranks took {time.monotonic() - started:.1f} s")
        if hostiles:
            failures += hostiles.finish()
        if store.poll() is not None:
            failures.append(f"the store exited with {store.returncode}")
    finally:
        store.terminate()
        store.wait(timeout=10)
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
