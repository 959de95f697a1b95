"""Paths and launcher command-line constants shared by every benchmark module."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PYTHON = "/usr/bin/python3"  # Debian's, the one with torch (not a pyenv python3 on PATH)
TORCHRUN = "/usr/bin/torchrun"
# Debian's 1.13.1 torchrun crashes with its default -r 0 -t 0 on Python 3.11; a map naming a
# non-existent local rank behaves like the default (torchrun-reference.md, fact 1).
TORCHRUN_DEFAULT_STD = ["-r", "9:1", "-t", "9:1"]
ALL_BENCHMARKS = ["launch", "teardown", "e2e", "store", "storm", "rendezvous", "etcd", "output", "scale", "etcd_scale", "idle",
                  "status", "spares"]
# Marks a job whose first word is a Python script (run without --no_python).
PYTHON_SCRIPT_MARK = "<python-script>"
