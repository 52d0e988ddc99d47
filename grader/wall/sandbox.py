"""The wall around student code: every graded kernel, the student's and the reference's, runs
inside bubblewrap (no course files, no network, no other process, user `nobody`, a cleared
environment, CPU, memory and file-size limits) and talks to nbgrader over Unix sockets.

What the wall is made of, what it protects against and what it does not, with the test of each
claim: docs/GRADING.md, "The wall". Warm kernels enter the same wall: grader/wall/warm_kernels.py.
"""
import asyncio
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from queue import Empty
from dataclasses import asdict, dataclass
from pathlib import Path

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from traitlets import Type, Unicode, default

from grader import debian
from grader.wall import fork_server, warm_kernels
from grader.wall.no_gpu import NO_GPU
from grader.course import REPO_ROOT
from grader.pipeline import GRADING_THREADS

NOBODY = 65534
HOSTNAME = "sandbox"
INSTALL_HINT = ("bubblewrap is missing: install it with `apt-get install -y bubblewrap` "
                "(`make setup` does this as root), or set COURSE_SANDBOX=0 to grade without a wall")


@dataclass(frozen=True)
class Limits:
    """Per-kernel resource limits, read from the environment when a kernel starts.

    cpu_seconds: CPU time of the whole kernel (all threads), a backstop behind nbgrader's
    per-cell wall-clock timeout: a loop that ignores the interrupt gets SIGXCPU, then SIGKILL
    five seconds later. memory_bytes: address space; torch reserves a lot of it when it loads
    (about 3.7 GB with its thread pools), so it must stay at a few GiB. file_bytes: largest file.
    disk_bytes: the size of each of the kernel's two writable folders (/tmp and its working
    folder), which are memory file systems that vanish with the kernel. cpu_seconds or
    memory_bytes None: no such limit (the reference kernel, which runs the instructor's code and
    the probes of a whole class in one process).
    """
    cpu_seconds: int | None = 900
    memory_bytes: int | None = 6 * 1024**3
    file_bytes: int = 256 * 1024**2
    disk_bytes: int = 512 * 1024**2

    @classmethod
    def from_env(cls):
        d = cls()
        return cls(int(os.environ.get("COURSE_SANDBOX_CPU", d.cpu_seconds)),
                   int(os.environ.get("COURSE_SANDBOX_MEMORY", d.memory_bytes)),
                   int(os.environ.get("COURSE_SANDBOX_FSIZE", d.file_bytes)),
                   int(os.environ.get("COURSE_SANDBOX_DISK", d.disk_bytes)))


def bwrap() -> str | None:
    return shutil.which("bwrap")


def enabled() -> bool:
    """The wall is on unless COURSE_SANDBOX=0 says otherwise."""
    return os.environ.get("COURSE_SANDBOX", "1") != "0"


def ensure_bubblewrap() -> str:
    """Install bubblewrap when missing and we are root (Debian/Ubuntu); return its path."""
    if not bwrap():
        debian.ensure(["bubblewrap"])
    path = bwrap()
    if not path:
        raise RuntimeError(INSTALL_HINT)
    return path


def package_dirs(names=("torchcourse", "grader")) -> list:
    """Where the kernel's Python finds the course's packages: this course's folders and wherever
    an editable install points (they differ when a copy of the course is graded, as the tests do)."""
    dirs = [str(REPO_ROOT / name) for name in names]
    for finder in sys.meta_path:
        for name in names:
            try:
                spec = finder.find_spec(name, None)
            except Exception:   # a finder that does not take this call: it cannot hold them
                continue
            if spec and spec.submodule_search_locations:
                dirs += list(spec.submodule_search_locations)
    return dirs


def read_only_paths(course: Path = REPO_ROOT) -> list:
    """What the kernel may read: the system, Python, the venv, the course packages, the DDP
    scripts (chapter 10 launches them) and the data."""
    paths = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc",
             sys.base_prefix, sys.prefix, sysconfig.get_paths()["purelib"],
             *package_dirs(), str(REPO_ROOT / "ddp_scripts"), str(REPO_ROOT / "data")]
    seen, result = set(), []
    for p in paths:
        real = os.path.realpath(p)
        for q in (p, real):
            if q not in seen and os.path.exists(q):
                seen.add(q)
                result.append(q)
    return result


