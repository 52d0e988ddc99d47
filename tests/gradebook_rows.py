"""Reading scores out of nbgrader's gradebook."""
from pathlib import Path

from nbgrader.api import Gradebook

from grader.course import REPO_ROOT


def db_url(course: Path = REPO_ROOT) -> str:
    return f"sqlite:///{Path(course) / 'gradebook.db'}"


def cell_scores(course: Path, assignment: str, student: str) -> dict:
    """{grade cell name: (score, max score)} for one student's graded submission."""
    with Gradebook(db_url(course)) as gb:
        submission = gb.find_submission(assignment, student)
        result = {}
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                result[grade.name] = (grade.score, grade.max_score)
        return result


def total_score(course: Path, assignment: str, student: str) -> tuple:
    """(score, max score) for one student's submission of one assignment."""
    with Gradebook(db_url(course)) as gb:
        submission = gb.find_submission(assignment, student)
        return submission.score, submission.max_score
