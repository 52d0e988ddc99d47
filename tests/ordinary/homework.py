"""An ordinary nbgrader assignment, as an instructor who adopts the course writes one: no
`hidden_checks`, plain asserts (visible and hidden), answers graded by hand (written and code), a
task, and a second notebook whose cells carry the metadata JupyterLab's "Create Assignment" panel writes.

Two students hand it in: `ada` answers everything right, `bob` gets one autograded exercise wrong,
leaves both answers graded by hand (a written one and a code one) as released, and deletes a test
cell. Each edits a checksum in the metadata: bob's says his written answer was answered, ada's that
her code answer was left as released. tests/test_ordinary_assignments.py grades them with stock
nbgrader and through every path of the course, and compares each cell.
"""
from pathlib import Path

import nbformat
from nbgrader.utils import compute_checksum

NAME = "homework"
STUDENTS = ("ada", "bob")


def _cell(kind: str, source: str, **nbgrader):
    cell = nbformat.v4.new_code_cell(source) if kind == "code" else nbformat.v4.new_markdown_cell(source)
    if nbgrader:
        cell.metadata["nbgrader"] = {"schema_version": 3, "grade": False, "solution": False,
                                     "locked": False, "task": False, **nbgrader}
    return cell


def functions_notebook():
    """Written by hand in nbgrader's format, the way nbgrader's own docs show it."""
    return [
        _cell("md", "# Homework 1: plain Python\nEvery test cell here is an ordinary nbgrader cell."),
        _cell("code", "def squares(n):\n    \"\"\"The squares of 0 .. n-1, in a list.\"\"\"\n"
                      "    ### BEGIN SOLUTION\n    return [i * i for i in range(n)]\n    ### END SOLUTION",
              grade_id="squares", solution=True),
        _cell("code", "assert squares(3) == [0, 1, 4], \"squares(3) is [0, 1, 4]\"\n"
                      "### BEGIN HIDDEN TESTS\nassert squares(6) == [0, 1, 4, 9, 16, 25]\nassert squares(0) == []\n"
                      "### END HIDDEN TESTS",
              grade_id="squares_tests", grade=True, locked=True, points=2),
        _cell("code", "def mean(xs):\n    ### BEGIN SOLUTION\n    return sum(xs) / len(xs)\n    ### END SOLUTION",
              grade_id="mean", solution=True),
        _cell("code", "assert mean([1, 2, 3]) == 2\nassert mean([5]) == 5",
              grade_id="mean_tests", grade=True, locked=True, points=1),
        _cell("md", "In one sentence: why does `mean([])` fail?\n\n"),
        _cell("md", "It divides by `len([])`, which is zero.",
              grade_id="why_mean_fails", solution=True, grade=True, points=2),
        _cell("md", "**Task**: plot `squares(10)` in the cell below (graded by hand).",
              grade_id="plot_task", task=True, locked=True, points=1),
        _cell("code", "# plot here"),
        _cell("md", "Write `largest_square(xs)`, the largest square in `xs` (graded by hand: name it well)."),
        _cell("code", "def largest_square(xs):\n    ### BEGIN SOLUTION\n    return max(x * x for x in xs)\n"
                      "    ### END SOLUTION",
              grade_id="largest_square", solution=True, grade=True, points=1),
    ]


def panel_notebook():
    """Authored in JupyterLab's Create Assignment panel: random `cell-...` ids, and only the keys
    the panel writes (grade, grade_id, locked, points, schema_version, solution, task)."""
    def panel(grade_id, **flags):
        return {"grade": False, "grade_id": grade_id, "locked": False, "schema_version": 3,
                "solution": False, "task": False, **flags}
    answer = nbformat.v4.new_code_cell("### BEGIN SOLUTION\nGREETING = \"hello\"\n### END SOLUTION")
    answer.metadata["nbgrader"] = panel("cell-5d1c0e2a9b7f4e31", solution=True)
    test = nbformat.v4.new_code_cell("assert GREETING == \"hello\"")
    test.metadata["nbgrader"] = panel("cell-a07c3f9e12d84b66", grade=True, locked=True, points=1)
    return [nbformat.v4.new_markdown_cell("# Homework 1, part 2"), answer, test]


NOTEBOOKS = {"functions": functions_notebook, "panel": panel_notebook}


def write_source(folder: Path) -> None:
    """The instructor's source notebooks of the assignment, in `folder` (source/ or solutions/<NAME>/)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, cells in NOTEBOOKS.items():
        nb = nbformat.v4.new_notebook(cells=cells())
        nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
        nbformat.write(nb, folder / f"{name}.ipynb")


ANSWERS = {
    "ada": {"squares": "def squares(n):\n    return [i ** 2 for i in range(n)]",
            "mean": "def mean(xs):\n    return sum(xs) / len(xs)",
            "why_mean_fails": "Dividing by the length of an empty list divides by zero.",
            "largest_square": "def largest_square(xs):\n    return max(xs, key=abs) ** 2",
            "cell-5d1c0e2a9b7f4e31": "GREETING = \"hel\" + \"lo\""},
    # right on the visible test, wrong on the hidden ones; the answers graded by hand left as released (no key)
    "bob": {"squares": "def squares(n):\n    return [0, 1, 4][:n]",
            "mean": "def mean(xs):\n    return sum(xs) / len(xs)",
            "cell-5d1c0e2a9b7f4e31": "GREETING = \"hi\""},
}
DELETED = {"bob": "mean_tests"}   # a test cell the student deleted
# an answer graded by hand whose checksum the student changed (nbgrader takes the gradebook's):
# bob's, left as released, gets a checksum that no release has; ada's, answered, her answer's own
FORGED_CHECKSUM = {"bob": "why_mean_fails", "ada": "largest_square"}


def hand_in(released: Path, submitted: Path, student: str) -> None:
    """`student`'s notebooks: the released ones with their answers, in submitted/<student>/<NAME>/."""
    target = Path(submitted) / student / NAME
    target.mkdir(parents=True, exist_ok=True)
    for name in NOTEBOOKS:
        nb = nbformat.read(Path(released) / f"{name}.ipynb", as_version=4)
        cells = []
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id == DELETED.get(student):
                continue
            if grade_id in ANSWERS[student] and cell.metadata["nbgrader"].get("solution"):
                cell.source = ANSWERS[student][grade_id]
            if grade_id == FORGED_CHECKSUM.get(student):
                cell.metadata["nbgrader"]["checksum"] = compute_checksum(cell) if grade_id in ANSWERS[student] else "0" * 32
            cells.append(cell)
        nb.cells = cells
        nbformat.write(nb, target / f"{name}.ipynb")
