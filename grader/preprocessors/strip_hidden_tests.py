"""StripHiddenTests: the last sanitize step, so that no hidden check reaches the student's kernel.

nbgrader's OverwriteCells restores every test cell from the gradebook, hidden section included,
and autograde writes the sanitized notebook into the kernel's working folder before running it:
student code could read the hidden checks there. Here each judged test cell keeps its visible
tests only; the hidden section is sent to the kernel later, as a probe, after the student's code
has run, and judged outside it. An ordinary nbgrader test cell (no `hidden_checks`) stays whole,
as stock nbgrader runs it (docs/GRADING.md, "Ordinary nbgrader cells").
"""
from nbgrader import utils
from nbgrader.preprocessors import NbGraderPreprocessor

from grader.judge.probes import without_probe_section


class StripHiddenTests(NbGraderPreprocessor):
    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == "code" and utils.is_grade(cell):
            cell.source = without_probe_section(cell.source)
        return cell, resources
