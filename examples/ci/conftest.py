"""pytest setup for a distributed test suite that every rank runs under a launcher
(`cpplaunch --nproc-per-node=2 -m pytest ...`, docs/ci.md): one gloo process group per rank for
the whole session, from the launcher's environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT)."""
import pytest
import torch.distributed as dist


@pytest.fixture(scope="session", autouse=True)
def process_group():
    dist.init_process_group("gloo", init_method="env://")
    yield
    dist.destroy_process_group()