def passthrough_env() -> dict:
    """The only environment the kernel gets: course switches, no secrets, no GPU (NO_GPU, set last:
    no setting of the grader's can show one)."""
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
           "HOME": "/tmp/home", "MPLCONFIGDIR": "/tmp/home/.matplotlib",
           "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "COURSE_SANDBOXED": "1"}
    for key, value in os.environ.items():
        if key.startswith(("COURSE_", "NBGRADER_", "OMP_", "MKL_")) or key in ("CI", "TZ"):
            env.setdefault(key, value)
    env.update(GRADING_THREADS)
    env.update(NO_GPU)
    return env


def wall_command(cmd: list, workdir: str, runtime: str, limits: Limits | None = None,
                 course: Path = REPO_ROOT) -> list:
    """`cmd` (a kernel command line) wrapped in bubblewrap and resource limits."""
    path = bwrap()
    if path is None:
        raise RuntimeError(INSTALL_HINT)
    args = [path, "--die-with-parent", "--unshare-net", "--unshare-pid", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup-try", "--hostname", HOSTNAME, "--clearenv"]
    limits = limits or Limits.from_env()
    size = str(limits.disk_bytes)   # every writable folder is a memory file system of this size
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm",
             "--perms", "1777", "--size", size, "--tmpfs", "/tmp", "--size", size, "--tmpfs", "/run",
             "--perms", "0777", "--dir", "/tmp/home"]
    # Nothing else exists: bwrap starts from an empty root, so only what is bound below is there.
    binds = read_only_paths(course)
    # Folders bwrap creates on the way to a mount point are private to root: open them up so
    # that `nobody` can walk to the mounts (they hold nothing else).
    parents = sorted({str(a) for p in binds + [workdir, runtime] for a in Path(p).parents} - {"/", "/tmp"})
    for d in parents:
        args += ["--perms", "0755", "--dir", d]
    for p in binds:
        args += ["--ro-bind", p, p]
    for secret in ("/etc/shadow", "/etc/gshadow", "/etc/sudoers"):
        if os.path.exists(secret):
            args += ["--ro-bind", "/dev/null", secret]
    # The sandbox's own hostname must resolve (to its loopback): torchrun's rendezvous store
    # looks it up, and retries for many minutes when it cannot.
    hosts = Path(runtime) / "hosts"
    hosts.write_text(f"127.0.0.1\tlocalhost {HOSTNAME}\n::1\tlocalhost ip6-localhost ip6-loopback\n")
    args += ["--ro-bind", str(hosts), "/etc/hosts"]
    # The working folder is a fresh memory file system of limited size, with the submission's own
    # files bound into it read-only: whatever the kernel writes stays inside and vanishes with it,
    # and nothing it writes can reach the course's autograded/ folder.
    args += ["--perms", "0777", "--size", size, "--tmpfs", workdir]
    for entry in sorted(os.listdir(workdir)):
        real = os.path.join(workdir, entry)
        if not os.path.islink(real):
            args += ["--ro-bind", real, real]
    args += ["--bind", runtime, runtime, "--chdir", workdir]
    for key, value in passthrough_env().items():
        args += ["--setenv", key, value]
    inner = []
    if os.geteuid() == 0:
        # root outside: become nobody inside, with no capabilities left
        inner += ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                  "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all"]
    cpu = f"{limits.cpu_seconds}:{limits.cpu_seconds + 5}" if limits.cpu_seconds else "unlimited"
    inner += ["prlimit", f"--cpu={cpu}", f"--as={limits.memory_bytes or 'unlimited'}",
              f"--fsize={limits.file_bytes}", "--core=0", "--"]
    return args + ["--"] + inner + list(cmd)


def start_zygote(stderr=None) -> fork_server.Server:
    """A warm-kernel zygote (grader/wall/warm_kernels.py); its errors and its kernels' own go to `stderr`."""
    # the wall's clean environment: the zygote's memory, which every kernel inherits, holds no secret
    return fork_server.Server([sys.executable, warm_kernels.__file__], passthrough_env(), stderr=stderr, cwd="/")


