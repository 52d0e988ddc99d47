"""Shared fixtures: one disposable copy of the course, released once per test session."""
import ast
import importlib.util
import json
import os
import re
import signal
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from grader import gradebook_schema
from grader.course import REPO_ROOT, chapters, run_nbgrader, source_notebook
from grader.release import release
from submissions import copy_course
from waiting import process_alive, wait_until

ANSWERS_DIR = Path(__file__).parent / "answers"
gradebook_schema.install()   # the tests' own gradebooks, as the course's processes make theirs


@pytest.fixture(scope="session", autouse=True)
def warm_nbgrader_commands():
    """Every nbgrader command and API script the tests run (grader.course.run_nbgrader, nbgrader_api)
    runs in a fork of one warm nbgrader instead of a fresh Python: the suite runs about 70 of them.
    Started here, in the main thread, which it lives as long as (a server dies with the thread that
    started it)."""
    import grader.course
    from grader.class_grading.warm_nbgrader import WarmNbgrader
    from grader.course import tool_env
    grader.course.warm = server = WarmNbgrader(tool_env())
    try:
        yield server
    finally:
        grader.course.warm = None
        server.stop()


@pytest.fixture(scope="session")
def released_course(tmp_path_factory) -> Path:
    """A copy of the repository as an nbgrader course, every chapter released (once per session)."""
    dest = copy_course(tmp_path_factory.mktemp("released") / "course")
    release(course=dest)
    return dest


@pytest.fixture(scope="session")
def graded_class(request, released_course, tmp_path_factory) -> Path:
    """A course where `make autograde`'s parallel path graded every asked-for chapter's class once
    (tests/chapter_classes.py): the chapters are the `chapter` parameter of the tests that use this
    fixture, and the CLASS_CHAPTERS of their modules."""
    from chapter_classes import grade_class
    wanted = set()
    for item in request.session.items:
        if "graded_class" in item.fixturenames:
            wanted |= set(getattr(item.module, "CLASS_CHAPTERS", ()))
            if hasattr(item, "callspec") and "chapter" in item.callspec.params:
                wanted.add(item.callspec.params["chapter"])
    return grade_class(sorted(wanted), released_course, tmp_path_factory.mktemp("graded_class"))


@pytest.fixture
def in_process_cluster():
    """A Dask client whose worker is a thread of this process, so that a test can replace what the
    tasks call; the environment, which tasks set from the coordinator's (grader/class_grading/batch.py),
    is put back afterwards."""
    from distributed import Client
    saved = dict(os.environ)
    try:
        with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0") as client:
            yield client
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="module")
def course(released_course, tmp_path_factory) -> Path:
    """A private copy of the released course for one test module: its own gradebook and
    submissions, so modules never grade each other's students. The real repo is untouched."""
    dest = tmp_path_factory.mktemp("course") / "course"
    shutil.copytree(released_course, dest)
    return dest


LAB_TOKEN = "course-test-token"


