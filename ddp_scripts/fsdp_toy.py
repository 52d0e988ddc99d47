"""Shard an MLP over the processes with FSDP2 (`fully_shard`), train it, save a full checkpoint.

Run it from the repository root (CPU-only machine, or any number of GPUs):

    torchrun --standalone --nproc_per_node=2 ddp_scripts/fsdp_toy.py

The backend is nccl when every process can have its own GPU and gloo (CPU) otherwise, as in
toy_ddp.py (torchcourse.distributed). Each rank:
  1. builds the model on the meta device (shapes, no storage), calls fully_shard on each hidden
     Linear layer and then on the whole model (every parameter becomes a DTensor cut along dim 0,
     K pieces for K ranks), then allocates its own pieces only (to_empty) and fills them with
     init_weights: no rank ever holds the full model;
  2. counts the collectives of the first step's forward and backward pass (CommDebugMode) and
     the bytes of the full buffers they gather or reduce: FSDP all-gathers each unit's weights
     before using them and reduce-scatters its gradients;
  3. trains --steps AdamW steps; at each step the ranks split one global batch of
     --global-batch samples (rank k takes samples k, k+K, ...);
  4. counts one forward and one backward pass again with reshard_after_forward=True on every
     unit (weights freed after forward, gathered again for backward) and with False (kept);
     with --compare-ddp, also the all-reduces of one DDP step on a full replica;
  5. gathers the full state dict on rank 0 (get_model_state_dict with full_state_dict=True,
     cpu_offload=True), which saves DIR/model.pt, a plain state dict that loads into
     make_model() without FSDP; then every rank loads it back into a freshly sharded model,
     also built on the meta device (broadcast from rank 0), and checks that its shards are the
     trained ones.

Options: --steps 6  --global-batch 16  --lr 0.01  --seed 0  --out-dir DIR  --bf16 | --both  --compare-ddp
  --bf16     fully_shard(..., mp_policy=MixedPrecisionPolicy(param_dtype=bfloat16,
             reduce_dtype=float32)): weights gathered and used in bf16, gradients reduced in
             fp32, the sharded weights and AdamW's state stay fp32.
  --both     all of the above twice in the same processes: in fp32, then with --bf16's policy.
             Starting the processes and importing torch cost more than this training, so
             chapter 10 and tests/test_fsdp.py launch once for both. Rank 0 prints a line
             "== fp32: ..." or "== bf16: ..." before each run's lines.
  --out-dir  each rank writes DIR/rank<N>.json (bytes before and after sharding, collectives,
             losses, a hash of its local shards); rank 0 saves DIR/model.pt. With --both,
             each run writes its own folder, DIR/fp32 and DIR/bf16.
             tests/test_fsdp.py and chapter 10 read these files.
"""
import argparse
import hashlib
import warnings
from collections import Counter, defaultdict
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.distributed.checkpoint.state_dict import (StateDictOptions, get_model_state_dict,
                                                     set_model_state_dict)
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor import DTensor
from torch.distributed.tensor.debug import CommDebugMode
from torch.nn.parallel import DistributedDataParallel as DDP

from torchcourse.distributed import ddp_device_ids, setup, teardown, write_rank_report
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


def loss_of(model: nn.Module, features, labels) -> torch.Tensor:
    """Cross-entropy in fp32, even when the model computes in bf16 (--bf16)."""
    return F.cross_entropy(model(features).float(), labels)


def nbytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def local(tensor: torch.Tensor) -> torch.Tensor:
    """The part of a tensor this rank stores: its shard for a DTensor, the tensor otherwise."""
    return tensor.to_local() if isinstance(tensor, DTensor) else tensor


