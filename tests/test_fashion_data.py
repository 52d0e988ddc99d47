"""torchcourse.fashion: the real FashionMNIST wherever it is on disk, the stand-in only without it.

The real-data tests need Debian's package dataset-fashion-mnist; they skip where it is missing
(macOS, Windows, a laptop without root), but not in CI (`make setup` installs it there).
"""
import hashlib
import os
import stat
import tempfile
import threading

import pytest
import torch
from torchvision import datasets

from torchcourse import fashion

# sha256 of the decompressed files (the gzip bytes of Debian and torchvision differ; these do not)
TRAIN_IMAGES_SHA256 = "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888"
TEST_LABELS_SHA256 = "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34"
FIRST_IMAGE_SHA256 = "5bd44e331a6d6998daf675700cd0c13dcd7af8ab954b7585124124da61459e7b"   # an ankle boot

needs_debian = pytest.mark.skipif(
    not fashion.debian_installed() and os.environ.get("CI") != "true",
    reason=f"Debian's dataset-fashion-mnist is not installed ({fashion.DEBIAN_DIR}): "
           "`apt-get install -y dataset-fashion-mnist` as root (make setup does) to test the real data")


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def own_data_dir(tmp_path, monkeypatch):
    """The repository's data/ (and the temporary cache) replaced by empty folders: only what a
    test puts there counts."""
    monkeypatch.setattr(fashion, "DATA_DIR", tmp_path / "repo-data")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return fashion.DATA_DIR


@pytest.fixture
def nothing_on_disk(own_data_dir, tmp_path, monkeypatch):
    """No real data anywhere: an empty data/ and no Debian package."""
    monkeypatch.setattr(fashion, "DEBIAN_DIR", tmp_path / "no-debian-package")


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise RuntimeError("Error downloading train-images-idx3-ubyte.gz")
    monkeypatch.setattr(datasets.FashionMNIST, "download", refuse)


# ------------------------------------------------------------------ the real data
@needs_debian
def test_debian_package_is_decompressed_once_and_read_as_the_real_data(tmp_path, own_data_dir, no_network,
                                                                       monkeypatch, capsys):
    monkeypatch.setenv("COURSE_OFFLINE", "0")    # the files on disk come before the network
    train = fashion.fashion_mnist(tmp_path, train=True)
    test = fashion.fashion_mnist(tmp_path, train=False, transform=fashion.default_transform())
    out = capsys.readouterr().out
    assert "download failed" not in out and "STAND-IN" not in out and not fashion.is_standin(train)
    raw = fashion.raw_dir(own_data_dir / fashion.DEBIAN_CACHE)
    line = f"the real data, 60,000 images from Debian's {fashion.DEBIAN_DIR}, decompressed in {raw}"
    assert line in out.splitlines()[0], out
    assert len(train) == 60_000 and len(test) == 10_000
    assert train.targets.bincount().tolist() == [6000] * 10 and test.targets.bincount().tolist() == [1000] * 10
    assert train.classes == fashion.CLASSES
    assert hashlib.sha256(train.data[0].numpy().tobytes()).hexdigest() == FIRST_IMAGE_SHA256
    assert sha256(raw / "train-images-idx3-ubyte") == TRAIN_IMAGES_SHA256
    assert sha256(raw / "t10k-labels-idx1-ubyte") == TEST_LABELS_SHA256
    # readable by the graded kernels' user, no temporary files left behind
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o644 for p in raw.iterdir())
    assert sorted(p.name for p in raw.iterdir()) == sorted(fashion.RAW_FILES)
    image, label = test[0]
    assert image.shape == (1, 28, 28) and image.dtype == torch.float32 and 0 <= label < 10

    mtimes = {p: p.stat().st_mtime_ns for p in raw.iterdir()}
    fashion.fashion_mnist(tmp_path / "elsewhere", train=False)   # another root: the same copy
    assert mtimes == {p: p.stat().st_mtime_ns for p in raw.iterdir()}, "decompressed a second time"
    assert f"decompressed in {raw}" in capsys.readouterr().out


@needs_debian
def test_decompressed_files_under_the_root_come_first(tmp_path, own_data_dir, monkeypatch, capsys):
    """An earlier torchvision download (<root>/FashionMNIST/raw) is read as it is."""
    monkeypatch.setenv("COURSE_OFFLINE", "1")
    copy = fashion.unpack_debian([tmp_path / "made-by-torchvision"])
    os.rename(copy, tmp_path / "root")
    data = fashion.fashion_mnist(tmp_path / "root", train=False)
    assert f"read from {fashion.raw_dir(tmp_path / 'root')}" in capsys.readouterr().out
    assert len(data) == 10_000 and not (tmp_path / "root" / fashion.DEBIAN_CACHE).exists()


