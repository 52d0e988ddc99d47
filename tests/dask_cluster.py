"""A real Dask cluster on this machine, as an instructor starts one for `make autograde SCHEDULER=...`:
a `dask scheduler` and two single-threaded `dask worker` processes, each in its own folder, on
127.0.0.1; and a thread that kills a worker the moment it grades. tests/chapter_classes.py grades the
chapters' class on it; tests/test_cluster_grading.py checks what the killed worker left.
"""
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from grader.class_grading.cluster import QUIET
from waiting import HANG_SECONDS, process_alive, wait_until

DASK = Path(sys.executable).with_name("dask")


def quiet_environment() -> dict:
    """This environment, and Dask's idle diagnostics off or slower as in the course's own clusters
    (grader/class_grading/cluster.py, QUIET), given as the DASK_ variables an instructor's cluster
    would be given them by: a scheduler and a worker (its nanny too) doing nothing took 6.4 % of a core
    (6.3-7.0 %, 3 runs alternated, 30 s each), 1.7 % (1.67-1.70 %) with them."""
    return dict(os.environ, **{"DASK_" + key.upper().replace(".", "__").replace("-", "_"): str(value)
                               for key, value in QUIET.items()})


def _start(cmd, folder: Path) -> subprocess.Popen:
    folder.mkdir(parents=True, exist_ok=True)
    log = open(folder / "log.txt", "wb")   # a file, not a pipe nobody reads
    return subprocess.Popen(cmd, cwd=folder, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            env=quiet_environment())


def _stop(proc: subprocess.Popen) -> None:
    """The process and everything it started (its session's group), by id."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _address(info: Path) -> str | None:
    """The address in the scheduler's file, once the file is whole: the scheduler writes it after it
    listens, not in one step, and a busy machine was seen reading it empty (JSONDecodeError)."""
    try:
        return json.loads(info.read_text())["address"]
    except (FileNotFoundError, json.JSONDecodeError, KeyError):
        return None


def _stopped(procs: list, base: Path) -> str | None:
    """Why the cluster cannot come up (a process of it exited, with its log), or None."""
    for proc, folder in zip(procs, ("scheduler", "w1", "w2")):
        why = process_alive(proc, f"the dask {folder}", base / folder / "log.txt")()
        if why:
            return why
    return None


@contextlib.contextmanager
def dask_cluster(base: Path):
    """The address of a scheduler with two single-threaded workers, each in its own folder under `base`."""
    info = base / "scheduler" / "scheduler.json"
    procs = [_start([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(info)], base / "scheduler")]
    try:
        address = wait_until(lambda: _address(info), "the Dask scheduler's file",
                             alive=process_alive(procs[0], "the dask scheduler", base / "scheduler" / "log.txt"))
        for name in ("w1", "w2"):
            procs.append(_start([str(DASK), "worker", address, "--name", name, "--nthreads", "1", "--nworkers", "1",
                                 "--host", "127.0.0.1", "--no-dashboard", "--local-directory", str(base / name)],
                                base / name))
        from distributed import Client
        with Client(address, timeout=HANG_SECONDS) as client:
            wait_until(lambda: len(client.scheduler_info()["workers"]) >= 2, "two Dask workers",
                       alive=lambda: _stopped(procs, base), every=0.5)
        yield address
    finally:
        for proc in reversed(procs):
            _stop(proc)


def kill_a_worker_while_it_grades(address: str, found: dict, done) -> None:
    """SIGKILL a worker process as soon as it runs nbgrader on a batch (until `done` is set); record
    in `found` which worker and the nbgrader processes it was running."""
    from distributed import Client
    with Client(address, timeout=HANG_SECONDS) as client:
        while not done.is_set():
            pids = client.run(os.getpid)
            for worker, keys in client.processing().items():
                if worker not in pids or not any(str(k).startswith("batch_task") for k in keys):
                    continue
                children = psutil.Process(pids[worker]).children(recursive=True)
                graders = [c.pid for c in children if "nbgrader" in " ".join(c.cmdline())]
                if graders:
                    os.kill(pids[worker], signal.SIGKILL)
                    found.update(worker=worker, nbgrader=graders)
                    return
            time.sleep(0.2)
