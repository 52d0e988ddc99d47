"""Unit tests for the reference helpers that chapters 04-06 and ddp_scripts import from torchcourse."""
import random

import numpy as np
import torch
from torch import nn

from torchcourse.data import ToyDataset, seeded_loader, toy_data, toy_loaders
from torchcourse.models import NeuralNetwork
from torchcourse.training import accuracy, load_checkpoint, predict, save_checkpoint, train_step


def _epoch(loader):
    return [y.tolist() for _, y in loader]


def test_seeded_loader_depends_only_on_its_seed():
    ds = ToyDataset(torch.arange(10.0).unsqueeze(1), torch.arange(10))
    a = seeded_loader(ds, 3, seed=5)
    torch.manual_seed(0)
    first = [_epoch(a) for _ in range(3)]
    b = seeded_loader(ds, 3, seed=5)
    torch.rand(7)  # other code drawing from the global generator must not matter
    assert [_epoch(b) for _ in range(3)] == first
    assert first[0] != first[1], "epochs are reshuffled"
    assert len(a) == 3 and all(len(batch) == 3 for batch in first[0])  # drop_last


def test_toy_loaders_shapes():
    train, test = toy_loaders(batch_size=2, seed=123)
    assert len(train) == 2 and len(test) == 1
    (_, _), (_, y_test) = toy_data()
    assert torch.equal(next(iter(test))[1], y_test)


def test_predict_restores_mode_and_disables_dropout():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 8), nn.Dropout(0.5), nn.Linear(8, 3)).train()
    x = torch.randn(50, 2)
    labels = predict(net, x)
    assert net.training and labels.shape == (50,) and labels.dtype == torch.int64
    assert torch.equal(labels, predict(net, x))


def test_accuracy_counts_examples_not_batches():
    net = nn.Linear(1, 2, bias=False)
    with torch.no_grad():
        net.weight.copy_(torch.tensor([[-1.0], [1.0]]))
    x = torch.tensor([[1.0], [2.0], [3.0], [-1.0], [-2.0], [-3.0], [4.0]])
    y = torch.ones(7, dtype=torch.long)
    loader = torch.utils.data.DataLoader(ToyDataset(x, y), batch_size=3)
    assert abs(accuracy(net, loader) - 4 / 7) < 1e-9


def test_checkpoint_resumes_exactly(tmp_path):
    torch.manual_seed(1)
    x, y = torch.randn(32, 2), torch.randint(0, 2, (32,))

    def run(model, opt, start, stop):
        for step in range(start, stop):
            index = torch.randint(0, 32, (8,), generator=torch.Generator().manual_seed(step))
            train_step(model, opt, x[index], y[index])

    torch.manual_seed(0)
    straight = NeuralNetwork(2, 2)
    straight_opt = torch.optim.Adam(straight.parameters(), lr=0.01)
    run(straight, straight_opt, 0, 10)

    torch.manual_seed(0)
    first = NeuralNetwork(2, 2)
    first_opt = torch.optim.Adam(first.parameters(), lr=0.01)
    run(first, first_opt, 0, 4)
    save_checkpoint(tmp_path / "c.pt", first, first_opt, step=4, epoch=1)

    fresh = NeuralNetwork(2, 2)
    fresh_opt = torch.optim.Adam(fresh.parameters(), lr=0.3)
    checkpoint = load_checkpoint(tmp_path / "c.pt", fresh, fresh_opt)
    assert checkpoint["step"] == 4 and checkpoint["epoch"] == 1
    run(fresh, fresh_opt, checkpoint["step"], 10)
    assert all(torch.equal(p, q) for p, q in zip(straight.parameters(), fresh.parameters()))


def _draws():
    """What the generators a training run draws from (augmentation, shuffling, dropout) give next."""
    return random.random(), np.random.rand(3).tolist(), np.random.randn(), torch.rand(4).tolist()


