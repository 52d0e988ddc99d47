"""Warm kernels: graded kernels start with torch already imported. A zygote that imports torch once
forks, for each kernel, a guard that enters the namespaces bubblewrap built (setns(2), so root
only) and forks the kernel there, which then drops to `nobody` with the wall's limits.

The design, what a student could observe, and the tests: docs/GRADING.md, "Warm kernels".
"""
import ctypes
import os
import random
import resource
import shutil
import signal
import sys
import tempfile
import traceback

from grader.wall import fork_server

# ipykernel's own default backend, which it would set in the kernel before any cell runs
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"


def import_pyplot() -> None:
    """Import matplotlib.pyplot as a kernel would (0.35 s a kernel: its font list is built here, once).
    matplotlib reads its backend and config folder at import: the backend is ipykernel's default,
    the folder a private one, gone once the import is done (it would be a fresh one in each kernel
    anyway), so that root reads no configuration from a folder other users can write."""
    os.environ.setdefault("MPLBACKEND", INLINE_BACKEND)
    saved = dict(os.environ)
    os.environ["MPLCONFIGDIR"] = folder = tempfile.mkdtemp(prefix="zygote-matplotlib-")
    try:
        import matplotlib.pyplot  # noqa: F401
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.clear()
        os.environ.update(saved)


PRELOAD = ("torch", "torchvision", import_pyplot, "ipykernel.kernelapp", "ipykernel.ipkernel")
# entered in nsenter's order; the mount namespace last, while /proc/<pid>/ns is still the host's
NAMESPACES = (("cgroup", 0x02000000), ("ipc", 0x08000000), ("uts", 0x04000000), ("net", 0x40000000),
              ("pid", 0x20000000), ("mnt", 0x00020000))
PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 24, 38

_libc = ctypes.CDLL(None, use_errno=True)


def available() -> bool:
    """Warm kernels need root (setns into the wall's namespaces); COURSE_WARM_KERNELS=0 turns them off."""
    return os.geteuid() == 0 and os.environ.get("COURSE_WARM_KERNELS", "1") != "0"


def _ok(result: int) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _prctl(option: int, arg: int = 0) -> None:
    _ok(_libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)))


def enter(ns_pid: int) -> None:
    """Join the namespaces of process `ns_pid` (the sandbox's init); children land in its PID namespace."""
    fds = [(os.open(f"/proc/{ns_pid}/ns/{name}", os.O_RDONLY), flag) for name, flag in NAMESPACES]
    for fd, flag in fds:
        _ok(_libc.setns(fd, flag))
        os.close(fd)


def become_kernel(request: dict, last_cap: int) -> None:
    """In the sandbox: the wall's limits, environment and user, then ipykernel (does not return)."""
    limits = request["limits"]
    cpu = limits["cpu_seconds"]
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5) if cpu else (resource.RLIM_INFINITY,) * 2)
    resource.setrlimit(resource.RLIMIT_AS, (limits["memory_bytes"] or resource.RLIM_INFINITY,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.chdir(request["workdir"])
    uid = request["uid"]
    for cap in range(last_cap + 1):            # what setpriv --bounding-set=-all does
        _prctl(PR_CAPBSET_DROP, cap)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)                # from root: every capability is gone
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    os.environ.clear()
    os.environ.update(request["env"])        # the wall's: sandbox.passthrough_env, no GPU included
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)     # what reaches the notebook goes over the kernel's channels; ipykernel's banner
                         # ("NOTE: When using the `ipython kernel` entry point...") would go to the grader's log
    os.closerange(3, 65536)                    # nothing of the zygote's (its channel) stays open
    del sys.path[0]      # as ipykernel_launcher does: IPython puts the working folder back
    sys.argv = [os.path.join(os.path.dirname(sys.modules["ipykernel"].__path__[0]), "ipykernel_launcher.py"),
                "-f", request["connection_file"], *request["kernel_args"]]
    random.seed()                              # each kernel its own entropy, as a fresh process
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    from ipykernel import kernelapp
    kernelapp.launch_new_instance(argv=sys.argv[1:])


def guard(request: dict) -> None:
    """Enter the sandbox, fork the kernel, wait for it; then end the sandbox (does not return)."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    status = 1
    wall = os.pidfd_open(request["wall_pid"])   # a pidfd: a reused pid can never be killed by mistake
    os.closerange(3, wall)                      # the zygote's channel and anything else it holds
    os.closerange(wall + 1, 65536)
    try:
        last_cap = int(open("/proc/sys/kernel/cap_last_cap").read())
        enter(request["ns_pid"])
        kernel = os.fork()
        if kernel == 0:
            try:
                become_kernel(request, last_cap)
                status = 0
            except SystemExit as end:          # the kernel's own shutdown
                status = end.code if isinstance(end.code, int) else 0
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(status)
        os.waitpid(kernel, 0)
        status = 0
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            signal.pidfd_send_signal(wall, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os._exit(status)


if __name__ == "__main__":
    # the zygote: import, say ready, then fork one guard per request (it ends with the grader). It is started
    # with the wall's environment (sandbox.passthrough_env), GPUs hidden before it imports torch.
    fork_server.serve(int(sys.argv[1]), PRELOAD, guard, wait=False)