def stored_rows(param: torch.Tensor) -> range:
    """Indices (along dim 0) of the rows of `param` that this rank stores. fully_shard cuts
    dim 0 as torch.chunk does: pieces of ceil(n / K) rows, the last ones shorter or empty."""
    n = param.shape[0]
    if not isinstance(param, DTensor):
        return range(n)
    piece = -(-n // param.device_mesh.size())
    start = min(n, param.device_mesh.get_local_rank() * piece)
    return range(start, min(n, start + piece))


@torch.no_grad()
def init_weights(model: nn.Module, seed: int) -> int:
    """nn.Linear's default distribution, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), drawn row by row,
    each row from its own generator seeded by (seed, parameter, row). A rank draws only the rows
    it stores, and the values do not depend on the number of ranks: the same model as on one
    process. Works on a plain model as well. Returns the bytes of the largest row drawn."""
    largest = 0
    for number, (name, param) in enumerate(model.named_parameters()):
        bound = model.get_submodule(name.rpartition(".")[0]).in_features ** -0.5
        shard, rows = local(param), stored_rows(param)
        assert len(rows) == shard.shape[0] and param.shape[0] < 10_000
        for i, row in enumerate(rows):
            generator = torch.Generator().manual_seed(seed * 1_000_000 + number * 10_000 + row)
            values = torch.rand(shard.shape[1:], generator=generator) * (2 * bound) - bound
            shard[i].copy_(values)
            largest = max(largest, nbytes([values]))
    return largest


def shard(model: nn.Module, mesh, mp_policy: MixedPrecisionPolicy) -> nn.Module:
    """fully_shard each hidden Linear layer (a unit that is gathered and freed on its own), then
    the root, which takes the parameters left over: the output layer's. By default FSDP2 frees
    every unit's gathered weights after its forward pass, except the root's, which backward
    needs first."""
    for layer in model.layers[:-1]:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh, mp_policy=mp_policy)
    return fully_shard(model, mesh=mesh, mp_policy=mp_policy)


def sharded_on_meta(mesh, device, mp_policy) -> nn.Module:
    """A sharded model whose parameters take no memory until to_empty: only this rank's shards
    are then allocated (uninitialised)."""
    with torch.device("meta"):
        model = make_model()
    shard(model, mesh, mp_policy)
    assert all(p.is_meta for p in model.parameters())
    return model.to_empty(device=device)


class CommCounter(CommDebugMode):
    """CommDebugMode that also records, for each collective, the bytes and dtype of its largest
    tensor: the full buffer that an all-gather fills or a reduce-scatter or all-reduce reduces."""

    def __init__(self):
        super().__init__()
        self.payload, self.dtypes = Counter(), defaultdict(set)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        before = sum(self.comm_counts.values())
        out = super().__torch_dispatch__(func, types, args, kwargs)
        if sum(self.comm_counts.values()) > before:   # CommDebugMode counted a collective
            tensors = [t for a in args for t in (a if isinstance(a, (list, tuple)) else [a])
                       if isinstance(t, torch.Tensor)]
            largest = max(tensors, key=lambda t: t.numel() * t.element_size())
            name = str(func._overloadpacket).split(".")[-1]
            self.payload[name] += nbytes([largest])
            self.dtypes[name].add(str(largest.dtype).replace("torch.", ""))
        return out

    def summary(self) -> dict:
        """{'_allgather_base_': {'count': 3, 'bytes': 42768, 'dtypes': ['float32']}, ...}"""
        counts = {str(op).split(".")[-1]: n for op, n in self.get_comm_counts().items()}
        return {name: {"count": n, "bytes": self.payload[name], "dtypes": sorted(self.dtypes[name])}
                for name, n in sorted(counts.items())}


def counted_step(model: nn.Module, features, labels):
    """One forward and one backward pass under CommCounter. Also returns the bytes of the
    weights still gathered between them (unsharded parameters are plain tensors, not DTensors)
    and the dtype of the first layer's weight as the layer runs (after FSDP's gathering hook)."""
    forward, backward, seen = CommCounter(), CommCounter(), []
    hook = model.layers[0].register_forward_pre_hook(lambda layer, _: seen.append(layer.weight.dtype))
    with forward, warnings.catch_warnings():
        # Under CommDebugMode the model's output is a view, and FSDP2 warns that an in-place op
        # on it would skip a hook (without the mode it is no view); no in-place op follows.
        warnings.filterwarnings("ignore", message="FSDP2-wrapped module .* view tensor")
        loss = loss_of(model, features, labels)
    hook.remove()
    held = nbytes(p for p in model.parameters() if not isinstance(p, DTensor))
    with backward:
        loss.backward()     # reduce-scatter: each rank receives the averaged gradient of its shard
    return loss, {"forward": forward.summary(), "backward": backward.summary(),
                  "gathered_between": held, "weight_dtype_in_forward": str(seen[0]).replace("torch.", "")}


