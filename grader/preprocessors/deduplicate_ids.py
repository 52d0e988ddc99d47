"""DeduplicateIds, fixed: nbgrader 0.9.6 strips the grade id of a duplicated grade cell but leaves an
empty `nbgrader` dict behind, and `OverwriteCells.add_missing_cells` (which this course turns on)
then crashes with KeyError: 'grade_id', so a student who copy-pastes a test cell gets no grade at
all. This version removes the metadata entirely: the duplicate becomes a plain code cell and the
last copy is graded, as nbgrader intends. tests/test_hostile.py::tests_duplicated covers it.
"""
from nbgrader import utils
from nbgrader.preprocessors import DeduplicateIds as _NbgraderDeduplicateIds


class DeduplicateIds(_NbgraderDeduplicateIds):
    def preprocess_cell(self, cell, resources, cell_index):
        if not (utils.is_grade(cell) or utils.is_solution(cell) or utils.is_locked(cell)):
            return cell, resources
        grade_id = cell.metadata.nbgrader["grade_id"]
        if grade_id in self.grade_ids:
            self.log.warning("Cell with id '%s' exists multiple times!", grade_id)
            del cell.metadata["nbgrader"]
        else:
            self.grade_ids.add(grade_id)
        return cell, resources

