"""Two DDP details on 2 processes: gradient accumulation with no_sync, and BatchNorm over ranks.

Run it from the repository root (CPU-only machine, or any number of GPUs):

    torchrun --standalone --nproc_per_node=2 ddp_scripts/ddp_no_sync_bn.py

1. no_sync. Each rank adds up the gradients of --accum micro-batches before one optimizer step.
   Run "every" lets DDP all-reduce after every backward pass; run "no_sync" wraps all but the
   last forward and backward pass of a step in `with model.no_sync():`, so DDP all-reduces
   once per step.
   A comm hook counts the all-reduces. Both runs end with the same weights, up to rounding.
2. BatchNorm. One backward pass of a model with BatchNorm1d, each rank on its half of a global
   batch, DDP averaging the gradients, compared with one process's gradient on the whole batch.
   Plain BatchNorm normalizes each half with that half's statistics, so the two differ.
   SyncBatchNorm computes the statistics over the global batch; torch 2.14 runs it on GPUs
   only (on CPU tensors it raises ValueError). So with nccl the script converts the model with
   SyncBatchNorm.convert_sync_batchnorm, and with gloo it uses GlobalBatchNorm1d below, which
   computes the same statistics with an all-reduce (its running averages are left out).

Options: --steps 3  --accum 4  --batch-size 4 (per rank and micro-batch)  --lr 0.1  --seed 0
  --out-dir  each rank writes DIR/rank<N>.json; rank 0 saves DIR/no_sync.pt (the weights of
             the no_sync run). tests/test_fsdp.py and chapter 10 read these files.
"""
import argparse
import contextlib
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.nn.parallel import DistributedDataParallel as DDP

from fsdp_toy import NUM_CLASSES, NUM_FEATURES, global_batch, make_data  # the sibling script
from torchcourse.distributed import ddp_device_ids, params_hash, setup, teardown, write_rank_report
from torchcourse.models import NeuralNetwork


def counting_hook(counter: dict, bucket):
    """DDP's default all-reduce (sum, then divide by the world size), counted."""
    counter["allreduces"] += 1
    return allreduce_hook(None, bucket)   # None: the default process group


def train_accumulating(ctx, args, features, labels, use_no_sync: bool):
    """--steps SGD steps, each over --accum micro-batches per rank; returns (model, all-reduces)."""
    torch.manual_seed(args.seed)
    model = DDP(NeuralNetwork(NUM_FEATURES, NUM_CLASSES).to(ctx.device), device_ids=ddp_device_ids(ctx))
    counter = {"allreduces": 0}
    model.register_comm_hook(counter, counting_hook)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    micro = ctx.world_size * args.batch_size      # samples of one micro-batch, all ranks together
    for step in range(args.steps):
        index = global_batch(step, args.accum * micro, args.seed)
        optimizer.zero_grad()
        for m in range(args.accum):
            mine = index[m * micro:(m + 1) * micro][ctx.rank::ctx.world_size]
            skip_sync = use_no_sync and m < args.accum - 1
            # The forward pass too must run inside no_sync: DDP decides there whether the
            # coming backward pass all-reduces (a backward alone inside it still does).
            with model.no_sync() if skip_sync else contextlib.nullcontext():
                # / accum: the summed gradients are then the mean over the step's samples
                loss = F.cross_entropy(model(features[mine]), labels[mine]) / args.accum
                loss.backward()   # all-reduces what has accumulated, unless under no_sync
        optimizer.step()
    return model.module, counter["allreduces"]


class AllReduceSum(torch.autograd.Function):
    """Sum a tensor over the ranks; its gradient is summed over the ranks as well, since every
    rank's loss depends on every rank's input."""

    @staticmethod
    def forward(ctx, tensor):
        tensor = tensor.clone()
        dist.all_reduce(tensor)
        return tensor

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        dist.all_reduce(grad)
        return grad


class GlobalBatchNorm1d(nn.BatchNorm1d):
    """BatchNorm1d whose training statistics cover the samples of all ranks (as SyncBatchNorm's)."""

    def forward(self, x):
        if not self.training:
            return super().forward(x)
        count = torch.full((1,), float(x.shape[0]), device=x.device)
        sums = torch.cat([x.sum(dim=0), (x * x).sum(dim=0), count])
        sums = AllReduceSum.apply(sums)   # the backward pass all-reduces too
        c = x.shape[1]
        mean = sums[:c] / sums[-1]
        var = sums[c:2 * c] / sums[-1] - mean * mean   # biased, as BatchNorm normalizes
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


def bn_model(norm=nn.BatchNorm1d) -> nn.Module:
    return nn.Sequential(nn.Linear(NUM_FEATURES, 32), norm(32), nn.ReLU(), nn.Linear(32, NUM_CLASSES))


def flat_grad(model) -> torch.Tensor:
    return torch.cat([p.grad.flatten() for p in model.parameters()]).cpu()


def batchnorm_gaps(ctx, args, features, labels) -> dict:
    """max |DDP gradient - one process's gradient on the global batch|, per kind of BatchNorm."""
    index = global_batch(0, 2 * ctx.world_size * args.batch_size, args.seed)
    mine = index[ctx.rank::ctx.world_size]
    torch.manual_seed(args.seed)
    reference = bn_model().to(ctx.device)            # one process, the whole global batch
    F.cross_entropy(reference(features[index]), labels[index]).backward()
    kinds = {"BatchNorm1d": bn_model()}
    if ctx.device.type == "cuda":
        kinds["SyncBatchNorm"] = nn.SyncBatchNorm.convert_sync_batchnorm(bn_model())
    else:
        kinds["GlobalBatchNorm1d"] = bn_model(GlobalBatchNorm1d)
    gaps = {}
    for name, model in kinds.items():
        model.load_state_dict(reference.state_dict())   # the same start as the reference
        model = DDP(model.to(ctx.device), device_ids=ddp_device_ids(ctx))
        F.cross_entropy(model(features[mine]), labels[mine]).backward()
        gaps[name] = (flat_grad(model.module) - flat_grad(reference)).abs().max().item()
    return gaps


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--accum", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=4, help="per rank and micro-batch")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    ctx = setup()
    features, labels = (t.to(ctx.device) for t in make_data(args.seed))
    if ctx.is_main:
        print(f"torch {torch.__version__} | backend {ctx.backend} | world size {ctx.world_size}", flush=True)

    every, n_every = train_accumulating(ctx, args, features, labels, use_no_sync=False)
    no_sync, n_no_sync = train_accumulating(ctx, args, features, labels, use_no_sync=True)
    gap = max((a - b).abs().max().item() for a, b in zip(every.parameters(), no_sync.parameters()))
    gaps = batchnorm_gaps(ctx, args, features, labels)
    if ctx.is_main:
        print(f"{args.steps} steps of {args.accum} micro-batches: all-reduces {n_every} without"
              f" no_sync, {n_no_sync} with it", flush=True)
        print(f"max |weights without no_sync - weights with it|: {gap:.1e}", flush=True)
        for name, value in gaps.items():
            print(f"{name}: max |DDP gradient - one process's on the global batch|: {value:.1e}",
                  flush=True)
    if args.out_dir is not None:
        write_rank_report(args.out_dir, ctx, allreduces={"every": n_every, "no_sync": n_no_sync},
                          weight_gap=gap, bn_gaps=gaps, params_sha256=params_hash(no_sync))
        if ctx.is_main:
            torch.save(no_sync.state_dict(), args.out_dir / "no_sync.pt")
    del every, no_sync
    teardown(ctx)


if __name__ == "__main__":
    main()
