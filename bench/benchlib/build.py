"""Configures and builds the C++ programs the benchmarks run, and finds their binaries."""

import os
import re
import subprocess
from pathlib import Path

from .config import ROOT
from .running import log

WANTED = ["cpplaunch", "cpplaunch-store", "bench_worker", "proc_run", "store_load",
          "libtorch_store_server", "spawn_cost", "interpreter_cost", "trainer", "rendezvous_sim"]
HELPERS = ("bench_worker", "proc_run", "store_load")  # the benchmarks cannot run without these


def build_targets(args):
    """Builds every wanted target that exists (unless --no-build); returns {name: path} of the
    binaries found in the build directory."""
    build = Path(args.build_dir).resolve()
    if not args.no_build:
        configure_and_build(build)
    return find_binaries(build)


def configure_and_build(build):
    subprocess.run([str(ROOT / "scripts/setup"), "--bench"], check=True)
    subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=RelWithDebInfo"],
                   check=True, stdout=subprocess.DEVNULL)
    helptext = subprocess.run(["cmake", "--build", str(build), "--target", "help"],
                              capture_output=True, text=True).stdout
    for t in WANTED:
        if not re.search(rf"^\.\.\. {re.escape(t)}$", helptext, re.M):
            log(f"target {t} does not exist yet")
            continue
        log(f"building {t}")
        r = subprocess.run(["cmake", "--build", str(build), "-j2", "--target", t],
                           capture_output=True, text=True)
        if r.returncode != 0:
            log(f"building {t} failed:\n{r.stdout[-1500:]}{r.stderr[-1500:]}")


def find_binaries(build):
    found = {}
    for t in WANTED:
        hits = [p for p in build.rglob(t) if p.is_file() and os.access(p, os.X_OK)]
        if hits:
            found[t] = str(sorted(hits, key=lambda p: len(str(p)))[0])
    return found
