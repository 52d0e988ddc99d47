"""ddp_scripts/fsdp_toy.py (FSDP2's fully_shard) and ddp_scripts/ddp_no_sync_bn.py (no_sync and
BatchNorm over ranks), run for real with 2 CPU processes (gloo), and compared with one process
training on the same global batches.
"""
import re

import pytest
import torch
import torch.nn.functional as F

from test_ddp import load_script, read_reports, run_script
from torchcourse.models import NeuralNetwork

FSDP_ARGS = dict(steps=4, global_batch=16, lr=0.01, seed=3)
NO_SYNC_ARGS = dict(steps=2, accum=3, batch_size=4, lr=0.1, seed=5)


def as_options(args: dict) -> list:
    return [f"--{k.replace('_', '-')}={v}" for k, v in args.items()]


@pytest.fixture(scope="module")
def fsdp_runs(tmp_path_factory):
    """fp32 and bf16 in one launch (--both: 14 CPU-s here, where two launches cost 26 to 28):
    {"fp32": (what rank 0 printed for that run, its folder, its reports), "bf16": (...)}."""
    out_dir = tmp_path_factory.mktemp("fsdp")
    proc = run_script("fsdp_toy.py", *as_options(FSDP_ARGS), "--both", "--compare-ddp", "--out-dir", out_dir)
    parts = re.split(r"^== (fp32|bf16): .*$", proc.stdout, flags=re.MULTILINE)
    assert parts[1::2] == ["fp32", "bf16"], f"one run in fp32, then one in bf16:\n{proc.stdout}"
    fp32, bf16 = parts[2::2]
    return {"fp32": (fp32, out_dir / "fp32", read_reports(out_dir / "fp32")),
            "bf16": (bf16, out_dir / "bf16", read_reports(out_dir / "bf16"))}


@pytest.fixture(scope="module")
def fsdp_run(fsdp_runs):
    return fsdp_runs["fp32"]


@pytest.fixture(scope="module")
def bf16_run(fsdp_runs):
    return fsdp_runs["bf16"]


def test_bf16_alone_or_both_precisions_but_not_both_options():
    """--bf16 alone is one bf16 run (make gpu-check launches it so); --both runs fp32, then bf16."""
    parser = load_script("fsdp_toy").build_parser()
    assert parser.parse_args(["--bf16"]).bf16 and not parser.parse_args(["--bf16"]).both
    assert parser.parse_args(["--both"]).both
    with pytest.raises(SystemExit):
        parser.parse_args(["--bf16", "--both"])


def one_process_fsdp_training():
    """What fsdp_toy.py trains, in one process without FSDP: every step on the whole global batch."""
    script = load_script("fsdp_toy")
    features, labels = script.make_data(FSDP_ARGS["seed"])
    model = script.make_model()
    script.init_weights(model, FSDP_ARGS["seed"])   # on a plain model: every row
    optimizer = torch.optim.AdamW(model.parameters(), lr=FSDP_ARGS["lr"])
    losses = []
    for step in range(FSDP_ARGS["steps"]):
        index = script.global_batch(step, FSDP_ARGS["global_batch"], FSDP_ARGS["seed"])
        loss = F.cross_entropy(model(features[index]), labels[index])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses


def test_each_rank_keeps_half_of_the_parameters_and_of_the_optimizer_state(fsdp_run):
    output, _, reports = fsdp_run
    full = reports[0]["bytes_full"]
    assert full == 4 * reports[0]["numel_full"] and all(r["bytes_full"] == full for r in reports)
    assert sum(r["bytes_after"] for r in reports) == full, "the shards together are the model"
    for r in reports:
        assert 0.45 * full <= r["bytes_after"] <= 0.55 * full, f"rank {r['rank']} keeps {r['bytes_after']} of {full} B"
        assert r["optimizer_state_bytes"] == 2 * r["bytes_after"], "AdamW's two moments, of the shard only"
    assert output.count("after sharding") == 2, "rank 0 prints one line per rank"


def test_no_rank_ever_holds_the_full_model(fsdp_run):
    _, _, reports = fsdp_run
    for r in reports:
        assert r["built_on"] == "meta"
        # its shards, plus one row of the widest layer (128 floats) while initialising
        assert r["bytes_after"] < r["init_peak_bytes"] <= r["bytes_after"] + 4 * 128
        assert r["init_peak_bytes"] < 0.55 * r["bytes_full"]


