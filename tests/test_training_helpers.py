"""Unit tests for the reference helpers that chapters 04-06 and ddp_scripts import from torchcourse."""
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


def test_checkpoint_restores_rng(tmp_path):
    net = nn.Linear(2, 2)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    torch.manual_seed(3)
    save_checkpoint(tmp_path / "r.pt", net, opt, step=0)
    expected = torch.rand(4)
    torch.rand(100)
    load_checkpoint(tmp_path / "r.pt", net, opt)
    assert torch.equal(torch.rand(4), expected)


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
