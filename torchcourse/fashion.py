"""FashionMNIST through torchvision, with an offline stand-in in the same IDX format.

`fashion_mnist()` returns a real `torchvision.datasets.FashionMNIST`. It uses the stand-in
instead of downloading when COURSE_OFFLINE=1 (or CI=true), or when the download fails, and
says so loudly: numbers measured on the stand-in are not FashionMNIST results.

The stand-in is generated, small and learnable: ten class "prototypes" (smooth random shapes),
each sample a shifted, re-scaled, noisy copy of its class's prototype. It is written in
FashionMNIST's own IDX files under <root>/offline-standin/FashionMNIST/raw/, so the real
torchvision loader reads it, and kept apart from a real download in <root>/FashionMNIST/.
"""
import os
import struct
import tempfile
from pathlib import Path

import torch
import torch.nn.functional as F
from torchvision import datasets, transforms

from torchcourse.settings import offline_data

CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
           "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
MEAN, STD = 0.2860, 0.3530            # FashionMNIST's training-set pixel statistics
DATA_DIR = Path(__file__).resolve().parent.parent / "data"   # the repository's data/ (gitignored)
STANDIN_DIR = "offline-standin"
STANDIN_SIZES = {"train": 6000, "t10k": 1000}
STANDIN_SEED = 2024
BANNER = ("*" * 78 + "\n*** OFFLINE STAND-IN, NOT FashionMNIST: generated look-alike data. Results\n"
          "*** below are NOT FashionMNIST results (set COURSE_OFFLINE=0 online for the real data).\n" + "*" * 78)


def default_transform():
    """Tensor in [0, 1], then normalised with FashionMNIST's mean and standard deviation."""
    return transforms.Compose([transforms.ToTensor(), transforms.Normalize((MEAN,), (STD,))])


def _prototypes(gen: torch.Generator) -> torch.Tensor:
    """Ten 28x28 class templates in [0, 1]: coarse random masks, smoothed and centred."""
    coarse = (torch.rand(10, 1, 7, 7, generator=gen) > 0.45).float()
    coarse[:, :, 0, :] = coarse[:, :, -1, :] = 0          # keep a dark border, like the real images
    coarse[:, :, :, 0] = coarse[:, :, :, -1] = 0
    return F.interpolate(coarse, size=(28, 28), mode="bilinear", align_corners=False)[:, 0]


def _generate(n: int, prototypes: torch.Tensor, gen: torch.Generator):
    labels = torch.arange(n) % 10
    labels = labels[torch.randperm(n, generator=gen)]
    # Blend in a random other class, so classes overlap and accuracy stays below 100%.
    distractors = prototypes[torch.randint(0, 10, (n,), generator=gen)]
    images = prototypes[labels] + 0.55 * distractors
    shifts = torch.randint(-3, 4, (n, 2), generator=gen)
    for i in range(n):                                     # small per-sample shifts
        images[i] = torch.roll(images[i], shifts=tuple(shifts[i].tolist()), dims=(0, 1))
    images = images * (0.6 + 0.4 * torch.rand(n, 1, 1, generator=gen))
    images = images + 0.45 * torch.randn(images.shape, generator=gen)
    pixels = (images.clamp(0, 1) * 255).round().to(torch.uint8)
    return pixels, labels.to(torch.uint8)


def _write_atomically(path: Path, data: bytes) -> None:
    """Write to a temporary file, then rename: a reader never sees half a file, even when
    several notebooks or DDP ranks create the stand-in at the same moment."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _write_idx_images(path: Path, pixels: torch.Tensor) -> None:
    n, rows, cols = pixels.shape
    _write_atomically(path, struct.pack(">IIII", 0x0803, n, rows, cols) + pixels.numpy().tobytes())


def _write_idx_labels(path: Path, labels: torch.Tensor) -> None:
    _write_atomically(path, struct.pack(">II", 0x0801, len(labels)) + labels.numpy().tobytes())


def standin_root(root="data") -> Path:
    return Path(root) / STANDIN_DIR


def write_standin(root="data") -> Path:
    """Create the stand-in's IDX files once (deterministic); return the root to give torchvision."""
    base = standin_root(root)
    raw = base / "FashionMNIST" / "raw"
    files = [raw / f"{split}-{kind}" for split in STANDIN_SIZES for kind in ("images-idx3-ubyte", "labels-idx1-ubyte")]
    if all(f.exists() for f in files):
        return base
    raw.mkdir(parents=True, exist_ok=True)
    gen = torch.Generator().manual_seed(STANDIN_SEED)
    prototypes = _prototypes(gen)
    for split, n in STANDIN_SIZES.items():
        pixels, labels = _generate(n, prototypes, gen)
        _write_idx_images(raw / f"{split}-images-idx3-ubyte", pixels)
        _write_idx_labels(raw / f"{split}-labels-idx1-ubyte", labels)
    (base / "README.txt").write_text("Generated offline stand-in for FashionMNIST (torchcourse.fashion). "
                                     "Not FashionMNIST.\n")
    return base


def is_standin(dataset_or_root="data") -> bool:
    """True for a dataset (or root folder) that holds the stand-in rather than the real data."""
    root = getattr(dataset_or_root, "root", dataset_or_root)
    return Path(root).name == STANDIN_DIR


def fashion_mnist(root="data", train=True, transform=None):
    """FashionMNIST as a torchvision dataset: the real one, or the announced stand-in."""
    if not offline_data():
        try:
            return datasets.FashionMNIST(root=str(root), train=train, transform=transform, download=True)
        except Exception as err:  # no network, a proxy, a broken mirror: fall back, loudly
            print(f"FashionMNIST download failed ({type(err).__name__}: {err}); using the stand-in.")
    print(BANNER)
    base = write_standin(root)
    return datasets.FashionMNIST(root=str(base), train=train, transform=transform, download=False)
