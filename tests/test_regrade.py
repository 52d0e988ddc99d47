"""make regrade: every change shown, nothing changed until it is applied, then applied with new feedback.

On the tiny assignment, so that three students are graded in seconds (tests/hostile/tiny.py).
"""
import contextlib
import io
import re
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from grader.class_grading.autograde import autograde_all
from grader.class_grading.regrade import Change, regrade
from grader.cli import main as cli
from grader.course import run_nbgrader
from grader.judge.outcomes import read_outcomes
from grader.judge.probes import gradebook_hidden_sections

from bench_grading import gradebook_state
from hostile.tiny import add_tiny_assignment
from submissions import copy_course, place_submission, release_copy, solution_copy, with_answers

FIXED_CHECK = 'check("the answer is an int", isinstance(ANSWER, int))'


@pytest.fixture(scope="module")
def graded_tiny(tmp_path_factory):
    """The tiny assignment handed in by ada (the solution), cy (ANSWER = 41) and bob (untouched),
    graded, feedback written; then the instructor loosens the answer's hidden check in solutions/."""
    course = copy_course(tmp_path_factory.mktemp("regrade") / "course")
    assignment = add_tiny_assignment(course)
    reference = solution_copy(assignment, course)
    place_submission(course, "ada", assignment, reference)
    place_submission(course, "cy", assignment, with_answers(reference, {"answer": "ANSWER = 41"}))
    place_submission(course, "bob", assignment, release_copy(assignment, course))
    assert autograde_all(jobs=2, course=course, progress=False) == 0
    run_nbgrader("generate_feedback", assignment, "--force", course=course)
    source = course / "solutions" / assignment / f"{assignment}.ipynb"
    text = source.read_text()
    assert 'check(\\"the answer\\", ANSWER)' in text
    source.write_text(text.replace('check(\\"the answer\\", ANSWER)', FIXED_CHECK.replace('"', '\\"')))
    return course, assignment


def _files(course: Path) -> dict:
    return {p.relative_to(course).as_posix(): p.read_bytes() for folder in ("autograded", "feedback", "judge_outcomes")
            for p in sorted((course / folder).rglob("*")) if p.is_file()}


def test_a_regrade_shows_each_change_and_changes_nothing(graded_tiny):
    course, assignment = graded_tiny
    before, files = gradebook_state(course, assignment), _files(course)
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        assert cli(["regrade", assignment, "--course", str(course), "--jobs", "2"]) == 0
    assert re.search(r"^cy\s+answer_tests\s+0 -> 1\s*$", said.getvalue(), re.M), said.getvalue()
    assert "ada" not in said.getvalue() and "bob" not in said.getvalue(), "their scores do not change"
    assert gradebook_state(course, assignment) == before and _files(course) == files, "the course changed"
    assert FIXED_CHECK not in "".join(gradebook_hidden_sections(f"sqlite:///{course / 'gradebook.db'}",
                                                                assignment, assignment).values())
    report = (course / "reports" / f"{assignment}.html").read_text()
    assert "Regrade: what changed" in report and "NOT applied yet" in report


def test_an_applied_regrade_writes_the_changes_and_new_feedback(graded_tiny):
    course, assignment = graded_tiny
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.find_grade("double_tests", assignment, assignment, "bob").manual_score = 0.5
        gb.db.commit()
    old_feedback = (course / "feedback" / "cy" / assignment / f"{assignment}.html").read_text()
    status, changes = regrade(course, assignment, apply=True, jobs=2)
    assert status == 0 and changes == [Change("cy", assignment, "answer_tests", 0.0, 1.0, None)]
    state = gradebook_state(course, assignment)
    assert state["cy"]["answer_tests"][0] == 1 and state["ada"]["answer_tests"][0] == 1
    assert state["bob"]["double_tests"][:2] == (0.0, 0.5), "the manual score stays"
    assert FIXED_CHECK in "".join(gradebook_hidden_sections(f"sqlite:///{course / 'gradebook.db'}",
                                                            assignment, assignment).values())
    assert not read_outcomes(course, assignment)["cy"][assignment]["answer_tests"]["failed"]
    new_feedback = (course / "feedback" / "cy" / assignment / f"{assignment}.html").read_text()
    assert new_feedback != old_feedback and "Grader: passed all 1 hidden checks" in new_feedback
    assert regrade(course, assignment, jobs=2) == (0, []), "applied: a second regrade finds nothing to change"
