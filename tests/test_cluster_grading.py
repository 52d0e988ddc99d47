"""`make autograde SCHEDULER=...` on a real Dask cluster on this machine: a `dask scheduler` and two
`dask worker` processes, each in its own folder, on 127.0.0.1. Every score must equal serial
`make autograde`'s on this machine (conftest's `graded_class`, the same hand-ins, graded by a LocalCluster;
tests/test_parallel_grading.py shows that equals plain serial nbgrader), even though one worker is killed while
it grades; an unreachable scheduler is reported within seconds and nothing is written; a worker
without the wall refuses.
"""
import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest

from bench_grading import gradebook_state
from conftest import _free_port
from grader import timings
from grader.class_grading import cluster
from grader.class_grading.autograde import autograde_all, submissions

CLASS_CHAPTERS = ("00_setup", "01_tensors", "02_autograd")   # graded here and by graded_class, compared
DASK = Path(sys.executable).with_name("dask")


def _start(cmd, folder: Path) -> subprocess.Popen:
    folder.mkdir(parents=True, exist_ok=True)
    log = open(folder / "log.txt", "wb")   # a file, not a pipe nobody reads
    return subprocess.Popen(cmd, cwd=folder, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


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


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """The address of a scheduler with two single-threaded workers, each in its own folder."""
    base = tmp_path_factory.mktemp("cluster")
    info = base / "scheduler" / "scheduler.json"
    procs = [_start([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(info)], base / "scheduler")]
    try:
        deadline = time.time() + 60
        while not info.exists() and time.time() < deadline:
            time.sleep(0.2)
        address = json.loads(info.read_text())["address"]
        for name in ("w1", "w2"):
            procs.append(_start([str(DASK), "worker", address, "--name", name, "--nthreads", "1", "--nworkers", "1",
                                 "--host", "127.0.0.1", "--no-dashboard", "--local-directory", str(base / name)],
                                base / name))
        from distributed import Client
        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for proc in reversed(procs):
            _stop(proc)


def _kill_a_worker_while_it_grades(address: str, found: dict, done: threading.Event) -> None:
    """SIGKILL a worker process as soon as it runs nbgrader on a batch; record what was killed."""
    from distributed import Client
    with Client(address, timeout=30) as client:
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


@pytest.fixture(scope="module")
def cluster_graded(scheduler, graded_class, released_course, tmp_path_factory):
    course = tmp_path_factory.mktemp("cluster_graded") / "course"
    shutil.copytree(released_course, course)
    for student, chapter in submissions(graded_class):
        if chapter in CLASS_CHAPTERS:
            shutil.copytree(graded_class / "submitted" / student / chapter, course / "submitted" / student / chapter)
    killed, done, said, spent = {}, threading.Event(), io.StringIO(), Counter()
    killer = threading.Thread(target=_kill_a_worker_while_it_grades, args=(scheduler, killed, done))
    killer.start()
    try:
        with contextlib.redirect_stderr(said):
            # batches of 3 students: each worker grades several, with the reference tasks' outputs
            code = autograde_all(jobs=2, course=course, scheduler=scheduler, progress=False, batch_max=3,
                                 spent=spent)
    finally:
        done.set()
        killer.join()
    return course, code, killed, said.getvalue(), spent


def test_a_class_over_three_chapters_grades_on_the_cluster(cluster_graded):
    course, code, _, log, spent = cluster_graded
    assert code == 0, log[-6000:]
    assert spent[timings.REFERENCE_TASKS] > 0, "more batches than workers: reference tasks ran"
    assert spent[timings.REFERENCE] == 0, "and every judge used their outputs, none ran its own"
    assert len(submissions(course)) >= 12
    assert {a for _, a in submissions(course)} == set(CLASS_CHAPTERS)


def test_every_score_equals_the_local_grading(cluster_graded, graded_class):
    """Every cell's score, flag and comment, and each submission's timestamp and late penalty."""
    course, _, _, log, _ = cluster_graded
    for chapter in CLASS_CHAPTERS:
        assert gradebook_state(course, chapter) == gradebook_state(graded_class, chapter), log[-6000:]
    for student, assignment in submissions(graded_class):
        if assignment in CLASS_CHAPTERS:
            graded = course / "autograded" / student / assignment / f"{assignment}.ipynb"
            assert graded.is_file(), f"{student}/{assignment} has no graded notebook"


def test_a_worker_killed_while_grading_loses_and_doubles_nothing(cluster_graded):
    course, code, killed, log, _ = cluster_graded
    assert killed.get("nbgrader"), "no worker was seen grading, so none was killed"
    # its nbgrader died with it (and its kernels with nbgrader): nothing runs on for a dead worker
    deadline = time.time() + 10
    while any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in killed["nbgrader"]):
        assert time.time() < deadline, f"nbgrader {killed['nbgrader']} outlived its killed worker"
        time.sleep(0.2)
    # exactly one submission per hand-in, none missing, none extra, all scored as locally
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        recorded = sorted((s.student.id, a) for a in CLASS_CHAPTERS for s in gb.assignment_submissions(a))
    assert recorded == sorted(submissions(course))
    assert code == 0 and "NOT GRADED" not in log and "FAILED" not in log, log[-6000:]


