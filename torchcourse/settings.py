"""The course's two switches, read from the environment.

COURSE_QUICK=1    shorten training and sweeps so a notebook runs in seconds (CI, `make test`).
COURSE_OFFLINE=1  never use the network: FashionMNIST comes from disk (an earlier download, or
                  Debian's dataset-fashion-mnist), and only when it is on no disk from the
                  generated, loudly announced stand-in (torchcourse.fashion).

CI sets CI=true, which turns both on unless they are set explicitly to 0.
"""
import os


def _flag(name: str) -> bool:
    value = os.environ.get(name)
    if value is not None:
        return value.strip().lower() not in ("", "0", "false", "no")
    return os.environ.get("CI", "").strip().lower() == "true"


def quick_mode() -> bool:
    """True when notebooks should use their short settings."""
    return _flag("COURSE_QUICK")


def offline_data() -> bool:
    """True when datasets must come from disk (the real files, else the stand-in), never the network."""
    return _flag("COURSE_OFFLINE")


def pick(full, quick):
    """`full` normally, `quick` under COURSE_QUICK: one line per tunable in a notebook."""
    return quick if quick_mode() else full
