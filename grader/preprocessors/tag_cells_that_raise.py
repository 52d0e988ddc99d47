"""TagCellsThatRaise: in the student release, exercise cells carry `raises-exception`.

Until an exercise is done, its solution cell raises NotImplementedError and its test cell fails.
JupyterLab's Run All (and nbclient) stops at the first cell that raises unless the cell carries
the `raises-exception` tag, so without it everything after the first open exercise (figures,
explanations) stays unrun. The same holds for a demonstration that calls the student's code:
authors tag it `uses-exercise` in solutions/. Grading runs with allow_errors and ignores the tag.
Only the release gets it: in solutions/ nbval would take it to mean "this cell must raise".
"""
from nbgrader.preprocessors import NbGraderPreprocessor

RAISES = "raises-exception"
USES_EXERCISE = "uses-exercise"


class TagCellsThatRaise(NbGraderPreprocessor):
    def preprocess_cell(self, cell, resources, index):
        meta = cell.metadata.get("nbgrader", {})
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "code" and (meta.get("solution") or meta.get("grade") or USES_EXERCISE in tags):
            tags = cell.metadata.setdefault("tags", [])
            if RAISES not in tags:
                tags.append(RAISES)
        return cell, resources
