"""FlagForManualGrading: after SaveAutoGrades, mark the exercises whose code the scan flagged.

SaveAutoGrades recomputes needs_manual_grade from the score, so this runs after it. A flagged
exercise keeps the judge's score; in the formgrader it shows as needing manual grading, and the
answer cell just before the test cell carries the reason as its automatic comment.
"""
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor

from grader.preprocessors.comments import add_auto_comment, answer_cells
from grader.judge.handoff import handoff

PREFIX = "Flagged for manual grading (the code reaches into the grading machinery): "


class FlagForManualGrading(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        flags = handoff(resources).flags
        if not flags:
            return nb, resources
        info = resources["nbgrader"]
        answers = answer_cells(nb)
        with Gradebook(info["db_url"]) as gb:
            for grade_id, reasons in flags.items():
                gb.find_grade(grade_id, info["notebook"], info["assignment"], info["student"]).needs_manual_grade = True
                if grade_id in answers:
                    add_auto_comment(gb, info, answers[grade_id], PREFIX + reasons)
            gb.db.commit()
        return nb, resources