class Zygote:
    """This process's way to the warm-kernel zygote (grader/wall/warm_kernels.py), a fork server.

    The process that starts a zygote names it to the processes it starts (`for_child`, in their
    environment), and each connects and gets a zygote of its own, a fork of the one that imported
    torch: so the 4 s start is paid once for a whole class (make autograde's coordinator starts it for
    the threads of its in-process LocalCluster, a Dask worker of a cluster for all its batches,
    nbgrader for its notebooks). A process whose named zygote is gone starts one of its own. The
    zygote dies with the THREAD that started it (PR_SET_PDEATHSIG): start it from a thread that
    lives as long as it is needed."""
    _lock = threading.Lock()
    _server = None                  # the fork_server.Server this process started
    _channel = None                 # this process's connection to a zygote
    _replies = None
    PATH = "GRADER_ZYGOTE"          # not COURSE_*: the wall keeps it from student kernels
    stderr = None                   # where the zygote and its kernels write errors (None: ours)

    @classmethod
    def _start(cls) -> str:
        """The path of this process's own zygote, started if it is not running."""
        if cls._server is None or not cls._server.alive():
            if cls._server is not None:
                cls._server.stop()
            cls._server = start_zygote(cls.stderr)
        return cls._server.path

    @classmethod
    def _path(cls, use_parents: bool = True) -> str:
        """The zygote this process was named, unless it started its own since; else its own."""
        return (fork_server.named(cls.PATH) if use_parents and cls._server is None else None) or cls._start()

    @classmethod
    def _connect(cls, use_parents: bool) -> None:
        cls._channel = fork_server.connect(cls._path(use_parents))
        cls._replies = cls._channel.makefile("r")

    @classmethod
    def _drop(cls) -> None:
        if cls._channel is not None:
            cls._channel.close()
        cls._channel = cls._replies = None

    @classmethod
    def stop(cls) -> None:
        """Stop this process's own zygote, if it started one (make autograde's, at the end)."""
        with cls._lock:
            cls._drop()
            if cls._server is not None:
                cls._server.stop()
            cls._server = None

    @classmethod
    def spawn(cls, request: dict) -> None:
        """Ask the zygote for a kernel; the parent's zygote first, else (gone) one of this process's own."""
        with cls._lock:
            for use_parents in (True, False):
                try:
                    if cls._channel is None:
                        cls._connect(use_parents)
                    cls._channel.sendall(json.dumps(request).encode() + b"\n")
                    if cls._replies.readline():
                        return
                except OSError:
                    pass
                cls._drop()
            raise RuntimeError("the warm-kernel zygote stopped or did not start (its error is above"
                               f"{'' if cls.stderr is None else ', or in ' + cls.stderr.name})")

    @classmethod
    def for_child(cls) -> dict:
        """{PATH: path} for the environment of the processes this one starts (any number at once):
        each connects to the zygote this process was named, else to its own, started now if need
        be; {} where kernels start cold."""
        if not warm_kernels.available():
            return {}
        with cls._lock:
            return {cls.PATH: cls._path()}


