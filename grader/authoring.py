"""Small builders for writing a chapter's solution notebook in nbgrader's own format.

The notebook in solutions/ is the single source of truth; these helpers only save typing when
a chapter is first drafted (write a throwaway script that calls `write_notebook`, run it, then
edit the .ipynb in JupyterLab). Cells are nbgrader schema 3: solution cells, locked test cells
with points, hidden tests between `### BEGIN HIDDEN TESTS` and `### END HIDDEN TESTS`.
"""
import textwrap
from pathlib import Path

import nbformat

SCHEMA_VERSION = 3


def _src(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def _meta(grade_id: str, *, solution: bool, grade: bool, locked: bool, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked,
            "schema_version": SCHEMA_VERSION, "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def md(text: str):
    return nbformat.v4.new_markdown_cell(_src(text))


def code(text: str, tags=()):
    cell = nbformat.v4.new_code_cell(_src(text))
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def solution(grade_id: str, text: str):
    """An exercise's answer cell: the reference solution between BEGIN/END SOLUTION markers."""
    cell = nbformat.v4.new_code_cell(_src(text))
    cell.metadata.update(_meta(grade_id, solution=True, grade=False, locked=False))
    cell.id = grade_id
    return cell


def tests(grade_id: str, text: str, points: int):
    """A locked, graded test cell: visible asserts, then hidden ones."""
    cell = nbformat.v4.new_code_cell(_src(text))
    cell.metadata.update(_meta(grade_id, solution=False, grade=True, locked=True, points=points))
    cell.id = grade_id
    return cell


def write_notebook(cells, path) -> Path:
    """Save cells as a Python 3 notebook, with stable cell ids so diffs stay small."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    stem = Path(path).stem
    for index, cell in enumerate(cells):
        if "nbgrader" not in cell.metadata:
            cell.id = f"{stem}-{index:03d}"
    nb.cells = list(cells)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def set_hidden_checks(path, checks: dict) -> None:
    """Replace the hidden section of test cells in a solution notebook: {test grade_id: code}, the
    code being a `def hidden_checks(check, rng): ...` (docs/GRADING.md says how it is judged)."""
    from grader.judge.probes import HIDDEN
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    done = set()
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in checks and cell.metadata["nbgrader"].get("grade"):
            block = f"### BEGIN HIDDEN TESTS\n{_src(checks[grade_id])}\n### END HIDDEN TESTS"
            if HIDDEN.search(cell.source):
                cell.source = HIDDEN.sub(lambda m: block + m.group(2), cell.source, count=1)
            else:
                cell.source = cell.source.rstrip("\n") + "\n" + block
            done.add(grade_id)
    missing = set(checks) - done
    if missing:
        raise KeyError(f"no test cells named {sorted(missing)} in {path}")
    nbformat.write(nb, path)
