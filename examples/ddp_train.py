#!/usr/bin/env python3
"""Plain PyTorch DistributedDataParallel training (gloo, CPU): the migration example.

Nothing in this file knows about cpplaunch. It runs unchanged under either launcher:

    torchrun  --nproc_per_node=2 examples/ddp_train.py --epochs 5
    cpplaunch --nproc-per-node=2 examples/ddp_train.py --epochs 5

(cpplaunch starts `$PYTHON_EXEC -u ddp_train.py ...`; on Debian set PYTHON_EXEC=/usr/bin/python3
if the python3 first on PATH has no torch.)

The task is the one of the C++ trainer (examples/trainer.cpp): two Gaussian clusters in 10
dimensions, a small MLP, 2 classes. Rank 0 prints epoch, loss and accuracy; with --checkpoint it
saves after every epoch and every rank resumes from it when restarted; at the end all ranks check
that their replicas hold identical parameters and exit 3 if not.
"""

import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.elastic.multiprocessing.errors import record
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

FEATURES = 10
CLASSES = 2
CENTRE_DISTANCE = 1.6  # best possible accuracy: Phi(1.6), about 94.5%
REPLICA_MISMATCH_EXIT_CODE = 3
USAGE_EXIT_CODE = 2
LAUNCHER_VARIABLES = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32, help="samples per worker per step")
    parser.add_argument("--lr", type=float, default=0.005)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--samples", type=int, default=4096)
    parser.add_argument("--test-samples", type=int, default=1024)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--checkpoint", default="", help="save/resume path (default: none)")
    return parser.parse_args()


def require_launcher():
    missing = [name for name in LAUNCHER_VARIABLES if not os.environ.get(name)]
    if missing:
        print(f"ddp_train.py: {', '.join(missing)} not set.\n"
              "This script is a distributed worker: start it through a launcher, for example\n"
              "  torchrun --nproc_per_node=2 examples/ddp_train.py\n"
              "  cpplaunch --nproc-per-node=2 examples/ddp_train.py", file=sys.stderr)
        sys.exit(USAGE_EXIT_CODE)


def two_clusters(centre, samples, seed):
    generator = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, CLASSES, (samples,), generator=generator)
    side = labels.float().mul(2).sub(1).unsqueeze(1)
    features = torch.randn(samples, FEATURES, generator=generator) + side * centre
    return TensorDataset(features, labels)


def make_centre(seed):
    centre = torch.randn(FEATURES, generator=torch.Generator().manual_seed(seed))
    return centre / centre.norm() * CENTRE_DISTANCE


