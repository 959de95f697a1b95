"""A small real PyTorch DDP job for the multi-host tests: every rank trains one step of a tiny
model with DistributedDataParallel over gloo, then all-reduces its rank. Prints one line per rank
and exits non-zero if the world it sees is not the one the launcher promised.

Environment knobs (all optional):
  MH_FAIL_RANK=r      rank r exits with MH_FAIL_CODE (default 3) after the first all-reduce
  MH_FAIL_ONCE=1      ...only when TORCHELASTIC_RESTART_COUNT is 0
  MH_SLEEP=s          every rank sleeps s seconds after its work (to be stopped from outside)
  MH_SLEEP_ONCE=1     ...only when TORCHELASTIC_RESTART_COUNT is 0
  MH_STAMP_DIR=d      rank r writes d/fail-<r> with time.time() just before failing
  MH_FAIL_GATE=path   the failing rank first waits (at most 120 s) until `path` exists
"""
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def main():
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    restart = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
    dist.init_process_group("gloo")
    assert dist.get_rank() == rank and dist.get_world_size() == world
    model = DistributedDataParallel(torch.nn.Linear(4, 1))
    loss = model(torch.ones(2, 4)).sum()
    loss.backward()
    total = torch.tensor([rank], dtype=torch.float64)
    dist.all_reduce(total)
    expected = world * (world - 1) / 2
    ok = total.item() == expected
    print(f"ddp rank={rank} world={world} group_rank={os.environ['GROUP_RANK']} "
          f"local_rank={os.environ['LOCAL_RANK']} restart={restart} allreduce={'ok' if ok else 'BAD'}",
          flush=True)
    stamp_dir = os.environ.get("MH_STAMP_DIR")
    if stamp_dir:
        with open(os.path.join(stamp_dir, f"started-{rank}-{restart}"), "w") as f:
            f.write(str(os.getpid()))
    fail_rank = os.environ.get("MH_FAIL_RANK")
    if fail_rank is not None and int(fail_rank) == rank:
        if os.environ.get("MH_FAIL_ONCE") != "1" or restart == 0:
            gate = os.environ.get("MH_FAIL_GATE")
            deadline = time.time() + 120
            while gate and not os.path.exists(gate) and time.time() < deadline:
                time.sleep(0.05)
            if stamp_dir:
                with open(os.path.join(stamp_dir, f"fail-{rank}"), "w") as f:
                    f.write(repr(time.time()))
            os._exit(int(os.environ.get("MH_FAIL_CODE", "3")))
    sleep = float(os.environ.get("MH_SLEEP", "0"))
    if os.environ.get("MH_SLEEP_ONCE") == "1" and restart > 0:
        sleep = 0
    if sleep:
        time.sleep(sleep)
    dist.barrier()
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
