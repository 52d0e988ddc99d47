"""OverwriteCells, with missing test cells put back wherever the hand-in's cells are.

nbgrader 0.9's `add_missing_cells` (which this course turns on) re-inserts a missing grade cell right
after the cell before it in the source notebook, looked up in the hand-in by grade id. When that
cell is gone too (an answer deleted with its test and retyped in a new cell, the release before an
exercise was added, cells that lost their metadata) it raises KeyError, and nbgrader drops the
student: no grade, no feedback. Here each missing grade cell goes, in the source's order, just
before the next of the source's cells that the hand-in has, or at its end: after whatever the
student wrote in its place, so that a retyped answer is run before its test. Its text says that it
was put back. docs/GRADING.md, "Every hand-in gets a grade".
"""
from nbgrader.preprocessors import OverwriteCells as _NbgraderOverwriteCells
from traitlets import Unicode

from grader.preprocessors.reattach_metadata import is_nbgrader_cell

# In the metadata of a test cell put back whose exercise's answer cell the hand-in lacks too: that
# answer cell's grade id. FlagForManualGrading, in nbgrader's second stage (whose `resources` are new),
# flags the exercise. Removed first from every cell handed in, so that only the grader sets it.
PUT_BACK = "put_back_by_grader"


class OverwriteCells(_NbgraderOverwriteCells):
    missing_cell_notification = Unicode(
        "This cell (id:{cell_id}) was not in the notebook handed in (an earlier release of the chapter, "
        "or a deleted cell): the grader put it back and ran it.\n\n").tag(config=True)

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            cell.metadata.pop(PUT_BACK, None)
        return super().preprocess(nb, resources)

    def add_missing_grade_cells(self, nb, resources):
        source_nb = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        order = [cell.name for cell in source_nb.source_cells]
        grade_cells = {cell.name: cell for cell in source_nb.grade_cells}
        answers = {cell.name for cell in source_nb.solution_cells}
        present = {cell.metadata.nbgrader["grade_id"] for cell in nb.cells if is_nbgrader_cell(cell)}
        for position, name in enumerate(order):
            if name not in grade_cells or name in present:
                continue
            self.log.warning("Missing grade cell %s encountered, adding it to the notebook", name)
            cell = self.missing_cell_transform(source_nb.source_cells[position], grade_cells[name].max_score,
                                               is_solution=name in answers)
            following = [later for later in order[position + 1:] if later in present]
            answer = next((earlier for earlier in reversed(order[:position]) if earlier in answers), None)
            if answer is not None and answer not in present and name not in answers:
                cell.metadata[PUT_BACK] = answer
            nb.cells.insert(self._index(nb, following[0]) if following else len(nb.cells), cell)
            present.add(name)
        return nb, resources

    @staticmethod
    def _index(nb, grade_id: str) -> int:
        return next(i for i, cell in enumerate(nb.cells)
                    if is_nbgrader_cell(cell) and cell.metadata.nbgrader.get("grade_id") == grade_id)
