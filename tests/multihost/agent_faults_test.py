"""Faults the agents of a multi-host job must survive (issue 15), on loopback, with real agents
and real PyTorch DDP workers:

  killed_agent_noticed   a SIGKILLed agent is noticed by its peer in under 1 s (default settings:
                         its closed connection ends the round, no heartbeat needed); static and
                         c10d (killed_agent_noticed_c10d)
  replacement_rejoins    a replacement agent with the dead one's --node-rank takes its place in
                         the job's current round when restarts are left; the job ends 0
  killed_in_rendezvous   an agent killed while the rendezvous waits for a third host is not
                         counted: its replacement and the third host complete the round, with no
                         restart consumed
  stranger               a raw TCP client speaking PyTorch's protocol lists and rewrites every key
                         it can see, SETs guessed agents' keys and adds 140,000 junk keys during a
                         2-host job: the job is unaffected and a later worker failure still
                         restarts it (--max-restarts=1)
  frozen_store_host      the agent hosting the store is SIGSTOPped until its peer gave up; after
                         SIGCONT it stops its workers at once
  stranger_agent_ends    (issue 23) without a secret, a raw client speaking the agents' protocol
                         writes garbage to the round's end key: both agents say a client that is
                         not one of the job's agents ended the round (not "the store is gone"),
                         and restart on the healthy store (--max-restarts=1)
  busy_port_with_secret  (issue 23) with a secret, a c10d agent on the endpoint's host whose port
                         another process holds refuses to join it, naming the holder's pid; an
                         agent told is_host=0 refuses a "store" there that cannot prove the
                         secret, having sent it no proof
  silent_in_arming       (issue 23) a c10d host that joined the round and is SIGSTOPped before the
                         round arms (--nnodes=2:4, at the last call) is dropped after the
                         keep-alive window, named in one line,
                         with an arming progress line meanwhile; the two others (MIN) run the job
                         without it and without consuming a restart (--max-restarts=0)

usage: agent_faults_test.py CPPLAUNCH [scenario ...]
Exit status: 0 all passed, 1 a failure.
"""
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

from multihost_test import (DDP, Failure, Job, check, free_port, static_args,
                            wait_for_stamps)


