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

from grader.hub import disk, home_disks

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


HOME_MIB = 16


@pytest.fixture
def person(tmp_path):
    """A real Unix user, as make hub makes one (home 0700, a file of theirs in it); removed after."""
    from grader.hub import unix_users
    name = f"ctdisk-{os.getpid() % 100000}"
    unix_users.ensure_user(name, instructor=False)
    home = home_disks.home_of(name)
    (home / "notes.txt").write_text("mine\n")
    shutil.chown(home / "notes.txt", name)
    try:
        yield name, home
    finally:
        unix_users.remove_user(name)


def test_a_home_is_a_filesystem_of_its_own_that_stops_its_owner_and_nobody_else(person, tmp_path):
    """grader/hub/home_disks.py: the person's home becomes a 16 MiB ext4 of its own, with what it held;
    the person's `dd` into it stops with "No space left on device" at about 16 MiB, not at the
    machine's free space (before: 2 GiB went into a home at 390 MB/s, no bound anywhere), and the
    space was taken from the machine's disk when the home was made, not as the person writes."""
    name, home = person
    images = tmp_path / "state" / home_disks.FOLDER
    mode = home.stat().st_mode & 0o777
    assert home_disks.ensure(name, HOME_MIB << 20, images) is True
    assert os.path.ismount(home) and (home / "notes.txt").read_text() == "mine\n"
    assert home.stat().st_mode & 0o777 == mode and home.owner() == name and (home / "notes.txt").owner() == name
    assert not (home / "lost+found").exists()
    image = home_disks.image_of(images, name)
    reserved = image.stat().st_blocks * 512
    assert reserved >= HOME_MIB << 20, f"only {reserved} bytes of the home's file are reserved"
    done = subprocess.run(["runuser", "-u", name, "--", "dd", "if=/dev/zero", f"of={home / 'fill'}", "bs=1M"],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "No space left on device" in done.stderr, done.stderr
    written = (home / "fill").stat().st_size
    assert (HOME_MIB - 4) << 20 <= written <= HOME_MIB << 20, f"{written} bytes written into a {HOME_MIB} MiB home"
    assert image.stat().st_blocks * 512 == reserved, "the home's file grew on the machine's disk"
    assert home_disks.ensure(name, HOME_MIB << 20, images) is False, "mounted once, then left as it is"


def test_make_hub_refuses_homes_the_disk_has_no_room_for(tmp_path):
    with pytest.raises(home_disks.HomeDiskError, match="lower home_disk"):
        home_disks.check_room(["a", "b"], 1 << 50, tmp_path / "images")
