"""Hostile and broken submissions: each gets the score it deserves and harms nobody else.

The whole class (two honest students and every case of tests/hostile/cases.py) is handed in to
one copy of the course and graded in ONE parallel run behind the wall (grader.autograde), with a
10 s cell timeout. Then each case's total is checked, and so is everything the attacks aimed at.
"""
import hashlib
import time

import nbformat
import pytest

from conftest import load_answers
from grader.autograde import autograde_all, default_jobs
from grader.gradebook import cell_scores, total_score
from grader.release import release
from grader.submissions import (copy_course, place_submission, solution_copy, submission_path,
                                with_answers)
from hostile.cases import ASSIGNMENT, CASES, FULL, hand_in

HONEST = ("victim", "honest")
CELL_TIMEOUT = 10
CPU_LIMIT = 60


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    course = copy_course(tmp_path_factory.mktemp("hostile") / "course")
    release([ASSIGNMENT], course=course)
    reference = solution_copy(ASSIGNMENT, course)
    place_submission(course, "victim", ASSIGNMENT, reference)
    place_submission(course, "honest", ASSIGNMENT, with_answers(reference, load_answers(ASSIGNMENT).ALTERNATIVE))
    for name in CASES:
        hand_in(course, name)
    before = {"victim": _sha(submission_path(course, "victim", ASSIGNMENT)),
              "solutions": _sha(course / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")}
    start = time.perf_counter()
    with pytest.MonkeyPatch.context() as mp:
        # a kernel gets CPU_LIMIT seconds of CPU (honest ones need about 10 s here)
        mp.setenv("COURSE_SANDBOX_CPU", str(CPU_LIMIT))
        code = autograde_all(jobs=default_jobs(), course=course, progress=False, timeout=600,
                             extra_args=[f"--Execute.timeout={CELL_TIMEOUT}"])
    return course, code, before, time.perf_counter() - start


def _total(course, student):
    score, max_score = total_score(course, ASSIGNMENT, student)
    assert max_score == FULL, f"{student}: max score comes from the gradebook, not the notebook"
    return score


@pytest.mark.parametrize("name", [n for n, (_, expected) in CASES.items() if expected is not None])
def test_hostile_case_score(graded_class, name):
    course, _, _, _ = graded_class
    expected = CASES[name][1]
    assert _total(course, name) == expected, cell_scores(course, ASSIGNMENT, name)


def test_honest_students_unharmed(graded_class):
    course, _, before, _ = graded_class
    for student in HONEST:
        assert _total(course, student) == FULL
    assert _sha(submission_path(course, "victim", ASSIGNMENT)) == before["victim"]
    assert _sha(course / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb") == before["solutions"]
    assert not (course / "PWNED.txt").exists()
    graded = course / "autograded" / "victim" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nbformat.read(graded, 4)   # still a notebook, not "PWNED"


def test_attacks_were_blocked_inside_the_kernel(graded_class):
    course, _, _, _ = graded_class
    def outputs(student):
        nb = nbformat.read(course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
        return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "damage done: []" in outputs("vandal")
    assert "no solutions for me: FileNotFoundError" in outputs("reads_solutions")


def test_dead_kernels_end_grading_of_that_notebook_only(graded_class):
    """A kernel that dies (os._exit) or is killed at the CPU limit (a loop that ignores the
    interrupt): nbgrader gives up on that notebook (no graded copy, 0 points, an error in the
    log), quickly, and the other students are graded as usual."""
    course, _, _, seconds = graded_class
    for name in ("os_exit", "stubborn_loop"):
        assert not (course / "autograded" / name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").exists()
        assert _total(course, name) == 0
    assert seconds < 540, "the stubborn loop was stopped by the CPU limit, long before the 600 s backstop"


def test_errors_reported_but_others_graded(graded_class):
    course, code, _, seconds = graded_class
    assert code == 1, "the malformed and renamed notebooks are reported as errors"
    print(f"graded {len(CASES) + len(HONEST)} submissions in {seconds:.0f} s")