def _sandbox_init(wall_pid: int, ready: Path, timeout: float = 60) -> int:
    """The pid of the sandbox's init (bwrap's child) once the placeholder runs, every mount in place."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready.exists():
            children = Path(f"/proc/{wall_pid}/task/{wall_pid}/children").read_text().split()
            if children:
                return int(children[0])
        if not Path(f"/proc/{wall_pid}").exists():
            break
        time.sleep(0.01)
    raise RuntimeError("the wall did not start (bwrap's error is above)")


class ReadyClient(AsyncKernelClient):
    """jupyter_client's client, except that once the kernel has answered, `wait_for_ready` does not
    then wait 0.2 s for IOPub to fall quiet (0.2 s of every graded kernel's start, idle): it drops
    what IOPub holds at that moment. A later message about kernel_info cannot be mistaken for a
    cell's: nbclient tells a cell's messages apart by the id of its request."""

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            self.kernel_info()
            try:
                reply = await self.shell_channel.get_msg(timeout=1)
            except Empty:
                reply = None
            if reply is not None and reply["msg_type"] == "kernel_info_reply" and await self._iopub_connected():
                self._handle_kernel_info_reply(reply)
                break
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")
        while await self.iopub_channel.msg_ready():
            await self.iopub_channel.get_msg()

    async def _iopub_connected(self) -> bool:
        """Has IOPub carried a message (its welcome, or the kernel's status)? A subscriber may join
        late and miss what was sent before: then kernel_info is asked again."""
        try:
            await self.iopub_channel.get_msg(timeout=0.2)
            return True
        except Empty:
            return False


class SandboxKernelManager(AsyncKernelManager):
    """An AsyncKernelManager whose kernel runs behind the wall, reached over Unix sockets.

    A Python kernel starts warm where it can (grader/wall/warm_kernels.py): bwrap builds the wall around
    a placeholder, and the kernel, forked from a zygote that imported torch, enters it."""

    transport = Unicode("ipc", config=True)
    client_factory = Type(ReadyClient, klass=AsyncKernelClient)
    limits = None   # Limits for this kernel; None: Limits.from_env() when it starts

    @default("transport")
    def _transport_default(self):
        return "ipc"

    async def _async_pre_start_kernel(self, **kw):
        # A short private folder: Unix socket paths must stay under ~100 characters.
        self._wall_runtime = tempfile.mkdtemp(prefix="gk-", dir="/tmp")
        self.transport = "ipc"
        self.ip = os.path.join(self._wall_runtime, "k")
        self.connection_file = os.path.join(self._wall_runtime, "kernel.json")
        self._wall_workdir = os.path.abspath(kw.get("cwd") or os.getcwd())
        cmd, kw = await super()._async_pre_start_kernel(**kw)
        # A SIGINT sent to the process group would kill bwrap, not interrupt the kernel: ask the
        # kernel over its control channel instead (ipykernel then interrupts itself).
        self.kernel_spec.interrupt_mode = "message"
        return cmd, kw

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = super().format_kernel_cmd(extra_arguments)
        if os.geteuid() == 0:
            # nobody must read the connection file, create its sockets and write its folder
            for p in (self._wall_runtime, self.connection_file):
                os.chown(p, NOBODY, NOBODY)
        self._warm = warm_kernels.available() and cmd[0] == sys.executable and "ipykernel_launcher" in cmd
        if self._warm:
            # what ipykernel is given after its connection file (extra_arguments), for the warm kernel
            self._kernel_args = cmd[cmd.index("-f") + 2:]
            self._wall_ready = Path(self._wall_runtime) / "ready"
            cmd = ["/bin/sh", "-c", f': > "{self._wall_ready}" && exec sleep infinity']
        return wall_command(cmd, self._wall_workdir, self._wall_runtime, self.limits)

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        await super()._async_launch_kernel(kernel_cmd, **kw)
        if self._warm:
            wall = self.provisioner.process.pid
            init = await asyncio.to_thread(_sandbox_init, wall, self._wall_ready)
            await asyncio.to_thread(Zygote.spawn, {
                "wall_pid": wall, "ns_pid": init, "workdir": self._wall_workdir,
                "connection_file": self.connection_file, "kernel_args": self._kernel_args,
                "env": passthrough_env(), "uid": NOBODY,
                "limits": asdict(self.limits or Limits.from_env())})

    async def _async_cleanup_resources(self, restart=False):
        await super()._async_cleanup_resources(restart=restart)
        if not restart and getattr(self, "_wall_runtime", None):
            shutil.rmtree(self._wall_runtime, ignore_errors=True)


def kernel_manager_class() -> type:
    """The kernel manager of a graded run: behind the wall (warm where it can) unless COURSE_SANDBOX=0."""
    return SandboxKernelManager if enabled() else AsyncKernelManager


def kernel_manager(limits: Limits | None = None) -> AsyncKernelManager:
    """One kernel manager of kernel_manager_class(), with `limits` if it is the wall's."""
    manager = kernel_manager_class()()
    if isinstance(manager, SandboxKernelManager):
        manager.limits = limits
    return manager


def main(argv=None) -> int:
    """`python -m grader.wall.sandbox`: print the wall's command line for a Python in this folder."""
    print(" ".join(wall_command(["python"], os.getcwd(), tempfile.gettempdir())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
