"""FlagForManualGrading: after SaveAutoGrades, mark the exercises whose code the scan flagged.

SaveAutoGrades recomputes needs_manual_grade from the score, so this runs after it. A flagged
exercise keeps the judge's score; in the formgrader it shows as needing manual grading, and the
solution cell just before the test cell carries the reason as its automatic comment.
"""
from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor

PREFIX = "Flagged for manual grading (the code reaches into the grading machinery): "


class FlagForManualGrading(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        flags = resources.get("judge", {}).get("flags", {})
        if not flags:
            return nb, resources
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            last_solution = None
            for cell in nb.cells:
                meta = cell.metadata.get("nbgrader", {})
                if utils.is_solution(cell):
                    last_solution = meta["grade_id"]
                if not utils.is_grade(cell) or meta.get("grade_id") not in flags:
                    continue
                grade_id = meta["grade_id"]
                grade = gb.find_grade(grade_id, info["notebook"], info["assignment"], info["student"])
                grade.needs_manual_grade = True
                if last_solution:
                    comment = gb.find_comment(last_solution, info["notebook"], info["assignment"], info["student"])
                    comment.auto_comment = PREFIX + flags[grade_id]
            gb.db.commit()
        return nb, resources
