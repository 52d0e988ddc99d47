"""RestoreTestCells: before OverwriteCells, give an untouched test cell its hidden section back.

A released test cell lacks its hidden section, so nbgrader's OverwriteCells finds every test cell
of an honest submission "changed" (its checksum is the full cell's) and logs a warning for each one
before restoring it from the gradebook. Here a locked test cell whose source is exactly the released
one gets the gradebook's full source first: OverwriteCells then finds it unchanged and stays quiet.
A test cell the student did edit is left to OverwriteCells, which warns and restores it, as before.
"""
from nbgrader import utils
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor

from grader.judge.probes import without_hidden_section


class RestoreTestCells(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            for cell in nb.cells:
                if cell.cell_type != "code" or not (utils.is_grade(cell) and utils.is_locked(cell)):
                    continue
                try:
                    full = gb.find_source_cell(cell.metadata.nbgrader["grade_id"], info["notebook"],
                                               info["assignment"]).source
                except MissingEntry:
                    continue       # OverwriteCells reports it
                if without_hidden_section(full).strip() == cell.source.strip():
                    cell.source = full
        return nb, resources
