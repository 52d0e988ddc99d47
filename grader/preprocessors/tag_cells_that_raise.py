"""TagCellsThatRaise: in the student release, exercise cells carry `raises-exception`.

Until an exercise is done, its solution cell raises NotImplementedError and its test cell fails.
JupyterLab's Run All (and nbclient) stops at the first cell that raises unless the cell carries
the `raises-exception` tag, so without it everything after the first open exercise (figures,
explanations) stays unrun. Grading runs with allow_errors and ignores the tag. Only the release
gets it: in solutions/ nbval would take the tag to mean "this cell must raise".
"""
from nbgrader.preprocessors import NbGraderPreprocessor

RAISES = "raises-exception"


class TagCellsThatRaise(NbGraderPreprocessor):
    def preprocess_cell(self, cell, resources, index):
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and (meta.get("solution") or meta.get("grade")):
            tags = cell.metadata.setdefault("tags", [])
            if RAISES not in tags:
                tags.append(RAISES)
        return cell, resources
