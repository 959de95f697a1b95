"""How the benchmarks run programs: the shared run context (Bench), one launcher run timed by
bench/proc_run, a run whose output files are watched while it grows, the launcher command lines
being compared, and the harness's log and command-line quoting."""

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .config import PYTHON, ROOT, TORCHRUN, TORCHRUN_DEFAULT_STD


def log(msg):
    """A progress line on stderr."""
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def shell_join(argv):
    """argv as a shell command line (quoted only where needed)."""
    return " ".join(a if re.fullmatch(r"[\w@%+=:,./-]+", a) else "'" + a.replace("'", "'\\''") + "'"
                    for a in argv)


def rel(path):
    """path relative to the checkout when it lies inside it."""
    try:
        return str(Path(path).relative_to(ROOT))
    except ValueError:
        return str(path)


def free_port():
    """A loopback TCP port that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Bench:
    """What every benchmark needs: options, binaries, machine facts, scratch space (on tmpfs),
    the environment of the programs it starts, and the raw results collected so far."""

    def __init__(self, args, binaries, machine):
        self.args = args
        self.quick = args.quick
        self.bin = binaries
        self.machine = machine
        self.scratch = Path(tempfile.mkdtemp(prefix="cpplaunch-bench-", dir="/dev/shm"))
        self.raw = {}  # everything measured, for results.json and the analysis of missed goals
        self.env = dict(os.environ, PYTHON_EXEC=PYTHON)
        self.env["PATH"] = "/usr/bin:/bin:" + self.env.get("PATH", "")
        # torchrun's default log dirs land here, removed at the end
        self.env["TMPDIR"] = str(self.scratch)

    def reps(self, quick, full):
        """The quick or the full value of a size or repetition count."""
        return quick if self.quick else full

    def tool(self, name):
        """The path of a built binary, or None when it was not built."""
        return self.bin.get(name)

    def proc_run(self, argv, timeout_s=120, stdout=None, stderr=None, grace_s=10, env=None):
        """Runs argv under bench/proc_run; returns its JSON (plus the stderr tail when stderr
        was not redirected to a file of the caller's)."""
        err_path = stderr or str(self.scratch / "last-stderr.txt")
        cmd = [self.bin["proc_run"], "--timeout-ms", str(int(timeout_s * 1000)),
               "--grace-ms", str(int(grace_s * 1000)),
               "--stdout", stdout or "/dev/null", "--stderr", err_path, "--"] + argv
        out = subprocess.run(cmd, capture_output=True, text=True, env=env or self.env,
                             timeout=timeout_s + grace_s + 30)
        result = json.loads(out.stdout)
        if stderr is None:
            result["stderr_tail"] = Path(err_path).read_text(errors="replace")[-600:]
        return result

    def run_watching_files(self, argv, stdout, watched, timeout_s):
        """proc_run(argv) while polling the sizes of `watched` files/trees every 2 ms; returns
        the proc_run result and the CLOCK_MONOTONIC time (ns) at which the total size last grew."""
        err_path = str(self.scratch / "last-stderr.txt")
        cmd = [self.bin["proc_run"], "--timeout-ms", str(int(timeout_s * 1000)), "--stdout", stdout,
               "--stderr", err_path, "--"] + argv
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=self.env)
        last_size, last_growth = -1, None
        while True:
            done = proc.poll() is not None
            size = sum(tree_size(w) for w in watched)
            if size != last_size:
                last_size, last_growth = size, time.monotonic_ns()
            if done:
                break
            time.sleep(0.002)
        result = json.loads(proc.stdout.read())
        proc.stdout.close()
        result["stderr_tail"] = Path(err_path).read_text(errors="replace")[-600:]
        return result, last_growth


def tree_size(path):
    """Bytes in a file, or in every file under a directory; 0 when it does not exist."""
    if path.is_file():
        return path.stat().st_size
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return 0


def launchers_for(b, n, port, worker):
    """The launcher command lines compared in the process benchmarks, for n workers."""
    out = []
    if b.tool("cpplaunch"):
        out.append(("cpplaunch", [b.bin["cpplaunch"], f"--nproc_per_node={n}", f"--master_port={port}",
                                  "--no_python"] + worker))
    if b.tool("cpplaunch-baseline"):
        out.append(("cpplaunch (baseline)", [b.bin["cpplaunch-baseline"], f"--nproc_per_node={n}",
                                             f"--master_port={port}", "--no_python"] + worker))
    for interval, label in (("5", "torchrun (1.13 default --monitor_interval=5)"),
                            ("0.1", "torchrun (newest default --monitor_interval=0.1)")):
        out.append((label, [TORCHRUN] + TORCHRUN_DEFAULT_STD +
                    [f"--nproc_per_node={n}", f"--master_port={port}",
                     f"--monitor_interval={interval}", "--no_python"] + worker))
    return out
