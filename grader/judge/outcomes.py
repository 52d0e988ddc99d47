"""What the judge decided for each exercise of a graded notebook, kept as data for the instructor.

The gradebook keeps a score per cell; the judge also knows, for each failed exercise, which of its
hidden checks failed and what each is called. Reports (grader/reports/) count those across a class,
so the Judge writes them here, one JSON file per graded notebook, in the course directory:

    judge_outcomes/<assignment>/<student>/<notebook>.json
    {"student": ..., "assignment": ..., "notebook": ...,
     "submitted": the hand-in's timestamp (UTC, ISO 8601, as the gradebook has it) or None,
     "exercises": {grade id: {
        "decided_in": "judge" | "the student's kernel",   # ordinary nbgrader test cells: the latter
        "checks": number of hidden checks, "failed": [{"check": name or None, "why": reason}],
        "visible_tests": "passed" | "raised <Error>", "flagged": why the scan flagged it, or None}}}

Written by the Judge (the grader's process, never a student's kernel), copied back from the workers
with the graded notebooks (grader/class_grading/), and read only by reports, which leave out a
record of an earlier hand-in than the gradebook's (a newer one that could not be graded at all
leaves the old record in place). docs/GRADING.md, "What the class got wrong".
"""
import json
import os
from datetime import datetime
from pathlib import Path

FOLDER = "judge_outcomes"


def outcome_folder(course: Path, assignment: str, student: str) -> Path:
    return Path(course) / FOLDER / assignment / student


def write_outcome(course: Path, assignment: str, student: str, notebook: str, exercises: dict,
                  submitted: datetime | None = None) -> None:
    folder = outcome_folder(course, assignment, student)
    folder.mkdir(parents=True, exist_ok=True)
    record = {"student": student, "assignment": assignment, "notebook": notebook,
              "submitted": submitted and submitted.isoformat(), "exercises": exercises}
    tmp = folder / f".{notebook}.json.tmp"
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True))
    os.replace(tmp, folder / f"{notebook}.json")   # a report never reads half a record


def read_outcomes(course: Path, assignment: str, submitted: dict | None = None) -> dict:
    """{student: {notebook: {grade id: exercise outcome}}} of everything graded of `assignment`; with
    `submitted` ({student: the gradebook's timestamp}), without the records of another hand-in than
    that one. A record that cannot be read is left out (it is the grader's own file, so that means a
    disk fault)."""
    found = {}
    root = Path(course) / FOLDER / assignment
    for path in sorted(root.glob("*/*.json")) if root.is_dir() else []:
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        student, when = path.parent.name, record.get("submitted")
        if submitted and when and submitted.get(student) and submitted[student].isoformat() != when:
            continue   # an earlier hand-in's: the newer one in the gradebook was not graded
        found.setdefault(student, {})[path.stem] = record.get("exercises", {})
    return found
