"""`make autograde SCHEDULER=...` on a real Dask cluster on this machine (tests/dask_cluster.py): the
chapters' class (conftest's `graded_class`, whose scores tests/test_chapters.py checks against what
each answer set deserves) is graded there, and one worker is killed while it grades: nothing is lost
or graded twice. An unreachable scheduler is reported within seconds and nothing is written; a worker
without the wall refuses.
"""
import json
import os
import shutil
import time
from pathlib import Path

import psutil
import pytest

from chapter_classes import CLUSTER_RUN
from conftest import _free_port
from grader import timings
from grader.class_grading import cluster
from grader.class_grading.autograde import autograde_all, submissions

CLASS_CHAPTERS = ("00_setup", "01_tensors", "02_autograd")   # at least these, when this module runs alone


@pytest.fixture(scope="module")
def cluster_run(graded_class):
    return graded_class, json.loads((graded_class.parent / CLUSTER_RUN).read_text())


def test_a_class_grades_on_the_cluster(cluster_run):
    course, run = cluster_run
    assert run["code"] == 0
    assert run["spent"][timings.REFERENCE_TASKS] > 0, "more batches than workers: reference tasks ran"
    assert run["spent"].get(timings.REFERENCE, 0) == 0, "and every judge used their outputs, none ran its own"
    assert set(CLASS_CHAPTERS) <= {a for _, a in submissions(course)}


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_worker_killed_while_grading_loses_and_doubles_nothing(cluster_run):
    course, run = cluster_run
    killed = run["killed"]
    assert killed.get("nbgrader"), "no worker was seen grading, so none was killed"
    # its nbgrader died with it (and its kernels with nbgrader): nothing runs on for a dead worker
    # (they had the whole class's grading to end in: the bound only stops a hang)
    deadline = time.time() + 300
    while any(_running(p) for p in killed["nbgrader"]):
        assert time.time() < deadline, f"nbgrader {killed['nbgrader']} outlived its killed worker"
        time.sleep(0.2)
    # exactly one submission per hand-in, none missing, none extra, each with a graded notebook
    from nbgrader.api import Gradebook
    assignments = sorted({a for _, a in submissions(course)})
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        recorded = sorted((s.student.id, a) for a in assignments for s in gb.assignment_submissions(a))
    assert recorded == sorted(submissions(course))
    for student, assignment in recorded:
        graded = course / "autograded" / student / assignment / f"{assignment}.ipynb"
        assert graded.is_file(), f"{student}/{assignment} has no graded notebook"
    log = (course.parent / "grading-log.txt").read_text()
    assert "NOT GRADED" not in log and "FAILED" not in log, log[-6000:]


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


def test_the_test_clusters_processes_take_the_quiet_settings():
    """tests/dask_cluster.py hands the course's QUIET settings to `dask scheduler` and `dask worker`
    as environment variables: each one, read back by Dask's own config in such a process."""
    import subprocess
    import sys
    from dask_cluster import quiet_environment
    script = "import dask.config, distributed, json, sys; print(json.dumps([dask.config.get(k) for k in sys.argv[1:]]))"
    out = subprocess.run([sys.executable, "-c", script, *cluster.QUIET], env=quiet_environment(),
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == [value if isinstance(value, bool) else str(value) for value in cluster.QUIET.values()]
