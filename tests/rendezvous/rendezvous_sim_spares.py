#!/usr/bin/env python3
"""bench/rendezvous_sim's hot-spares mode (--lose, issue 24) keeps working: 16 simulated member
agents in two processes and 2 spares in the second, against a fresh cpplaunch-store; member 3 (in
the first process) loses its store connection, as a SIGKILLed agent does. Checks, from the
simulation's JSON and independently of its own verdict: both processes exit 0; the 15 survivors
hold round 1 with restart count 1 at their own group ranks; exactly one spare holds it, at the
group rank member 3 had (its position among the sorted node ids, as the first round ranks them);
every time stamp of the replacement is ordered (kill, survivors told, every agent holding).
Then the counted first rendezvous (--count-requests 1 without --lose), which the benchmark's
report uses: 8 agents in one process, each arming its round with exactly one ARM request.

    rendezvous_sim_spares.py RENDEZVOUS_SIM CPPLAUNCH_STORE [--timeout-s 60]

Exit 0: all checks hold; 1: one failed (each failure is printed); 2: bad usage."""

import argparse
import json
import re
import resource
import subprocess
import sys
import time

MEMBERS, PROCESSES, SPARES, LOST = 16, 2, 2, 3


def start_store(store):
    proc = subprocess.Popen([store], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    m = re.search(r"(\d+)", proc.stdout.readline() or "")
    if not m:
        proc.kill()
        proc.wait()
        raise RuntimeError("cpplaunch-store printed no port")
    return proc, int(m.group(1))


def run(sim, store, timeout_s):
    """Both processes' JSON objects (or an error text each) and exit statuses."""
    server, port = start_store(store)
    run_id = f"sparetest{time.monotonic_ns()}"
    per = MEMBERS // PROCESSES
    procs = []
    try:
        for p in range(PROCESSES):
            argv = [sim, "--port", str(port), "--agents", str(per), "--total", str(MEMBERS),
                    "--first-index", str(p * per), "--processes", str(PROCESSES), "--run-id", run_id,
                    "--channel", "1", "--lose", str(LOST),
                    "--spares", str(SPARES if p == PROCESSES - 1 else 0),
                    "--store-pid", str(server.pid), "--timeout-s", str(timeout_s)]
            procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        out = []
        for proc in procs:
            stdout, stderr = proc.communicate(timeout=3 * timeout_s)
            try:
                out.append((json.loads(stdout), proc.returncode))
            except json.JSONDecodeError:
                out.append(({"error": (stdout + stderr)[-300:]}, proc.returncode))
        return out
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        server.terminate()
        server.wait()


def check(parts):
    """The failed checks, as lines."""
    bad = []
    for i, (d, status) in enumerate(parts):
        if status != 0 or "error" in d:
            bad.append(f"process {i}: exit {status}, {d.get('error') or d.get('first_error')}")
    if bad:
        return bad
    losing, placing = parts[0][0], parts[-1][0]
    expected_rank = sorted(f"sim{i}" for i in range(MEMBERS)).index(f"sim{LOST}")
    survivors = sum(d["held_next"] for d, _ in parts)
    if survivors != MEMBERS - 1:
        bad.append(f"{survivors} survivors hold the next round, not {MEMBERS - 1}")
    if any(d["moved"] for d, _ in parts):
        bad.append(f"{sum(d['moved'] for d, _ in parts)} survivors changed group rank")
    if placing["spares_placed"] != 1:
        bad.append(f"{placing['spares_placed']} spares hold the next round, not 1")
    if not (placing["lost_rank"] == placing["spare_rank"] == expected_rank):
        bad.append(f"member {LOST} had group rank {placing['lost_rank']} (expected {expected_rank}), "
                   f"the spare got {placing['spare_rank']}")
    for d, _ in parts:
        if (d["next_round"], d["next_restart_count"]) != (1, 1):
            bad.append(f"next round {d['next_round']} restart count {d['next_restart_count']}, not 1 and 1")
    told = min(d["first_told_ns"] for d, _ in parts)
    holding = max(d["last_holding_next_ns"] for d, _ in parts)
    if not (losing["kill_ns"] and 0 < losing["kill_ns"] < told < holding):
        bad.append(f"stamps out of order: kill {losing['kill_ns']}, told {told}, holding {holding}")
    if not all(d["ok"] and d["replacement_ok"] for d, _ in parts):
        bad.append("the simulation's own verdict is not ok")
    if placing["kill_ns"] or not losing["kill_ns"]:
        bad.append("the wrong process closed the lost member's connection")
    return bad


def counted(sim, store, timeout_s):
    """The failed checks of a counted first rendezvous of 8 agents, as lines."""
    server, port = start_store(store)
    try:
        proc = subprocess.run([sim, "--port", str(port), "--agents", "8", "--total", "8", "--run-id",
                               f"counttest{time.monotonic_ns()}", "--count-requests", "1",
                               "--timeout-s", str(timeout_s)],
                              capture_output=True, text=True, timeout=3 * timeout_s)
    finally:
        server.terminate()
        server.wait()
    try:
        d = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return [f"counted run: exit {proc.returncode}, {(proc.stdout + proc.stderr)[-300:]}"]
    arms = {kind: v[0] for kind, v in d.get("requests", {}).items() if kind.startswith("ARM ")}
    if not d.get("ok") or list(arms.values()) != [8]:
        return [f"counted run: ok {d.get('ok')}, ARM requests {arms} (expected 8 of one kind)"]
    return []


def main(argv):
    parser = argparse.ArgumentParser(prog="rendezvous_sim_spares.py")
    parser.add_argument("sim")
    parser.add_argument("store")
    parser.add_argument("--timeout-s", type=int, default=60)
    try:
        args = parser.parse_args(argv)
    except SystemExit:
        print("usage: rendezvous_sim_spares.py RENDEZVOUS_SIM CPPLAUNCH_STORE [--timeout-s S]",
              file=sys.stderr)
        return 2
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    parts = run(args.sim, args.store, args.timeout_s)
    bad = check(parts) + counted(args.sim, args.store, args.timeout_s)
    for line in bad:
        print("FAILED: " + line)
    if not bad:
        told = min(d["first_told_ns"] for d, _ in parts)
        holding = max(d["last_holding_next_ns"] for d, _ in parts)
        print(f"{MEMBERS} members + {SPARES} spares: member {LOST}'s seat went to a spare, no survivor "
              f"moved; replaced {(holding - told) / 1e6:.0f} ms after the loss was known")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
