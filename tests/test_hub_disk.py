"""A student who fills the disk cannot stop the hub's and the gradebook's writes (grader/hub/disk.py).

On a real ext4 filesystem of its own (a loop device), a process running as a student's Unix user
(`nobody` here) writes until the disk refuses; root's write after it succeeds while root's reserve
stands (ext4's 5 %), and fails on a filesystem made with none (`mkfs.ext4 -m 0`, as XFS has none):
what `make hub` warns about then.
"""
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from grader.hub import disk

SIZE_MIB = 64
MINIMUM = 2 << 20     # ext4 keeps about 1.3 MiB of this size for itself even with -m 0; 5 % is 3.2 MiB more
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mkfs.ext4"),
                                reason="needs root and mkfs.ext4 for a loop-mounted filesystem")


@pytest.fixture
def small_disk(request):
    """A 64 MiB ext4 mounted on a folder anyone may enter, with request.param % for root (default 5,
    ext4's own); its image file and mount point."""
    base = Path(tempfile.mkdtemp(prefix="ct-disk-"))
    base.chmod(0o755)
    image, mount = base / "disk.img", base / "mnt"
    mount.mkdir()
    with open(image, "wb") as f:
        f.truncate(SIZE_MIB << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-m", str(getattr(request, "param", 5)), str(image)], check=True)
    subprocess.run(["mount", "-o", "loop", str(image), str(mount)], check=True)
    try:
        (mount / "home").mkdir()
        shutil.chown(mount / "home", "nobody")
        (mount / "state").mkdir(mode=0o700)
        yield image, mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)
        shutil.rmtree(base, ignore_errors=True)


def fill_as_student(mount: Path) -> str:
    """What `dd`, run as nobody, said when it wrote into the student's folder until it could not."""
    done = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "dd", "if=/dev/zero",
                           f"of={mount / 'home' / 'fill'}", "bs=1M"], capture_output=True, text=True)
    assert done.returncode != 0, "the student's write never stopped"
    return done.stderr


def root_writes(mount: Path) -> bool:
    try:
        (mount / "state" / "gradebook.db").write_bytes(b"\0" * (1 << 20))
        os.sync()
        return True
    except OSError:
        return False


def test_a_student_who_fills_the_disk_leaves_roots_reserve_and_make_hub_is_content(small_disk):
    _, mount = small_disk
    roots, students = {"the hub's state": mount / "state"}, {"the homes": mount / "home"}
    assert disk.root_reserve(mount) > MINIMUM
    assert disk.unguarded(roots, students, minimum=MINIMUM) == []
    assert "No space left on device" in fill_as_student(mount)
    assert root_writes(mount), "root's 1 MiB write failed although root's reserve was left"


@pytest.mark.parametrize("small_disk", [0], indirect=True)
def test_without_a_reserve_the_student_stops_roots_writes_and_make_hub_says_so(small_disk, tmp_path):
    _, mount = small_disk
    roots, students = {"the hub's state": mount / "state"}, {"the homes": mount / "home"}
    [problem] = disk.unguarded(roots, students, minimum=MINIMUM)
    assert "the hub's state" in problem and "the homes" in problem and "tune2fs -m" in problem
    assert disk.unguarded({"elsewhere": tmp_path}, students, minimum=MINIMUM) == [], "another filesystem is safe"
    assert "No space left on device" in fill_as_student(mount)
    assert not root_writes(mount), "with no reserve, the student's fill stops root's writes too"
