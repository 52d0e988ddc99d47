"""Each person's home on a filesystem of its own, of `home_disk` bytes (hub/settings.txt): a student who
fills their home gets "No space left on device" there, and nobody else's files, the hub's database or
the gradebook notice. Per-user quotas would do the same on one filesystem, but they need a kernel built
with them (CONFIG_QFMT_V2 for ext4, XFS_QUOTA), which many servers, this project's test machines among
them, do not have; a loop-mounted ext4 file works on any Linux. docs/GRADING.md, "A class on one server".

The files lie in the hub's state folder (root only), one per person, their whole size reserved when
they are made (fallocate): the homes can never together take more of the machine's disk than
`make hub` found free for them. Made once; what the home held (the skeleton files, or a whole class's
work when limits are added to a running hub) is copied in first. Mounted nosuid, nodev. After a reboot,
`make hub` mounts them again.
"""
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

FOLDER = "home-disks"       # in the hub's state folder
KEEP_FREE = 1 << 30         # bytes left free on the state folder's disk after the homes' files are made


class HomeDiskError(RuntimeError):
    """A home disk cannot be made or mounted; the message says why."""


def image_of(images: Path, name: str) -> Path:
    return Path(images) / f"{name}.ext4"


def home_of(name: str) -> Path:
    return Path(pwd.getpwnam(name).pw_dir)


def check_room(names, size: int, images: Path) -> None:
    """Refuse, before anything is made, when the files still to make would leave less than KEEP_FREE."""
    Path(images).mkdir(mode=0o700, parents=True, exist_ok=True)
    missing = [name for name in names if not image_of(images, name).exists()]
    stats = os.statvfs(images)
    free = stats.f_bavail * stats.f_frsize
    if missing and len(missing) * size > free - KEEP_FREE:
        raise HomeDiskError(
            f"{len(missing)} homes of {size / (1 << 30):g} GiB need {len(missing) * size / (1 << 30):.1f} GiB in "
            f"{images}, whose disk has {free / (1 << 30):.1f} GiB free (and keeps {KEEP_FREE >> 30} GiB): lower "
            "home_disk in hub/settings.txt, or put HUB_ROOT on a larger disk")


def _make(image: Path, size: int, owner: pwd.struct_passwd) -> None:
    with open(image, "wb") as f:
        os.posix_fallocate(f.fileno(), 0, size)        # reserved now, whatever the person writes later
    # nodiscard: mkfs would otherwise hand the reserved blocks back (it discards a device before it writes)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", "-E", f"root_owner={owner.pw_uid}:{owner.pw_gid},nodiscard",
                    str(image)], check=True, capture_output=True)


def _mount(image: Path, where: Path) -> None:
    done = subprocess.run(["mount", "-o", "loop,nosuid,nodev", str(image), str(where)], capture_output=True, text=True)
    if done.returncode != 0:
        raise HomeDiskError(f"cannot mount {image} on {where}: {done.stderr.strip()}")


def ensure(name: str, size: int, images: Path) -> bool:
    """`name`'s home on its own filesystem of `size` bytes, mounted there; False if it already was."""
    owner = pwd.getpwnam(name)
    home = Path(owner.pw_dir)
    if os.path.ismount(home):
        return False
    image = image_of(images, name)
    if not image.exists():
        image.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _make(image, size, owner)
        with tempfile.TemporaryDirectory(prefix="home-disk-") as fresh:
            _mount(image, Path(fresh))
            try:
                shutil.rmtree(Path(fresh) / "lost+found")   # not a folder students should find in their home
                subprocess.run(["cp", "-a", f"{home}/.", fresh], check=True, capture_output=True)
            finally:
                subprocess.run(["umount", fresh], check=True)
    mode = home.stat().st_mode & 0o7777
    _mount(image, home)
    os.chmod(home, mode)               # the home's own mode (0700), not mkfs's
    return True


def release(name: str) -> None:
    """Unmount `name`'s home disk if it is mounted (lazily: a process may still hold a file there)."""
    home = home_of(name)
    if os.path.ismount(home):
        subprocess.run(["umount", "--lazy", str(home)], check=True)