def test_init_weights_is_reproducible_and_draws_like_nn_linear():
    """(That 2 ranks draw the same model as one process: test_fsdp_matches_one_process_training.)"""
    script = load_script("fsdp_toy")
    model, again = script.make_model(), script.make_model()
    script.init_weights(model, 3)
    script.init_weights(again, 3)
    for (name, a), b in zip(model.named_parameters(), again.parameters()):
        assert torch.equal(a, b), "not reproducible"
        bound = model.get_submodule(name.rpartition(".")[0]).in_features ** -0.5
        assert a.abs().max() <= bound, f"{name}: outside nn.Linear's U(-b, b)"
        if a.numel() >= 64:
            assert a.abs().max() > 0.9 * bound, f"{name}: narrower than nn.Linear's U(-b, b)"
            assert a.unique().numel() > 0.99 * a.numel(), f"{name}: rows repeat"


def test_forward_gathers_every_unit_and_backward_reduce_scatters_every_gradient(fsdp_run):
    _, _, reports = fsdp_run
    full, output_layer = reports[0]["bytes_full"], 4 * (64 * 4 + 4)
    for r in reports:   # 2 hidden layers and the root (the output layer): 3 units
        c = r["collectives"]
        for setting in ("default", "true", "false"):
            assert c[setting]["forward"] == {"_allgather_base_": {"count": 3, "bytes": full, "dtypes": ["float32"]}}
            assert c[setting]["backward"]["_reduce_scatter_base_"] == {"count": 3, "bytes": full, "dtypes": ["float32"]}
        # by default the root keeps its gathered weights for the backward pass: 2 gathers, not 3
        assert c["default"]["backward"]["_allgather_base_"] == {"count": 2, "bytes": full - output_layer, "dtypes": ["float32"]}
        assert c["default"]["gathered_between"] == output_layer


def test_reshard_after_forward_trades_memory_for_a_second_all_gather(fsdp_run):
    _, _, reports = fsdp_run
    full = reports[0]["bytes_full"]
    for r in reports:
        true, false = r["collectives"]["true"], r["collectives"]["false"]
        assert true["backward"]["_allgather_base_"]["count"] == 3 and true["gathered_between"] == 0
        assert "_allgather_base_" not in false["backward"] and false["gathered_between"] == full


def test_fsdp_traffic_is_1_5_ddp_with_resharding_and_equal_without(fsdp_run):
    _, _, reports = fsdp_run
    k = reports[0]["world_size"]

    def ring_bytes(*phases):
        """Bytes one rank sends in rings (section 7): (K-1)/K of each all-gather's or
        reduce-scatter's buffer, 2(K-1)/K of each all-reduce's."""
        return sum(c["bytes"] * (k - 1) / k * (2 if op == "allreduce_" else 1)
                   for phase in phases for op, c in phase.items())

    for r in reports:
        c = r["collectives"]
        assert c["ddp"]["backward"] == {"allreduce_": {"count": 1, "bytes": r["bytes_full"], "dtypes": ["float32"]}}
        assert not c["ddp"]["forward"]
        ddp = ring_bytes(c["ddp"]["backward"])
        assert ring_bytes(c["true"]["forward"], c["true"]["backward"]) == pytest.approx(1.5 * ddp)
        assert ring_bytes(c["false"]["forward"], c["false"]["backward"]) == pytest.approx(ddp)
        assert ddp < ring_bytes(c["default"]["forward"], c["default"]["backward"]) < 1.5 * ddp


def test_fsdp_matches_one_process_training_on_the_global_batch(fsdp_run):
    _, out_dir, reports = fsdp_run
    model, losses = one_process_fsdp_training()
    for r in reports:
        torch.testing.assert_close(r["losses"], losses, rtol=1e-5, atol=1e-6)
    state = torch.load(out_dir / "model.pt", weights_only=True)
    for name, value in model.state_dict().items():
        torch.testing.assert_close(state[name], value, rtol=1e-5, atol=1e-6)


