"""Hostile and broken submissions: each gets the score it deserves and harms nobody else.

The whole class (two honest students of chapter 01, every case of tests/hostile/cases.py, most of
them on the tiny assignment, and one submission handed in five times) is handed in to one copy of
the course and graded in ONE parallel run behind the wall (grader.class_grading.autograde), with a 10 s cell
timeout. Then each case's total is checked, whether it was flagged for manual grading, and
everything the attacks aimed at.
"""
import contextlib
import hashlib
import html
import io
import re
import sys
import time

import nbformat
import pytest
from nbgrader.api import Gradebook, MissingEntry

from conftest import load_answers
from grader.class_grading.autograde import autograde_all, default_jobs
from grader.course import run_nbgrader, source_notebook as course_source_notebook
from gradebook_rows import cell_scores, db_url, total_score
from grader.preprocessors.flag_for_manual_grading import FLAGGED, MISSING
from grader.judge.probes import hidden_section, without_hidden_section
from grader.release import release
from submissions import (copy_course, place_submission, solution_copy, submission_path,
                         with_answers)
from hostile.cases import CASES, CHAPTER as ASSIGNMENT, FULL, REPEATS, TINY, case_of, hand_in, points_of
from hostile.tiny import add_tiny_assignment

HONEST = ("victim", "honest")
FEEDBACK = "fb"   # the reference, but broadcast_shape lines shapes up from the left (its points lost), for the feedback tests
CELL_TIMEOUT = 10
CPU_LIMIT = 15
DISK_LIMIT_MB = 64


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    course = copy_course(tmp_path_factory.mktemp("hostile") / "course")
    release([ASSIGNMENT], course=course)
    add_tiny_assignment(course)
    reference = solution_copy(ASSIGNMENT, course)
    place_submission(course, "victim", ASSIGNMENT, reference)
    place_submission(course, "honest", ASSIGNMENT, with_answers(reference, load_answers(ASSIGNMENT)["alternative"]))
    left_aligned = load_answers(ASSIGNMENT)["wrong"]["broadcast_shape"]
    place_submission(course, FEEDBACK, ASSIGNMENT, with_answers(reference, {"broadcast_shape": left_aligned}))
    for name in [*CASES, *REPEATS]:
        hand_in(course, name)
    before = {"victim": _sha(submission_path(course, "victim", ASSIGNMENT)),
              "solutions": [_sha(course / "solutions" / a / f"{a}.ipynb") for a in (ASSIGNMENT, TINY)]}
    start = time.perf_counter()
    log = io.StringIO()   # what the grading said of a submission it could not grade: in each failure's message
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stderr(Tee(log, sys.stderr)):
        # a kernel gets CPU_LIMIT seconds of CPU: an honest chapter-01 one uses about 2.5 s for its cells
        # (measured 2026-11-29) and a little more for the probes; the stubborn loop burns all of it
        mp.setenv("COURSE_SANDBOX_CPU", str(CPU_LIMIT))
        mp.setenv("COURSE_SANDBOX_DISK", str(DISK_LIMIT_MB * 1024**2))
        code = autograde_all(jobs=default_jobs(), course=course, progress=False, timeout=600,
                             extra_args=[f"--Execute.timeout={CELL_TIMEOUT}"])
    (course / GRADING_LOG).write_text(log.getvalue())
    return course, code, before, time.perf_counter() - start


GRADING_LOG = "class-grading.log"


class Tee(io.TextIOBase):
    def __init__(self, *streams):
        self.streams = streams

    def write(self, text):
        for stream in self.streams:
            stream.write(text)
        return len(text)


def _assignment(student):
    return case_of(student).assignment if student in CASES or student in REPEATS else ASSIGNMENT


def _total(course, student):
    assignment = _assignment(student)
    try:
        score, max_score = total_score(course, assignment, student)
    except MissingEntry:
        raise AssertionError(f"{student} is not in the gradebook: the grading said\n"
                             f"{(course / GRADING_LOG).read_text()[-4000:]}") from None
    assert max_score == FULL[assignment], f"{student}: max score comes from the gradebook, not the notebook"
    return score


