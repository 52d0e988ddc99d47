"""Shard an MLP over the processes with FSDP2 (`fully_shard`), train it, save a full checkpoint.

Run it from the repository root (CPU-only machine, or any number of GPUs):

    torchrun --standalone --nproc_per_node=2 ddp_scripts/fsdp_toy.py

The backend is nccl when every process can have its own GPU and gloo (CPU) otherwise, as in
toy_ddp.py (torchcourse.distributed). Each rank:
  1. builds the same model (same seed) and measures its parameter bytes;
  2. calls fully_shard on each hidden Linear layer, then on the whole model: every parameter
     becomes a DTensor of which this rank keeps about 1/K (K = world size); measures again;
  3. counts the collectives of one forward and one backward pass (CommDebugMode): FSDP
     all-gathers each layer's weights before using them and reduce-scatters its gradients;
  4. trains --steps AdamW steps; at each step the ranks split one global batch of
     --global-batch samples (rank k takes samples k, k+K, ...);
  5. gathers the full state dict on rank 0 (get_model_state_dict with full_state_dict=True,
     cpu_offload=True), which saves DIR/model.pt, a plain state dict that loads into
     make_model() without FSDP; then every rank loads it back into a freshly sharded model
     (broadcast from rank 0) and checks that its shards are the trained ones.

Options: --steps 6  --global-batch 16  --lr 0.01  --seed 0  --out-dir DIR
  --out-dir  each rank writes DIR/rank<N>.json (bytes before and after sharding, collective
             counts, losses, a hash of its local shards); rank 0 saves DIR/model.pt.
             tests/test_fsdp.py and chapter 10 read these files.
"""
import argparse
import contextlib
import hashlib
import warnings
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.checkpoint.state_dict import (StateDictOptions, get_model_state_dict,
                                                     set_model_state_dict)
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.debug import CommDebugMode

from torchcourse.distributed import setup, teardown, write_rank_report
from torchcourse.models import NeuralNetwork

NUM_SAMPLES, NUM_FEATURES, NUM_CLASSES = 256, 16, 4


def make_model() -> nn.Module:
    """The course's MLP, wider: 16 -> 128 -> 64 -> 4, 10,692 parameters."""
    return NeuralNetwork(NUM_FEATURES, NUM_CLASSES, hidden=(128, 64))


def make_data(seed: int):
    """A random classification problem, the same on every rank: labels from a random linear map."""
    generator = torch.Generator().manual_seed(seed)
    features = torch.randn(NUM_SAMPLES, NUM_FEATURES, generator=generator)
    labels = (features @ torch.randn(NUM_FEATURES, NUM_CLASSES, generator=generator)).argmax(dim=1)
    return features, labels


def global_batch(step: int, size: int, seed: int) -> torch.Tensor:
    """Indices of the samples of one step, for all ranks together."""
    generator = torch.Generator().manual_seed(seed * 1000 + step)
    return torch.randperm(NUM_SAMPLES, generator=generator)[:size]


def nbytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def local(tensor: torch.Tensor) -> torch.Tensor:
    """The part of a tensor this rank stores: its shard for a DTensor, the tensor otherwise."""
    return tensor.to_local() if hasattr(tensor, "to_local") else tensor


def shards_hash(model: nn.Module) -> str:
    """SHA-256 of this rank's shards of every parameter, in order."""
    digest = hashlib.sha256()
    for name, param in model.named_parameters():
        digest.update(name.encode())
        digest.update(local(param).detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
    return digest.hexdigest()


def collective_counts(mode: CommDebugMode) -> dict:
    """{'_allgather_base_': 3, ...}: how many times each c10d collective ran inside `mode`."""
    return {str(op).split(".")[-1]: n for op, n in mode.get_comm_counts().items()}


def shard(model: nn.Module, mesh) -> nn.Module:
    """fully_shard each hidden Linear layer (a unit that is gathered and freed on its own), then
    the root, which takes the parameters left over: the output layer's. FSDP2 keeps the root's
    gathered weights from the forward pass to the backward pass; the others it frees after use
    and gathers again for the backward pass."""
    for layer in model.layers[:-1]:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh)
    return fully_shard(model, mesh=mesh)


