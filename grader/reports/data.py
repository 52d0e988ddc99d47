"""What a report is made from, read once: the gradebook, the judge's outcomes, the feedback history.

Nothing here parses a notebook: scores come from the gradebook (nbgrader's API, read only), which
hidden checks failed from the judge's outcome records (grader/judge/outcomes.py), attempts from the
feedback service's history (grader/hub/autofeedback.py, ATTEMPTS).
"""
import json
import warnings
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from grader.course import SOURCE
from grader.extensions import read_extensions
from grader.hub.autofeedback import ATTEMPTS, STATE
from grader.judge.outcomes import read_outcomes


@dataclass(frozen=True)
class Exercise:
    notebook: str
    grade_id: str
    points: float
    label: str          # what the report calls it: the grade id without "_tests", after its notebook's
                        # name when the assignment has several notebooks


@dataclass
class Submission:
    student: str
    timestamp: datetime | None
    extension: object                   # a timedelta, or None
    late_penalty: float
    scores: dict                        # {(notebook, grade id): points}
    flagged: set                        # {(notebook, grade id)} needing manual grading

    @property
    def total(self) -> float:
        return sum(self.scores.values()) - self.late_penalty


@dataclass
class ClassData:
    assignment: str
    duedate: datetime | None
    exercises: list                     # [Exercise], in notebook order
    submissions: dict                   # {student: Submission}
    outcomes: dict                      # {student: {notebook: {grade id: outcome}}}
    attempts: list = field(default_factory=list)   # the feedback service's records, oldest first
    extensions: dict = field(default_factory=dict)   # {student: their own due date}

    @property
    def max_score(self) -> float:
        return sum(e.points for e in self.exercises)


def gradebook_assignments(course: Path) -> list:
    """The gradebook's assignments that have at least one submission, by due date then name."""
    from nbgrader.api import Gradebook
    with warnings.catch_warnings(), Gradebook(_db_url(course)) as gb:
        warnings.simplefilter("ignore")
        return [a.name for a in gb.assignments if a.submissions]


def load(course: Path, assignment: str) -> ClassData:
    from nbgrader.api import Gradebook
    course = Path(course)
    with warnings.catch_warnings(), Gradebook(_db_url(course)) as gb:
        warnings.simplefilter("ignore")
        found = gb.find_assignment(assignment)
        several = len(found.notebooks) > 1
        exercises = [Exercise(nb.name, cell.name, float(cell.max_score),
                              (f"{nb.name}: " if several else "") + cell.name.removesuffix("_tests"))
                     for nb in found.notebooks
                     for cell in _in_order(nb.grade_cells, _source(course, assignment, nb.name))]
        submissions = {}
        for submitted in found.submissions:
            scores, flagged, penalty = {}, set(), 0.0
            for nb in submitted.notebooks:
                penalty += float(nb.late_submission_penalty or 0)
                for grade in nb.grades:
                    scores[(nb.name, grade.name)] = float(grade.score or 0)
                    if grade.needs_manual_grade:
                        flagged.add((nb.name, grade.name))
            submissions[submitted.student.id] = Submission(submitted.student.id, submitted.timestamp,
                                                           submitted.extension, penalty, scores, flagged)
        duedate = found.duedate
    extensions = {s: due for (s, a), due in (read_extensions(course) or {}).items() if a == assignment}
    handed_in = {s: sub.timestamp for s, sub in submissions.items()}
    return ClassData(assignment, duedate, exercises, submissions, read_outcomes(course, assignment, handed_in),
                     read_attempts(course, assignment), extensions)


def read_attempts(course: Path, assignment: str) -> list:
    """The feedback service's records of `assignment`'s hand-ins, oldest first; a line that cannot
    be read (a service stopped mid-write) is skipped."""
    path = Path(course) / STATE / ATTEMPTS
    found = []
    for line in path.read_text().splitlines() if path.is_file() else []:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("assignment") == assignment:
            found.append(record)
    return sorted(found, key=lambda r: str(r.get("at")))


def _in_order(cells, source: Path) -> list:
    """Grade cells in their notebook's order when the instructor's source notebook is there (the
    gradebook keeps no order), else by name."""
    order = {}
    try:
        for position, cell in enumerate(json.loads(source.read_text())["cells"]):
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            order.setdefault(grade_id, position)
    except (OSError, ValueError, KeyError, AttributeError, TypeError):
        pass
    return sorted(cells, key=lambda c: (order.get(c.name, len(order)), c.name))


def _source(course: Path, assignment: str, notebook: str) -> Path:
    return Path(course) / SOURCE / assignment / f"{notebook}.ipynb"


def _db_url(course: Path) -> str:
    path = Path(course) / "gradebook.db"
    if not path.is_file():
        raise FileNotFoundError(f"no gradebook.db in {course}: release and grade the assignments first")
    return f"sqlite:///{path}"
