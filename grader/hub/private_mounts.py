"""Each person's own /tmp, /var/tmp, /run/lock and /dev/shm: size-limited, seen by nobody else, gone with
their server.

The machine's /tmp, /var/tmp, /run/lock and /dev/shm are the folders everyone may write outside their
home (each home is a disk of its own: home_disks.py). They are shared, and bounded by nothing but the
disk (/run/lock is on the root filesystem on some machines, this project's test machines among them) or half the RAM: a student filled /dev/shm past their memory limit, their kernel and server were
OOM-killed, and the file stayed, charged to nobody's limit and in the way of their next start
(docs/GRADING.md, "A class on one server"). The spawner (grader/hub/spawner.py) starts each server in
a mount namespace of its own, made in the child between fork and exec, while it is still root: the
namespace's mounts are private (nothing propagates to the machine), and a fresh tmpfs of `size`
bytes is mounted on each of these folders. What a person writes there counts against their memory
group, a write past the size fails with "No space left on device", and when the last process of the
namespace ends (the spawner's stop kills them all) the kernel frees it all. The grading wall does the
same for graded kernels with bubblewrap.
"""
import ctypes
import os

CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x4000, 0x40000
FOLDERS = ("/tmp", "/var/tmp", "/run/lock", "/dev/shm")   # those present are mounted over


def preparer(size: int, folders=FOLDERS):
    """A function that, called in a child after fork, moves it into its own mount namespace with a
    private tmpfs of `size` bytes on each folder. Made before the fork: after it, only calls."""
    libc = ctypes.CDLL(None, use_errno=True)
    options = f"size={int(size)},mode=1777".encode()
    targets = [os.fsencode(folder) for folder in folders if os.path.isdir(folder)]

    def check(result: int, what: str) -> None:
        if result != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"{what}: {os.strerror(errno)}")

    def enter() -> None:
        check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
        check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
        for target in targets:
            check(libc.mount(b"tmpfs", target, b"tmpfs", MS_NOSUID | MS_NODEV, options), f"mount tmpfs on {target!r}")
    return enter