def _graded(course, student):
    """The graded notebook of `student`, in autograded/."""
    assignment = _assignment(student)
    return course / "autograded" / student / assignment / f"{assignment}.ipynb"


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_case_score(graded_class, name):
    course, _, _, _ = graded_class
    assert _total(course, name) == CASES[name].score, cell_scores(course, _assignment(name), name)


def _flags(course, student) -> tuple:
    """(grade cells needing manual grading, the automatic comments that say why)."""
    assignment = _assignment(student)
    with Gradebook(db_url(course)) as gb:
        notebook = gb.find_submission_notebook(assignment, assignment, student)
        return ([g.name for g in notebook.grades if g.needs_manual_grade],
                [c.auto_comment for c in notebook.comments if FLAGGED in (c.auto_comment or "")])


@pytest.mark.parametrize("name", [n for n, case in CASES.items() if case.flagged is not None])
def test_hostile_case_flagged_for_manual_grading(graded_class, name):
    """Code that reaches into the machinery is flagged, with the reason; honest code is not."""
    course, _, _, _ = graded_class
    flagged, reasons = _flags(course, name)
    if CASES[name].flagged:
        assert flagged and reasons, f"{name} was not flagged"
    else:
        assert not flagged and not reasons, f"{name} was flagged: {reasons}"


def test_an_exercise_the_hand_in_lacked_is_flagged_with_why(graded_class):
    """A hand-in of the release before the tiny assignment's last exercise, and one whose `double` was
    retyped in a new cell: the exercise whose answer cell was put back is flagged, with the reason on
    that answer cell, whatever it scored; the exercises that were there are not."""
    course, _, _, _ = graded_class
    with Gradebook(db_url(course)) as gb:
        for student, missing in (("earlier_release", "answer"), ("retyped_answer", "double")):
            notebook = gb.find_submission_notebook(TINY, TINY, student)
            assert [g.name for g in notebook.grades if g.needs_manual_grade] == [f"{missing}_tests"], student
            comments = {c.name: c.auto_comment or "" for c in notebook.comments}
            assert MISSING in comments[missing], (student, comments)
            assert not [name for name, text in comments.items() if name != missing and FLAGGED in text], comments


def test_the_same_submission_gets_the_same_score(graded_class):
    """Five students hand in one notebook whose loop is slow: graded in different batches while the
    machine is busy, each gets the same score (no check depends on time or load)."""
    course, _, _, _ = graded_class
    assert {_total(course, name) for name in REPEATS} == {CASES["python_loop"].score}
    # and regraded: the same student's seed, the same score
    before = cell_scores(course, ASSIGNMENT, REPEATS[0])
    assert autograde_all(jobs=1, course=course, progress=False, only=[(REPEATS[0], ASSIGNMENT)],
                         extra_args=[f"--Execute.timeout={CELL_TIMEOUT}"]) == 0
    assert cell_scores(course, ASSIGNMENT, REPEATS[0]) == before


def test_honest_students_unharmed(graded_class):
    course, _, before, _ = graded_class
    for student in HONEST:
        assert _total(course, student) == FULL[ASSIGNMENT]
    assert _sha(submission_path(course, "victim", ASSIGNMENT)) == before["victim"]
    assert [_sha(course / "solutions" / a / f"{a}.ipynb") for a in (ASSIGNMENT, TINY)] == before["solutions"]
    assert not (course / "PWNED.txt").exists()
    nbformat.read(_graded(course, "victim"), 4)   # still a notebook, not "PWNED"


def test_attacks_were_blocked_inside_the_kernel(graded_class):
    course, _, _, _ = graded_class
    def outputs(student):
        nb = nbformat.read(_graded(course, student), 4)
        return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "damage done: []" in outputs("vandal")
    assert "no solutions for me: FileNotFoundError" in outputs("reads_solutions")
    assert "hidden tests found: []" in outputs("reads_working_folder")
    written = [int(line.split()[-1]) for line in outputs("fills_disk").splitlines() if line.startswith("MiB written")]
    assert len(written) == 2 and all(0 < mb <= DISK_LIMIT_MB for mb in written), written


