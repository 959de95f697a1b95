#!/usr/bin/python3
"""PyTorch 2.6's own TCPStore client (Debian trixie, through tests/e2e/torch26.py) against
cpplaunch-store and against PyTorch 2.6's own non-libuv TCPStore server: every result of
torch_client_compat.py's scenarios, the modern-dialect one included, must be identical.

usage: torch26_client_compat.py PATH/TO/cpplaunch-store
Exit status: 0 same results, 1 a difference or a failure, 77 no PyTorch 2.6 root (skip).
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "e2e"))
import torch26  # noqa: E402

SCENARIO = os.path.join(HERE, "torch_client_compat.py")


def results(scratch, side):
    """[(label, repr of the value)] from the 2.6 Python, against port `side` or 'reference'."""
    script = scratch.path("torch_client_compat.py")
    p = subprocess.run([scratch.python, script, "--results", str(side)], capture_output=True,
                       text=True, timeout=240, cwd=scratch.dir)
    if p.returncode != 0:
        sys.exit(f"FAIL: the 2.6 scenario against {side} exited {p.returncode}\n"
                 f"{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return [tuple(json.loads(line)) for line in p.stdout.splitlines() if line.startswith("[")]


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    reason = torch26.skip_reason()
    if reason:
        print(f"SKIP: {reason}")
        return torch26.SKIP
    with torch26.Scratch("store26", [SCENARIO]) as scratch:
        server = subprocess.Popen([sys.argv[1], "--host", "127.0.0.1", "--port", "0"],
                                  stdout=subprocess.PIPE, text=True)
        try:
            ours = results(scratch, int(server.stdout.readline()))
        finally:
            server.terminate()
            server.wait(timeout=10)
        reference = results(scratch, "reference")
    differences = 0
    for (label, mine), (_, theirs) in zip(ours, reference):
        same = mine == theirs
        differences += 0 if same else 1
        print(f"{'ok  ' if same else 'DIFF'} {label}: cpplaunch={mine} pytorch={theirs}")
    if len(ours) != len(reference) or not ours:
        print(f"DIFF: {len(ours)} results from cpplaunch's store, {len(reference)} from PyTorch's")
        return 1
    modern = sum(1 for label, _ in ours if label == "client offers")
    print(f"PyTorch {torch26.version()}: {len(ours)} results, {differences} differences"
          f"{'' if modern else ' (no modern scenario ran)'}")
    return 1 if differences or not modern else 0


if __name__ == "__main__":
    sys.exit(main())
