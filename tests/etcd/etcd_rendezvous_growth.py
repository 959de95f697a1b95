#!/usr/bin/env python3
"""The etcd rendezvous' cost grows linearly with the job (issue 26): N simulated agents, each
running the etcd backend's real EtcdRendezvous (bench/rendezvous_sim --backend etcd), against
ONE fresh etcd member per size (etcd_cluster.py). Fits the rendezvous time and etcd's CPU to N^k
between the smallest and the largest size and fails when k exceeds --max-k (the design that kept
the whole state in one contended key grew as N^2.15).

    etcd_rendezvous_growth.py RENDEZVOUS_SIM [--sizes 64,256] [--max-k 1.3] [--timeout-s 60]

Prints one line per size and the fit; with --json, one JSON object instead. Exit 0: the growth is
within --max-k; 1: it is not, or a size failed; 2: bad usage; 77: etcd is not installed."""

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from etcd_cluster import EtcdCluster, skip_reason  # noqa: E402


def cpu_seconds(pid):
    """User + system CPU of process `pid` so far, from /proc (None when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_size(sim, n, timeout_s):
    """One job of n agents against a fresh member: {"n", "ok", "rdzv_s", "etcd_cpu_s", "error"}."""
    with EtcdCluster(members=1) as cluster:
        pid = cluster.pids[0]
        argv = [sim, "--backend", "etcd", "--endpoints", ",".join(cluster.endpoints),
                "--agents", str(n), "--total", str(n), "--run-id", f"growth{n}x{time.monotonic_ns()}",
                "--store-pid", str(pid), "--timeout-s", str(timeout_s)]
        cpu_before = cpu_seconds(pid)
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=2 * timeout_s + 60)
        cpu_after = cpu_seconds(pid)
    try:
        d = json.loads(proc.stdout)
    except json.JSONDecodeError:
        d = {"ok": False, "first_error": (proc.stdout + proc.stderr).strip()[-300:]}
    r = {"n": n, "ok": bool(d.get("ok")) and d.get("failed") == 0, "error": d.get("first_error", "")}
    if r["ok"]:
        r["rdzv_s"] = (d["last_holding_ns"] - d["last_join_ns"]) / 1e9
    if cpu_before is not None and cpu_after is not None:
        r["etcd_cpu_s"] = cpu_after - cpu_before
    return r


def exponent(small, large, key):
    a, b = small.get(key), large.get(key)
    if not a or not b or a <= 0 or b <= 0:
        return None
    return math.log(b / a) / math.log(large["n"] / small["n"])


def main(argv):
    parser = argparse.ArgumentParser(prog="etcd_rendezvous_growth.py")
    parser.add_argument("sim")
    parser.add_argument("--sizes", default="64,256")
    parser.add_argument("--max-k", type=float, default=1.3)
    parser.add_argument("--timeout-s", type=int, default=60)
    parser.add_argument("--json", action="store_true")
    try:
        args = parser.parse_args(argv)
        sizes = sorted(int(s) for s in args.sizes.split(","))
    except (SystemExit, ValueError):
        print("usage: etcd_rendezvous_growth.py RENDEZVOUS_SIM [--sizes 64,256] [--max-k K]",
              file=sys.stderr)
        return 2
    if len(sizes) < 2 or sizes[0] <= 0:
        print("etcd_rendezvous_growth.py: --sizes needs two positive sizes or more", file=sys.stderr)
        return 2
    why = skip_reason()
    if why:
        print(f"skipped: {why}")
        return 77
    # Four descriptors an agent (rendezvous_sim raises its own limit up to the hard one).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    results = [run_size(args.sim, n, args.timeout_s) for n in sizes]
    fit = {"k_rdzv": None, "k_etcd_cpu": None}
    if all(r["ok"] for r in results):
        fit["k_rdzv"] = exponent(results[0], results[-1], "rdzv_s")
        fit["k_etcd_cpu"] = exponent(results[0], results[-1], "etcd_cpu_s")
    if args.json:
        print(json.dumps({"sizes": results, "fit": fit}))
    else:
        for r in results:
            if r["ok"]:
                per_agent_ms = 1000 * r.get("etcd_cpu_s", 0) / r["n"]
                print(f"N={r['n']}: rendezvous {r['rdzv_s']:.2f} s, etcd CPU "
                      f"{r.get('etcd_cpu_s', 0):.2f} s ({per_agent_ms:.2f} ms per agent)")
            else:
                print(f"N={r['n']}: FAILED: {r['error']}")
        if fit["k_rdzv"] is not None:
            k_cpu = fit["k_etcd_cpu"]
            print(f"growth from N={sizes[0]} to N={sizes[-1]}: time N^{fit['k_rdzv']:.2f}, etcd CPU "
                  + (f"N^{k_cpu:.2f}" if k_cpu is not None else "not measured")
                  + f" (limit N^{args.max_k:g})")
    if not all(r["ok"] for r in results):
        return 1
    # The time decides; etcd's CPU is stated (at a few tenths of a second it is coarse).
    return 0 if fit["k_rdzv"] is not None and fit["k_rdzv"] <= args.max_k else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
