"""Real etcd members on loopback for tests: 1 or 3 members, random free ports, data dirs in
/dev/shm, optional TLS on the client URLs (a CA, a server and a client certificate made with
openssl in a temp dir, and etcd requiring client certificates). Importable (like
tests/e2e/launcher_env.py) or run as a script for the C++ tests.

    with EtcdCluster(members=3, tls=False) as cluster:
        cluster.endpoints      # ["127.0.0.1:PORT", ...], member order
        cluster.stop(0)        # SIGKILL member 0 (its data stays); start(0) brings it back
    # every member stopped, every directory removed, also on failure or SIGTERM

etcd missing: `skip_reason()` says why (the caller skips, e.g. exit 77 under ctest).

As a script: `etcd_cluster.py [--members N] [--tls]` prints one JSON line {"endpoints",
"pids", "ca", "cert", "key", "dir"} (or {"skip": reason}), then obeys "stop I" / "start I"
lines on stdin, answering "ok" or "error: ..." per line, and cleans up at end of input: so
the cluster never outlives the test process that reads it.
"""
import atexit
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request

HOST = "127.0.0.1"
START_TIMEOUT = 30.0


def skip_reason():
    """Why these tests cannot run here, or None."""
    for tool in ("etcd", "openssl"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (scripts/setup installs it)"
    if not os.path.isdir("/dev/shm"):
        return "/dev/shm is missing"
    return None


def free_ports(count):
    """`count` distinct ports the kernel calls free now (etcd binds them a moment later)."""
    sockets, ports = [], []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind((HOST, 0))
            sockets.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in sockets:
            s.close()
    return ports


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def make_certificates(directory):
    """A CA, a server certificate for 127.0.0.1/localhost and a client certificate, EC P-256,
    valid for a day. Returns {"ca", "server_cert", "server_key", "cert", "key"} paths."""
    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl("req", "-x509", *curve, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1",
             "-subj", "/CN=cpplaunch test CA", cwd=directory)
    for name, usage, alt in (("server", "serverAuth,clientAuth", "IP:127.0.0.1,DNS:localhost"),
                             ("client", "clientAuth", "DNS:client")):
        with open(os.path.join(directory, name + ".ext"), "w") as ext:
            ext.write(f"subjectAltName={alt}\nextendedKeyUsage={usage}\n")
        _openssl("req", *curve, "-keyout", name + ".key", "-out", name + ".csr",
                 "-subj", "/CN=" + name, cwd=directory)
        _openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                 "-CAcreateserial", "-out", name + ".crt", "-days", "1", "-extfile",
                 name + ".ext", cwd=directory)
    path = lambda f: os.path.join(directory, f)
    return {"ca": path("ca.crt"), "server_cert": path("server.crt"),
            "server_key": path("server.key"), "cert": path("client.crt"),
            "key": path("client.key")}


