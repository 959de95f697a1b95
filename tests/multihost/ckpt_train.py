"""A real PyTorch DDP training job that checkpoints, for the etcd fault tests: a linear model
trained with SGD for MH_STEPS steps (default 30) over gloo. Every rank uses the same batch at a
given step, so DDP's averaged gradient is that batch's gradient whatever the world size: the
final weights equal those of `reference_weights(steps)`, run in one process, and do not depend
on how many hosts took part or on restarts.

Rank 0 saves {step, model, optimizer} to MH_CKPT after every step (write, then rename); every
rank resumes from it at start. Each step sleeps MH_STEP_SLEEP seconds (default 0.2) so that a
test can act mid-training. Lines printed (rank 0 only, except "started"):
  started rank=R restart=N master=ADDR:PORT group_rank=G
  resumed from step K
  done steps=N weights=w0,w1,w2,w3,b
"""
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def batch(step):
    g = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(8, 4, generator=g, dtype=torch.float64)
    y = x @ torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=torch.float64) + 0.25
    return x, y.unsqueeze(1)


def fresh_model():
    torch.manual_seed(7)
    return torch.nn.Linear(4, 1).double()


def train_step(model, optimizer, step):
    x, y = batch(step)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()


def weights(module):
    return [float(v) for v in module.weight.detach().flatten()] + [float(module.bias)]


def reference_weights(steps):
    model = fresh_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(steps):
        train_step(model, optimizer, step)
    return weights(model)


def main():
    rank = int(os.environ["RANK"])
    restart = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
    steps = int(os.environ.get("MH_STEPS", "30"))
    pause = float(os.environ.get("MH_STEP_SLEEP", "0.2"))
    ckpt = os.environ["MH_CKPT"]
    print(f"started rank={rank} restart={restart} "
          f"master={os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']} "
          f"group_rank={os.environ['GROUP_RANK']}", flush=True)
    dist.init_process_group("gloo")
    model = fresh_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    start = 0
    if os.path.exists(ckpt):
        state = torch.load(ckpt)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["step"]
        if rank == 0:
            print(f"resumed from step {start}", flush=True)
    ddp = DistributedDataParallel(model)
    for step in range(start, steps):
        train_step(ddp, optimizer, step)
        if rank == 0:
            tmp = f"{ckpt}.tmp"
            torch.save({"step": step + 1, "model": model.state_dict(),
                        "optimizer": optimizer.state_dict()}, tmp)
            os.replace(tmp, ckpt)
        time.sleep(pause)
    dist.barrier()
    if rank == 0:
        print("done steps=%d weights=%s" % (steps, ",".join("%.12g" % w for w in weights(model))),
              flush=True)
    dist.destroy_process_group()
    sys.exit(0)


if __name__ == "__main__":
    main()
