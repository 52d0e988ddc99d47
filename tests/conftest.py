"""Shared fixtures: one disposable copy of the course, released once per test session."""
import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from grader.course import REPO_ROOT, chapters, run_nbgrader
from grader.release import release
from grader.submissions import copy_course

ANSWERS_DIR = Path(__file__).parent / "answers"


@pytest.fixture(scope="session")
def released_course(tmp_path_factory) -> Path:
    """A copy of the repository as an nbgrader course, every chapter released (once per session)."""
    dest = copy_course(tmp_path_factory.mktemp("released") / "course")
    release(course=dest)
    return dest


@pytest.fixture(scope="module")
def course(released_course, tmp_path_factory) -> Path:
    """A private copy of the released course for one test module: its own gradebook and
    submissions, so modules never grade each other's students. The real repo is untouched."""
    dest = tmp_path_factory.mktemp("course") / "course"
    shutil.copytree(released_course, dest)
    return dest


def load_answers(chapter: str):
    """tests/answers/<chapter>.py: the ALTERNATIVE and WRONG answers for every solution cell."""
    path = ANSWERS_DIR / f"{chapter}.py"
    spec = importlib.util.spec_from_file_location(f"answers_{chapter}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ALL_CHAPTERS = chapters(REPO_ROOT)


def grade_assignment(assignment: str, course: Path, *extra_args) -> None:
    """Autograde every submission of one assignment in `course` with plain nbgrader."""
    run_nbgrader("autograde", assignment, "--force", *extra_args, course=course)

# Notebooks executed by the tests (nbgrader kernels inherit this) run in quick, offline mode,
# as in CI and `make test`, also when pytest is called directly.
os.environ.setdefault("COURSE_QUICK", "1")
os.environ.setdefault("COURSE_OFFLINE", "1")


# `make test` runs nbval beside this suite. The modules that keep both cores busy on their own
# (graded classes, torchrun launches) run last, so that nbval's kernel gets the core that the
# serial tests before them leave idle.
BUSY_MODULES = ("test_chapters", "test_hostile", "test_parallel_grading", "test_ddp", "test_run_all")


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.module.__name__ in BUSY_MODULES)   # stable: order kept within