def ddp_comms(ctx, features, labels, seed: int) -> dict:
    """All-reduces of one DDP step (fp32), for comparison: DDP keeps a full replica on every rank."""
    model = make_model()
    init_weights(model, seed)
    model = DDP(model.to(ctx.device), device_ids=ddp_device_ids(ctx))
    sent = {"count": 0, "bytes": 0}   # of the gradient buckets all-reduced

    def counting_hook(state, bucket):   # DDP's all-reduce runs in C++, out of CommDebugMode's sight
        sent["count"] += 1
        sent["bytes"] += nbytes([bucket.buffer()])
        return allreduce_hook(None, bucket)   # None: the default process group

    model.register_comm_hook(None, counting_hook)
    loss_of(model, features, labels).backward()
    return {"forward": {}, "gathered_between": nbytes(model.parameters()),   # always all of it
            "backward": {"allreduce_": {"count": sent["count"], "bytes": sent["bytes"],
                                        "dtypes": ["float32"]}}}


def describe(phase: dict) -> str:
    names = {"_allgather_base_": "all-gather", "_reduce_scatter_base_": "reduce-scatter",
             "allreduce_": "all-reduce"}
    return " + ".join(f"{c['count']} {names.get(op, op)} {c['bytes']:,} B {'/'.join(c['dtypes'])}"
                      for op, c in phase.items()) or "none"


PRECISIONS = {"fp32": "weights gathered and used in fp32, gradients reduced in fp32",
              "bf16": "weights gathered and used in bf16, gradients reduced in fp32"}


def train(ctx, args, mesh, bf16: bool, out_dir) -> None:
    """One run: build, shard, train, count, save and reload; bf16 selects --bf16's policy."""
    if ctx.is_main:
        precision = "bf16" if bf16 else "fp32"
        print(f"== {precision}: {PRECISIONS[precision]}", flush=True)
    mp_policy = (MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
                 if bf16 else MixedPrecisionPolicy())
    features, labels = make_data(args.seed)
    features, labels = features.to(ctx.device), labels.to(ctx.device)

    model = sharded_on_meta(mesh, ctx.device, mp_policy)
    bytes_full = nbytes(model.parameters())   # a DTensor reports its full (global) size
    numel_full = sum(p.numel() for p in model.parameters())
    bytes_after = nbytes(local(p) for p in model.parameters())
    numel_local = sum(local(p).numel() for p in model.parameters())
    # The most parameter memory this rank ever held: its shards, plus the row being drawn.
    init_peak = bytes_after + init_weights(model, args.seed)
    per_rank = [None] * ctx.world_size    # rank 0 prints every rank's numbers, in order
    dist.all_gather_object(per_rank, (bytes_after, numel_local, init_peak))
    if ctx.is_main:
        print(f"model built on the meta device: {bytes_full:,} B of parameters, none allocated",
              flush=True)
        for rank, (after, numel, peak) in enumerate(per_rank):
            print(f"rank {rank}: parameter bytes {after:,} after sharding ({numel:,} of"
                  f" {numel_full:,} parameters), at most {peak:,} while initialising", flush=True)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)  # its state is sharded too
    losses, comms = [], {}
    for step in range(args.steps):
        index = global_batch(step, args.global_batch, args.seed)[ctx.rank::ctx.world_size]
        optimizer.zero_grad()
        if step == 0:
            loss, comms["default"] = counted_step(model, features[index], labels[index])
        else:
            loss = loss_of(model, features[index], labels[index])
            loss.backward()
        optimizer.step()        # each rank updates its own shard only
        mean_loss = loss.detach().clone()
        dist.all_reduce(mean_loss)
        losses.append((mean_loss / ctx.world_size).item())
        if ctx.is_main:
            print(f"step {step + 1}/{args.steps} | mean loss over all ranks {losses[-1]:.4f}", flush=True)
    optimizer_bytes = nbytes(local(v) for s in optimizer.state.values() for v in s.values()
                             if torch.is_tensor(v) and v.ndim > 0)

    # The same pass with every unit resharded after forward (the root too), then with none;
    # no optimizer step follows, so the trained weights stay as they are.
    index = global_batch(0, args.global_batch, args.seed)[ctx.rank::ctx.world_size]
    for setting in (True, False):
        model.set_reshard_after_forward(setting)
        _, comms[str(setting).lower()] = counted_step(model, features[index], labels[index])
        model.zero_grad(set_to_none=True)
    if args.compare_ddp:
        comms["ddp"] = ddp_comms(ctx, features[index], labels[index], args.seed)
    if ctx.is_main:
        print("collectives of one forward and one backward pass on each rank"
              " (bytes: the full buffer gathered or reduced):", flush=True)
        for name, c in comms.items():
            label = {"default": "reshard_after_forward default (root False)",
                     "true": "reshard_after_forward=True", "false": "reshard_after_forward=False",
                     "ddp": "DDP"}[name]
            print(f"  {label}: forward {describe(c['forward'])}; backward {describe(c['backward'])};"
                  f" weights kept gathered in between {c['gathered_between']:,} B", flush=True)
        print(f"the layers ran with {comms['default']['weight_dtype_in_forward']} weights;"
              f" the shards the optimizer updates are"
              f" {str(local(next(model.parameters())).dtype).replace('torch.', '')}",
              flush=True)

    # Every rank takes part in gathering; with cpu_offload only rank 0 receives the full tensors.
    options = StateDictOptions(full_state_dict=True, cpu_offload=True)
    full_state = get_model_state_dict(model, options=options)
    checkpoint = None if out_dir is None else out_dir / "model.pt"
    if ctx.is_main and checkpoint is not None:
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        torch.save(full_state, checkpoint)
        print(f"saved {checkpoint} ({len(full_state)} tensors, the full model)", flush=True)

    # Load it back into a fresh sharded model, built on meta too (its shards uninitialised):
    # rank 0's full state dict is broadcast and each rank keeps its shard.
    restored = sharded_on_meta(mesh, ctx.device, mp_policy)
    set_model_state_dict(restored, full_state if ctx.is_main else {},
                         options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))
    reload_equal = all(torch.equal(local(a), local(b)) for a, b in
                       zip(model.parameters(), restored.parameters()))
    if ctx.is_main:
        print(f"checkpoint loaded back into a sharded model: shards equal on rank 0: {reload_equal}",
              flush=True)

    if out_dir is not None:
        write_rank_report(out_dir, ctx, built_on="meta", bytes_full=bytes_full,
                          bytes_after=bytes_after, init_peak_bytes=init_peak,
                          numel_full=numel_full, numel_local=numel_local,
                          optimizer_state_bytes=optimizer_bytes, bf16=bf16,
                          collectives=comms, losses=losses, shards_sha256=shards_hash(model),
                          reload_equal=reload_equal)