def train(ctx, args) -> None:
    if ctx.is_main:
        print(f"torch {torch.__version__} | backend {ctx.backend} | world size {ctx.world_size}"
              f" | device of rank 0: {ctx.device}", flush=True)
    # An explicit mesh: on a 1-GPU machine with 2 processes the backend is gloo, and the
    # parameters must then stay on the CPU even though CUDA exists.
    mesh = init_device_mesh(ctx.device.type, (ctx.world_size,))
    features, labels = make_data(args.seed)
    features, labels = features.to(ctx.device), labels.to(ctx.device)

    torch.manual_seed(args.seed)  # the same full model on every rank, before sharding
    model = make_model().to(ctx.device)
    bytes_before = nbytes(model.parameters())
    numel_full = sum(p.numel() for p in model.parameters())
    shard(model, mesh)
    bytes_after = nbytes(local(p) for p in model.parameters())
    numel_local = sum(local(p).numel() for p in model.parameters())
    per_rank = [None] * ctx.world_size    # rank 0 prints every rank's numbers, in order
    dist.all_gather_object(per_rank, (bytes_before, bytes_after, numel_local))
    if ctx.is_main:
        for rank, (before, after, numel) in enumerate(per_rank):
            print(f"rank {rank}: parameter bytes {before:,} before sharding, {after:,} after"
                  f" ({numel:,} of {numel_full:,} parameters)", flush=True)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)  # its state is sharded too
    losses = []
    forward_comms, backward_comms = CommDebugMode(), CommDebugMode()   # used in the first step
    for step in range(args.steps):
        index = global_batch(step, args.global_batch, args.seed)[ctx.rank::ctx.world_size]
        with forward_comms if step == 0 else contextlib.nullcontext(), warnings.catch_warnings():
            # Under CommDebugMode the model's output is a view, and FSDP2 warns that an in-place
            # op on it would skip a hook (without the mode it is no view); no in-place op follows.
            warnings.filterwarnings("ignore", message="FSDP2-wrapped module .* view tensor")
            loss = F.cross_entropy(model(features[index]), labels[index])
        optimizer.zero_grad()
        with backward_comms if step == 0 else contextlib.nullcontext():
            loss.backward()     # reduce-scatter: each rank receives the averaged gradient of its shard
        optimizer.step()        # each rank updates its own shard only
        mean_loss = loss.detach().clone()
        dist.all_reduce(mean_loss)
        losses.append((mean_loss / ctx.world_size).item())
        if ctx.is_main:
            print(f"step {step + 1}/{args.steps} | mean loss over all ranks {losses[-1]:.4f}", flush=True)
    counts = {"forward": collective_counts(forward_comms),
              "backward": collective_counts(backward_comms)}
    if ctx.is_main:
        print(f"collectives in the first step on each rank: forward {counts['forward']},"
              f" backward {counts['backward']}", flush=True)
    optimizer_bytes = nbytes(local(v) for s in optimizer.state.values() for v in s.values()
                             if torch.is_tensor(v) and v.ndim > 0)

    # Every rank takes part in gathering; with cpu_offload only rank 0 receives the full tensors.
    options = StateDictOptions(full_state_dict=True, cpu_offload=True)
    full_state = get_model_state_dict(model, options=options)
    checkpoint = None if args.out_dir is None else args.out_dir / "model.pt"
    if ctx.is_main and checkpoint is not None:
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        torch.save(full_state, checkpoint)
        print(f"saved {checkpoint} ({len(full_state)} tensors, the full model)", flush=True)

    # Load it back: a fresh model, other weights, sharded the same way; rank 0's full state
    # dict is broadcast and each rank keeps its shard.
    torch.manual_seed(args.seed + 1)
    restored = shard(make_model().to(ctx.device), mesh)
    set_model_state_dict(restored, full_state if ctx.is_main else {},
                         options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))
    reload_equal = all(torch.equal(local(a), local(b)) for a, b in
                       zip(model.parameters(), restored.parameters()))
    if ctx.is_main:
        print(f"checkpoint loaded back into a sharded model: shards equal on rank 0: {reload_equal}",
              flush=True)

    if args.out_dir is not None:
        write_rank_report(args.out_dir, ctx, bytes_before=bytes_before, bytes_after=bytes_after,
                          numel_full=numel_full, numel_local=numel_local,
                          optimizer_state_bytes=optimizer_bytes, collectives=counts,
                          losses=losses, shards_sha256=shards_hash(model),
                          reload_equal=reload_equal)


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--global-batch", type=int, default=16, help="all ranks together")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", type=Path, default=None)
    return parser


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    ctx = setup()
    if args.global_batch % ctx.world_size:
        raise SystemExit("--global-batch must be a multiple of the number of processes")
    train(ctx, args)   # returns before teardown, so the sharded models are already released
    teardown(ctx)


if __name__ == "__main__":
    main()
