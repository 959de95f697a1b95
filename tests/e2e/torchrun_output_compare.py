"""--redirects/--tee/--log-dir/--local-ranks-filter side by side with Debian's torchrun:
the same console lines (prefixes included) and the same log directory layout and contents.

Debian's 1.13 torchrun cannot take the value 3 (both streams) or 0, so the comparison uses the
combinations it can run: -r 1 -t 2 (stdout to files only, stderr tee'd) and -t 1 (with
-r 9:1, a map naming no rank, in place of the broken default -r 0).
usage: torchrun_output_compare.py CPPLAUNCH
"""
import os
import re
import socket
import subprocess
import sys
import tempfile

from launcher_env import clean_env

CPPLAUNCH = sys.argv[1]
TORCHRUN = "/usr/bin/torchrun"
PYTHON = "/usr/bin/python3"
NPROC = 2
WORKER = r"""
import os, sys
lr = os.environ["LOCAL_RANK"]
for i in range(3):
    print(f"out {lr} line {i}", flush=True)
    print(f"err {lr} line {i}", file=sys.stderr, flush=True)
sys.stdout.write(f"partial {lr}")
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tree(base):
    """{relative path with the random run-dir name normalised: file content}"""
    files = {}
    for root, _, names in os.walk(base):
        for name in names:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, base).split(os.sep)
            rel[0] = rel[0][:-8] + "XXXXXXXX"  # <run_id>_<8 random characters>
            with open(path) as f:
                files["/".join(rel)] = f.read()
    return files


def run(launcher, flags, script):
    log_dir = tempfile.mkdtemp(prefix="outcmp_")
    env = clean_env(PYTHON_EXEC=PYTHON, OMP_NUM_THREADS="1")
    cmd = launcher + flags + ["--nproc_per_node", str(NPROC), "--master_port", str(free_port()),
                              "--log_dir", log_dir, script]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}\n{p.stderr}")
    # Only the workers' lines: the launchers' own log lines differ by design.
    # torchrun writes a worker's partial last line as-is, so the next worker's line can start
    # on the same console line; cpplaunch ends it with a newline. Compare whole lines.
    prefixed = lambda text: sorted(part for l in text.splitlines()
                                   for part in re.split(r"(?=\[default\d+\]:)", l)
                                   if part.startswith("[default"))
    return prefixed(p.stdout), prefixed(p.stderr), tree(log_dir)


def main():
    script = os.path.join(tempfile.mkdtemp(prefix="outcmp_"), "worker.py")
    with open(script, "w") as f:
        f.write(WORKER)
    failures = []
    cases = [
        ("-r 1 -t 2", ["-r", "1", "-t", "2"], []),
        ("-t 1", ["-r", "9:1", "-t", "1"], []),
        ("-t 2 --local-ranks-filter=1", ["-r", "9:1", "-t", "2"], ["--local-ranks-filter=1"]),
    ]
    for name, flags, ours_only in cases:
        ref_out, ref_err, ref_tree = run([TORCHRUN], flags, script)
        if ours_only:  # torchrun 1.13 has no such option: expected = its output, filtered
            keep = lambda lines: [l for l in lines if l.startswith("[default1]")]
            ref_out, ref_err = keep(ref_out), keep(ref_err)
        out, err, ours_tree = run([CPPLAUNCH], flags + ours_only, script)
        # cpplaunch's own log beside the attempts (torchrun keeps none); the rest must match.
        if ours_tree.pop("none_XXXXXXXX/agent.log", None) is None:
            failures.append(f"{name}: cpplaunch wrote no agent.log in {sorted(ours_tree)}")
        if ref_out != out:
            failures.append(f"{name}: console stdout differs:\n torchrun {ref_out}\n cpplaunch {out}")
        if ref_err != err:
            failures.append(f"{name}: console stderr differs:\n torchrun {ref_err}\n cpplaunch {err}")
        # torchrun 1.13 creates no error.json unless the worker writes one; neither does cpplaunch.
        if sorted(ref_tree) != sorted(ours_tree):
            failures.append(f"{name}: log files differ: torchrun {sorted(ref_tree)} "
                            f"cpplaunch {sorted(ours_tree)}")
        for path in set(ref_tree) & set(ours_tree):
            if ref_tree[path] != ours_tree[path]:
                failures.append(f"{name}: {path} differs: {ref_tree[path]!r} vs {ours_tree[path]!r}")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"{len(cases)} output configurations match torchrun's console lines and log files")


if __name__ == "__main__":
    main()
