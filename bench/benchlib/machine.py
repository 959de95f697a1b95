"""The machine facts the report states, all measured at run time: CPU model and count, memory,
OS, compiler, package versions, the file-descriptor limit, the source commit and the load
average. The report's prose takes the CPU count from here, never from fixed words."""

import os
import re
import resource
import subprocess
from pathlib import Path

from .config import ROOT

FD_WANTED = 1 << 20


def raise_fd_limit():
    """Raises RLIMIT_NOFILE as far as allowed; returns (new soft limit, sentence describing it,
    whether the limit stayed below what was asked for)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    note = f"soft limit {soft}, hard limit {hard} at start"
    try:  # root may raise the hard limit too, unless the container forbids it
        resource.setrlimit(resource.RLIMIT_NOFILE, (FD_WANTED, FD_WANTED))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    soft2, hard2 = resource.getrlimit(resource.RLIMIT_NOFILE)
    note += (f"; scripts/bench raised it with setrlimit (as `ulimit -n {soft2}` would) to {soft2} "
             f"(hard {hard2}) for itself and every process it starts")
    return soft2, note, soft2 < FD_WANTED


def command_output(argv):
    """A command's stdout, stripped; "" when it cannot run."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def cpu_count():
    """The CPUs this process may run on (what `nproc` prints)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def cpu_line():
    lscpu = command_output(["lscpu"])

    def field(name):
        m = re.search("^" + re.escape(name) + r":\s*(.+)$", lscpu, re.M)
        return m.group(1).strip() if m else "?"

    cpu = (f"{field('Model name')}, {field('CPU(s)')} CPUs, "
           f"{field('Thread(s) per core')} thread(s) per core")
    if field("Hypervisor vendor") != "?":
        cpu += f", {field('Hypervisor vendor')} virtual machine"
    return cpu


def machine_description(fd_note, fd_capped):
    """Everything the report's Machine section lists, plus "nproc" and "fd_limit_capped" for
    the prose."""
    mem_kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
    os_name = re.search(r'PRETTY_NAME="(.+)"', Path("/etc/os-release").read_text()).group(1)
    pkgs = command_output(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n", "python3-torch",
                           "libtorch-dev", "libboost-dev", "g++", "cmake",
                           "gnuplot-nox", "python3"])
    commit = command_output(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    dirty = command_output(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"])
    return {
        "cpu": cpu_line(),
        "nproc": cpu_count(),
        "memory": f"{mem_kb / 1048576:.1f} GiB",
        "os": os_name,
        "kernel": command_output(["uname", "-r"]),
        "compiler": command_output(["g++", "--version"]).splitlines()[0],
        "packages": pkgs.splitlines(),
        "fd_limit": fd_note,
        "fd_limit_capped": fd_capped,
        "commit": commit + (" (the working tree had uncommitted changes)" if dirty else ""),
        "scratch": "/dev/shm (tmpfs) for every file the benchmarks write",
    }


def load_average():
    """The 1, 5 and 15 minute load averages, as strings."""
    return Path("/proc/loadavg").read_text().split()[:3]


def cpus_text(machine):
    """The measured CPU count as prose: "2 CPUs" (or "1 CPU")."""
    n = machine["nproc"]
    return f"{n} CPU" if n == 1 else f"{n} CPUs"
