"""A small distributed test suite: each test runs on every rank at once, and every rank calls the
same collectives in the same order, so a test failing on one rank does not hang the others.
CI_EXAMPLE_BREAK_RANK=<rank> makes that rank's all_reduce check fail (the worked example in
docs/ci.md shows what a failing rank looks like in CI)."""
import os

import torch
import torch.distributed as dist


def test_all_reduce_sums_every_rank():
    value = torch.tensor([float(dist.get_rank() + 1)])
    dist.all_reduce(value)
    world = dist.get_world_size()
    expected = world * (world + 1) / 2
    if os.environ.get("CI_EXAMPLE_BREAK_RANK") == str(dist.get_rank()):
        expected += 1
    assert value.item() == expected


def test_broadcast_from_rank_zero():
    value = torch.tensor([42.0 if dist.get_rank() == 0 else 0.0])
    dist.broadcast(value, src=0)
    assert value.item() == 42.0


def test_all_gather_in_rank_order():
    gathered = [torch.zeros(1) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, torch.tensor([float(dist.get_rank())]))
    assert [t.item() for t in gathered] == list(range(dist.get_world_size()))