def test_nothing_but_the_graded_notebook_comes_back(graded_class):
    course, _, _, _ = graded_class
    graded = _graded(course, "fills_disk")
    assert sorted(p.name for p in graded.parent.iterdir()) == [graded.name]


def test_output_is_capped(graded_class):
    course, _, _, _ = graded_class
    graded = _graded(course, "floods_output")
    assert graded.stat().st_size < 3 * 1024**2
    assert "[output cut by the grader" in graded.read_text()


def _feedback_text(course, student) -> str:
    run_nbgrader("generate_feedback", ASSIGNMENT, "--student", student, "--force", course=course)
    page = (course / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _hidden_lines():
    """Lines that appear only inside the solution notebook's hidden sections (not even as part
    of a visible line, since the leak check below searches for substrings)."""
    nb = nbformat.read(course_source_notebook(ASSIGNMENT), as_version=4)
    visible = "\n".join(without_hidden_section(cell.source) for cell in nb.cells)
    return [line.strip() for cell in nb.cells for line in (hidden_section(cell.source) or "").splitlines()
            if len(line.strip()) > 15 and line.strip() not in visible]


def test_hidden_checks_never_reach_the_notebook_or_feedback(graded_class):
    """A hook printed every cell the kernel ran, the probes included: none of it is kept. And
    for anyone, hidden sections never reach the notebook the kernel ran, nor the feedback."""
    course, _, _, _ = graded_class
    hidden = _hidden_lines() + ["hidden_checks"]
    assert len(hidden) > 20
    for student in ("prints_test_cells", "leaks_hidden_lines", "honest", FEEDBACK):
        graded = _graded(course, student).read_text()
        page = _feedback_text(course, student)
        leaked = [h for h in hidden if h in graded or h in page]
        assert not leaked, f"{student}: {leaked[:3]}"


def test_verdicts_quote_no_student_text(graded_class):
    """Code that read the probe's source handed it back as an exception's class name, a string and
    a dict's keys: the verdicts name no such thing (only builtin exception names are quoted)."""
    course, _, _, _ = graded_class
    nb = nbformat.read(_graded(course, "leaks_hidden_lines"), 4)
    verdicts = {c.metadata["nbgrader"]["grade_id"]: " ".join(o.get("evalue", "") for o in c.outputs)
                for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")}
    assert "your code raised an exception of a class of its own" in verdicts["gram_tests"], verdicts
    assert "expected a tensor, got a str" in verdicts["center_columns_tests"], verdicts
    assert "expected a tensor, got a dict" in verdicts["sq_distances_tests"], verdicts


def test_feedback_keeps_scores_visible_tests_and_the_verdict(graded_class):
    course, _, _, _ = graded_class
    text = _feedback_text(course, FEEDBACK)
    assert "count the levels of nested brackets" in text              # a visible assert message
    verdict = re.search(r"hidden check 1 of \d+ \(the examples above: the shape, or ValueError\)[^\n]*", text)
    assert verdict, "the judge's verdict is not in the feedback"
    assert f"{FULL[ASSIGNMENT] - points_of(['broadcast_shape'])}" in text and f"{FULL[ASSIGNMENT]}" in text   # score out of max
    assert "(4, 3, 5)" not in verdict.group(0), "the verdict quotes the expected answer"


def test_dead_kernels_end_grading_of_that_notebook_only(graded_class):
    """A kernel that dies (os._exit) or is killed at the CPU limit (a loop that ignores the
    interrupt): nbgrader gives up on that notebook (no graded copy, 0 points, an error in the
    log), quickly, and the other students are graded as usual."""
    course, _, _, _ = graded_class
    for name in ("os_exit", "stubborn_loop"):
        assert not _graded(course, name).exists()
        assert _total(course, name) == 0
    # (that the CPU limit, not a wall-clock backstop, stops it: test_sandbox.py::test_cpu_limit_*)


def test_errors_reported_but_others_graded(graded_class):
    course, code, _, seconds = graded_class
    assert code == 1, "the malformed and renamed notebooks are reported as errors"
    print(f"graded {len(CASES) + len(HONEST)} submissions in {seconds:.0f} s")
