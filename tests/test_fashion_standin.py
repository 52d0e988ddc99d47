"""The offline FashionMNIST stand-in is read by the real torchvision loader and is learnable."""
import hashlib

import torch
from torchvision import datasets

from torchcourse import fashion


def test_torchvision_reads_the_standin(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_OFFLINE", "1")
    train = fashion.fashion_mnist(root=tmp_path, train=True)
    test = fashion.fashion_mnist(root=tmp_path, train=False, transform=fashion.default_transform())
    assert "OFFLINE STAND-IN, NOT FashionMNIST" in capsys.readouterr().out
    assert isinstance(train, datasets.FashionMNIST) and fashion.is_standin(train)
    assert len(train) == fashion.STANDIN_SIZES["train"] and len(test) == fashion.STANDIN_SIZES["t10k"]
    assert train.data.shape == (len(train), 28, 28) and train.data.dtype == torch.uint8
    assert set(train.targets.unique().tolist()) == set(range(10))
    image, label = test[0]
    assert image.shape == (1, 28, 28) and image.dtype == torch.float32 and 0 <= label < 10
    assert train.classes == fashion.CLASSES


def test_standin_is_deterministic(tmp_path):
    a, b = fashion.write_standin(tmp_path / "a"), fashion.write_standin(tmp_path / "b")
    digest = lambda base: hashlib.sha256((base / "FashionMNIST/raw/train-images-idx3-ubyte").read_bytes()).hexdigest()
    assert digest(a) == digest(b)


def test_falls_back_loudly_when_the_download_fails(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_OFFLINE", "0")

    def no_network(*args, **kwargs):
        raise RuntimeError("Error downloading train-images-idx3-ubyte.gz")
    monkeypatch.setattr(datasets.FashionMNIST, "download", no_network)
    data = fashion.fashion_mnist(root=tmp_path)
    out = capsys.readouterr().out
    assert "download failed" in out and "NOT FashionMNIST" in out and fashion.is_standin(data)


def test_standin_is_learnable(tmp_path, monkeypatch):
    """A linear classifier trained for a few hundred steps separates the classes well."""
    monkeypatch.setenv("COURSE_OFFLINE", "1")
    train = fashion.fashion_mnist(root=tmp_path)
    test = fashion.fashion_mnist(root=tmp_path, train=False)
    x = train.data.flatten(1).float() / 255
    xt = test.data.flatten(1).float() / 255
    torch.manual_seed(0)
    model = torch.nn.Linear(784, 10)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(150):
        idx = torch.randint(0, len(x), (256,))
        loss = torch.nn.functional.cross_entropy(model(x[idx]), train.targets[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    accuracy = (model(xt).argmax(1) == test.targets).float().mean().item()
    assert 0.75 < accuracy, f"stand-in not learnable enough: {accuracy:.3f}"