def make_model(hidden):
    return nn.Sequential(nn.Linear(FEATURES, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                         nn.ReLU(), nn.Linear(hidden, CLASSES))


def load_checkpoint(path, model, optimizer):
    """Rank 0 decides whether to resume; every rank then loads the same file."""
    decided = torch.zeros(1, dtype=torch.long)
    if dist.get_rank() == 0 and path and os.path.exists(path):
        decided[0] = torch.load(path)["completed_epochs"]
    dist.broadcast(decided, src=0)
    completed = int(decided[0])
    if completed > 0:
        state = torch.load(path)
        if state["completed_epochs"] != completed:
            raise RuntimeError(f"{path} changed while resuming; is it on shared storage?")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
    return completed


def save_checkpoint(path, completed_epochs, model, optimizer):
    temporary = f"{path}.tmp.{os.getpid()}"
    torch.save({"completed_epochs": completed_epochs, "model": model.state_dict(),
                "optimizer": optimizer.state_dict()}, temporary)
    os.replace(temporary, path)  # atomic: a kill during the save leaves the old checkpoint


def test_accuracy(model, test_set):
    rank, world = dist.get_rank(), dist.get_world_size()
    features, labels = test_set.tensors
    counts = torch.zeros(2, dtype=torch.double)
    with torch.no_grad():
        mine = torch.arange(rank, len(labels), world)
        predicted = model(features[mine]).argmax(1)
        counts[0] = predicted.eq(labels[mine]).sum()
        counts[1] = len(mine)
    dist.all_reduce(counts)
    return (counts[0] / counts[1]).item()


def replicas_match(model, keep_alive):
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    high, low = flat.clone(), flat.clone()
    dist.all_reduce(high, op=dist.ReduceOp.MAX)
    dist.all_reduce(low, op=dist.ReduceOp.MIN)
    keep_alive += [high, low]
    spread = (high - low).abs().max().item()
    checksum = flat.double().sum().item()
    if spread == 0:
        if dist.get_rank() == 0:
            print(f"replica check: OK, all {dist.get_world_size()} replicas hold identical "
                  f"parameters ({flat.numel()} values, checksum {checksum:.9g})", flush=True)
        return True
    print(f"replica check: FAILED on rank {dist.get_rank()}, replicas differ by up to {spread:g}",
          file=sys.stderr, flush=True)
    return False


@record
def main():
    args = parse_args()
    require_launcher()
    start = time.monotonic()
    dist.init_process_group("gloo")  # env://: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    rank, world = dist.get_rank(), dist.get_world_size()
    leader = rank == 0

    centre = make_centre(args.seed)
    train_set = two_clusters(centre, args.samples, args.seed + 1)
    test_set = two_clusters(centre, args.test_samples, args.seed + 2)
    sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler)

    torch.manual_seed(args.seed)
    model = make_model(args.hidden)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    completed = load_checkpoint(args.checkpoint, model, optimizer)
    ddp = DistributedDataParallel(model)  # broadcasts rank 0's weights to every replica

    if leader:
        print(f"ddp_train.py: {world} workers, store {os.environ['MASTER_ADDR']}:"
              f"{os.environ['MASTER_PORT']} (attempt {os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')})",
              flush=True)
        if completed:
            print(f"resumed from checkpoint {args.checkpoint} after epoch {completed}; "
                  f"continuing at epoch {completed + 1}", flush=True)

    accuracy = test_accuracy(model, test_set) if completed else 0.0
    for epoch in range(completed + 1, args.epochs + 1):
        epoch_start = time.monotonic()
        sampler.set_epoch(epoch)
        ddp.train()
        totals = torch.zeros(3, dtype=torch.double)  # loss sum, correct, samples
        for features, labels in loader:
            optimizer.zero_grad()
            logits = ddp(features)
            loss = F.cross_entropy(logits, labels)
            loss.backward()  # DDP all-reduces and averages the gradients here
            optimizer.step()
            totals += torch.tensor([loss.item() * len(labels),
                                    logits.argmax(1).eq(labels).sum().item(), len(labels)],
                                   dtype=torch.double)
        dist.all_reduce(totals)
        accuracy = test_accuracy(model, test_set)
        saved = leader and bool(args.checkpoint)
        if saved:
            save_checkpoint(args.checkpoint, epoch, model, optimizer)
        if leader:
            print(f"epoch {epoch:3d}/{args.epochs}  loss {totals[0] / totals[2]:.4f}  "
                  f"train acc {100 * totals[1] / totals[2]:5.1f}%  test acc {100 * accuracy:5.1f}%  "
                  f"{time.monotonic() - epoch_start:.2f} s{'  (checkpoint saved)' if saved else ''}",
                  flush=True)

    if leader:
        print(f"done: {args.epochs} epochs, final test accuracy {100 * accuracy:.1f}%, "
              f"{time.monotonic() - start:.2f} s in this attempt", flush=True)
    # PyTorch 1.13 can deadlock at exit when a gloo worker thread drops the last reference to a
    # tensor created in Python (that needs the GIL) while the main thread, holding the GIL, joins
    # that thread in ~ProcessGroupGloo. So the last collectives' tensors stay referenced here
    # until the process group is gone.
    keep_alive = []
    ok = replicas_match(model, keep_alive)
    del ddp
    dist.destroy_process_group()
    sys.exit(0 if ok else REPLICA_MISMATCH_EXIT_CODE)


if __name__ == "__main__":
    main()
