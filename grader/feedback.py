"""Feedback for students without the hidden tests (nbgrader issue #917).

nbgrader's feedback HTML shows every test cell as graded, hidden asserts included, and the
traceback of a failed hidden assert quotes the failing line. `HideHiddenTests` runs in the
feedback pipeline (nbgrader_config.py) and removes both: hidden regions from the source, and
tracebacks from test cells, which keep only the exception's name and message (visible asserts
carry their teaching message there).

A hand-in that nbgrader could not grade gets no feedback from it; `write_not_graded_pages` writes a
short page in its place, saying why (the feedback service, grader/hub/autofeedback.py).
"""
import html
import json
import shutil
from pathlib import Path

import nbformat
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor
from traitlets import List

from grader.course import REPO_ROOT, run_nbgrader


class HideHiddenTests(ClearHiddenTests):
    """ClearHiddenTests for feedback: also reduce test-cell tracebacks to their last line."""

    # nbconvert configures this option on every preprocessor of the feedback exporter; nbgrader's base
    # class redeclares it as not configurable, and traitlets then warns on every generate_feedback
    # (as nbgrader's own GetGrades does, it is declared configurable again)
    display_data_priority = List(NbGraderPreprocessor.display_data_priority.default_value, config=True)

    def preprocess_cell(self, cell, resources, cell_index):
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        grade = cell.metadata.get("nbgrader", {}).get("grade")
        if cell.cell_type == "code" and grade:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename')}: {output.get('evalue')}",
                                           "(details hidden: this test cell also runs hidden tests)"]
        return cell, resources


class DueDateNote(NbGraderPreprocessor):
    """A first cell in the feedback that gives the student's own due date (with an extension, if they
    have one: grader/extensions.py), when they handed in, and whether that was late."""

    display_data_priority = List(NbGraderPreprocessor.display_data_priority.default_value, config=True)

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook, MissingEntry
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            try:
                submission = gb.find_submission(info["assignment"], info["student"])
            except MissingEntry:
                return nb, resources
            note = due_date_note(submission.assignment.duedate, submission.extension, submission.timestamp)
        if note:
            nb.cells.insert(0, nbformat.v4.new_markdown_cell(note))
        return nb, resources


def due_date_note(class_due, extension, handed_in) -> str | None:
    """The feedback's words on the due date, or None when the assignment has none."""
    if class_due is None:
        return None
    def utc(when):
        return when.strftime("%Y-%m-%d %H:%M UTC")
    due = class_due + extension if extension else class_due
    lines = [f"**Due:** {utc(due)}" + (f" (your extension; the class's due date is {utc(class_due)})"
                                        if extension else "")]
    if handed_in is not None:
        late = (handed_in - due).total_seconds()
        when = "on time" if late <= 0 else f"{_duration(late)} late"
        lines.append(f"**Handed in:** {utc(handed_in)}, {when}")
    return "  \n".join(lines)


def _duration(seconds: float) -> str:
    minutes = max(1, round(seconds / 60))
    if minutes < 120:
        return f"{minutes} minute{'s' * (minutes != 1)}"
    hours = round(seconds / 3600)
    return f"{hours} hours" if hours < 48 else f"{round(seconds / 86400)} days"


def autograded_assignments(course: Path = REPO_ROOT) -> list:
    root = Path(course) / "autograded"
    if not root.is_dir():
        return []
    return sorted({a.name for s in root.iterdir() if s.is_dir() for a in s.iterdir() if a.is_dir()})


def generate_all(course: Path = REPO_ROOT) -> int:
    """`nbgrader generate_feedback` for every assignment that has been autograded."""
    assignments = autograded_assignments(course)
    if not assignments:
        print("no autograded submissions: run `make autograde` first")
        return 0
    status = 0
    for assignment in assignments:
        proc = run_nbgrader("generate_feedback", assignment, "--force", course=course, check=False)
        print(f"feedback for {assignment}: {'ok' if proc.returncode == 0 else 'FAILED'}")
        if proc.returncode:
            print(proc.stdout[-3000:] + proc.stderr[-3000:])
        status = status or proc.returncode
    return status


def write_not_graded_pages(folder: Path, handed_in: Path, expected: list, problem: str, header: dict) -> list:
    """A page in `folder` (feedback/<student>/<assignment>/, where `nbgrader release_feedback` releases
    from) for each notebook in `handed_in` that has none there, saying why it was not graded; and the
    hand-in's timestamp and secret, which name the released file. `expected`: the assignment's notebook
    names; `problem`: why grading failed, for a notebook with nothing wrong that can be seen;
    `header`: student, assignment, timestamp. Returns the reasons."""
    reasons = []
    for notebook in sorted(Path(handed_in).glob("*.ipynb")):   # the names the student's Fetch Feedback looks for
        page = Path(folder) / f"{notebook.stem}.html"
        if page.exists():
            continue
        reason = not_graded_reason(notebook, expected, problem)
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(not_graded_page(notebook.name, reason, **header))
        page.chmod(0o644)   # released as it is: students read it whatever the service's umask
        reasons.append(reason)
    for name in ("timestamp.txt", "submission_secret.txt"):
        if reasons and not (Path(folder) / name).exists() and (Path(handed_in) / name).is_file():
            shutil.copyfile(Path(handed_in) / name, Path(folder) / name)
    return reasons


def not_graded_reason(notebook: Path, expected: list, problem: str) -> str:
    """Why a handed-in notebook was not graded, in the student's words. It never quotes the student's
    file nor nbgrader's log (a kernel that died in a probe leaves hidden-test source there)."""
    if notebook.stem not in expected:
        names = ", ".join(f"{name}.ipynb" for name in expected)
        return (f"{notebook.name} is not a notebook of this assignment (it has {names}). "
                "Give your notebook its original name and submit again.")
    return unreadable(notebook) or problem


def unreadable(notebook: Path) -> str | None:
    """What keeps a file from being read as a notebook, or None."""
    import nbformat
    try:
        text = notebook.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return f"{notebook.name} is not a text file, so it is not a notebook."
    try:
        json.loads(text)
    except ValueError as err:
        return (f"{notebook.name} is not valid JSON ({err.msg} at line {err.lineno}, column {err.colno}), "
                "so it is not a notebook that can be run. Was it edited outside JupyterLab?")
    try:
        nbformat.reads(text, as_version=4)
    except Exception:   # nbformat's errors for JSON that is no notebook are of several kinds
        return f"{notebook.name} is JSON but not a Jupyter notebook that nbformat can read."
    return None


def not_graded_page(notebook: str, reason: str, student: str, assignment: str, timestamp: str) -> str:
    e = html.escape
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{e(notebook)}: not graded</title></head>
<body style="font-family: sans-serif; max-width: 45em; margin: 2em auto">
<h1>{e(assignment)} / {e(notebook)}: not graded</h1>
<p>Your submission of {e(timestamp)} ({e(student)}) could not be graded: {e(reason)}</p>
<p>It has no score from this submission. Your instructor sees this message too.</p>
</body></html>
"""
