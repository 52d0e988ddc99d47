"""`make regrade ASSIGNMENT=A [APPLY=1]`: grade every hand-in of A again, show what changes, then apply it.

After an instructor fixes an exercise's hidden checks in solutions/A/, this grades every submission
of A into a SCRATCH course (a copy of the gradebook, the new source released into it) with the same
pipeline as `make autograde`, and lists each student's change per exercise, old -> new. Nothing in
the course changes. With `apply`, the course's gradebook gets the new test cells (nbgrader
generate_assignment) and the scratch course's results (gradebook rows, autograded notebooks, the
judge's outcomes), and the students whose score changed get new feedback (released again where
theirs had been). Manual scores are kept, as by any autograde. docs/GRADING.md, "Regrading".
"""
import shutil
import sqlite3
import tempfile
import warnings
from dataclasses import dataclass
from html import escape
from pathlib import Path

from grader.class_grading.autograde import GRADEBOOK_WRITER, autograde_all, submissions
from grader.class_grading.transfer import read_batch_rows, read_tree, write_batch_rows, write_tree
from grader.course import SOURCE, run_nbgrader
from grader.extensions import FILE as EXTENSIONS
from grader.judge.outcomes import outcome_folder


@dataclass(frozen=True)
class Change:
    student: str
    notebook: str
    exercise: str
    old: float | None        # auto score before
    new: float | None        # after
    manual: float | None     # a manual score, which stays the student's score whatever autograde says


def snapshot_course(course: Path, assignment: str, scratch: Path) -> list:
    """What grading `assignment` needs, copied into `scratch`; returns its students. The gradebook
    is copied with SQLite's backup, consistent even while the feedback service writes it."""
    course, scratch = Path(course), Path(scratch)
    shutil.copy2(course / "nbgrader_config.py", scratch / "nbgrader_config.py")
    with sqlite3.connect(course / "gradebook.db") as src, sqlite3.connect(scratch / "gradebook.db") as dst:
        src.backup(dst)
    shutil.copytree(course / SOURCE / assignment, scratch / SOURCE / assignment)
    if (course / EXTENSIONS).is_file():
        shutil.copy2(course / EXTENSIONS, scratch / EXTENSIONS)
    students = [s for s, a in submissions(course) if a == assignment]
    for student in students:
        write_tree(scratch / "submitted" / student / assignment, read_tree(course / "submitted" / student / assignment))
    return students


def changes_between(old_db: Path, new_db: Path, assignment: str, students: list) -> list:
    """Every (student, exercise) whose automatic score differs between the two gradebooks."""
    old, new = _scores(old_db, assignment, students), _scores(new_db, assignment, students)
    changes = []
    for student in students:
        for key in sorted(set(old.get(student, {})) | set(new.get(student, {}))):
            before, manual = old.get(student, {}).get(key, (None, None))
            after, _ = new.get(student, {}).get(key, (None, None))
            if before != after:
                changes.append(Change(student, key[0], key[1], before, after, manual))
    return changes


def _scores(db: Path, assignment: str, students: list) -> dict:
    """{student: {(notebook, grade id): (auto score, manual score)}}"""
    from nbgrader.api import Gradebook, MissingEntry
    found = {}
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{db}") as gb:
        warnings.simplefilter("ignore")
        for student in students:
            try:
                submission = gb.find_submission(assignment, student)
            except MissingEntry:
                continue
            found[student] = {(nb.name, g.name): (g.auto_score, g.manual_score)
                              for nb in submission.notebooks for g in nb.grades}
    return found


def regrade(course: Path, assignment: str, apply: bool = False, jobs: int | None = None) -> tuple:
    """(exit status, [Change]); with `apply`, the changes are in the course when it returns 0."""
    course = Path(course).resolve()
    if not (course / SOURCE / assignment).is_dir():
        raise FileNotFoundError(f"no {SOURCE}/{assignment}/ in {course}")
    with tempfile.TemporaryDirectory(prefix=f"regrade-{assignment[:20]}-") as tmp:
        scratch = Path(tmp)
        students = snapshot_course(course, assignment, scratch)
        if not students:
            return 0, []
        # the new hidden checks into the scratch gradebook, as `make release` puts them into the course's
        run_nbgrader("generate_assignment", assignment, "--force", f"--CourseDirectory.root={scratch}", course=scratch)
        status = autograde_all(jobs=jobs, course=scratch, progress=False)
        changes = changes_between(course / "gradebook.db", scratch / "gradebook.db", assignment, students)
        if apply and status == 0:
            apply_regrade(course, scratch, assignment, students, sorted({c.student for c in changes}))
        return status, changes


def apply_regrade(course: Path, scratch: Path, assignment: str, students: list, changed: list) -> None:
    run_nbgrader("generate_assignment", assignment, "--force", course=course)
    rows = read_batch_rows(scratch / "gradebook.db", assignment, students)
    with GRADEBOOK_WRITER:
        write_batch_rows(course / "gradebook.db", assignment, {s: r for s, r in rows.items() if r is not None})
        for student in students:
            for folder in (Path("autograded") / student / assignment,
                           outcome_folder(Path(), assignment, student)):
                shutil.rmtree(course / folder, ignore_errors=True)
                if (scratch / folder).is_dir():
                    write_tree(course / folder, read_tree(scratch / folder))
    for student in changed:
        released_before = (course / "feedback" / student / assignment).is_dir()
        run_nbgrader("generate_feedback", assignment, "--student", student, "--force", course=course)
        if released_before:
            run_nbgrader("release_feedback", assignment, "--student", student, course=course, check=False)


def _points(x) -> str:
    return "–" if x is None else f"{x:g}"


def changes_text(changes: list) -> str:
    if not changes:
        return "no score changes"
    width = max(len(c.student) for c in changes)
    return "\n".join(f"{c.student:<{width}}  {c.exercise:<32} {_points(c.old):>5} -> {_points(c.new):<5}"
                     + (f"  (manual score {_points(c.manual)} kept)" if c.manual is not None else "")
                     for c in changes)


def changes_html(changes: list, applied: bool) -> str:
    state = "applied" if applied else "NOT applied yet (make regrade ... APPLY=1)"
    if not changes:
        return f"<p>The last regrade changed no score ({state}).</p>"
    rows = "".join(f"<tr class=changed><td>{escape(c.student)}</td><td>{escape(c.exercise)}</td>"
                   f"<td class=n>{_points(c.old)}</td><td class=n>{_points(c.new)}</td>"
                   f"<td>{'' if c.manual is None else 'manual score ' + _points(c.manual) + ' kept'}</td></tr>"
                   for c in changes)
    return (f"<p>{len({c.student for c in changes})} students, {len(changes)} scores changed: {state}.</p>"
            "<table><tr><th>student</th><th>exercise</th><th>old</th><th>new</th><th></th></tr>"
            f"{rows}</table>")
