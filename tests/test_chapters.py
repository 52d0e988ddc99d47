"""End to end through nbgrader, per chapter: four students hand in four versions.

- `reference`: the solution notebook itself            -> full marks
- `untouched`: the student release, as downloaded      -> 0
- `alternative`: every exercise answered correctly, but written differently (tests/answers)
                                                       -> full points on every test cell
- `wrong`: every exercise answered with a plausible mistake (tests/answers)
                                                       -> 0 on every test cell
"""
import os
import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import ALL_CHAPTERS, grade_assignment, load_answers
from grader.course import REPO_ROOT
from grader.gradebook import cell_scores
from grader.submissions import (place_submission, release_copy, solution_cell_ids,
                                solution_copy, with_answers)


STUDENTS = ("reference", "untouched", "alternative", "wrong")
SLOW_CHAPTERS = ["10_distributed", "06_debugging", "07_fashion_mnist_lab", "09_performance", "08_gpu_training"]


def grade_chapter(chapter: str, course) -> dict:
    """Hand in the four versions of one chapter in `course`, autograde, return their scores."""
    answers = load_answers(chapter)
    reference = solution_copy(chapter, course)
    place_submission(course, "reference", chapter, reference)
    place_submission(course, "untouched", chapter, release_copy(chapter, course))
    place_submission(course, "alternative", chapter, with_answers(reference, answers.ALTERNATIVE))
    place_submission(course, "wrong", chapter, with_answers(reference, answers.WRONG))
    grade_assignment(chapter, course)
    return {student: cell_scores(course, chapter, student) for student in STUDENTS}


@pytest.fixture(scope="module")
def graded(request, released_course, tmp_path_factory):
    """{chapter: {student: cell scores}} for the chapters the selected tests ask about.

    Each chapter is graded in its own copy of the course (its own gradebook), so chapters are
    graded in parallel, one nbgrader process per core, without sharing a sqlite file.
    """
    wanted = sorted({item.callspec.params["chapter"] for item in request.session.items
                     if item.module is request.module and "graded" in item.fixturenames
                     and hasattr(item, "callspec")})
    copies = {}
    for chapter in wanted:
        copies[chapter] = tmp_path_factory.mktemp(f"grade_{chapter}") / "course"
        shutil.copytree(released_course, copies[chapter])
    # the slowest chapters first (DDP launches, training), so that no core idles at the end
    slow_first = sorted(wanted, key=lambda c: (c not in SLOW_CHAPTERS, SLOW_CHAPTERS.index(c) if c in SLOW_CHAPTERS else 0, c))
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = {chapter: pool.submit(grade_chapter, chapter, copies[chapter]) for chapter in slow_first}
        results = {chapter: future.result() for chapter, future in futures.items()}
    return results.__getitem__


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_answers_cover_every_exercise(chapter):
    answers = load_answers(chapter)
    ids = set(solution_cell_ids(solution_copy(chapter, REPO_ROOT)))
    assert set(answers.ALTERNATIVE) == ids, "tests/answers: one ALTERNATIVE per solution cell"
    assert set(answers.WRONG) == ids, "tests/answers: one WRONG per solution cell"
    for grade_id in ids:
        assert answers.ALTERNATIVE[grade_id].strip() != answers.WRONG[grade_id].strip()


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_every_test_cell_has_hidden_tests_and_points(chapter):
    nb = solution_copy(chapter, REPO_ROOT)
    graded_cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert len(graded_cells) >= 5, "every chapter has at least 5 graded exercises"
    for cell in graded_cells:
        meta = cell.metadata["nbgrader"]
        assert meta.get("points", 0) > 0 and meta.get("locked"), f"{meta['grade_id']}: points and locked"
        assert "### BEGIN HIDDEN TESTS" in cell.source, f"{meta['grade_id']} has no hidden tests"


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_reference_solution_scores_full_marks(graded, chapter):
    scores = graded(chapter)["reference"]
    lost = {name: s for name, s in scores.items() if s[0] != s[1]}
    assert not lost, f"the reference solution lost points: {lost}"


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_untouched_release_scores_zero(graded, chapter):
    scores = graded(chapter)["untouched"]
    assert scores and sum(s for s, _ in scores.values()) == 0, f"points for doing nothing: {scores}"


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_alternative_answers_score_full_marks(graded, chapter):
    scores = graded(chapter)["alternative"]
    lost = {name: s for name, s in scores.items() if s[0] != s[1]}
    assert not lost, f"a correct answer written differently lost points: {lost}"


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_wrong_answers_score_zero(graded, chapter):
    scores = graded(chapter)["wrong"]
    passed = {name: s for name, s in scores.items() if s[0]}
    assert not passed, f"a plausible wrong answer got points: {passed}"
