"""The toy DDP training of toy_ddp.py, started with torch.multiprocessing.spawn instead of torchrun.

Run it from the repository root (CPU-only machine, or any number of GPUs):

    python ddp_scripts/toy_ddp_spawn.py --nprocs 2

Here the script is its own launcher: it picks a free port for the rendezvous at runtime, sets
MASTER_ADDR/MASTER_PORT, and spawns --nprocs copies of `worker`, passing each its rank.
Without --nprocs it starts one process per GPU, or 2 on a CPU-only machine.
It takes the same options as toy_ddp.py (--epochs, --lr, --batch-size, --copies, --seed,
--out-dir) and writes the same files.
"""
import os

import torch
import torch.multiprocessing as mp

from toy_ddp import build_parser, train  # the sibling script: same data, model and loop
from torchcourse.distributed import free_port, setup, teardown


def worker(rank: int, world_size: int, args) -> None:
    """What each spawned process runs; mp.spawn passes the rank as the first argument."""
    ctx = setup(rank=rank, world_size=world_size)
    train(ctx, args)
    teardown(ctx)


def main(argv=None) -> None:
    parser = build_parser(__doc__)
    parser.add_argument("--nprocs", type=int, default=None,
                        help="processes to start (default: number of GPUs, or 2 on a CPU)")
    args = parser.parse_args(argv)
    world_size = args.nprocs or (torch.cuda.device_count() or 2)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(free_port())  # never a hard-coded port
    mp.spawn(worker, args=(world_size, args), nprocs=world_size, join=True)


if __name__ == "__main__":
    main()
