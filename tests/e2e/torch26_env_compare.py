"""The workers' environment and argv under Debian's torchrun 2.6 and under cpplaunch with 2.6's
Python (both in the root of tests/e2e/torch26.py), compared variable by variable; then
cpplaunch --worker-store=rank0 against the same torchrun run: only TORCHELASTIC_USE_AGENT_STORE
(False) and MASTER_PORT (a free port, not the store's) may differ.

torchrun 2.6 is run from a scratch entry script that changes one thing: its static rendezvous
creates its TCPStore with use_libuv=False. Unpatched, Debian's torchrun 2.6 cannot start (its
build has no libuv, yet TCPStore defaults to use_libuv=True).

usage: torch26_env_compare.py CPPLAUNCH
Exit status: 0 same, 1 a difference, 77 no PyTorch 2.6 root (skip).
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile

CPPLAUNCH = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch26  # noqa: E402

NPROC = 3
ARGS = ["a$$b", "$local_rank", "${local_rank}", "$other", "--nproc_per_node=7"]
SHAPES = {
    "MASTER_PORT": r"\d+",
    "TORCHELASTIC_ERROR_FILE": r"/.+/torchelastic_[^/]+/none_[^/]+/attempt_0/(\d+)/error\.json",
}
# torchrun 2.6 exports neither the 1.13 NCCL name nor TORCHELASTIC_SIGNALS_TO_HANDLE (~2.9).
CPPLAUNCH_EXTRA = {"NCCL_ASYNC_ERROR_HANDLING", "TORCHELASTIC_SIGNALS_TO_HANDLE"}

TORCHRUN_ENTRY = """\
# Debian's torchrun 2.6 (/usr/bin/torchrun) with one change, for cpplaunch's tests: the static
# rendezvous's TCPStore gets use_libuv=False, which this build (no libuv) needs to start.
import functools
import sys

import torch.distributed as dist
import torch.distributed.elastic.rendezvous.static_tcp_rendezvous as static

static.TCPStore = functools.partial(dist.TCPStore, use_libuv=False)
from torch.distributed.run import main

sys.exit(main())
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(scratch, launcher_argv, env, name):
    out = scratch.path(name)
    os.mkdir(out)
    port = free_port()
    cmd = launcher_argv + ["--nproc_per_node", str(NPROC), "--master_port", str(port),
                           scratch.path("env_dump.py"), out] + ARGS
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180,
                          cwd=scratch.dir)
    if proc.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd[:2])} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    workers = {}
    for lr in range(NPROC):
        with open(os.path.join(out, f"{lr}.json")) as f:
            workers[lr] = json.load(f)
    return workers, port


def compare(ref, ours, base, failures, what):
    for lr in range(NPROC):
        r_env, o_env = ref[lr]["env"], ours[lr]["env"]
        r_new = {k for k in r_env if k not in base}
        o_new = {k for k in o_env if k not in base}
        if r_new | CPPLAUNCH_EXTRA != o_new:
            failures.append(f"{what} rank {lr}: variable sets differ: torchrun-only "
                            f"{sorted(r_new - o_new)}, cpplaunch-only "
                            f"{sorted(o_new - r_new - CPPLAUNCH_EXTRA)}")
        for k in sorted(r_new & o_new):
            if k in SHAPES:
                for name, v in (("torchrun", r_env[k]), ("cpplaunch", o_env[k])):
                    m = re.fullmatch(SHAPES[k], v)
                    if not m or (m.groups() and m.group(1) != str(lr)):
                        failures.append(f"{what} rank {lr}: {k}={v!r} under {name} does not "
                                        f"match {SHAPES[k]}")
            elif r_env[k] != o_env[k]:
                failures.append(f"{what} rank {lr}: {k}: torchrun {r_env[k]!r} != cpplaunch "
                                f"{o_env[k]!r}")
        for k in base:
            if r_env.get(k) != o_env.get(k) and k not in ("OMP_NUM_THREADS", "PYTHON_EXEC"):
                failures.append(f"{what} rank {lr}: inherited {k} differs")
        if ref[lr]["argv"] != ours[lr]["argv"]:
            failures.append(f"{what} rank {lr}: argv torchrun {ref[lr]['argv']} != cpplaunch "
                            f"{ours[lr]['argv']}")
    return len(r_new)


def main():
    reason = torch26.skip_reason()
    if reason:
        print(f"SKIP: {reason}")
        return torch26.SKIP
    with torch26.Scratch("env26", [os.path.join(HERE, "env_dump.py")]) as scratch:
        with open(scratch.path("torchrun26.py"), "w") as f:
            f.write(TORCHRUN_ENTRY)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PET_", "TORCHELASTIC_", "OMP_NUM_THREADS", "USE_LIBUV"))}
        env["PYTHON_EXEC"] = scratch.python
        env["TMPDIR"] = scratch.dir
        base = set(env)
        # torchrun, inside the root, starts its workers with $PYTHON_EXEC as well: there it is
        # the root's own python3 (the only variable compared by role, not by value).
        ref, _ = run(scratch, [scratch.python, scratch.path("torchrun26.py")],
                     dict(env, PYTHON_EXEC="/usr/bin/python3"), "torchrun")
        ours, _ = run(scratch, [CPPLAUNCH], env, "agent")
        rank0, rank0_store_port = run(scratch, [CPPLAUNCH, "--worker-store=rank0"], env, "rank0")
    failures = []
    count = compare(ref, ours, base, failures, "agent store:")
    for lr in range(NPROC):
        env = rank0[lr]["env"]
        if env.get("TORCHELASTIC_USE_AGENT_STORE") != "False":
            failures.append(f"rank0 store: rank {lr}: TORCHELASTIC_USE_AGENT_STORE="
                            f"{env.get('TORCHELASTIC_USE_AGENT_STORE')!r}")
        if env.get("MASTER_PORT") in (None, str(rank0_store_port)):
            failures.append(f"rank0 store: rank {lr}: MASTER_PORT={env.get('MASTER_PORT')!r} "
                            "is not a port of its own")
        env["TORCHELASTIC_USE_AGENT_STORE"] = ref[lr]["env"]["TORCHELASTIC_USE_AGENT_STORE"]
    if len({w["env"]["MASTER_PORT"] for w in rank0.values()}) != 1:
        failures.append("rank0 store: the workers got different MASTER_PORTs")
    compare(ref, rank0, base, failures, "rank0 store:")
    if failures:
        print("\n".join(failures))
        return 1
    print(f"PyTorch {torch26.version()}: environments of {NPROC} workers match torchrun 2.6's "
          f"({count} variables each); --worker-store=rank0 differs only where it should")
    return 0


if __name__ == "__main__":
    sys.exit(main())
