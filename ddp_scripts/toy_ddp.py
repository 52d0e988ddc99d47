"""Train the course's toy MLP on the five toy points with DistributedDataParallel.

Run it from the repository root (CPU-only machine, or any number of GPUs):

    torchrun --standalone --nproc_per_node=2 ddp_scripts/toy_ddp.py

torchrun starts 2 processes and gives each one RANK, LOCAL_RANK and WORLD_SIZE in its
environment; --standalone lets it pick a free rendezvous port on this machine. The backend is
nccl when every process can have its own GPU and gloo otherwise (see torchcourse.distributed).

Options: --epochs 3  --lr 0.5  --batch-size 2  --copies 1  --seed 123  --out-dir DIR
  --copies K   K jittered copies of the 5 training points (for more processes than points)
  --out-dir    each rank writes DIR/rank<N>.json (the sample indices of every step and a hash
               of its final parameters) and rank 0 saves DIR/model.pt from model.module;
               tests/test_ddp.py and chapter 10 read these files.
ddp_scripts/toy_ddp_spawn.py runs the same training with multiprocessing.spawn instead.
"""
import argparse
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from torchcourse.data import ToyDataset, toy_data
from torchcourse.distributed import (ddp_device_ids, params_hash, setup, teardown,
                                     write_rank_report)
from torchcourse.models import NeuralNetwork
from torchcourse.training import accuracy


def build_parser(description=__doc__):
    parser = argparse.ArgumentParser(description=description.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--batch-size", type=int, default=2, help="per process (micro-batch b)")
    parser.add_argument("--copies", type=int, default=1, help="jittered copies of the toy data")
    parser.add_argument("--seed", type=int, default=123)
    parser.add_argument("--out-dir", type=Path, default=None)
    return parser


def make_datasets(copies: int, seed: int):
    """The toy data; with copies > 1, noisy copies of it (the same on every rank)."""
    (X_train, y_train), (X_test, y_test) = toy_data()
    if copies > 1:
        generator = torch.Generator().manual_seed(seed)
        X_train = torch.cat([X_train + 0.1 * torch.randn(X_train.shape, generator=generator)
                             for _ in range(copies)])
        y_train = y_train.repeat(copies)
    return ToyDataset(X_train, y_train), ToyDataset(X_test, y_test)


def train(ctx, args) -> None:
    """The training loop every rank runs; identical under torchrun and mp.spawn."""
    if ctx.is_main:
        print(f"torch {torch.__version__} | backend {ctx.backend} | world size {ctx.world_size}"
              f" | device of rank 0: {ctx.device}", flush=True)
    train_ds, test_ds = make_datasets(args.copies, args.seed)
    # Each rank gets a disjoint slice of a shuffled order; the shuffle depends on seed + epoch.
    sampler = DistributedSampler(train_ds, num_replicas=ctx.world_size, rank=ctx.rank,
                                 shuffle=True, seed=args.seed)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, sampler=sampler)

    torch.manual_seed(args.seed)  # same start everywhere (DDP also broadcasts rank 0's weights)
    model = NeuralNetwork(num_inputs=2, num_outputs=2).to(ctx.device)
    model = DDP(model, device_ids=ddp_device_ids(ctx))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)

    steps = []  # steps[epoch][step] = dataset indices of this rank's micro-batch
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)  # without it, every epoch repeats epoch 0's order
        order = list(sampler)
        steps.append([order[i:i + args.batch_size] for i in range(0, len(order), args.batch_size)])
        model.train()
        loss_sum = torch.zeros(2, device=ctx.device)  # (sum of batch losses, number of batches)
        for features, labels in train_loader:
            features, labels = features.to(ctx.device), labels.to(ctx.device)
            loss = F.cross_entropy(model(features), labels)
            optimizer.zero_grad()
            loss.backward()       # DDP all-reduces (averages) the gradients here
            optimizer.step()      # every replica applies the same averaged gradient
            loss_sum += torch.stack([loss.detach(), torch.ones((), device=ctx.device)])
        dist.all_reduce(loss_sum)  # sum over ranks, so rank 0 can report the global mean
        if ctx.is_main:
            print(f"epoch {epoch + 1:03d}/{args.epochs:03d} | mean train loss over all ranks "
                  f"{(loss_sum[0] / loss_sum[1]).item():.3f}", flush=True)

    if args.out_dir is not None:
        write_rank_report(args.out_dir, ctx, steps=steps, params_sha256=params_hash(model.module))
    if ctx.is_main:
        # model.module is the plain model inside the wrapper: no DDP hooks, no collectives
        eval_train = DataLoader(train_ds, batch_size=args.batch_size)
        eval_test = DataLoader(test_ds, batch_size=args.batch_size)
        print(f"train accuracy {accuracy(model.module, eval_train, ctx.device):.2f} | "
              f"test accuracy {accuracy(model.module, eval_test, ctx.device):.2f}", flush=True)
        if args.out_dir is not None:
            torch.save(model.module.state_dict(), args.out_dir / "model.pt")
            print(f"saved {args.out_dir / 'model.pt'}", flush=True)


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    ctx = setup()          # reads RANK / WORLD_SIZE / LOCAL_RANK set by torchrun
    train(ctx, args)
    teardown(ctx)          # barrier, then destroy_process_group


if __name__ == "__main__":
    main()
