#!/usr/bin/python3
"""A real PyTorch worker: gloo init_process_group("env://") through the agent store, every
collective once, point-to-point, and a short DDP run that must end with identical replicas.

Launcher-agnostic: it reads only the environment torchrun gives workers (RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT, TORCHELASTIC_USE_AGENT_STORE, TORCHELASTIC_RESTART_COUNT, ...), so it
runs under run_torch_job.py, under torchrun and under cpplaunch.
Exit status 0 and a final line "rank R: all checks passed" on success; 1 on a failed check.
"""
import datetime
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def check(condition, what):
    if not condition:
        print(f"rank {dist.get_rank()}: FAILED {what}", flush=True)
        sys.exit(1)


def collectives(rank, world):
    t = torch.arange(4, dtype=torch.float32) if rank == 0 else torch.zeros(4)
    dist.broadcast(t, src=0)
    check(torch.equal(t, torch.arange(4, dtype=torch.float32)), "broadcast")

    out = torch.zeros(1)
    chunks = [torch.tensor([float(r * 10)]) for r in range(world)] if rank == 0 else None
    dist.scatter(out, scatter_list=chunks, src=0)
    check(out.item() == rank * 10, "scatter")

    mine = torch.tensor([float(rank + 1)])
    gathered = [torch.zeros(1) for _ in range(world)] if rank == 0 else None
    dist.gather(mine, gather_list=gathered, dst=0)
    if rank == 0:
        check([g.item() for g in gathered] == [float(r + 1) for r in range(world)], "gather")

    everyone = [torch.zeros(1) for _ in range(world)]
    dist.all_gather(everyone, mine)
    check([g.item() for g in everyone] == [float(r + 1) for r in range(world)], "all_gather")

    total = world * (world + 1) / 2
    reduced = mine.clone()
    dist.reduce(reduced, dst=0, op=dist.ReduceOp.SUM)
    if rank == 0:
        check(reduced.item() == total, "reduce")

    summed = mine.clone()
    dist.all_reduce(summed, op=dist.ReduceOp.SUM)
    check(summed.item() == total, "all_reduce")

    # A ring of send/recv; even ranks send first so that the blocking calls pair up.
    right, left = (rank + 1) % world, (rank - 1) % world
    incoming = torch.zeros(1)
    if rank % 2 == 0:
        dist.send(torch.tensor([float(rank)]), dst=right)
        dist.recv(incoming, src=left)
    else:
        dist.recv(incoming, src=left)
        dist.send(torch.tensor([float(rank)]), dst=right)
    check(incoming.item() == float(left), "send/recv")
    dist.barrier()


def ddp(rank, world):
    torch.manual_seed(1234 + rank)  # different initial weights: DDP must broadcast rank 0's
    model = DistributedDataParallel(torch.nn.Sequential(
        torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = torch.Generator().manual_seed(rank)
    for _ in range(10):
        x = torch.randn(32, 8, generator=data)
        y = x.sum(dim=1, keepdim=True)
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    replicas = [torch.zeros_like(flat) for _ in range(world)]
    dist.all_gather(replicas, flat)
    check(all(torch.equal(replicas[0], r) for r in replicas), "DDP replicas identical")


def main():
    dist.init_process_group("gloo", init_method="env://",
                            timeout=datetime.timedelta(seconds=120))
    rank, world = dist.get_rank(), dist.get_world_size()
    check(rank == int(os.environ["RANK"]) and world == int(os.environ["WORLD_SIZE"]), "identity")
    collectives(rank, world)
    ddp(rank, world)
    dist.barrier()
    dist.destroy_process_group()
    print(f"rank {rank}: all checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
