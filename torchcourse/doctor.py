"""Environment check: `make doctor`, and chapter 00's installation section.

Prints one line per requirement, [OK] or [FAIL], plus information lines for the hardware
(CPU threads, CUDA, MPS) that a laptop may or may not have. Exits 1 if any requirement fails.
"""
import platform
import sys
from dataclasses import dataclass
from importlib import metadata

# (distribution, minimum version, version below which it is too new to trust; None = no cap)
REQUIREMENTS = [
    ("torch", "2.4", None),
    ("torchvision", "0.19", None),
    ("nbgrader", "0.9", "0.10"),
    ("jupyterlab", "4.0", "5.0"),
    ("matplotlib", "3.5", None),
    ("tqdm", "4.0", None),
]
MIN_PYTHON = (3, 10)


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


def _as_tuple(version: str) -> tuple:
    parts = []
    for piece in version.split("+")[0].split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def installed_version(dist: str):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def check_package(dist: str, minimum: str, below, version=None) -> Check:
    version = version if version is not None else installed_version(dist)
    if version is None:
        return Check(dist, False, "not installed (run `make setup`)")
    wanted = f">={minimum}" + (f",<{below}" if below else "")
    ok = _as_tuple(version) >= _as_tuple(minimum) and (below is None or _as_tuple(version) < _as_tuple(below))
    return Check(dist, ok, f"{version} (need {wanted})")


def run_checks(versions=None) -> list:
    """All requirement checks. `versions` overrides installed versions (used by the tests)."""
    versions = versions or {}
    py = versions.get("python", platform.python_version())
    checks = [Check("python", _as_tuple(py) >= MIN_PYTHON, f"{py} (need >={'.'.join(map(str, MIN_PYTHON))})")]
    for dist, minimum, below in REQUIREMENTS:
        checks.append(check_package(dist, minimum, below, versions.get(dist)))
    return checks


def hardware_lines() -> list:
    import torch
    from torchcourse.devices import best_device, mps_available

    cuda = torch.cuda.is_available()
    gpu = f" ({torch.cuda.get_device_name(0)})" if cuda else ""
    return [
        f"CPU threads used by torch: {torch.get_num_threads()}",
        f"CUDA available: {cuda}{gpu}",
        f"MPS available: {mps_available()}",
        f"best device: {best_device()}",
    ]


def report(versions=None, out=sys.stdout) -> bool:
    """Print the check; return True when every requirement is met."""
    checks = run_checks(versions)
    for check in checks:
        print(f"[{'OK' if check.ok else 'FAIL'}] {check.name:<12} {check.detail}", file=out)
    if all(c.ok for c in checks if c.name == "torch"):
        for line in hardware_lines():
            print(f"[INFO] {line}", file=out)
    ok = all(c.ok for c in checks)
    print("Environment OK." if ok else "Some requirements failed: see [FAIL] above.", file=out)
    return ok


def main() -> int:
    return 0 if report() else 1


if __name__ == "__main__":
    sys.exit(main())
