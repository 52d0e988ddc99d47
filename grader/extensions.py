"""Due dates per student: the instructor's extensions file, applied where nbgrader looks for them.

    extensions.csv, in the course directory:
        student,assignment,due
        alice,05_training_loop,2026-12-04 23:59
        bob,05_training_loop,2026-12-06T12:00:00+01:00

`due` is the student's own due date (a time without a zone is UTC, as nbgrader reads due dates).
nbgrader already keeps an extension per submission (SubmittedAssignment.extension, the time added to
the assignment's due date) and counts lateness and late penalties from the result; the file is turned
into those. Where the file exists it decides for every student: whoever it does not list has no
extension. docs/GRADING.md, "Due dates and extensions".
"""
import csv
import io
from datetime import datetime, timezone
from pathlib import Path

FILE = "extensions.csv"
COLUMNS = ["student", "assignment", "due"]


class ExtensionError(ValueError):
    """The extensions file has a row nothing can be done with; says which and why."""


def parse_due(text: str) -> datetime:
    """A naive UTC datetime, as nbgrader's gradebook keeps due dates."""
    when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return when.astimezone(timezone.utc).replace(tzinfo=None) if when.tzinfo else when


def parse_extensions(text: str, where: str = FILE) -> dict:
    """{(student, assignment): due} from the file's text."""
    rows = csv.DictReader(io.StringIO(text))
    if rows.fieldnames is None:
        return {}
    if [name.strip() for name in rows.fieldnames] != COLUMNS:
        raise ExtensionError(f"{where}: the first line must be {','.join(COLUMNS)}, not {','.join(rows.fieldnames)}")
    found = {}
    for number, row in enumerate(rows, 2):
        student, assignment, due = (str(row.get(c) or "").strip() for c in COLUMNS)
        if not (student and assignment and due):
            raise ExtensionError(f"{where}, line {number}: needs a student, an assignment and a due date")
        try:
            found[(student, assignment)] = parse_due(due)
        except ValueError:
            raise ExtensionError(f"{where}, line {number}: {due!r} is not a date and time "
                                 "(write it as 2026-12-04 23:59, in UTC, or with its zone)") from None
    return found


def read_extensions(course: Path) -> dict | None:
    """The course's extensions, or None when it has no extensions file."""
    path = Path(course) / FILE
    return parse_extensions(path.read_text(), str(path)) if path.is_file() else None


def extension_for(extensions: dict, student: str, assignment: str, class_due: datetime | None):
    """The extension nbgrader should keep (a timedelta, or None) for the student's own due date."""
    due = extensions.get((student, assignment))
    if due is None or class_due is None:
        return None
    return due - class_due
