"""Train an MLP on FashionMNIST with DistributedDataParallel; rank 0 saves the checkpoint.

Run it from the repository root (CPU-only machine, or any number of GPUs):

    torchrun --standalone --nproc_per_node=2 ddp_scripts/fashion_ddp.py

A quick run on 2 CPU processes (1024 training images, 1 epoch, a few seconds of training):

    torchrun --standalone --nproc_per_node=2 ddp_scripts/fashion_ddp.py --subset 1024 --epochs 1

The data comes from torchcourse.fashion.fashion_mnist, as in chapter 07: the real FashionMNIST
from disk (Debian's dataset-fashion-mnist, decompressed once, or an earlier download), else a
download (never with COURSE_OFFLINE=1 / CI=true), else the course's generated stand-in; rank 0
says which, and results on the stand-in say nothing about FashionMNIST.

Options: --epochs 2  --batch-size 64 (per process)  --lr 0.1  --subset N (first N images of each
split, 0 = all)  --data-dir data  --checkpoint checkpoints/fashion_ddp.pt  --seed 0  --out-dir DIR
The checkpoint is model.module.state_dict(): it loads into make_model() without any DDP.
With --out-dir each rank writes DIR/rank<N>.json (sample indices per epoch, parameter hash).
"""
import argparse
import contextlib
import io
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Subset
from torch.utils.data.distributed import DistributedSampler

from torchcourse.distributed import (ddp_device_ids, params_hash, setup, teardown,
                                     write_rank_report)
from torchcourse.fashion import default_transform, fashion_mnist, is_standin
from torchcourse.models import NeuralNetwork
from torchcourse.training import accuracy


def make_model() -> nn.Module:
    """Flatten the 28x28 image, then the course's MLP with wider hidden layers."""
    return nn.Sequential(nn.Flatten(), NeuralNetwork(28 * 28, 10, hidden=(128, 64)))


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64, help="per process")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--subset", type=int, default=0, help="first N images per split; 0 = all")
    parser.add_argument("--data-dir", type=Path, default=Path("data"))
    parser.add_argument("--checkpoint", type=Path, default=Path("checkpoints/fashion_ddp.pt"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", type=Path, default=None)
    return parser


def load_split(args, train: bool, quiet: bool):
    # Only rank 0 may print (the stand-in banner too): other ranks' output would interleave.
    with contextlib.redirect_stdout(io.StringIO()) if quiet else contextlib.nullcontext():
        dataset = fashion_mnist(root=str(args.data_dir), train=train, transform=default_transform())
    if args.subset:
        dataset = Subset(dataset, range(min(args.subset, len(dataset))))
    return dataset


def load_data(ctx, args):
    """Rank 0 decompresses, downloads or generates the files first; the others wait, then read them."""
    if not ctx.is_main:
        dist.barrier()
    quiet = not ctx.is_main
    train_ds, test_ds = load_split(args, True, quiet), load_split(args, False, quiet)
    if ctx.is_main:
        dist.barrier()
    return train_ds, test_ds


def train(ctx, args) -> None:
    """Every rank: load its data, train its replica; rank 0 reports and saves the checkpoint."""
    train_ds, test_ds = load_data(ctx, args)
    if ctx.is_main:
        standin = is_standin(getattr(train_ds, "dataset", train_ds))   # Subset wraps the dataset
        source = "the offline STAND-IN (not FashionMNIST)" if standin else "FashionMNIST"
        print(f"torch {torch.__version__} | backend {ctx.backend} | world size {ctx.world_size}"
              f" | data: {source}, {len(train_ds)} train / {len(test_ds)} test images", flush=True)

    sampler = DistributedSampler(train_ds, num_replicas=ctx.world_size, rank=ctx.rank,
                                 shuffle=True, seed=args.seed)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, sampler=sampler)
    torch.manual_seed(args.seed)
    model = DDP(make_model().to(ctx.device), device_ids=ddp_device_ids(ctx))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)

    seen = []  # seen[epoch] = the dataset indices this rank trained on, in order
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        seen.append(list(sampler))
        model.train()
        loss_sum = torch.zeros(2, device=ctx.device)
        for features, labels in train_loader:
            features, labels = features.to(ctx.device), labels.to(ctx.device)
            loss = F.cross_entropy(model(features), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum += torch.stack([loss.detach(), torch.ones((), device=ctx.device)])
        dist.all_reduce(loss_sum)
        if ctx.is_main:
            print(f"epoch {epoch + 1}/{args.epochs} | mean train loss over all ranks "
                  f"{(loss_sum[0] / loss_sum[1]).item():.3f}", flush=True)

    if args.out_dir is not None:
        write_rank_report(args.out_dir, ctx, seen=seen, params_sha256=params_hash(model.module))
    if ctx.is_main:
        test_loader = DataLoader(test_ds, batch_size=256)
        print(f"test accuracy {accuracy(model.module, test_loader, ctx.device):.3f}", flush=True)
        args.checkpoint.parent.mkdir(parents=True, exist_ok=True)
        torch.save(model.module.state_dict(), args.checkpoint)  # .module: no "module." prefix
        print(f"saved {args.checkpoint}", flush=True)


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    ctx = setup()          # reads RANK / WORLD_SIZE / LOCAL_RANK set by torchrun
    train(ctx, args)       # returns before teardown, so the DDP model is already released
    teardown(ctx)          # collect, barrier, then destroy_process_group


if __name__ == "__main__":
    main()
