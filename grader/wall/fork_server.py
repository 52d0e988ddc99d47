"""A fork server: a process that imports what its children need once, then forks one child per
request line on its socket. The warm-kernel zygote (grader/wall/warm_kernels.py) and a worker's warm
nbgrader (grader/class_grading/warm_nbgrader.py) are both one. It dies with the thread that started
it (PR_SET_PDEATHSIG).
"""
import ctypes
import importlib
import json
import os
import signal
import socket

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")


def serve(fd: int, preload, child, wait: bool) -> None:
    """Import `preload` (module names, or functions that import), say ready on the socket `fd`, then
    per request line fork a child that runs child(request) (it must not return) and reply
    {"pid": ...}; with `wait`, then wait for the child and reply {"code": its exit status}; without,
    children are reaped by the system."""
    die_with_parent()
    if not wait:
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    for item in preload:
        item() if callable(item) else importlib.import_module(item)
    channel = socket.socket(fileno=fd)
    channel.sendall(b'{"ready": true}\n')
    for line in channel.makefile("r"):
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            channel.close()
            child(request)
        channel.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        if wait:
            _, status = os.waitpid(pid, 0)
            channel.sendall(json.dumps({"code": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
