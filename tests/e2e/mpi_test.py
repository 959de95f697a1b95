"""cpplaunch under Open MPI's real mpirun, on loopback: the PMIx address exchange (pmix_probe,
one MPI rank each) and a whole job, `mpirun ... cpplaunch --nproc-per-node=2 <DDP script>`.

usage: mpi_test.py CPPLAUNCH PMIX_PROBE [unittest args]

Two "nodes" on one machine: a fake rsh agent starts each of mpirun's daemons on this host with
its own session directory, for a hostfile naming 127.0.0.2 and 127.0.0.3 (the engines notes,
section 4.4). All of Open MPI's traffic is kept on loopback (oob_tcp_if_include lo), which also
makes rank 0 advertise 127.0.0.1. Every process the test starts is found again by a marker in
its environment and is gone (or SIGKILLed) before the test ends. Exit 77 (skipped, reason
printed) when mpirun is missing.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from launcher_env import clean_env

CPPLAUNCH = os.path.abspath(sys.argv.pop(1))
PROBE = os.path.abspath(sys.argv.pop(1))
PYTHON = "/usr/bin/python3"  # Debian's, with torch
HERE = os.path.dirname(os.path.abspath(__file__))
DDP = os.path.join(HERE, "..", "multihost", "ddp_check.py")
MPIRUN = shutil.which("mpirun")
SKIP = 77

FAKE_RSH = """#!/bin/sh
# mpirun's rsh agent for fake nodes: skip ssh's options, then run the daemon here, with a
# session directory of its own (two daemons of one host name would share one).
while [ $# -gt 0 ]; do case "$1" in -*) shift;; *) break;; esac; done
host="$1"; shift
mkdir -p "{base}/node-$host"
export OMPI_MCA_orte_tmpdir_base="{base}/node-$host"
exec /bin/sh -c "$*"
"""


def ours(marker):
    """Pids of the processes whose environment carries `marker` (mpirun, daemons, ranks)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            pass
    return found


class MpiRun:
    """One mpirun in its own session; everything it started is gone when the block ends."""

    def __init__(self, test, nodes):
        self.test = test
        self.dir = tempfile.mkdtemp(prefix="cpplaunch-mpi-")
        self.marker = f"CPPLAUNCH_MPI_TEST={self.dir}"
        self.args = [MPIRUN, "--oversubscribe", "--mca", "oob_tcp_if_include", "lo",
                     "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo",
                     "-x", "CPPLAUNCH_MPI_TEST"]
        if os.geteuid() == 0:
            self.args.append("--allow-run-as-root")
        if nodes:
            rsh = os.path.join(self.dir, "fake_rsh")
            with open(rsh, "w") as f:
                f.write(FAKE_RSH.format(base=self.dir))
            os.chmod(rsh, 0o755)
            hosts = os.path.join(self.dir, "hosts")
            with open(hosts, "w") as f:
                f.write("".join(f"127.0.0.{2 + n} slots=2\n" for n in range(nodes)))
            self.args += ["--mca", "plm_rsh_agent", rsh, "--hostfile", hosts,
                          "--map-by", "ppr:1:node"]

    def run(self, np, command, timeout, extra_env=None):
        env = clean_env(CPPLAUNCH_MPI_TEST=self.dir, **(extra_env or {}))
        exported = [arg for name in (extra_env or {}) for arg in ("-x", name)]
        proc = subprocess.Popen(self.args + exported + ["-np", str(np)] + command, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            self.test.fail(f"mpirun still running after {timeout} s:\n{out}\n{err}")
        return proc.returncode, out, err

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        deadline = time.monotonic() + 15
        while ours(self.marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = ours(self.marker)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)
        if exc[0] is None:
            self.test.assertEqual(left, [], "processes of the MPI job outlived mpirun")


class PmixExchangeTest(unittest.TestCase):
    def check_exchange(self, nodes):
        with MpiRun(self, nodes) as mpi:
            code, out, err = mpi.run(2, [PROBE, "--timeout-ms", "30000"], timeout=60)
        self.assertEqual(code, 0, out + err)
        # Records are found wherever they are: mpirun forwards output in chunks, not lines.
        advertised = re.findall(r"advertised=([0-9a-f.:]+)", out)
        self.assertEqual(len(advertised), 1, out)
        address = advertised[0]
        # oob_tcp_if_include lo: rank 0 reaches mpirun over loopback, so it advertises loopback.
        self.assertEqual(address, "127.0.0.1")
        got = sorted(re.findall(r"rank=(\d) address=([0-9a-f.:]+) ms=", out))
        self.assertEqual(got, [("0", address), ("1", address)], out + err)

    def test_both_ranks_get_rank_zeros_address(self):
        self.check_exchange(nodes=0)

    def test_both_ranks_get_rank_zeros_address_one_rank_per_node(self):
        self.check_exchange(nodes=2)

    def test_a_rank_that_never_comes_is_one_line_within_the_timeout(self):
        start = time.monotonic()
        with MpiRun(self, 0) as mpi:
            code, out, err = mpi.run(2, [PROBE, "--timeout-ms", "3000", "--absent-rank", "1",
                                         "--absent-ms", "20000"], timeout=60)
        took = time.monotonic() - start
        self.assertNotEqual(code, 0, out + err)
        errors = re.findall(r"rank=0 error=([^\n]*?) ms=(\d+)", out)
        self.assertEqual(len(errors), 1, out + err)
        self.assertIn("PMIx_Fence", errors[0][0])
        self.assertLess(int(errors[0][1]), 3500, errors[0])
        # mpirun ends the job (the absent rank included) once rank 0 fails.
        self.assertLess(took, 15, out + err)


class MpiWorldTest(unittest.TestCase):
    """The issue's proof: mpirun starts one cpplaunch per node and nothing else is said."""

    def test_one_cpplaunch_per_node_forms_one_world_of_four(self):
        with MpiRun(self, nodes=2) as mpi:
            code, out, err = mpi.run(
                2, [CPPLAUNCH, "--nproc-per-node=2", DDP], timeout=240,
                extra_env={"GLOO_SOCKET_IFNAME": "lo", "PYTHON_EXEC": PYTHON})
        self.assertEqual(code, 0, out + err)
        # mpirun forwards each agent's output in chunks, not lines: two agents' lines may share
        # one line of mpirun's stdout, so the records are found wherever they are.
        found = re.findall(r"ddp rank=(\d) world=(\d) .*? allreduce=(ok|BAD)", out)
        self.assertEqual(sorted(found), [(str(r), "4", "ok") for r in range(4)], out + err)
        # Each agent says what it detected, once, with rank 0's address from PMIx.
        detected = re.findall(r"cpplaunch: Open MPI job: 2 nodes, this is node (\d), "
                              r"rendezvous on 127\.0\.0\.1:\d+", err)
        self.assertEqual(sorted(detected), ["0", "1"], err)


def main():
    if MPIRUN is None:
        print("SKIP: mpirun not found (install openmpi-bin)")
        return SKIP
    probe = subprocess.run([PROBE], capture_output=True, text=True, env={"PATH": "/usr/bin"})
    if "built without PMIx" in probe.stdout:
        print("SKIP: cpplaunch was built without PMIx (install libpmix-dev and reconfigure)")
        return SKIP
    program = unittest.main(verbosity=2, exit=False)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