def shards_hash(model: nn.Module) -> str:
    """SHA-256 of this rank's shards of every parameter, in order."""
    digest = hashlib.sha256()
    for name, param in model.named_parameters():
        digest.update(name.encode())
        digest.update(local(param).detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
    return digest.hexdigest()


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--global-batch", type=int, default=16, help="all ranks together")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", type=Path, default=None)
    precision = parser.add_mutually_exclusive_group()
    precision.add_argument("--bf16", action="store_true", help="bf16 weights in compute, fp32 reduce")
    precision.add_argument("--both", action="store_true",
                           help="run in fp32, then with --bf16, in the same processes (DIR/fp32, DIR/bf16)")
    parser.add_argument("--compare-ddp", action="store_true",
                        help="also count one DDP step's all-reduces (on a full replica)")
    return parser


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    ctx = setup()
    if args.global_batch % ctx.world_size:
        raise SystemExit("--global-batch must be a multiple of the number of processes")
    if ctx.is_main:
        print(f"torch {torch.__version__} | backend {ctx.backend} | world size {ctx.world_size}"
              f" | device of rank 0: {ctx.device}", flush=True)
    # An explicit mesh: on a 1-GPU machine with 2 processes the backend is gloo, and the
    # parameters must then stay on the CPU even though CUDA exists.
    mesh = init_device_mesh(ctx.device.type, (ctx.world_size,))
    runs = [False, True] if args.both else [args.bf16]     # bf16 or not
    for bf16 in runs:
        out_dir = args.out_dir
        if args.both and out_dir is not None:
            out_dir = out_dir / ("bf16" if bf16 else "fp32")
        train(ctx, args, mesh, bf16, out_dir)   # returns before teardown: its models are released
    teardown(ctx)


if __name__ == "__main__":
    main()
