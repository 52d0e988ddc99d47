"""A fast lint over every solution notebook: each exercise is one consistent unit.

An exercise is a heading `### Exercise N (P point[s]): ...`, its answer (solution) cell, and right
after it the locked test cell worth P points whose hidden section defines `hidden_checks`. Seconds,
not minutes: a slip in numbering, points or order is caught before any grading runs.
"""
import re

import nbformat
import pytest

from conftest import ALL_CHAPTERS
from grader.authoring import md, solution, tests as graded_cell
from grader.course import REPO_ROOT, source_notebook
from grader.judge.probes import probe_section

HEADING = re.compile(r"^#{2,4} Exercise (\d+) \((\d+(?:\.\d+)?) points?\)", re.M)


def exercises(nb) -> list:
    """[(heading number, heading points, answer cell's grade id, the next cell)] in notebook order."""
    found, headings = [], []     # a markdown cell may head several exercises that follow it
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            headings += [(int(m.group(1)), float(m.group(2))) for m in HEADING.finditer(cell.source)]
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code":
            following = nb.cells[i + 1] if i + 1 < len(nb.cells) else None
            found.append((headings.pop(0) if headings else None, meta["grade_id"], following))
    return found


def problems(nb) -> list:
    """What is inconsistent in a solution notebook's exercises (empty: nothing)."""
    found, wrong = exercises(nb), []
    for number, (heading, grade_id, test) in enumerate(found, 1):
        meta = (test or {}).get("metadata", {}).get("nbgrader", {})
        if heading is None:
            wrong.append(f"{grade_id}: no `### Exercise {number} (P points): ...` heading before it")
        elif heading[0] != number:
            wrong.append(f"{grade_id}: headed Exercise {heading[0]}, but it is exercise {number}")
        if not (meta.get("grade") and meta.get("locked") and test.cell_type == "code"):
            wrong.append(f"{grade_id}: the cell right after an answer must be its locked test cell")
            continue
        if heading is not None and float(meta.get("points", 0)) != heading[1]:
            wrong.append(f"{grade_id}: the heading says {heading[1]:g} points, the test cell {meta.get('points')}")
        if not probe_section(test.source):
            wrong.append(f"{meta['grade_id']}: no `def hidden_checks(check, rng)` in its hidden section")
    if len([c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]) != len(found):
        wrong.append("a test cell that follows no answer cell")
    return wrong


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_every_exercise_is_numbered_worth_its_points_and_tested(chapter):
    nb = nbformat.read(source_notebook(chapter, REPO_ROOT), as_version=4)
    assert problems(nb) == []
    assert len(exercises(nb)) >= 5, "every chapter has at least 5 graded exercises"


def test_the_lint_sees_each_slip():
    """A notebook with one slip of each kind: every one is reported."""
    hidden = "### BEGIN HIDDEN TESTS\ndef hidden_checks(check, rng):\n    check('x', X)\n### END HIDDEN TESTS"
    nb = nbformat.v4.new_notebook(cells=[
        md("### Exercise 1 (2 points): fine"), solution("a", "X = 1"), graded_cell("a_tests", hidden, points=2),
        md("### Exercise 3 (1 point): numbered wrong, worth 2"), solution("b", "Y = 1"),
        graded_cell("b_tests", hidden, points=2),
        md("### Exercise 3 (1 point): plain asserts only"), solution("c", "Z = 1"), graded_cell("c_tests", "assert Z", points=1),
        md("### Exercise 4 (1 point): its test is not next"), solution("d", "W = 1"), md("a word"),
        graded_cell("d_tests", hidden, points=1), graded_cell("e_tests", hidden, points=1),
    ])
    assert problems(nb) == [
        "b: headed Exercise 3, but it is exercise 2", "b: the heading says 1 points, the test cell 2",
        "c_tests: no `def hidden_checks(check, rng)` in its hidden section",
        "d: the cell right after an answer must be its locked test cell",
        "a test cell that follows no answer cell"]   # e_tests
