"""End to end through `make autograde` (nbgrader, behind the wall, judged), per chapter: six students hand
in six versions (tests/chapter_classes.py grades them all once).

- `reference`: the solution notebook itself            -> full marks
- `untouched`: the student release, as downloaded      -> 0
- `alternative`: every exercise answered correctly, but written differently (tests/answers)
                                                       -> full points on every test cell
- `wrong`: every exercise answered with a plausible mistake (tests/answers)
                                                       -> 0 on every test cell
- `other_wrong`: a second, different plausible mistake  -> 0 on every test cell
- `overfit`: answers that special-case the visible tests' inputs: the visible asserts pass in
  the student's kernel, and still                      -> 0 on every test cell
- `course_copy`, `more_wrong`, `found_wrong`, `review_wrong`, `review_more_wrong` (where a chapter
  has them): the reference with some exercises answered by binding the course's own copy, or by a
  further mistake (the last three: mistakes that reviews found passing an earlier version of the
  hidden checks) -> 0 on those test cells, full points on the others. Sets that answer exercises
  apart, and name nothing of each other's, are handed in by one student (conftest.partial_students)
"""
import json

import pytest

from conftest import ALL_CHAPTERS, ANSWER_SETS, PARTIAL_SETS, load_answers, partial_sets, partial_students
from grader.course import REPO_ROOT, source_notebook
from grader.pipeline import SKIP_WHEN_GRADING
from gradebook_rows import cell_scores
from submissions import solution_cell_ids, solution_copy


def visible_tests(graded_notebook) -> dict:
    """{test cell: "passed" or "raised <error>"}: the judge's record of the visible asserts."""
    nb = json.loads(graded_notebook.read_text())
    return {c["metadata"]["nbgrader"]["grade_id"]: c["metadata"].get("judge", {}).get("visible_tests")
            for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")}


@pytest.fixture(scope="module")
def graded(graded_class):
    """chapter -> {student: {"scores": cell scores, "visible": the judge's record of the visible asserts}}."""
    def results(chapter):
        course = graded_class     # every chapter's class in one course
        students = sorted(p.parent.name for p in (course / "submitted").glob(f"*/{chapter}"))
        return {student: {"scores": cell_scores(course, chapter, student),
                          "visible": visible_tests(course / "autograded" / student / chapter / f"{chapter}.ipynb")}
                for student in students}
    return results


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_answers_cover_every_exercise(chapter):
    answers = load_answers(chapter)
    ids = set(solution_cell_ids(solution_copy(chapter, REPO_ROOT)))
    for name in ANSWER_SETS:
        assert set(answers[name]) == ids, f"tests/answers: one {name} answer per solution cell"
    for grade_id in ids:
        versions = [answers[name][grade_id].strip() for name in ANSWER_SETS]
        assert len(set(versions)) == len(versions), f"{grade_id}: two answer sets hold the same code"


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_reference_solution_scores_full_marks(graded, chapter):
    scores = graded(chapter)["reference"]["scores"]
    lost = {name: s for name, s in scores.items() if s[0] != s[1]}
    assert not lost, f"the reference solution lost points: {lost}"


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_untouched_release_scores_zero(graded, chapter):
    scores = graded(chapter)["untouched"]["scores"]
    assert scores and sum(s for s, _ in scores.values()) == 0, f"points for doing nothing: {scores}"
    # the stubs raise, and the judge's record of the visible asserts says so
    visible = graded(chapter)["untouched"]["visible"]
    assert {k: v for k, v in visible.items() if not (v or "").startswith("raised")} == {}, visible


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_alternative_answers_score_full_marks(graded, chapter):
    scores = graded(chapter)["alternative"]["scores"]
    lost = {name: s for name, s in scores.items() if s[0] != s[1]}
    assert not lost, f"a correct answer written differently lost points: {lost}"


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
@pytest.mark.parametrize("student", [name for name, full in ANSWER_SETS.items() if not full])
def test_wrong_answers_score_zero(graded, chapter, student):
    scores = graded(chapter)[student]["scores"]
    passed = {name: s for name, s in scores.items() if s[0]}
    assert not passed, f"a {student} answer got points: {passed}"


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_overfit_answers_pass_the_visible_tests(graded, chapter):
    """Each overfit answer is the kind that fools the visible asserts: they pass, the grade is 0."""
    visible = graded(chapter)["overfit"]["visible"]
    assert visible and not {k: v for k, v in visible.items() if v != "passed"}, visible


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
@pytest.mark.parametrize("answer_set", PARTIAL_SETS)
def test_partial_answer_sets_score_zero_where_they_answer(graded, chapter, answer_set):
    """The course's own copy bound to an exercise's name, or a further mistake, gets 0 for that
    exercise; the reference's answers in the rest of the notebook keep their points."""
    answers = load_answers(chapter)
    partial = partial_sets(answers)
    if answer_set not in partial:
        pytest.skip(f"{chapter} has no {answer_set} answers")
    student, sets = next((student, sets) for student, sets in partial_students(chapter, answers).items()
                         if answer_set in sets)
    scores = graded(chapter)[student]["scores"]
    targets = {f"{grade_id}_tests" for grade_id in partial[answer_set]}
    assert targets <= set(scores), f"no test cells {sorted(targets - set(scores))}"
    passed = {name: s for name, s in scores.items() if name in targets and s[0]}
    assert not passed, f"{answer_set} answers got points: {passed}"
    others = {f"{grade_id}_tests" for name in sets for grade_id in partial[name]}   # the sets beside it
    lost = {name: s for name, s in scores.items() if name not in others and s[0] != s[1]}
    assert not lost, f"the reference's answers beside them lost points: {lost}"


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_graded_runs_build_figures_but_draw_none(graded_class, chapter):
    """grader/pipeline.py, GRADING_KERNEL_ARGS: a graded notebook keeps each figure as its text, with
    no picture (nothing graded reads one; drawing them cost every hand-in's kernel)."""
    def outputs(path):
        return [output for cell in json.loads(path.read_text())["cells"] if SKIP_WHEN_GRADING not in
                cell["metadata"].get("tags", []) for output in cell.get("outputs", [])]
    drawn = [o for o in outputs(source_notebook(chapter, REPO_ROOT)) if "image/png" in o.get("data", {})]
    graded = outputs(graded_class / "autograded" / "reference" / chapter / f"{chapter}.ipynb")
    assert not [kind for o in graded for kind in o.get("data", {}) if kind.startswith("image/")]
    figures = [o for o in graded if "".join(o.get("data", {}).get("text/plain", "")).startswith("<Figure size")]
    assert len(figures) >= len(drawn), f"{len(drawn)} figures in the solution, {len(figures)} built while grading"
