"""The two store servers the store benchmarks compare (cpplaunch-store and LibTorch 1.13's
TCPStore through bench/libtorch_store_server) and the load generator bench/store_load."""

import json
import os
import re
import signal
import subprocess
from pathlib import Path

SERVER_LABEL = {"cpplaunch": "cpplaunch store", "libtorch": "LibTorch 1.13 TCPStore"}


class Server:
    """A store server process started for the benchmarks; prints its port on its first line."""

    def __init__(self, b, kind, extra=()):
        self.kind = kind
        argv = ([b.bin["cpplaunch-store"]] if kind == "cpplaunch" else [b.bin["libtorch_store_server"]]) + list(extra)
        self.argv = argv
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, env=b.env)
        line = self.proc.stdout.readline()
        m = re.search(r"(\d+)", line or "")
        if not m:
            self.stop()
            raise RuntimeError(f"{argv[0]} printed no port: {line!r}")
        self.port = int(m.group(1))

    def cpu_times(self):
        """(user, system) CPU seconds the server has used so far."""
        return cpu_times(self.proc.pid)

    def cpu_seconds(self):
        return sum(self.cpu_times())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def cpu_times(pid):
    """(user, system) CPU seconds process pid has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def available_servers(b):
    """The server kinds whose binaries were built, cpplaunch's first."""
    kinds = []
    if b.tool("cpplaunch-store"):
        kinds.append("cpplaunch")
    if b.tool("libtorch_store_server"):
        kinds.append("libtorch")
    return kinds


def store_load(b, args, timeout_s):
    """Runs bench/store_load with args; its JSON plus "exit_code" (or "error" when it printed none)."""
    r = subprocess.run([b.bin["store_load"]] + args, capture_output=True, text=True,
                       timeout=timeout_s, env=b.env)
    try:
        out = json.loads(r.stdout)
    except json.JSONDecodeError:
        out = {"error": (r.stdout + r.stderr)[-500:]}
    out["exit_code"] = r.returncode
    return out