def test_an_unreachable_scheduler_is_reported_within_seconds_and_nothing_is_written(
        graded_class, released_course, tmp_path, monkeypatch):
    course = tmp_path / "course"
    shutil.copytree(released_course, course)
    shutil.copytree(graded_class / "submitted" / "reference" / "01_tensors",
                    course / "submitted" / "reference" / "01_tensors")
    before = (course / "gradebook.db").read_bytes()
    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 3)
    start = time.perf_counter()
    with pytest.raises(cluster.SchedulerUnreachable, match="cannot reach the Dask scheduler"):
        autograde_all(course=course, scheduler=f"tcp://127.0.0.1:{_free_port()}", progress=False)
    assert time.perf_counter() - start < 15
    assert (course / "gradebook.db").read_bytes() == before
    assert not (course / "autograded").exists()


def test_a_worker_without_the_wall_refuses_and_nothing_is_written(
        graded_class, released_course, tmp_path, monkeypatch, capsys, in_process_cluster):
    """(The worker is a thread of this process, so that the missing bubblewrap can be faked.)"""
    from grader.wall import sandbox
    course = tmp_path / "course"
    shutil.copytree(released_course, course)
    shutil.copytree(graded_class / "submitted" / "reference" / "01_tensors",
                    course / "submitted" / "reference" / "01_tensors")
    before = (course / "gradebook.db").read_bytes()
    monkeypatch.setattr(sandbox, "bwrap", lambda: None)
    assert autograde_all(course=course, client=in_process_cluster, progress=False) == 1
    said = capsys.readouterr().err
    assert "NOT GRADED reference/01_tensors: WallMissing" in said and "install bubblewrap" in said.lower(), said
    assert (course / "gradebook.db").read_bytes() == before
    assert not (course / "autograded").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make another user's /tmp/dask-scratch-space")
def test_the_local_cluster_serves_nothing_and_keeps_its_scratch_private(tmp_path):
    """The feedback service and `make autograde` grade on this LocalCluster as root. Dask on its own
    serves its pages (workers, logs, identity) on every interface, the scheduler on the fixed port 8787
    even without a dashboard, and puts its scratch in /tmp/dask-scratch-space whoever made it: here a
    student's, made first. Each HTTP server must listen on 127.0.0.1 only and answer no route, and the
    worker's scratch must be in a folder of root's that nobody else can enter."""
    import pwd
    import urllib.error
    import urllib.request
    planted = Path("/tmp/dask-scratch-space")
    made = not planted.exists()
    if made:
        planted.mkdir()
        os.chown(planted, pwd.getpwnam("nobody").pw_uid, -1)
    try:
        with cluster.private_cluster(1) as local:
            listening = [c for c in psutil.Process().net_connections("inet") if c.status == psutil.CONN_LISTEN]
            assert listening, "the check below looks at this process's listening sockets"
            assert {c.laddr.ip for c in listening} == {"127.0.0.1"}, listening
            for port in {c.laddr.port for c in listening}:
                for route in ("/", "/status", "/health", "/metrics", "/info/main/workers.html", "/json/identity.json"):
                    with pytest.raises(urllib.error.HTTPError) as answer:
                        urllib.request.urlopen(f"http://127.0.0.1:{port}{route}", timeout=10)
                    assert answer.value.code == 404, (port, route)
            (worker,) = local.workers.values()
            scratch = Path(worker.local_directory)
            assert planted not in scratch.parents
            private = scratch.parent.parent
            assert private.stat().st_uid == 0 and private.stat().st_mode & 0o077 == 0, oct(private.stat().st_mode)
    finally:
        if made:
            shutil.rmtree(planted)
