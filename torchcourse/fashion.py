"""FashionMNIST through torchvision: the real data wherever it is on disk, else a download, else
an offline stand-in that is announced loudly.

`fashion_mnist()` returns a `torchvision.datasets.FashionMNIST` and prints one line saying where
its images come from. It takes the first of:

1. decompressed files in <root>/FashionMNIST/raw/, then in the repository's data/FashionMNIST/raw/
   (an earlier torchvision download, or a copy put there);
2. Debian's package `dataset-fashion-mnist` (/usr/share/datasets/fashion-mnist/*.gz). Its gzip
   bytes differ from torchvision's downloads, so torchvision's MD5 check would refuse them: they
   are decompressed once into <cache>/debian/FashionMNIST/raw/ and read with download=False. The
   cache is the first of data/, <root> and the temporary folder that already holds them or can be
   written. Graded kernels see data/ read-only, so `python -m torchcourse.fashion --prepare`
   (called by `make setup`) decompresses them there beforehand; a kernel that finds nothing
   there unpacks them into its own /tmp (55 MB, under a second);
3. a torchvision download into <root>, unless COURSE_OFFLINE=1 (which means: never the network);
4. the stand-in, when none of that exists (offline macOS or Windows): generated, small and
   learnable, ten class "prototypes" (smooth random shapes), each sample a shifted, re-scaled,
   noisy copy of its class's prototype. It is written in FashionMNIST's own IDX files under
   <root>/offline-standin/FashionMNIST/raw/, so the real torchvision loader reads it, apart from
   the real data. Numbers measured on it are not FashionMNIST results, and it says so.
"""
import argparse
import contextlib
import functools
import gzip
import os
import shutil
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
REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = REPO_ROOT / "data"         # the repository's data/ (gitignored)
DEBIAN_DIR = Path("/usr/share/datasets/fashion-mnist")   # Debian's dataset-fashion-mnist
DEBIAN_CACHE = "debian"               # <cache>/debian/FashionMNIST/raw/: Debian's files, decompressed
RAW_FILES = [f"{split}-{kind}" for split in ("train", "t10k")
             for kind in ("images-idx3-ubyte", "labels-idx1-ubyte")]   # torchvision's names
STANDIN_DIR = "offline-standin"
STANDIN_SIZES = {"train": 6000, "t10k": 1000}
STANDIN_SEED = 2024
BANNER = ("*" * 78 + "\n*** OFFLINE STAND-IN, NOT FashionMNIST: generated look-alike data. Results\n"
          "*** below are NOT FashionMNIST results. For the real data install Debian's package\n"
          "*** dataset-fashion-mnist (make setup does, as root) or run once online.\n" + "*" * 78)


def default_transform():
    """Tensor in [0, 1], then normalised with FashionMNIST's mean and standard deviation."""
    return transforms.Compose([transforms.ToTensor(), transforms.Normalize((MEAN,), (STD,))])


# ------------------------------------------------------------------ files on disk
def raw_dir(base) -> Path:
    """Where torchvision looks for the decompressed files of a dataset root."""
    return Path(base) / "FashionMNIST" / "raw"


def _complete(base) -> bool:
    try:
        return all((raw_dir(base) / name).is_file() for name in RAW_FILES)
    except PermissionError:   # a folder another user made private (umask 077): not usable here
        return False


def _show(path) -> str:
    """A path as messages show it: relative to the repository when inside it, so that the
    committed notebook outputs read the same in every checkout."""
    path = Path(path).resolve()
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


@contextlib.contextmanager
def _atomic_file(path: Path):
    """Write to a temporary file, then rename: a reader never sees half a file, even when several
    notebooks or DDP ranks write the same file at the same moment (the last rename wins, and
    every writer writes the same bytes)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
        os.chmod(tmp, 0o644)      # mkstemp makes 0600: graded kernels run as another user (nobody)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def cache_bases(root="data") -> list:
    """Where Debian's files may be decompressed, in order: the repository's data/ (one copy for
    every caller), <root>, a temporary folder."""
    user = os.getuid() if hasattr(os, "getuid") else "user"      # one per user: /tmp is shared
    tmp = Path(tempfile.gettempdir()) / f"torchcourse-{user}"
    bases = {}
    for base in (DATA_DIR, Path(root), tmp):
        bases.setdefault(base.resolve(), base / DEBIAN_CACHE)
    return list(bases.values())


def debian_installed() -> bool:
    return all((DEBIAN_DIR / f"{name}.gz").is_file() for name in RAW_FILES)


def unpack_debian(bases):
    """The first of `bases` that holds Debian's files decompressed, after decompressing them into
    the first writable one if none does; None when the package is not installed or nothing can
    be written."""
    if not debian_installed():
        return None
    for base in bases:
        if _complete(base):
            return base
    for base in bases:
        try:
            raw_dir(base).mkdir(parents=True, exist_ok=True)
            for name in RAW_FILES:
                with gzip.open(DEBIAN_DIR / f"{name}.gz", "rb") as packed, _atomic_file(raw_dir(base) / name) as out:
                    shutil.copyfileobj(packed, out, 1 << 20)
            return base
        except OSError:   # read-only (data/ in a graded kernel), full, or someone else's: next one
            continue
    return None


def find_real(root="data"):
    """(root to give torchvision, where it comes from) for the real data on disk, or None."""
    for base in dict.fromkeys([Path(root).resolve(), DATA_DIR]):
        if _complete(base):
            return base, f"read from {_show(raw_dir(base))}"
    base = unpack_debian(cache_bases(root))
    if base is not None:
        return base, f"from Debian's {DEBIAN_DIR}, decompressed in {_show(raw_dir(base))}"
    # a copy decompressed elsewhere and brought along without the package (a lent GPU machine)
    if _complete(DATA_DIR / DEBIAN_CACHE):
        return DATA_DIR / DEBIAN_CACHE, f"read from {_show(raw_dir(DATA_DIR / DEBIAN_CACHE))}"
    return None


# ------------------------------------------------------------------ the offline stand-in
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


def _write_idx(path: Path, values: torch.Tensor) -> None:
    """FashionMNIST's IDX format: magic 0x0803 (images) or 0x0801 (labels), sizes, raw bytes."""
    header = struct.pack(f">I{values.dim()}I", 0x0800 + values.dim(), *values.shape)
    with _atomic_file(path) as f:
        f.write(header + values.numpy().tobytes())


