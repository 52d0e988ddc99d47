"""Feedback for students without the hidden tests (nbgrader issue #917).

nbgrader's feedback HTML shows every test cell as graded, hidden asserts included, and the
traceback of a failed hidden assert quotes the failing line. `HideHiddenTests` runs in the
feedback pipeline (nbgrader_config.py) and removes both: hidden regions from the source, and
tracebacks from test cells, which keep only the exception's name and message (visible asserts
carry their teaching message there).
"""
from pathlib import Path

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