def test_the_full_checkpoint_loads_into_a_plain_model_and_holds_the_trained_shards(fsdp_run):
    output, out_dir, reports = fsdp_run
    assert output.count("saved ") == 1, "only rank 0 saves"
    model = load_script("fsdp_toy").make_model()
    model.load_state_dict(torch.load(out_dir / "model.pt", weights_only=True))  # strict
    for r in reports:
        # fully_shard cuts every parameter along dim 0 into world-size pieces, rank k keeps piece k
        sharded = NeuralNetwork(16, 4, hidden=(128, 64))
        for (_, plain), (_, piece) in zip(model.named_parameters(), sharded.named_parameters()):
            piece.data = plain.detach().chunk(r["world_size"], dim=0)[r["rank"]].clone()
        assert load_script("fsdp_toy").shards_hash(sharded) == r["shards_sha256"], f"rank {r['rank']}"
        assert r["reload_equal"], "loading the checkpoint back into a sharded model changed the shards"


def test_bf16_policy_gathers_and_computes_in_bf16_and_reduces_in_fp32(bf16_run, fsdp_run):
    output, out_dir, reports = bf16_run
    fp32 = fsdp_run[2]
    full = reports[0]["bytes_full"]
    assert output.count("saved ") == 1 and output.count("after sharding") == 2, output
    for r, plain in zip(reports, fp32):
        assert r["bf16"] and not plain["bf16"]
        for setting in ("default", "true", "false"):
            c = r["collectives"][setting]
            assert c["weight_dtype_in_forward"] == "bfloat16"
            assert plain["collectives"][setting]["weight_dtype_in_forward"] == "float32"
            assert c["forward"]["_allgather_base_"] == {"count": 3, "bytes": full // 2, "dtypes": ["bfloat16"]}
            assert c["backward"]["_reduce_scatter_base_"] == {"count": 3, "bytes": full, "dtypes": ["float32"]}
        # the shards, AdamW's state and the checkpoint stay fp32
        assert r["bytes_after"] == plain["bytes_after"] and r["optimizer_state_bytes"] == 2 * r["bytes_after"]
        assert r["reload_equal"]
        # bf16 rounding moves the losses a little, not the training
        torch.testing.assert_close(r["losses"], plain["losses"], rtol=2e-2, atol=0)
        assert r["losses"] != plain["losses"], "bf16 changed nothing: was the policy applied?"
    state = torch.load(out_dir / "model.pt", weights_only=True)
    assert all(v.dtype == torch.float32 for v in state.values())


@pytest.fixture(scope="module")
def no_sync_run(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("no_sync")
    proc = run_script("ddp_no_sync_bn.py", *as_options(NO_SYNC_ARGS), "--out-dir", out_dir)
    return proc, out_dir, read_reports(out_dir)


def test_no_sync_all_reduces_once_per_step_and_changes_nothing_else(no_sync_run):
    _, out_dir, reports = no_sync_run
    steps, accum = NO_SYNC_ARGS["steps"], NO_SYNC_ARGS["accum"]
    assert len({r["params_sha256"] for r in reports}) == 1, "replicas diverged"
    for r in reports:
        assert r["allreduces"] == {"every": steps * accum, "no_sync": steps}
        assert r["weight_gap"] < 1e-6
    # one process, one step per global batch of accum micro-batches of both ranks
    script = load_script("fsdp_toy")
    features, labels = script.make_data(NO_SYNC_ARGS["seed"])
    torch.manual_seed(NO_SYNC_ARGS["seed"])
    model = NeuralNetwork(16, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=NO_SYNC_ARGS["lr"])
    for step in range(steps):
        index = script.global_batch(step, accum * 2 * NO_SYNC_ARGS["batch_size"], NO_SYNC_ARGS["seed"])
        optimizer.zero_grad()
        F.cross_entropy(model(features[index]), labels[index]).backward()
        optimizer.step()
    state = torch.load(out_dir / "no_sync.pt", weights_only=True)
    for name, value in model.state_dict().items():
        torch.testing.assert_close(state[name], value, rtol=1e-5, atol=1e-6)


def test_batchnorm_needs_global_statistics_to_match_the_global_batch(no_sync_run):
    _, _, reports = no_sync_run
    for r in reports:
        assert r["bn_gaps"]["BatchNorm1d"] > 1e-3, "per-rank statistics should change the gradient"
        assert r["bn_gaps"]["GlobalBatchNorm1d"] < 1e-5
