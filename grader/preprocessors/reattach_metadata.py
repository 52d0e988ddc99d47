"""ReattachMetadata: a hand-in whose cells lost their nbgrader metadata gets it back, so it is graded.

Editors other than JupyterLab (Colab, VS Code, a jupytext round trip, a copy into a new notebook) can
drop the `nbgrader` entry of a cell's metadata, or of every cell. nbgrader then finds none of the
exercise's cells: every test flagged in stock nbgrader, and, with the missing tests re-added, no
grade at all. The release gives each nbgrader cell the grade id as its cell id, and Colab, VS Code and
JupyterLab keep cell ids: a cell without metadata whose id names one of the notebook's cells in the
gradebook gets that cell's metadata back. A cell with no such id (an old notebook format has none)
gets it back when it is a locked cell whose text is the released text (a test cell: its visible
part). A cell that lost its tags (`skip-when-grading`: a demonstration that grading skips on both
sides) gets those of the instructor's notebook's cell with its id, or its text, back. Nothing is
taken from the hand-in but its ids and text; what a cell may do is the gradebook's
(a test cell is then put back whole by OverwriteCells, whatever it held), so giving a cell back its
metadata grants nothing a student could not have kept. docs/GRADING.md, "Every hand-in gets a grade".
"""
from pathlib import Path

import nbformat
from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from grader.judge.probes import without_hidden_section


def gradebook_cells(gb, notebook: str, assignment: str) -> dict:
    """{cell name: (its nbgrader metadata as the release wrote it, its released text, its cell type)}
    for every nbgrader cell of the notebook in the gradebook (tasks aside: none here are graded)."""
    source_nb = gb.find_notebook(notebook, assignment)
    points = {cell.name: cell.max_score for cell in source_nb.grade_cells}
    answers = {cell.name for cell in source_nb.solution_cells}
    found = {}
    for cell in source_nb.source_cells:
        metadata = {"grade": cell.name in points, "grade_id": cell.name, "locked": bool(cell.locked),
                    "solution": cell.name in answers, "schema_version": 3, "task": False,
                    "cell_type": cell.cell_type, "checksum": cell.checksum}
        if cell.name in points:
            metadata["points"] = points[cell.name]
        if not (metadata["grade"] or metadata["solution"] or metadata["locked"]):
            continue
        found[cell.name] = (metadata, without_hidden_section(cell.source).strip(), cell.cell_type)
    return found


def is_nbgrader_cell(cell) -> bool:
    """Whether a cell carries nbgrader's metadata (a test, an answer or a locked cell)."""
    return utils.is_grade(cell) or utils.is_solution(cell) or utils.is_locked(cell)


class ReattachMetadata(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            known = gradebook_cells(gb, info["notebook"], info["assignment"])
        present = {cell.metadata.nbgrader["grade_id"] for cell in nb.cells
                   if is_nbgrader_cell(cell) and cell.metadata.nbgrader.get("grade_id")}
        by_text = {text: name for name, (metadata, text, _) in known.items() if metadata["locked"] and text}
        for cell in nb.cells:
            if is_nbgrader_cell(cell):
                continue
            name = cell.get("id")
            if name not in known or name in present:
                name = by_text.get(cell.source.strip())
            if name is None or name in present or known[name][2] != cell.cell_type:
                continue
            self.log.warning("Cell %s had lost its nbgrader metadata: given back from the gradebook", name)
            cell.metadata["nbgrader"] = dict(known[name][0])
            present.add(name)
        self._give_back_tags(nb, info)
        return nb, resources

    def _give_back_tags(self, nb, info) -> None:
        course = CourseDirectory(parent=self)
        solution = Path(course.format_path(course.source_directory, ".", info["assignment"])) / f"{info['notebook']}.ipynb"
        if not solution.is_file():
            return
        tagged = [cell for cell in nbformat.read(solution, as_version=4).cells if cell.metadata.get("tags")]
        by_id = {cell.get("id"): cell.metadata.tags for cell in tagged}
        by_text = {cell.source.strip(): cell.metadata.tags for cell in tagged if not is_nbgrader_cell(cell)}
        for cell in nb.cells:
            if "tags" not in cell.metadata:
                tags = by_id.get(cell.get("id")) or by_text.get(cell.source.strip())
                if tags:
                    cell.metadata["tags"] = list(tags)
