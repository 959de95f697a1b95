"""Every gloo collective, send/recv and a short DDP run ending with identical replicas, by four
unmodified PyTorch workers (tests/rendezvous/store/torch_gloo_worker.py) under
`cpplaunch --nproc-per-node=4`, meeting through the agent's store.

usage: collectives_under_cpplaunch.py CPPLAUNCH
"""
import os
import subprocess
import sys

from launcher_env import clean_env

CPPLAUNCH = sys.argv[1]
WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "rendezvous", "store",
                      "torch_gloo_worker.py")

env = clean_env(PYTHON_EXEC="/usr/bin/python3")
p = subprocess.run([CPPLAUNCH, "--nproc-per-node=4", "--master-port=0", "--tee=3", WORKER],
                   env=env, capture_output=True, text=True, timeout=240)
passed = sorted(line for line in p.stdout.splitlines() if line.endswith("all checks passed"))
expected = [f"[default{r}]:rank {r}: all checks passed" for r in range(4)]
if p.returncode != 0 or passed != expected:
    print(p.stdout[-4000:])
    print(p.stderr[-4000:])
    sys.exit(f"FAIL: exit {p.returncode}; passed lines {passed}")
print("4 workers under cpplaunch: every collective, send/recv and DDP replicas checked")