class EtcdCluster:
    def __init__(self, members=1, tls=False, extra_args=()):
        if members not in (1, 3):
            raise ValueError("members must be 1 or 3")
        self.tls = tls
        self.extra_args = list(extra_args)  # more etcd flags, e.g. --quota-backend-bytes
        self.count = members
        self.dir = tempfile.mkdtemp(prefix="cpplaunch-etcd-", dir="/dev/shm")
        self.certs = make_certificates(self.dir) if tls else {}
        ports = free_ports(2 * members)
        self.client_ports = ports[0::2]
        self.peer_ports = ports[1::2]
        self.processes = [None] * members
        self._logs = [None] * members
        self._closed = False
        atexit.register(self.close)

    # What tests use.
    @property
    def endpoints(self):
        return [f"{HOST}:{port}" for port in self.client_ports]

    @property
    def pids(self):
        return [p.pid if p and p.poll() is None else None for p in self.processes]

    def client_url(self, i):
        return f"{'https' if self.tls else 'http'}://{HOST}:{self.client_ports[i]}"

    def start_all(self):
        for i in range(self.count):
            self._spawn(i)
        for i in range(self.count):
            self._wait_healthy(i)
        return self

    def stop(self, i):
        """SIGKILLs member i (a host lost without warning); its data dir stays for start(i)."""
        process = self.processes[i]
        if process and process.poll() is None:
            process.kill()
            process.wait(timeout=10)

    def start(self, i):
        """Restarts a stopped member i with its data and waits until it is healthy."""
        if self.processes[i] and self.processes[i].poll() is None:
            return
        self._spawn(i)
        self._wait_healthy(i)

    def freeze(self, i):
        """SIGSTOPs member i: a member that keeps its connections but answers nothing (a host
        frozen or overloaded); thaw(i) lets it go on."""
        self.processes[i].send_signal(signal.SIGSTOP)

    def thaw(self, i):
        self.processes[i].send_signal(signal.SIGCONT)

    def close(self):
        if self._closed:
            return
        self._closed = True
        for i in range(self.count):
            self.stop(i)
        for log in self._logs:
            if log:
                log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        try:
            return self.start_all()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc):
        self.close()

    def log(self, i):
        with open(os.path.join(self.dir, f"m{i}.log"), errors="replace") as f:
            return f.read()

    # Members.
    def _command(self, i):
        name = f"m{i}"
        peers = ",".join(f"m{j}=http://{HOST}:{self.peer_ports[j]}" for j in range(self.count))
        command = [
            "etcd", "--name", name, "--data-dir", os.path.join(self.dir, name),
            "--listen-client-urls", self.client_url(i),
            "--advertise-client-urls", self.client_url(i),
            "--listen-peer-urls", f"http://{HOST}:{self.peer_ports[i]}",
            "--initial-advertise-peer-urls", f"http://{HOST}:{self.peer_ports[i]}",
            "--initial-cluster", peers, "--initial-cluster-token", os.path.basename(self.dir),
            "--initial-cluster-state", "new", "--log-level", "warn", "--logger", "zap",
            # Quick elections: a lost leader is replaced in about a second.
            "--heartbeat-interval", "50", "--election-timeout", "500",
        ]
        command += self.extra_args
        if self.tls:
            command += ["--cert-file", self.certs["server_cert"],
                        "--key-file", self.certs["server_key"],
                        "--trusted-ca-file", self.certs["ca"], "--client-cert-auth"]
        return command

    def _spawn(self, i):
        if self._logs[i] is None:
            self._logs[i] = open(os.path.join(self.dir, f"m{i}.log"), "ab")
        # Its own session: a Ctrl-C meant for the test does not reach it first.
        self.processes[i] = subprocess.Popen(
            self._command(i), stdin=subprocess.DEVNULL, stdout=self._logs[i],
            stderr=subprocess.STDOUT, start_new_session=True)

    def _ssl_context(self):
        context = ssl.create_default_context(cafile=self.certs["ca"])
        context.load_cert_chain(self.certs["cert"], self.certs["key"])
        return context

    def _wait_healthy(self, i):
        deadline = time.monotonic() + START_TIMEOUT
        context = self._ssl_context() if self.tls else None
        while True:
            if self.processes[i].poll() is not None:
                raise RuntimeError(f"etcd member {i} exited: {self.log(i)[-2000:]}")
            try:
                with urllib.request.urlopen(self.client_url(i) + "/health", timeout=1,
                                            context=context) as answer:
                    if json.load(answer).get("health") == "true":
                        return
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"etcd member {i} not healthy within {START_TIMEOUT:.0f} s: "
                                   f"{self.log(i)[-2000:]}")
            time.sleep(0.05)


def _serve(cluster):
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        try:
            if len(words) == 2 and words[0] in ("stop", "start", "freeze", "thaw"):
                getattr(cluster, words[0])(int(words[1]))
                print("ok", flush=True)
            else:
                print(f"error: unknown command {line.strip()!r}", flush=True)
        except Exception as error:  # reported to the test, which fails with it
            print(f"error: {error}".replace("\n", " "), flush=True)


def main(argv):
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--members", type=int, default=1, choices=(1, 3))
    parser.add_argument("--tls", action="store_true")
    args = parser.parse_args(argv)
    reason = skip_reason()
    if reason:
        print(json.dumps({"skip": reason}), flush=True)
        return 0
    # SIGTERM/SIGHUP (the test runner giving up) end the process through atexit's cleanup.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(1))
    with EtcdCluster(args.members, args.tls) as cluster:
        print(json.dumps({"endpoints": cluster.endpoints, "pids": cluster.pids,
                          "ca": cluster.certs.get("ca", ""), "cert": cluster.certs.get("cert", ""),
                          "key": cluster.certs.get("key", ""), "dir": cluster.dir}), flush=True)
        _serve(cluster)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