def standin_root(root="data") -> Path:
    return Path(root) / STANDIN_DIR


@functools.lru_cache(maxsize=1)
def _standin_arrays() -> dict:
    """{split: (pixels, labels)} of the stand-in, drawn once per process (about a second of CPU;
    7 MB kept): the same for every root, since the draw is seeded."""
    gen = torch.Generator().manual_seed(STANDIN_SEED)
    prototypes = _prototypes(gen)
    return {split: _generate(n, prototypes, gen) for split, n in STANDIN_SIZES.items()}


def write_standin(root="data") -> Path:
    """Create the stand-in's IDX files once (deterministic); return the root to give torchvision."""
    base = standin_root(root)
    if _complete(base):
        return base
    raw_dir(base).mkdir(parents=True, exist_ok=True)
    for split, (pixels, labels) in _standin_arrays().items():
        _write_idx(raw_dir(base) / f"{split}-images-idx3-ubyte", pixels)
        _write_idx(raw_dir(base) / f"{split}-labels-idx1-ubyte", labels)
    (base / "README.txt").write_text("Generated offline stand-in for FashionMNIST (torchcourse.fashion). "
                                     "Not FashionMNIST.\n")
    return base


def is_standin(dataset_or_root="data") -> bool:
    """True for a dataset (or root folder) that holds the stand-in rather than the real data."""
    root = getattr(dataset_or_root, "root", dataset_or_root)
    return Path(root).name == STANDIN_DIR


# ------------------------------------------------------------------ the one entry point
def fashion_mnist(root="data", train=True, transform=None):
    """FashionMNIST as a torchvision dataset: the real one (disk, then network), or the announced
    stand-in; prints one line saying which."""
    found = find_real(root)
    if found is None and not offline_data():
        try:   # torchvision checks the MD5s and decompresses into <root>/FashionMNIST/raw/
            datasets.FashionMNIST(root=str(root), train=train, download=True)
            found = (Path(root), f"downloaded into {_show(raw_dir(root))}")
        except Exception as err:  # no network, a proxy, a broken mirror: fall back, loudly
            print(f"FashionMNIST download failed ({type(err).__name__}: {err}); using the stand-in.")
    if found is None:
        print(BANNER)
        return datasets.FashionMNIST(root=str(write_standin(root)), train=train, transform=transform, download=False)
    base, where = found
    dataset = datasets.FashionMNIST(root=str(base), train=train, transform=transform, download=False)
    print(f"FashionMNIST {'train' if train else 'test'} set: the real data, {len(dataset):,} images {where}")
    return dataset


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="FashionMNIST for the course.")
    parser.add_argument("--prepare", action="store_true",
                        help=f"decompress Debian's files into {_show(DATA_DIR)}/{DEBIAN_CACHE}/ (make setup), "
                             "where graded kernels read them")
    if not parser.parse_args(argv).prepare:
        parser.print_help()
        return
    if _complete(DATA_DIR):
        print(f"FashionMNIST: {_show(raw_dir(DATA_DIR))} already holds the real data")
    elif not debian_installed():   # macOS, Windows, no root: a download (or the stand-in) later
        print(f"FashionMNIST: Debian's dataset-fashion-mnist is not installed ({DEBIAN_DIR}); "
              "the notebooks will download the data, or use the announced stand-in offline")
    elif (base := unpack_debian([DATA_DIR / DEBIAN_CACHE])) is not None:
        print(f"FashionMNIST: Debian's {DEBIAN_DIR} is decompressed in {_show(raw_dir(base))}")
    else:
        raise SystemExit(f"FashionMNIST: could not decompress {DEBIAN_DIR} into {_show(DATA_DIR)}")


if __name__ == "__main__":
    main()