def test_checkpoint_restores_every_random_generator(tmp_path):
    """Python's, NumPy's (a cached Gaussian included) and PyTorch's: what a resumed run draws next is
    what the run that saved would have drawn. Before, only PyTorch's came back."""
    net = nn.Linear(2, 2)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    random.seed(3), np.random.seed(3), torch.manual_seed(3)
    np.random.randn()          # NumPy now holds the second Gaussian of a pair in its state
    save_checkpoint(tmp_path / "r.pt", net, opt, step=0)
    expected = _draws()
    _draws(), _draws()
    load_checkpoint(tmp_path / "r.pt", net, opt)
    assert _draws() == expected
    load_checkpoint(tmp_path / "r.pt", net, opt, restore_rng=False)
    assert _draws() != expected


def test_checkpoint_restores_the_scheduler_and_the_grad_scaler(tmp_path):
    net = nn.Linear(2, 2)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    for _ in range(3):
        opt.step()
        scheduler.step()
    scaler.scale(torch.ones(()))     # its scale exists from the first scaled loss on
    scaler.update(new_scale=256.0)
    save_checkpoint(tmp_path / "s.pt", net, opt, step=3, scheduler=scheduler, scaler=scaler)
    fresh_opt = torch.optim.SGD(net.parameters(), lr=0.1)
    fresh_scheduler = torch.optim.lr_scheduler.StepLR(fresh_opt, step_size=2, gamma=0.5)
    fresh_scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    load_checkpoint(tmp_path / "s.pt", net, fresh_opt, scheduler=fresh_scheduler, scaler=fresh_scaler)
    assert fresh_scheduler.last_epoch == 3 and fresh_scheduler.get_last_lr() == scheduler.get_last_lr() == [0.05]
    assert fresh_scaler.get_scale() == 256.0


def test_a_checkpoint_of_a_run_that_never_used_cuda_asks_nothing_of_cuda(tmp_path, monkeypatch):
    """On a GPU machine, torch.cuda.get_rng_state_all() starts a CUDA context (hundreds of MB of GPU
    memory) in a process that never used the GPU: a CPU-only run must not ask for it. Here the GPU is
    faked: CUDA is available, not initialised, and asking for its states fails."""
    def started_cuda():
        raise AssertionError("save_checkpoint asked for the CUDA generators of a run that never used CUDA")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    monkeypatch.setattr(torch.cuda, "get_rng_state_all", started_cuda)
    net = nn.Linear(2, 2)
    save_checkpoint(tmp_path / "c.pt", net, torch.optim.SGD(net.parameters(), lr=0.1), step=0)
    assert "cuda_rng_states" not in torch.load(tmp_path / "c.pt", weights_only=True)


def test_toy_loaders_on_the_global_generator_reproduce_the_book():
    """seed=None shuffles as the book appendix does; its training listing prints these losses."""
    train, _ = toy_loaders(batch_size=2, seed=None)
    torch.manual_seed(123)
    model = NeuralNetwork(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    losses = [train_step(model, optimizer, x, y) for _ in range(3) for x, y in train]
    assert [f"{v:.2f}" for v in losses] == ["0.75", "0.65", "0.44", "0.13", "0.03", "0.00"]
    (X_train, _), _ = toy_data()
    torch.testing.assert_close(predict(model, X_train), torch.tensor([0, 0, 0, 1, 1]))
    with torch.no_grad():
        logits = model(X_train)
    torch.testing.assert_close(logits[0], torch.tensor([2.8569, -4.1618]), atol=1e-4, rtol=0)


def test_checkpoint_loads_onto_another_device(tmp_path):
    """map_location moves every tensor of the file; the CPU RNG state must still come back as a CPU
    ByteTensor (torch.set_rng_state takes nothing else). "meta" stands in for a GPU here."""
    torch.manual_seed(5)
    net = NeuralNetwork(2, 2)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    train_step(net, opt, torch.randn(4, 2), torch.tensor([0, 1, 1, 0]))
    save_checkpoint(tmp_path / "m.pt", net, opt, step=1)
    expected = torch.rand(4)
    torch.rand(100)
    on_meta = NeuralNetwork(2, 2).to("meta")
    meta_opt = torch.optim.Adam(on_meta.parameters(), lr=0.01)
    checkpoint = load_checkpoint(tmp_path / "m.pt", on_meta, meta_opt, map_location="meta")
    assert checkpoint["model"]["layers.0.weight"].device.type == "meta"
    assert torch.equal(torch.rand(4), expected), "the CPU generator continues where it was saved"


class _FakeCuda:
    """torch.cuda's RNG functions for `devices` GPUs, on a machine that may have none."""

    def __init__(self, monkeypatch, devices, states):
        self.states, self.restored = states, None
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)   # a run that used its GPUs
        monkeypatch.setattr(torch.cuda, "device_count", lambda: devices)
        monkeypatch.setattr(torch.cuda, "get_rng_state_all", lambda: [s.clone() for s in self.states])
        monkeypatch.setattr(torch.cuda, "set_rng_state_all", self._set)

    def _set(self, states):
        assert all(s.device.type == "cpu" and s.dtype == torch.uint8 for s in states), "CPU ByteTensors only"
        self.restored = [s.clone() for s in states]