@dataclass
class Lab:
    """A `make lab` server on 127.0.0.1, serving a fresh student workspace."""
    port: int
    workspace: Path

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def call(self, path, data=None):
        """JSON from the server's REST API (a POST when `data` is given)."""
        body = urllib.parse.urlencode(data).encode() if data else None
        request = urllib.request.Request(self.url(path), data=body, headers={"Authorization": f"token {LAB_TOKEN}"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(server: Lab) -> bool:
    try:
        server.call("/api/status")
        return True
    except OSError:
        return False


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """`make lab` as a student starts it: the workspace filled from the release, JupyterLab on it."""
    base = tmp_path_factory.mktemp("lab")
    server = Lab(_free_port(), base / "workspace")
    args = f"--no-browser --port {server.port} --IdentityProvider.token={LAB_TOKEN} --ServerApp.open_browser=False"
    log = open(base / "lab.log", "wb")     # a file, not a pipe: nobody reads a pipe, and a full one stalls the server
    # a fresh student's lab: none of this machine's own JupyterLab settings (a news question answered once)
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(base / "user-settings"))
    proc = subprocess.Popen(["make", "--no-print-directory", "lab", f"LAB_ARGS={args}", f"WORKSPACE={server.workspace}"],
                            cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until(lambda: _answers(server), "make lab's JupyterLab to answer",
                   alive=process_alive(proc, "make lab", base / "lab.log"), every=1)
        yield server
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


# The answer sets of tests/answers/<chapter>.py (CONTRIBUTING.md), and whether each earns full points
# (True) or none (False); test_chapters hands each in as the student of the same name.
ANSWER_SETS = {"alternative": True, "wrong": False, "other_wrong": False, "overfit": False}
# Sets that answer only some exercises (the reference answers the rest), each must score 0 where it answers:
# course_copy binds what the course ships (torchcourse, ddp_scripts) to the exercise's name; more_wrong holds
# a further plausible mistake where one exercise needs a third (issue 20's kinds of lax checks); found_wrong
# one more, where an exercise already has a more_wrong (issue 34: wrong answers that a review found passing);
# review_wrong and review_more_wrong two more of that kind (issue 45's review).
PARTIAL_SETS = ("course_copy", "more_wrong", "found_wrong", "review_wrong", "review_more_wrong")


def load_answers(chapter: str) -> dict:
    """tests/answers/<chapter>.py, whose ANSWERS is {grade_id: {set: source}}, read by set:
    {set: {grade_id: source}} with every ANSWER_SETS name, and the PARTIAL_SETS some exercise has."""
    path = ANSWERS_DIR / f"{chapter}.py"
    spec = importlib.util.spec_from_file_location(f"answers_{chapter}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sets = {name: {} for name in ANSWER_SETS}
    for grade_id, answers in module.ANSWERS.items():
        for name, source in answers.items():
            if name not in ANSWER_SETS and name not in PARTIAL_SETS:
                raise ValueError(f"{path.name}: {grade_id} has an answer in an unknown set {name!r}")
            sets.setdefault(name, {})[grade_id] = source
    return sets


def partial_sets(answers: dict) -> dict:
    """{set: {grade_id: source}} for the partial sets that load_answers found, in PARTIAL_SETS order."""
    return {name: answers[name] for name in PARTIAL_SETS if name in answers}


def _defined_names(source: str) -> set:
    """The functions and classes a solution cell defines."""
    return {node.name for node in ast.parse(source).body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def partial_students(chapter: str, answers: dict) -> dict:
    """{student: [partial sets]}: who hands in each partial set of `chapter` (test_chapters grades each
    once), packed first-fit in PARTIAL_SETS order. Sets share a student where no exercise answered by
    one is answered by another, and no cell of one's exercises (the solution, or its test) names a
    function or class another one's exercises define: one set's mistake must never be what fails
    another's test. The student is named after its sets."""
    nb = nbformat.read(source_notebook(chapter), as_version=4)
    cells = {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")}

    def touches(one: dict, other: dict) -> bool:
        if one.keys() & other.keys():
            return True
        names = set().union(*(_defined_names(cells[g]) for g in other))
        text = "\n".join(cells[g] + "\n" + cells.get(f"{g}_tests", "") for g in one)
        return any(re.search(rf"\b{re.escape(name)}\b", text) for name in names)

    packs = []   # [[set names]]
    partial = partial_sets(answers)
    for name, answered in partial.items():
        pack = next((p for p in packs if not any(touches(answered, partial[other]) or touches(partial[other], answered)
                                                 for other in p)), None)
        if pack is None:
            packs.append([name])
        else:
            pack.append(name)
    return {"-and-".join(pack): pack for pack in packs}


ALL_CHAPTERS = chapters(REPO_ROOT)


def grade_assignment(assignment: str, course: Path, *extra_args, env=None) -> None:
    """Autograde every submission of one assignment in `course` with plain nbgrader (`env`: added to
    its environment)."""
    run_nbgrader("autograde", assignment, "--force", *extra_args, course=course, env=env)

# Notebooks executed by the tests (nbgrader kernels inherit this) run in quick, offline mode,
# as in CI and `make test`, also when pytest is called directly.
os.environ.setdefault("COURSE_QUICK", "1")
os.environ.setdefault("COURSE_OFFLINE", "1")


# `make test` runs the hub's tests, nbval, then test_run_all, test_no_answer_ships and test_regrade beside this suite
# (the Makefile's BESIDE and LATER). The modules that keep both cores busy on their own (graded classes,
# torchrun launches) run last, so that those beside get the core the serial tests before them leave idle.
BUSY_MODULES = ("test_chapters", "test_reports", "test_cluster_grading", "test_hostile", "test_parallel_grading",
                "test_ddp", "test_fsdp", "test_run_all", "test_no_answer_ships", "test_regrade")


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.module.__name__ in BUSY_MODULES)   # stable: order kept within


def pytest_runtest_logstart(nodeid, location):
    """COURSE_TEST_TIMELINE=FILE: each test's start (epoch seconds, pid, id) appended to FILE, from both of
    make test's chains, to see what ran while the CPU idled (balancing BESIDE, LATER and BUSY_MODULES)."""
    timeline = os.environ.get("COURSE_TEST_TIMELINE")
    if timeline:
        with open(timeline, "a") as f:
            f.write(f"{time.time():.1f}\t{os.getpid()}\t{nodeid}\n")