class TimedAgent:
    """One cpplaunch process whose output lines are stamped with time.time() as they arrive, so
    that a test can tell when the agent said something, not only when it exited."""

    def __init__(self, name, argv, env):
        self.name = name
        self.started = time.time()
        self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        self.lines = []  # (time, line)
        self.ended = None
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append((time.time(), line.rstrip("\n")))

    @property
    def output(self):
        return "\n".join(line for _, line in self.lines)

    def first(self, needle, after=0.0):
        """Time of the first line containing `needle` stamped after `after`, or None."""
        for stamp, line in list(self.lines):
            if stamp >= after and needle in line:
                return stamp
        return None

    def wait_line(self, needle, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            stamp = self.first(needle)
            if stamp is not None:
                return stamp
            if self.proc.poll() is not None:
                self.reader.join(5)
                return self.first(needle)
            time.sleep(0.02)
        return None

    def wait(self, timeout):
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self.proc.wait()
            self.reader.join(5)
            raise Failure(f"{self.name} did not finish within {timeout} s; output:\n"
                          f"{self.output}")
        self.ended = time.time()
        self.reader.join(5)
        return self.proc.returncode

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def communicate(self):
        self.proc.wait()
        self.reader.join(5)
        return self.output, None


def start(job, name, args, extra_env=None):
    agent = TimedAgent(name, [job.cpplaunch] + args + [DDP], job.env(extra_env))
    job.agents.append(agent)
    return agent


def close(job):
    # Job.close() calls agent.proc.communicate(), which would race the reader thread: kill and
    # reap here first, then let Job.close() clean up the workers and the stamp directory.
    for agent in job.agents:
        if agent.proc.poll() is None:
            agent.kill()
        agent.communicate()
    job.close()


def output(job):
    return "\n".join(f"--- {a.name} (exit {a.proc.returncode}):\n{a.output}" for a in job.agents)


def kill_agent_only(agent):
    """SIGKILL of the agent process alone (not its process group): its workers die through
    PR_SET_PDEATHSIG, as when a host's agent is killed by the OOM killer."""
    killed_at = time.time()
    os.kill(agent.proc.pid, signal.SIGKILL)
    return killed_at


LOCAL = "127.0.0.1"


class Topo:
    netns = False

    @staticmethod
    def address(index):
        return LOCAL


# ---- scenarios --------------------------------------------------------------------------------

def killed_agent_noticed(cpplaunch, report, args_of, label):
    job = Job(cpplaunch, {})
    try:
        # Default --rdzv-conf apart from the rendezvous timeout: keep_alive 5 s x 3 would find
        # the dead agent after 15 s; its closed connections must end the round at once.
        host0 = start(job, "host0", args_of(0), extra_env={"MH_SLEEP": "120"})
        # Host 0 hosts the store (c10d: the first agent to bind it), so host 1 is a plain peer.
        check(host0.wait_line("serves the job's store", 30) is not None,
              f"host 0 does not serve the store\n{output(job)}")
        start(job, "host1", args_of(1), extra_env={"MH_SLEEP": "120"})
        wait_for_stamps(job, ["started-0-0", "started-1-0"], 60)
        killed_at = kill_agent_only(job.agents[1])
        noticed = job.agents[0].wait_line("stopping the workers: lost the agent on", 30)
        codes = [a.wait(30) for a in job.agents]
        out = output(job)
        check(noticed is not None, f"host 0 never said it lost host 1\n{out}")
        delay = noticed - killed_at
        report(f"{label}: SIGKILLed agent noticed by its peer after {delay * 1000:.0f} ms "
               f"(default settings); host 0 exited after "
               f"{(job.agents[0].ended - killed_at) * 1000:.0f} ms")
        check(delay < 1.0, f"host 0 noticed the dead agent after {delay:.2f} s\n{out}")
        check(codes == [1, -signal.SIGKILL], f"exit codes {codes}\n{out}")
        check("connection to the store closed" in job.agents[0].output,
              f"host 0 does not say the agent's connection closed\n{out}")
    finally:
        close(job)


def scenario_killed_agent_noticed(cpplaunch, report):
    port = free_port()
    killed_agent_noticed(cpplaunch, report, lambda i: static_args(Topo, port, 2, i), "static")


def scenario_killed_agent_noticed_c10d(cpplaunch, report):
    port = free_port()
    args = ["--nnodes=2", "--rdzv-backend=c10d", "--rdzv-id=faults",
            f"--rdzv-endpoint={LOCAL}:{port}", "--nproc-per-node=1"]
    killed_agent_noticed(cpplaunch, report, lambda i: args, "c10d")


def scenario_replacement_rejoins(cpplaunch, report):
    port = free_port()
    job = Job(cpplaunch, {})
    try:
        extra = ["--max-restarts=1"]
        host0 = start(job, "host0", static_args(Topo, port, 2, 0, extra=extra),
                      extra_env={"MH_SLEEP": "120", "MH_SLEEP_ONCE": "1"})
        start(job, "host1", static_args(Topo, port, 2, 1, extra=extra),
              extra_env={"MH_SLEEP": "120"})
        wait_for_stamps(job, ["started-0-0", "started-1-0"], 60)
        killed_at = kill_agent_only(job.agents[1])
        check(job.agents[1].wait(10) == -signal.SIGKILL, "host 1 did not die")
        # Host 0 stops its workers and waits for node rank 1 in round 1; the replacement, started
        # like the first host 1, must find round 1 (not round 0) and take node rank 1.
        replacement = start(job, "host1-replacement", static_args(Topo, port, 2, 1, extra=extra),
                            extra_env={"MH_SLEEP": "0.5"})
        codes = [host0.wait(90), replacement.wait(90)]
        out = output(job)
        check(codes == [0, 0], f"exit codes {codes} (host 0, replacement)\n{out}")
        for rank in range(2):
            check(f"ddp rank={rank} world=2 group_rank={rank} local_rank=0 restart=1 "
                  "allreduce=ok" in out, f"rank {rank} did not run in the restarted round\n{out}")
        report(f"replacement agent joined round 1; job ended 0 "
               f"{time.time() - killed_at:.1f} s after the SIGKILL")
    finally:
        close(job)


def scenario_killed_in_rendezvous(cpplaunch, report):
    port = free_port()
    job = Job(cpplaunch, {})
    try:
        conf = "timeout=60"
        host0 = start(job, "host0", static_args(Topo, port, 3, 0, conf=conf))
        doomed = start(job, "host1", static_args(Topo, port, 3, 1, conf=conf))
        # Host 0's progress line (every 5 s) proves host 1 joined before it is killed.
        joined = host0.wait_line("2/3 joined", 30)
        check(joined is not None, f"host 1 never joined\n{output(job)}")
        kill_agent_only(doomed)
        check(doomed.wait(10) == -signal.SIGKILL, "host 1 did not die")
        # --max-restarts=0: had the dead agent been counted, the round would fail.
        start(job, "host1-replacement", static_args(Topo, port, 3, 1, conf=conf))
        start(job, "host2", static_args(Topo, port, 3, 2, conf=conf))
        codes = [a.wait(90) for a in job.agents if a is not doomed]
        out = output(job)
        check(codes == [0, 0, 0], f"exit codes {codes}\n{out}")
        for rank in range(3):
            check(f"ddp rank={rank} world=3 group_rank={rank} local_rank=0 restart=0 "
                  "allreduce=ok" in out, f"rank {rank} missing\n{out}")
        report("agent killed during the rendezvous was not counted; its replacement completed "
               "round 0 without a restart")
    finally:
        close(job)


# PyTorch's modern TCPStore dialect (docs: tcpstore-protocol.md), spoken by a stranger.
VALIDATE, SET, GET, LIST_KEYS, MULTI_SET, DELETE_KEY = 0, 1, 3, 17, 11, 8
MAGIC = 0x3C85F7CE


def recv_exact(sock, size):
    """`size` bytes from `sock`; Failure when the store closes the connection first."""
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise Failure("the store closed the stranger's connection")
        data += chunk
    return data


class Stranger:
    def __init__(self, port):
        self.sock = socket.create_connection((LOCAL, port), timeout=30)
        self.sock.sendall(struct.pack("<BI", VALIDATE, MAGIC))

    @staticmethod
    def _string(data):
        data = data.encode() if isinstance(data, str) else data
        return struct.pack("<Q", len(data)) + data

    def _exact(self, size):
        return recv_exact(self.sock, size)

    def set(self, key, value):
        self.sock.sendall(bytes([SET]) + self._string(key) + self._string(value))

    def get(self, key):
        self.sock.sendall(bytes([GET]) + self._string(key))
        size = struct.unpack("<Q", self._exact(8))[0]
        return self._exact(size)

    def list_keys(self):
        self.sock.sendall(bytes([LIST_KEYS]))
        count = struct.unpack("<q", self._exact(8))[0]
        keys = []
        for _ in range(count):
            size = struct.unpack("<Q", self._exact(8))[0]
            keys.append(self._exact(size))
        return keys

    def multi_set(self, pairs):
        body = b"".join(self._string(k) + self._string(v) for k, v in pairs)
        self.sock.sendall(bytes([MULTI_SET]) + struct.pack("<q", len(pairs)) + body)

    def close(self):
        self.sock.close()


def guessed_agent_keys(run_id):
    """What an attacker who read cpplaunch's source would try: the agents' keys of the first
    rounds (end notices, go keys, node records, node-rank claims, heartbeats, barriers) and the
    c10d state key, with and without PyTorch's '/' prefix."""
    base = f"cpplaunch/{run_id}/"
    names = ["static/claim/0", "static/claim/1", "dynamic/state", "dynamic/version/1",
             "hb/127.0.0.1_1"]
    for r in range(3):
        for leaf in ["end", "go", "barrier", "barrier_done", "left", "all_left",
                     "static/node/0", "static/node/1", "static/claim/0", "static/claim/1",
                     "armed/0", "armed/1"]:
            names.append(f"r{r}/{leaf}")
    keys = [base + n for n in names] + [f"torch.rendezvous.{run_id}", "cpplaunch/", "init/"]
    return keys + ["/" + k for k in keys]


FORGED_END = ("kind=config_error\nhost=attacker\naddr=6.6.6.6\nnode_rank=0\nrank=-1\n"
              "local_rank=-1\ndetail=the stranger ended your job\n")
FORGED_NODE = ("node_id=evil\naddr=6.6.6.6\nhostname=evil\nlocal_world_size=2147483647\n"
               "nnodes_min=2\nnnodes_max=2\nmax_restarts=1\n")


def scenario_stranger(cpplaunch, report):
    port = free_port()
    job = Job(cpplaunch, {})
    gate = os.path.join(job.stamp_dir, "gate")
    try:
        for i in range(2):
            start(job, f"host{i}", static_args(Topo, port, 2, i, extra=["--max-restarts=1"]),
                  extra_env={"MH_FAIL_RANK": "1", "MH_FAIL_ONCE": "1", "MH_FAIL_GATE": gate,
                             "MH_SLEEP": "1"})
        wait_for_stamps(job, ["started-0-0", "started-1-0"], 60)
        stranger = Stranger(port)
        seen = stranger.list_keys()
        agents_keys = [k for k in seen if k.startswith(b"cpplaunch/")]
        check(not agents_keys, f"a stranger can list the agents' keys: {agents_keys[:5]}")
        for key in seen:  # every key it can see, and siblings of it
            stranger.set(key, b"garbage")
            stranger.set(key + b"x", b"garbage")
        for key in guessed_agent_keys("none"):
            stranger.set(key, FORGED_END if key.endswith("end") else FORGED_NODE)
        junk = 140_000
        batch = 5_000
        for first in range(0, junk, batch):
            stranger.multi_set([(f"junk/{i}", b"j") for i in range(first, first + batch)])
        stranger.get("junk/0")  # a reply: every SET before it was processed
        stranger.close()
        time.sleep(1)
        out = output(job)
        check(all(a.proc.poll() is None for a in job.agents),
              f"the stranger ended the job\n{out}")
        # A worker failure after the attack still restarts the job (the restart clears the
        # workers' 140,000+ keys).
        open(gate, "w").close()
        codes = [a.wait(120) for a in job.agents]
        out = output(job)
        check(codes == [0, 0], f"exit codes {codes}\n{out}")
        for rank in range(2):
            check(f"ddp rank={rank} world=2 group_rank={rank} local_rank=0 restart=1 "
                  "allreduce=ok" in out, f"rank {rank} not restarted\n{out}")
        check("attacker" not in out and "stranger" not in out and "6.6.6.6" not in out,
              f"the forged notice reached an agent\n{out}")
        report(f"stranger saw {len(seen)} keys (none of the agents'), wrote "
               f"{len(seen) * 2 + len(guessed_agent_keys('none'))} keys and {junk} junk keys; "
               f"the job restarted once and ended 0")
    finally:
        close(job)


def scenario_frozen_store_host(cpplaunch, report):
    port = free_port()
    job = Job(cpplaunch, {})
    try:
        for i in range(2):
            start(job, f"host{i}", static_args(Topo, port, 2, i), extra_env={"MH_SLEEP": "120"})
        wait_for_stamps(job, ["started-0-0", "started-1-0"], 60)
        host0, host1 = job.agents
        frozen_at = time.time()
        os.kill(host0.proc.pid, signal.SIGSTOP)
        try:
            # Host 1 loses the store (heartbeat_timeout 5 s) and gives up.
            code1 = host1.wait(60)
        finally:
            woken_at = time.time()
            os.kill(host0.proc.pid, signal.SIGCONT)
        stopped = host0.wait_line("stopping the workers", 30)
        code0 = host0.wait(30)
        out = output(job)
        check(code1 == 1, f"host 1 exit code {code1}\n{out}")
        check(stopped is not None and code0 == 1, f"host 0 exit code {code0}\n{out}")
        delay = stopped - woken_at
        report(f"store host frozen for {woken_at - frozen_at:.1f} s (until its peer gave up); "
               f"after SIGCONT it stopped its workers in {delay * 1000:.0f} ms and exited after "
               f"{(host0.ended - woken_at) * 1000:.0f} ms")
        check(delay < 1.0, f"the woken store host kept its workers {delay:.2f} s\n{out}")
        # The peer's closed connection (its will) ended the round, not a local timeout.
        check("stopping the workers: lost the agent on" in host0.output and
              "connection to the store closed" in host0.output,
              f"the woken store host does not name its peer's closed connection\n{out}")
    finally:
        close(job)


def scenario_silent_in_arming(cpplaunch, report):
    port = free_port()
    job = Job(cpplaunch, {})
    # keep-alive window 2 s x 3 = 6 s: longer than one progress interval (5 s), so arming prints
    # one progress line before the silent host is dropped.
    conf = ("join_timeout=60,last_call_timeout=7,keep_alive_interval=2,"
            "keep_alive_max_attempt=3")
    # MAX 4 with 3 hosts: the round completes at the last call, not at once.
    args = ["--nnodes=2:4", "--rdzv-backend=c10d", "--rdzv-id=silent",
            f"--rdzv-endpoint={LOCAL}:{port}", f"--rdzv-conf={conf}", "--nproc-per-node=1",
            "--max-restarts=0"]
    try:
        host0 = start(job, "host0", args)
        check(host0.wait_line("serves the job's store", 30) is not None,
              f"host 0 does not serve the store\n{output(job)}")
        host1 = start(job, "host1", args)
        silent = start(job, "host2", args)
        # Its own progress line (5 s after it started) proves it is a participant of round 0.
        joined = silent.wait_line("3 joined", 30)
        check(joined is not None, f"host 2 never joined round 0\n{output(job)}")
        stopped_at = time.time()
        os.kill(silent.proc.pid, signal.SIGSTOP)
        code1 = host1.wait(60)
        silent.kill()  # its frozen connection would hold the store's host in its linger
        codes = [host0.wait(60), code1]
        out = output(job)
        check(codes == [0, 0], f"exit codes {codes} (the job waited for the silent host?)\n{out}")
        for rank in range(2):
            check(f"ddp rank={rank} world=2 group_rank={rank} local_rank=0 restart=0 "
                  "allreduce=ok" in out, f"rank {rank} did not run without the silent host\n{out}")
        dropped = [line for a in (host0, host1) for _, line in a.lines
                   if "dropped" in line and "from the round before its workers started" in line]
        check(len(dropped) == 2 and all(
            # Node ids are <address>_<pid>_<random> (issue 23 item 5).
            re.search(rf"_{silent.proc.pid}_[0-9a-f]{{8}} sent no heartbeat for", line)
            and "forming round 1" in line
            for line in dropped), f"not one line per host naming the dropped host\n{out}")
        arming = [a.first("hosts armed the round; waiting for the others") for a in (host0, host1)]
        check(any(stamp is not None for stamp in arming),
              f"no progress line while the round armed\n{out}")
        first_drop = min(a.first("from the round before its workers started") or 1e18
                         for a in (host0, host1))
        report(f"silent host dropped {first_drop - stopped_at:.1f} s after its SIGSTOP (last call "
               f"7 s, keep-alive window 6 s); the job ran on 2 hosts, restart count 0, both exited "
               f"0 {max(host0.ended, host1.ended) - stopped_at:.1f} s after the SIGSTOP")
    finally:
        close(job)


def scenario_busy_port_with_secret(cpplaunch, report):
    port = free_port()
    job = Job(cpplaunch, {})
    holder = socket.socket()
    heard = []
    try:
        secret = os.path.join(job.stamp_dir, "secret")
        with open(os.open(secret, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write("the job's secret\n")
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind((LOCAL, port))
        holder.listen(4)
        args = ["--nnodes=2", "--rdzv-backend=c10d", "--rdzv-id=busy",
                f"--rdzv-endpoint={LOCAL}:{port}", "--nproc-per-node=1"]
        agent = start(job, "host0", args + [f"--rdzv-conf=secret_file={secret},join_timeout=30"])
        code = agent.wait(20)
        out = output(job)
        check(code == 1, f"exit code {code}\n{out}")
        check(f"cannot serve the job's store on {LOCAL}:{port}: the port is held by pid "
              f"{os.getpid()} (" in agent.output, f"the holder is not named\n{out}")

        # The impostor answers the agent's hello with a nonce and a proof it cannot make right.
        def impostor():
            conn, _ = holder.accept()
            conn.settimeout(10)
            data = b""
            try:
                while len(data) < 5 + 8 + 32:
                    data += conn.recv(4096)
                conn.sendall(struct.pack("<Q", 64) + os.urandom(64))
                while True:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
            except OSError:
                pass
            heard.append(data)
            conn.close()

        thread = threading.Thread(target=impostor, daemon=True)
        thread.start()
        client = start(job, "host1",
                       args + [f"--rdzv-conf=secret_file={secret},is_host=0,join_timeout=30"])
        code = client.wait(20)
        thread.join(10)
        out = output(job)
        check(code == 1, f"exit code {code}\n{out}")
        check(f"the store at {LOCAL}:{port} did not prove this job's secret" in client.output,
              f"the agent trusted the impostor\n{out}")
        check(heard and heard[0][45:] == b"\xc8" + bytes(8),
              f"the agent sent the impostor more than an empty proof: {heard!r}")
        report("a busy endpoint port names its holder; an impostor store is refused after the "
               "hello")
    finally:
        holder.close()
        close(job)


class AgentStranger:
    """A raw client that speaks the agents' protocol with no secret (an empty HMAC key), as
    anyone who read cpplaunch's source can when the job has no secret_file."""

    def __init__(self, port):
        import hashlib
        import hmac
        self.sock = socket.create_connection((LOCAL, port), timeout=30)
        self.sock.sendall(b"\xc7" + struct.pack("<I", 0x414C5043) + struct.pack("<Q", 32) +
                          os.urandom(32))
        answer = self._exact(8 + 64)[8:]
        proof = hmac.new(b"", b"cpplaunch agent store handshake v1\n" + answer[:32],
                         hashlib.sha256).digest()
        self.sock.sendall(b"\xc8" + struct.pack("<Q", 32) + proof)
        if self._exact(1) != b"\x00":
            raise Failure("the store refused the stranger's agent handshake")

    def _exact(self, size):
        return recv_exact(self.sock, size)

    def set(self, key, value):
        body = struct.pack("<Q", len(key)) + key.encode() + struct.pack("<Q", len(value)) + value
        self.sock.sendall(struct.pack("<I", 7) + bytes([SET]) + body)

    def close(self):
        self.sock.close()


def scenario_stranger_agent_ends(cpplaunch, report):
    port = free_port()
    job = Job(cpplaunch, {})
    try:
        for i in range(2):
            start(job, f"host{i}", static_args(Topo, port, 2, i, extra=["--max-restarts=1"]),
                  extra_env={"MH_SLEEP": "120", "MH_SLEEP_ONCE": "1"})
        wait_for_stamps(job, ["started-0-0", "started-1-0"], 60)
        stranger = AgentStranger(port)
        stranger.set("cpplaunch/none/r0/end", b"garbage")
        codes = [a.wait(90) for a in job.agents]
        stranger.close()
        out = output(job)
        check(codes == [0, 0], f"exit codes {codes} (the healthy store was not used again?)"
                               f"\n{out}")
        for agent in job.agents:
            check("stopping the workers: the round was ended by a client that is not one of this "
                  "job's agents: it holds an unreadable notice" in agent.output,
                  f"{agent.name} does not say who ended the round\n{out}")
        check("is gone" not in out, f"an agent blamed the healthy store\n{out}")
        for rank in range(2):
            check(f"ddp rank={rank} world=2 group_rank={rank} local_rank=0 restart=1 "
                  "allreduce=ok" in out, f"rank {rank} not restarted\n{out}")
        report("a stranger's garbage end notice was named as such; the job restarted on the "
               "healthy store and ended 0")
    finally:
        close(job)


SCENARIOS = {
    "killed_agent_noticed": scenario_killed_agent_noticed,
    "killed_agent_noticed_c10d": scenario_killed_agent_noticed_c10d,
    "replacement_rejoins": scenario_replacement_rejoins,
    "killed_in_rendezvous": scenario_killed_in_rendezvous,
    "stranger": scenario_stranger,
    "frozen_store_host": scenario_frozen_store_host,
    "silent_in_arming": scenario_silent_in_arming,
    "busy_port_with_secret": scenario_busy_port_with_secret,
    "stranger_agent_ends": scenario_stranger_agent_ends,
}


def run_scenarios(argv, scenarios, usage):
    """Runs the scenarios named in argv[2:] (every one when none is named) against the cpplaunch
    in argv[1], each reporting its figures; 1 when any failed, 2 for usage."""
    if len(argv) < 2:
        print(usage)
        return 2
    cpplaunch = os.path.abspath(argv[1])
    names = [a for a in argv[2:] if not a.startswith("--")] or list(scenarios)
    failed = []
    for name in names:
        started = time.time()
        try:
            scenarios[name](cpplaunch, lambda line: print(f"  measured: {line}", flush=True))
            print(f"PASS {name} ({time.time() - started:.1f} s)", flush=True)
        except Failure as e:
            failed.append(name)
            print(f"FAIL {name}: {e}", flush=True)
    return 1 if failed else 0


def main(argv):
    return run_scenarios(argv, SCENARIOS, __doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