def test_checkpoint_saves_and_restores_the_cuda_rng(tmp_path, monkeypatch):
    states = [torch.randint(0, 256, (16,), dtype=torch.uint8) for _ in range(2)]
    net = nn.Linear(2, 2)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    with monkeypatch.context() as patch:
        _FakeCuda(patch, 2, states)
        save_checkpoint(tmp_path / "g.pt", net, opt, step=0)
    for devices, map_location in ((2, "cpu"), (2, "meta"), (1, "cpu")):
        with monkeypatch.context() as patch:
            cuda = _FakeCuda(patch, devices, [])
            load_checkpoint(tmp_path / "g.pt", net.to(map_location), None, map_location=map_location)
            assert cuda.restored is not None, "the CUDA RNG states are saved and restored"
            assert [s.tolist() for s in cuda.restored] == [s.tolist() for s in states[:devices]]
        net = nn.Linear(2, 2)
    with monkeypatch.context() as patch:
        cuda = _FakeCuda(patch, 2, [])
        load_checkpoint(tmp_path / "g.pt", nn.Linear(2, 2), restore_rng=False)
        assert cuda.restored is None


def test_checkpoint_without_cuda_has_no_cuda_rng_key(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    net = nn.Linear(2, 2)
    save_checkpoint(tmp_path / "c.pt", net, torch.optim.SGD(net.parameters(), lr=0.1), step=3)
    assert sorted(load_checkpoint(tmp_path / "c.pt", net)) == ["model", "numpy_rng_state", "optimizer",
                                                              "python_rng_state", "step", "torch_rng_state"]


class _Seen(Exception):
    pass


class _WhereDidTheBatchGo(nn.Module):
    """A model with its weight on `device` that stops at its first forward, naming its input's device."""

    def __init__(self, device):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(2, 2, device=device))

    def forward(self, x):
        raise _Seen(x.device.type)


def test_predict_and_accuracy_run_where_the_model_is():
    x, y = torch.randn(6, 2), torch.tensor([0, 1, 1, 0, 1, 0])
    labels = predict(nn.Linear(2, 3).to("meta"), x)
    assert (labels.device.type, labels.shape) == ("meta", (6,)), "the batch goes to the model's device"
    loader = torch.utils.data.DataLoader(ToyDataset(x, y), batch_size=4)
    for device, passed, expected in (("meta", None, "meta"), ("cpu", None, "cpu"), ("meta", "cpu", "cpu")):
        try:
            accuracy(_WhereDidTheBatchGo(device), loader, *([passed] if passed else []))
        except _Seen as seen:
            assert seen.args[0] == expected, f"a model on {device}, device={passed}: batches sent to {seen.args[0]}"
        else:
            raise AssertionError("the model was never called")
    assert accuracy(nn.Identity(), torch.utils.data.DataLoader(ToyDataset(torch.eye(3), torch.arange(3)))) == 1.0
