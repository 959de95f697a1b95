#!/usr/bin/python3
"""PyTorch 1.13's own TCPStore client cannot see or touch the agents' keys (docs/security.md).

Starts cpplaunch-store with a secret file, connects an agent (the handshake spoken here with
Python's hmac module), and stores agents' keys under the very names the client scenario of
torch_client_compat.py uses ("/k", "/never", "/missing", ...), plus a claimed key and a will.
Then runs that scenario against this store and against PyTorch's own server: the results must
be identical, as if the agents' keys did not exist. Afterwards the agent's keys are unchanged,
an agent with a wrong secret is refused, and the claim and the will act when the agent closes.

usage: torch_client_vs_agents.py PATH/TO/cpplaunch-store
Exit status: 0 passed, 1 a difference or a failure, 77 torch is not importable (skip).
"""
import hashlib
import hmac
import os
import socket
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_client_compat as compat  # noqa: E402  (exits 77 when torch is missing)

CONTEXT = b"cpplaunch agent store handshake v1\n"
STORE_CONTEXT = b"cpplaunch store proof v1\n"
AGENT_KEYS = ["/k", "/n", "/c", "/never", "/missing", "/later", "/late", "init/",
              "/worker/attempt_0/default_pg/0"]


def blob(data):
    return struct.pack("<Q", len(data)) + data


class Agent:
    """A raw agent connection: AGENT_HELLO with its nonce, the store's nonce and proof (checked:
    store_proven), the agent's proof, then modern-numbered requests, each behind a u32 tag that
    the server puts back in front of its reply (docs/store_protocol.md)."""

    def __init__(self, port, secret):
        self.sock = socket.create_connection((compat.HOST, port), timeout=10)
        mine = os.urandom(32)
        self.sock.sendall(b"\xc7" + struct.pack("<I", 0x414C5043) + blob(mine))
        answer = self.value()
        nonce, store_proof = answer[:32], answer[32:]
        expected = hmac.new(secret, STORE_CONTEXT + mine + nonce, hashlib.sha256).digest()
        self.store_proven = hmac.compare_digest(store_proof, expected)
        proof = hmac.new(secret, CONTEXT + nonce, hashlib.sha256).digest()
        self.sock.sendall(b"\xc8" + blob(proof))
        self.verdict = self.recv(1)
        self.tag = 0x10203040

    def recv(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("the store closed the connection")
            data += chunk
        return data

    def send(self, body, reply=True):
        """Sends one tagged request; with a reply, reads and checks the tag in front of it."""
        self.tag += 1
        self.sock.sendall(struct.pack("<I", self.tag) + body)
        if reply:
            (tag,) = struct.unpack("<I", self.recv(4))
            if tag != self.tag:
                raise ConnectionError(f"reply tag {tag:#x}, expected {self.tag:#x}")

    def value(self):
        (length,) = struct.unpack("<Q", self.recv(8))
        return self.recv(length)

    def set(self, key, value):
        self.send(b"\x01" + blob(key.encode()) + blob(value), reply=False)

    def get(self, key):
        self.send(b"\x03" + blob(key.encode()))
        return self.value()

    def claim(self, key, value):
        self.send(b"\xc9" + blob(key.encode()) + blob(value))
        return self.value()

    def will(self, key, value):
        self.send(b"\xca" + blob(key.encode()) + blob(value))
        return self.recv(1)

    def list_keys(self):
        self.send(b"\x11")
        (count,) = struct.unpack("<q", self.recv(8))
        return sorted(self.value().decode() for _ in range(count))

    def close(self):
        self.sock.close()


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    failures = []

    def check(condition, message):
        if not condition:
            failures.append(message)
            print(f"FAIL {message}")

    with tempfile.TemporaryDirectory() as tmp:
        secret_path = os.path.join(tmp, "secret")
        secret = os.urandom(32).hex().encode()
        with open(secret_path, "wb") as f:
            f.write(secret + b"\n")
        os.chmod(secret_path, 0o600)
        server = subprocess.Popen([sys.argv[1], "--host", compat.HOST, "--port", "0",
                                   "--secret-file", secret_path],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            port = int(server.stdout.readline())
            agent = Agent(port, secret)
            check(agent.verdict == b"\x00", f"the agent was refused: {agent.verdict!r}")
            check(agent.store_proven, "the store did not prove the secret")
            for key in AGENT_KEYS:
                agent.set(key, b"agent:" + key.encode())
            check(agent.claim("/claimed", b"mine") == b"mine", "claim")
            check(agent.will("/will", b"agent gone") == b"\x00", "will")

            ours = compat.scenario(port)
            reference = compat.run_against_pytorch()
            for (label, mine), (_, theirs) in zip(ours, reference):
                check(mine == theirs, f"{label}: cpplaunch={mine!r} pytorch={theirs!r}")
            check(len(ours) == len(reference), "different number of results")
            print(f"{len(ours)} PyTorch client results identical to PyTorch's own server")

            for key in AGENT_KEYS:
                check(agent.get(key) == b"agent:" + key.encode(), f"agent key {key} changed")
            check(agent.list_keys() == sorted(AGENT_KEYS + ["/claimed"]),
                  f"agents' keys: {agent.list_keys()}")

            intruder = Agent(port, b"not the secret")
            check(intruder.verdict == b"\x01", f"a wrong secret was not refused: "
                                               f"{intruder.verdict!r}")
            check(not intruder.store_proven, "the store proved a secret it does not hold")
            intruder.close()

            agent.close()
            observer = Agent(port, secret)
            check(observer.get("/will") == b"agent gone", "the will did not fire")
            check("/claimed" not in observer.list_keys(), "the claim outlived its owner")
            observer.close()
        finally:
            server.terminate()
            _, errors = server.communicate(timeout=10)
        check("refused an agent handshake from 127.0.0.1" in errors,
              f"the store did not log the refusal: {errors!r}")
    print("FAILED" if failures else "PASSED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
