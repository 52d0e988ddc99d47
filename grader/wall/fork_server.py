"""A fork server: a process that imports what its children need once, then forks one child per
request. The warm-kernel zygote (grader/wall/warm_kernels.py) and a worker's warm nbgrader
(grader/class_grading/warm_nbgrader.py) are both one.

Clients connect to its Unix socket, in a folder only its owner can enter. Each connection is served
by a handler of its own, a fork of the server (the imports are already done): so the batches that a
worker's threads grade side by side share one server, each with a channel of its own. Each process
dies with its parent (PR_SET_PDEATHSIG): the server with the THREAD that started it, a handler with
the server, a child with its handler. docs/GRADING.md, "How parallel grading works".
"""
import ctypes
import gc
import importlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import weakref
from pathlib import Path

PR_SET_PDEATHSIG = 1
FOLDER_PREFIX = "fork-server-"


def die_with_parent() -> None:
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")


class Server:
    """The starting side: `argv` plus the listening socket's fd, started as a server process; clients
    connect to `path`. Its socket is bound before the process starts, so a client may connect at
    once: it is answered once the server has imported what it preloads. A process may name `path` to
    the processes it starts (see `named`)."""

    def __init__(self, argv: list, env: dict, stderr=None, cwd=None):
        remove_stale_folders()
        self.folder = tempfile.mkdtemp(prefix=FOLDER_PREFIX)   # 0700: only its owner can connect
        self.path = os.path.join(self.folder, "socket")
        with socket.socket(socket.AF_UNIX) as listener:
            listener.bind(self.path)
            listener.listen(64)
            self.process = subprocess.Popen([*argv, str(listener.fileno())], pass_fds=[listener.fileno()], env=env,
                                            stdin=subprocess.DEVNULL, stderr=stderr, cwd=cwd)
        self._remove_folder = weakref.finalize(self, shutil.rmtree, self.folder, True)   # at exit too

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        self._remove_folder()


def remove_stale_folders(min_age: float = 60) -> None:
    """Remove the folders that servers killed with their owner left (a killed Dask worker's, or
    make autograde's): ours, older than `min_age` seconds, whose socket accepts no connection."""
    for folder in Path(tempfile.gettempdir()).glob(FOLDER_PREFIX + "*"):
        try:
            info = folder.stat()
            if info.st_uid != os.geteuid() or time.time() - info.st_mtime < min_age:
                continue
            with socket.socket(socket.AF_UNIX) as probe:
                probe.connect(str(folder / "socket"))   # a live server: its handler ends with this probe
        except (ConnectionRefusedError, FileNotFoundError):
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            pass


def named(variable: str) -> str | None:
    """The path of a server that the environment variable `variable` names, if it is still there
    (a server that was stopped took its folder with it)."""
    path = os.environ.get(variable)
    return path if path and os.path.exists(path) else None


def connect(path: str) -> socket.socket:
    """A channel to the server at `path`, served by a handler of its own."""
    channel = socket.socket(socket.AF_UNIX)
    try:
        channel.connect(path)
    except OSError:
        channel.close()
        raise
    return channel


def serve(listener_fd: int, preload, child, wait: bool) -> None:
    """The server (does not return): import `preload` (module names, or functions that import), then
    fork a handler for each connection on the listening socket `listener_fd`. A handler forks, per
    request line, a child that runs child(request) (it must not return) and replies {"pid": ...};
    with `wait`, it then waits for the child and replies {"code": its exit status}. Without `wait`,
    children are reaped by the system. A handler ends when its client closes the connection."""
    die_with_parent()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # handlers (and, without `wait`, children) reaped by the system
    for item in preload:
        item() if callable(item) else importlib.import_module(item)
    # What the imports made lives as long as the children: out of the collector's sight, a child's
    # full collections no longer walk it (0.3 s of CPU each, with torch and pyplot loaded) nor
    # touch, and so copy, the pages it shares with us.
    gc.freeze()
    listener = socket.socket(fileno=listener_fd)
    while True:
        connection, _ = listener.accept()
        if os.fork() == 0:
            listener.close()
            _handle(connection, child, wait)
        connection.close()


def _wait_unless_client_leaves(pid: int, connection: socket.socket) -> int:
    """The child's exit status; a child whose client closed the connection first (a killed worker)
    is killed: nobody would read what it does."""
    child = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([connection, child], [], [])
        if child not in ready:
            signal.pidfd_send_signal(child, signal.SIGKILL)
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    finally:
        os.close(child)


def _handle(connection: socket.socket, child, wait: bool) -> None:
    """One client's handler (does not return)."""
    try:
        die_with_parent()
        if wait:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)   # for waitpid, and for the children's own
        for line in connection.makefile("r"):
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                connection.close()
                child(request)
            connection.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            if wait:
                code = _wait_unless_client_leaves(pid, connection)
                connection.sendall(json.dumps({"code": code}).encode() + b"\n")
    finally:
        os._exit(0)   # also when the client went away (BrokenPipeError): nothing of ours to clean
