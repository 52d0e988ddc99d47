"""Student feedback shows scores and visible tests, never the hidden tests (nbgrader #917)."""
import html
import re

import nbformat
import pytest

from conftest import grade_assignment
from grader.course import source_notebook
from grader.feedback import generate_all
from grader.submissions import place_submission, solution_copy, with_answers

CHAPTER = "01_tensors"
HIDDEN_BLOCK = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)


@pytest.fixture(scope="module")
def feedback_html(course):
    reference = solution_copy(CHAPTER, course)
    # (3, 4, 5) passes the visible check (rank 3) and fails only the hidden assert
    place_submission(course, "fb", CHAPTER, with_answers(reference, {"broadcast_shape": "BROADCAST_SHAPE = (3, 4, 5)\n"}))
    grade_assignment(CHAPTER, course)
    assert generate_all(course) == 0
    page = (course / "feedback" / "fb" / CHAPTER / f"{CHAPTER}.html").read_text()
    autograded = (course / "autograded" / "fb" / CHAPTER / f"{CHAPTER}.ipynb").read_text()
    return html.unescape(re.sub(r"<[^>]+>", "", page)), autograded


def hidden_lines():
    """Lines that appear only inside hidden-test blocks (not also in a visible cell)."""
    nb = nbformat.read(source_notebook(CHAPTER), as_version=4)
    visible = {line.strip() for cell in nb.cells for line in HIDDEN_BLOCK.sub("", cell.source).splitlines()}
    return [line.strip() for cell in nb.cells for block in HIDDEN_BLOCK.findall(cell.source)
            for line in block.splitlines() if len(line.strip()) > 15 and line.strip() not in visible]


def test_graded_notebook_holds_no_hidden_tests(feedback_html):
    """Hidden sections never reach the notebook the student's kernel ran (StripHiddenTests),
    so neither the kernel nor the feedback built from that notebook can show them."""
    _, autograded = feedback_html
    leaked = [line for line in hidden_lines() if line in autograded]
    assert not leaked and "hidden_checks" not in autograded, leaked[:3]


def test_feedback_reveals_no_hidden_test_line(feedback_html):
    text, _ = feedback_html
    leaked = [line for line in hidden_lines() if line in text]
    assert not leaked, f"hidden test source in feedback: {leaked[:3]}"
    assert "(4, 3, 5)" not in text, "the expected answer leaked through a traceback"


def test_feedback_keeps_scores_and_visible_tests(feedback_html):
    text, _ = feedback_html
    assert "count the levels of nested brackets" in text      # a visible assert message
    assert "hidden check 1 of 1 (the broadcast shape)" in text  # the judge's verdict
    assert "9.0" in text and "10.0" in text                   # score out of max
    assert "details hidden" in text