@needs_debian
def test_an_unwritable_data_dir_falls_through_to_the_next_cache(tmp_path, own_data_dir, monkeypatch, capsys):
    """A graded kernel sees data/ read-only: the copy goes to the next folder it can write."""
    monkeypatch.setenv("COURSE_OFFLINE", "1")
    own_data_dir.write_text("")    # a file, not a folder: unwritable even for root, who ignores permissions
    data = fashion.fashion_mnist(tmp_path / "root", train=False)
    assert len(data) == 10_000
    assert f"decompressed in {fashion.raw_dir(tmp_path / 'root' / fashion.DEBIAN_CACHE)}" in capsys.readouterr().out


@needs_debian
def test_concurrent_decompressions_leave_complete_files(tmp_path):
    """DDP ranks and parallel graders may decompress at once: every file is written atomically."""
    bases = [tmp_path / "shared"]
    results = []
    threads = [threading.Thread(target=lambda: results.append(fashion.unpack_debian(bases))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == bases * 3
    raw = fashion.raw_dir(bases[0])
    assert sorted(p.name for p in raw.iterdir()) == sorted(fashion.RAW_FILES)
    assert sha256(raw / "train-images-idx3-ubyte") == TRAIN_IMAGES_SHA256


@needs_debian
def test_prepare_decompresses_into_data(own_data_dir, capsys):
    fashion.main(["--prepare"])
    raw = fashion.raw_dir(own_data_dir / fashion.DEBIAN_CACHE)
    assert f"decompressed in {raw}" in capsys.readouterr().out
    assert sha256(raw / "train-images-idx3-ubyte") == TRAIN_IMAGES_SHA256


def test_a_decompressed_copy_is_read_without_the_package(own_data_dir, tmp_path, monkeypatch, capsys):
    """data/debian/ brought to a machine without Debian's package (a lent GPU machine) is the real data."""
    for name in fashion.RAW_FILES:
        path = fashion.raw_dir(own_data_dir / fashion.DEBIAN_CACHE) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    monkeypatch.setattr(fashion, "DEBIAN_DIR", tmp_path / "no-debian-package")
    base, where = fashion.find_real(tmp_path / "root")
    assert base == own_data_dir / fashion.DEBIAN_CACHE and where.startswith("read from"), where


def test_prepare_without_the_package_says_so(nothing_on_disk, capsys):
    fashion.main(["--prepare"])          # exits 0: offline macOS and Windows set up without it
    assert "not installed" in capsys.readouterr().out


# ------------------------------------------------------------------ the stand-in, only without real data
def test_torchvision_reads_the_standin(tmp_path, nothing_on_disk, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_OFFLINE", "1")
    train = fashion.fashion_mnist(root=tmp_path, train=True)
    test = fashion.fashion_mnist(root=tmp_path, train=False, transform=fashion.default_transform())
    out = capsys.readouterr().out
    assert "OFFLINE STAND-IN, NOT FashionMNIST" in out and "set: the real data" not in out
    assert isinstance(train, datasets.FashionMNIST) and fashion.is_standin(train)
    assert len(train) == fashion.STANDIN_SIZES["train"] and len(test) == fashion.STANDIN_SIZES["t10k"]
    assert train.data.shape == (len(train), 28, 28) and train.data.dtype == torch.uint8
    assert set(train.targets.unique().tolist()) == set(range(10))
    image, label = test[0]
    assert image.shape == (1, 28, 28) and image.dtype == torch.float32 and 0 <= label < 10
    assert train.classes == fashion.CLASSES


def test_offline_never_tries_the_network(tmp_path, nothing_on_disk, no_network, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_OFFLINE", "1")
    assert fashion.is_standin(fashion.fashion_mnist(root=tmp_path))
    assert "download failed" not in capsys.readouterr().out


def test_falls_back_loudly_when_the_download_fails(tmp_path, nothing_on_disk, no_network, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_OFFLINE", "0")
    data = fashion.fashion_mnist(root=tmp_path)
    out = capsys.readouterr().out
    assert "download failed" in out and "NOT FashionMNIST" in out and fashion.is_standin(data)


def test_standin_is_deterministic(tmp_path):
    a = fashion.write_standin(tmp_path / "a")
    fashion._standin_arrays.cache_clear()    # drawn again, not the process's kept copy
    b = fashion.write_standin(tmp_path / "b")
    assert sha256(fashion.raw_dir(a) / "train-images-idx3-ubyte") == sha256(fashion.raw_dir(b) / "train-images-idx3-ubyte")


def test_standin_is_learnable(tmp_path, nothing_on_disk, monkeypatch):
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
