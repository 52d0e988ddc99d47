"""Building course copies and student submissions, for the tests and the grading benchmark (tests/bench_grading.py)."""
import shutil
from pathlib import Path

import nbformat

from grader.course import REPO_ROOT, release_notebook, source_notebook

# What a course copy leaves behind: environments, VCS data, instructor state.
_SKIP = shutil.ignore_patterns(".venv", ".git", "__pycache__", ".pytest_cache", "gradebook.db*",
                               "submitted", "autograded", "feedback", "data", "bundle", "*.egg-info")


def copy_course(dest: Path, source: Path = REPO_ROOT) -> Path:
    """A disposable copy of the course directory (its own gradebook, no submissions)."""
    dest = Path(dest)
    shutil.copytree(source, dest, ignore=_SKIP)
    return dest


def submission_path(course: Path, student: str, assignment: str) -> Path:
    return Path(course) / "submitted" / student / assignment / f"{assignment}.ipynb"


def place_submission(course: Path, student: str, assignment: str, nb) -> Path:
    """Put a notebook (NotebookNode, or a path to copy) where nbgrader expects a hand-in."""
    path = submission_path(course, student, assignment)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(nb, (str, Path)):
        shutil.copyfile(nb, path)
    else:
        nbformat.write(nb, path)
    return path


def solution_cell_ids(nb) -> list:
    return [c.metadata["nbgrader"]["grade_id"] for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("solution")]


def grade_cell_ids(nb) -> list:
    return [c.metadata["nbgrader"]["grade_id"] for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade")]


def with_answers(nb, answers: dict):
    """A copy of `nb` whose solution cells named in `answers` hold that source instead."""
    nb = nbformat.from_dict(nb)
    unknown = set(answers) - set(solution_cell_ids(nb))
    if unknown:
        raise KeyError(f"no solution cells named {sorted(unknown)}")
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers and cell.metadata["nbgrader"].get("solution"):
            cell.source = answers[grade_id]
    return nb


def release_copy(assignment: str, course: Path):
    """The untouched student notebook, as a student would hand it in."""
    return nbformat.read(release_notebook(assignment, course), as_version=4)


def solution_copy(assignment: str, course: Path):
    return nbformat.read(source_notebook(assignment, course), as_version=4)
