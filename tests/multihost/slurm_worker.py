"""The workers of the Slurm tests (slurm_test.py), in three modes.

  slurm_worker.py ddp STEPS   a real PyTorch DDP job over gloo: every rank trains STEPS steps on
                              its own data, then prints its view of the world and a checksum of
                              its parameters (identical replicas print identical checksums)
  slurm_worker.py wait SECS   no torch: writes $SW_STAMP_DIR/started-<rank> (its pid), records
                              each SIGUSR1 in $SW_STAMP_DIR/usr1-<rank>, and exits 0 once it has
                              seen one, or 1 after SECS seconds without one. SW_IGNORE_TERM=1
                              makes it ignore SIGTERM (so only SIGKILL ends it)
  slurm_worker.py slot SECS   no torch: writes its view of the world, "RANK GROUP_RANK WORLD_SIZE
                              HOSTNAME PID", to $SW_STAMP_DIR/slot-<attempt>-<node>-<local rank>
                              and prints it; in attempt 0 it then waits (to be lost or stopped)
                              and exits 1 after SECS seconds, in later attempts it exits 0
"""
import os
import signal
import socket
import sys
import time


def say(line):
    os.write(1, (line + "\n").encode())


def ddp(steps):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo")
    torch.manual_seed(0)  # one initial model; DDP also broadcasts rank 0's
    model = DistributedDataParallel(torch.nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.Generator().manual_seed(100 + rank)  # each rank its own batches
    for _ in range(steps):
        optimizer.zero_grad()
        x = torch.randn(16, 8, generator=data)
        model(x).pow(2).sum().backward()
        optimizer.step()
    checksum = sum(float(p.detach().double().sum()) for p in model.parameters())
    # One write per line: with unbuffered stdout, print() writes the text and its newline
    # separately, and the two workers of a node share srun's output file.
    say(f"slurm-ddp rank={rank} world={world} node={os.environ.get('SLURMD_NODENAME')} "
        f"group_rank={os.environ['GROUP_RANK']} checksum={checksum:.12e}")
    dist.barrier()
    dist.destroy_process_group()


def wait(seconds):
    rank = os.environ["RANK"]
    stamps = os.environ["SW_STAMP_DIR"]
    got = []

    def on_usr1(signo, frame):
        got.append(time.time())
        with open(os.path.join(stamps, f"usr1-{rank}"), "a") as f:
            f.write(f"{time.time()!r}\n")

    signal.signal(signal.SIGUSR1, on_usr1)
    if os.environ.get("SW_IGNORE_TERM") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # Written whole, then renamed: the test reads the pid as soon as the name appears.
    partial = os.path.join(stamps, f".started-{rank}")
    with open(partial, "w") as f:
        f.write(str(os.getpid()))
    os.rename(partial, os.path.join(stamps, f"started-{rank}"))
    deadline = time.time() + seconds
    while not got and time.time() < deadline:
        time.sleep(0.05)
    say(f"slurm-wait rank={rank} usr1={len(got)}")
    sys.exit(0 if got else 1)


def slot(seconds):
    attempt = os.environ["TORCHELASTIC_RESTART_COUNT"]
    node = os.environ["SLURMD_NODENAME"]
    view = (f"{os.environ['RANK']} {os.environ['GROUP_RANK']} {os.environ['WORLD_SIZE']} "
            f"{socket.gethostname()} {os.getpid()}")
    name = f"slot-{attempt}-{node}-{os.environ['LOCAL_RANK']}"
    partial = os.path.join(os.environ["SW_STAMP_DIR"], "." + name)
    with open(partial, "w") as f:
        f.write(view)
    os.rename(partial, os.path.join(os.environ["SW_STAMP_DIR"], name))
    say(f"slurm-slot attempt={attempt} node={node} view={view}")
    if attempt == "0":
        time.sleep(seconds)
        sys.exit(1)


if __name__ == "__main__":
    if sys.argv[1] == "ddp":
        ddp(int(sys.argv[2]))
    elif sys.argv[1] == "slot":
        slot(float(sys.argv[2]))
    else:
        wait(float(sys.argv[2]))
