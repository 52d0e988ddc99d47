"""nbgrader is configured against its known pitfalls; each setting is proven by a real grading run.

One autograde run of 01_tensors with three students:
- `looper`: an infinite loop in one exercise -> that test cell times out and scores 0, the rest
  of the notebook still runs and scores full marks;
- `warner`: a correct answer that makes PyTorch print a UserWarning on stderr -> full marks;
- `tamper`: a deleted test cell, and an edited test cell hiding a wrong answer -> both restored
  from the gradebook, so the first scores full and the second 0.
"""
import nbformat
import pytest
from traitlets.config.loader import PyFileConfigLoader

from conftest import grade_assignment
from grader.course import REPO_ROOT
from grader.gradebook import cell_scores
from grader.submissions import place_submission, solution_copy, with_answers

CHAPTER = "01_tensors"
TIMEOUT = 10  # override of Execute.timeout: proves the trait name works, keeps the test short


def load_config():
    return PyFileConfigLoader("nbgrader_config.py", path=str(REPO_ROOT)).load_config()


def test_config_uses_execute_timeout_not_executepreprocessor():
    config = load_config()
    assert config.Execute.timeout >= 60, "training cells need a generous per-cell limit"
    assert "ExecutePreprocessor" not in config, "nbgrader ignores ExecutePreprocessor.timeout"
    assert config.IgnorePattern.enabled and config.IgnorePattern.pattern
    assert config.OverwriteCells.add_missing_cells is True
    assert config.CourseDirectory.source_directory == "solutions"
    assert config.CourseDirectory.release_directory == "notebooks"


@pytest.fixture(scope="module")
def scores(course):
    reference = solution_copy(CHAPTER, course)
    place_submission(course, "looper", CHAPTER, with_answers(reference, {
        "ranked_tensors": "def make_ranked_tensors():\n    while True:\n        pass\n"}))
    place_submission(course, "warner", CHAPTER, with_answers(reference, {
        # torch.tensor(tensor) works but warns "To copy construct from a tensor ..." on stderr
        "as_model_input": "def as_model_input(t):\n    return torch.tensor(t, dtype=torch.float32)\n"}))
    tampered = with_answers(reference, {"as_model_input": "def as_model_input(t):\n    return t.double()\n"})
    cells = []
    for cell in tampered.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id == "gram_tests":
            continue                                    # deleted
        if grade_id == "as_model_input_tests":
            cell.source = "pass  # tests removed"       # edited to hide a wrong answer
        cells.append(cell)
    tampered.cells = cells
    place_submission(course, "tamper", CHAPTER, tampered)
    grade_assignment(CHAPTER, course, f"--Execute.timeout={TIMEOUT}")
    return {s: cell_scores(course, CHAPTER, s) for s in ("looper", "warner", "tamper")}


def full(score):
    return score[0] == score[1]


def test_infinite_loop_loses_only_its_cell(scores):
    looper = scores["looper"]
    assert looper["ranked_tensors_tests"][0] == 0
    others = {k: v for k, v in looper.items() if k != "ranked_tensors_tests"}
    assert others and all(full(v) for v in others.values()), f"the run did not go on after the timeout: {others}"


def test_library_warning_on_stderr_keeps_full_marks(scores):
    assert all(full(v) for v in scores["warner"].values()), scores["warner"]


def test_deleted_and_edited_test_cells_are_restored(scores):
    tamper = scores["tamper"]
    assert "gram_tests" in tamper and full(tamper["gram_tests"]), "deleted test cell not restored"
    assert tamper["as_model_input_tests"][0] == 0, "edited test cell was not restored from the gradebook"
    assert full(tamper["flatten_samples_tests"])
