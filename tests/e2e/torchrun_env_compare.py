"""Runs one job under Debian's torchrun and under cpplaunch and compares every worker's
environment and argv. Values that must differ (a port, a temp path) are compared by shape."""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile

CPPLAUNCH = sys.argv[1]
TORCHRUN = "/usr/bin/torchrun"
PYTHON = "/usr/bin/python3"
HERE = os.path.dirname(os.path.abspath(__file__))
NPROC = 3
ARGS = ["a$$b", "$local_rank", "${local_rank}", "$other", "--nproc_per_node=7"]

# Variables whose value legitimately differs between two runs: compared by pattern.
SHAPES = {
    "MASTER_PORT": r"\d+",
    "TORCHELASTIC_ERROR_FILE": r"/.+/torchelastic_[^/]+/none_[^/]+/attempt_0/(\d+)/error\.json",
}
# cpplaunch exports the NCCL variable under both names (1.13 and newest torch), and
# TORCHELASTIC_SIGNALS_TO_HANDLE as newest torchrun does.
CPPLAUNCH_EXTRA = {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "TORCHELASTIC_SIGNALS_TO_HANDLE"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(launcher_argv, env):
    out = tempfile.mkdtemp(prefix="envcmp_")
    cmd = launcher_argv + ["--nproc_per_node", str(NPROC), "--master_port", str(free_port()),
                           os.path.join(HERE, "env_dump.py"), out] + ARGS
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        sys.exit(f"FAIL: {cmd[0]} exited {proc.returncode}\n{proc.stderr}")
    workers = {}
    for lr in range(NPROC):
        with open(os.path.join(out, f"{lr}.json")) as f:
            workers[lr] = json.load(f)
    return workers, proc.stderr


def main():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PET_", "TORCHELASTIC_", "OMP_NUM_THREADS"))}
    env["PYTHON_EXEC"] = PYTHON
    base = set(env)
    ref, _ = run([TORCHRUN, "-r", "9:1", "-t", "9:1"], env)
    ours, ours_err = run([CPPLAUNCH], env)
    failures = []
    for lr in range(NPROC):
        r_env, o_env = ref[lr]["env"], ours[lr]["env"]
        r_new = {k for k in r_env if k not in base}
        o_new = {k for k in o_env if k not in base}
        if r_new | CPPLAUNCH_EXTRA != o_new:
            failures.append(f"rank {lr}: variable sets differ: torchrun-only "
                            f"{sorted(r_new - o_new)}, cpplaunch-only {sorted(o_new - r_new - CPPLAUNCH_EXTRA)}")
        for k in sorted(r_new & o_new):
            if k in SHAPES:
                for name, v in (("torchrun", r_env[k]), ("cpplaunch", o_env[k])):
                    m = re.fullmatch(SHAPES[k], v)
                    if not m or (m.groups() and m.group(1) != str(lr)):
                        failures.append(f"rank {lr}: {k}={v!r} under {name} does not match {SHAPES[k]}")
            elif r_env[k] != o_env[k]:
                failures.append(f"rank {lr}: {k}: torchrun {r_env[k]!r} != cpplaunch {o_env[k]!r}")
        for k in base:
            if r_env.get(k) != o_env.get(k) and k != "OMP_NUM_THREADS":
                failures.append(f"rank {lr}: inherited {k} differs")
        if o_env.get("TORCH_NCCL_ASYNC_ERROR_HANDLING") != "1":
            failures.append(f"rank {lr}: TORCH_NCCL_ASYNC_ERROR_HANDLING not 1")
        if ref[lr]["argv"] != ours[lr]["argv"]:
            failures.append(f"rank {lr}: argv torchrun {ref[lr]['argv']} != cpplaunch {ours[lr]['argv']}")
    if "OMP_NUM_THREADS" not in ours_err:
        failures.append("cpplaunch printed no OMP_NUM_THREADS notice")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"environments of {NPROC} workers match torchrun's ({len(r_new)} variables each)")


if __name__ == "__main__":
    main()
