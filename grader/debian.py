"""The Debian packages the course uses, installed by `make setup` where apt can (root on Debian/Ubuntu).

    python -m grader.debian          install what is missing; say what is there

Each package is a real part of the course, not a convenience:
- bubblewrap: the wall around graded student code (grader/wall/sandbox.py); grading refuses to run without it;
- chromium: the real browser of the JupyterLab test (tests/test_browser.py), driven by playwright;
- dataset-fashion-mnist: the real FashionMNIST, offline (torchcourse/fashion.py).

Elsewhere (macOS, Windows, no root) nothing is installed: the sandbox says how to get bubblewrap,
the browser test skips (never in CI), and FashionMNIST is downloaded or replaced by its stand-in.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

# package -> the file whose presence says it is installed
PACKAGES = {
    "bubblewrap": "/usr/bin/bwrap",
    "chromium": "/usr/bin/chromium",
    "dataset-fashion-mnist": "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz",
}


def missing(packages=PACKAGES) -> list:
    return [name for name, marker in packages.items() if not Path(marker).exists()]


def can_install() -> bool:
    return os.geteuid() == 0 and shutil.which("apt-get") is not None


def ensure(names=None) -> list:
    """apt-get install the packages in `names` (default: all) that are missing; return those still missing."""
    wanted = {n: PACKAGES[n] for n in (names or PACKAGES)}
    todo = missing(wanted)
    if todo and can_install():
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for refresh in (False, True):   # a fresh image may have no package lists yet
            if refresh:
                subprocess.run(["apt-get", "update", "-q"], check=False, stdout=subprocess.DEVNULL, env=env)
            # --no-install-recommends: chromium's recommended extras (fonts, drivers) are 200 MB more
            subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *todo], check=False,
                           stdout=subprocess.DEVNULL, env=env)
            todo = missing(wanted)
            if not todo:
                break
    return todo


def main() -> int:
    still_missing = ensure()
    for name, marker in PACKAGES.items():
        print(f"{name}: {'MISSING' if name in still_missing else marker}")
    if still_missing:
        print(f"WARNING: could not install {' '.join(still_missing)} (needs apt-get as root): "
              "see grader/debian.py for what each is for", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
