"""What keeps a student from filling the disk that the hub's database and the gradebook are on.

ext4 reserves a share of its blocks for root (5 % unless `tune2fs -m` changed it): a student's write
past the rest fails with "No space left on device", while root's processes (the hub, its services,
the grading, the gradebook's writes) still have the reserve. XFS, and ext4 made with `-m 0`, reserve
nothing, so a student who fills their home also stops the hub's and the gradebook's writes when both
are on one filesystem. `unguarded` names each folder of root's that shares a filesystem with one that
students write to and keeps less than `minimum` bytes for root; `make hub` warns about each
(docs/GRADING.md, "A class on one server"). Each home is a disk of its own (home_disks.py) unless
home_disk is 0; the exchange has no per-person bound yet.
"""
import os
from pathlib import Path

MINIMUM = 1 << 30     # bytes kept for root: room for a class's gradebook and the hub's state to grow


def root_reserve(path: Path) -> int:
    """Bytes free on `path`'s filesystem that only root may use."""
    stats = os.statvfs(path)
    return (stats.f_bfree - stats.f_bavail) * stats.f_frsize


def unguarded(roots: dict, students: dict, minimum: int = MINIMUM) -> list:
    """One message for each of `roots` ({what: folder root writes}) on the filesystem of one of
    `students` ({what: folder students write}) that keeps less than `minimum` bytes for root."""
    devices = {name: os.stat(folder).st_dev for name, folder in students.items() if Path(folder).exists()}
    found = []
    for name, folder in roots.items():
        shared = [other for other, device in devices.items() if device == os.stat(folder).st_dev]
        reserve = root_reserve(folder)
        if shared and reserve < minimum:
            found.append(f"{name} ({folder}) is on the same filesystem as {' and '.join(shared)}, which keeps "
                         f"{reserve / (1 << 20):.0f} MiB for root only: a student who fills it stops the hub's "
                         f"and the gradebook's writes too. Reserve at least {minimum / (1 << 30):g} GiB for root "
                         f"(ext4: tune2fs -m), or put {folder} on another filesystem")
    return found
