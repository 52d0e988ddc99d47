"""What travels between the coordinator and the workers, as data: folders as {path: bytes} and one
submission's gradebook rows as a dict. Workers share no file system with the coordinator
(docs/GRADING.md, "How parallel grading works"); only the coordinator writes the course.
"""
import os
import warnings
from pathlib import Path, PurePosixPath

from nbgrader.api import Gradebook, MissingEntry

from grader import gradebook_schema

# the workers' scratch gradebooks and the coordinator's are new ones: their schema version read here,
# not by an `alembic heads` process each (grader/gradebook_schema.py)
gradebook_schema.install()


def read_tree(root: Path, skip=(".ipynb_checkpoints", "__pycache__")) -> dict:
    """{relative posix path: bytes} of the plain files under `root`. Symlinks and anything that is
    not a plain file are left out: a student's folder could hold a link to the gradebook."""
    files = {}
    root = Path(root)
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip and not os.path.islink(os.path.join(folder, d))]
        for name in names:
            path = os.path.join(folder, name)
            if not os.path.islink(path) and os.path.isfile(path):
                files[Path(path).relative_to(root).as_posix()] = Path(path).read_bytes()
    return files


def write_tree(root: Path, files: dict) -> None:
    """Write `files` ({relative posix path: bytes}) under `root`, refusing a path that leaves it."""
    root = Path(root)
    for name, data in files.items():
        parts = PurePosixPath(name).parts
        if not parts or PurePosixPath(name).is_absolute() or ".." in parts:
            raise ValueError(f"refusing to write {name!r} outside {root}")
        path = root.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def read_rows(db: Path, assignment: str, student: str) -> dict | None:
    """What autograde recorded for one submission, or None when there is none: exactly the fields
    nbgrader's autograde writes (Autograde.init_assignment, SaveAutoGrades, AssignLatePenalties)."""
    return read_batch_rows(db, assignment, [student])[student]


def read_batch_rows(db: Path, assignment: str, students) -> dict:
    """`read_rows` for several students, {student: rows or None}, in one session."""
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{db}") as gb:
        warnings.simplefilter("ignore")
        return {student: _read_submission(gb, assignment, student) for student in students}


def _read_submission(gb: Gradebook, assignment: str, student: str) -> dict | None:
    try:
        graded = gb.find_submission(assignment, student)
    except MissingEntry:
        return None
    return {"timestamp": graded.timestamp, "extension": graded.extension,
            "notebooks": {nb.name: {"late_penalty": nb.late_submission_penalty,
                                    "grades": {g.name: (g.auto_score, g.needs_manual_grade) for g in nb.grades},
                                    "comments": {c.name: c.auto_comment for c in nb.comments}}
                          for nb in graded.notebooks}}


def write_rows(db: Path, assignment: str, student: str, rows: dict) -> None:
    """Write `read_rows`'s data into the course's gradebook; manual scores are left alone."""
    write_batch_rows(db, assignment, {student: rows})


def write_batch_rows(db: Path, assignment: str, rows_by_student: dict) -> None:
    """`write_rows` for several students ({student: rows}) in one session and one commit: all of
    them are written or none."""
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{db}") as gb:
        # nbgrader's own add_submission trips SQLAlchemy's autoflush warnings; they are harmless
        warnings.simplefilter("ignore")
        for student, rows in rows_by_student.items():
            _write_submission(gb, assignment, student, rows)
        gb.db.commit()


def _write_submission(gb: Gradebook, assignment: str, student: str, rows: dict) -> None:
    gb.update_or_create_student(student)
    kwargs = {"timestamp": rows["timestamp"]} if rows["timestamp"] is not None else {}
    submission = gb.update_or_create_submission(assignment, student, **kwargs)
    submission.extension = rows.get("extension")
    for name, notebook in rows["notebooks"].items():
        target = gb.find_submission_notebook(name, assignment, student)
        target.late_submission_penalty = notebook["late_penalty"]
        for grade_name, (auto_score, flagged) in notebook["grades"].items():
            mine = gb.find_grade(grade_name, name, assignment, student)
            mine.auto_score = auto_score
            # SaveAutoGrades' rule, applied to the real gradebook's manual score, plus the
            # judge's flags for manual grading (FlagForManualGrading)
            mine.needs_manual_grade = mine.manual_score is not None or auto_score is None or flagged
        for comment_name, text in notebook["comments"].items():
            gb.find_comment(comment_name, name, assignment, student).auto_comment = text
