"""FlagForManualGrading: after SaveAutoGrades, mark the exercises whose code the scan flagged, and
those whose answer cell the hand-in lacked (OverwriteCells put it back).

SaveAutoGrades recomputes needs_manual_grade from the score, so this runs after it. A flagged
exercise keeps the judge's score; in the formgrader it shows as needing manual grading, and the
answer cell just before the test cell carries the reason as its automatic comment.
"""
from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor

from grader.preprocessors.comments import add_auto_comment, answer_cells
from grader.judge.handoff import handoff
from grader.preprocessors.overwrite_cells import PUT_BACK

FLAGGED = "Flagged for manual grading"    # how every reason here starts
PREFIX = f"{FLAGGED} (the code reaches into the grading machinery): "
MISSING = (f"{FLAGGED}: this answer cell was not in the notebook handed in (a notebook "
           "of an earlier release of the chapter, without this exercise, or a deleted cell). The grader "
           "put the released cell back and graded what ran before the test; an answer written elsewhere "
           "in the notebook may deserve the points.")


class FlagForManualGrading(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        answers = answer_cells(nb)
        flags = {grade_id: PREFIX + reasons for grade_id, reasons in handoff(resources).flags.items()}
        for cell in nb.cells:
            lacked = cell.metadata.get(PUT_BACK)     # the answer cell of a test put back, also missing
            if utils.is_grade(cell) and isinstance(lacked, str):
                test_id = cell.metadata["nbgrader"]["grade_id"]
                answers[test_id] = lacked
                flags[test_id] = "\n".join(filter(None, [flags.get(test_id), MISSING]))
        if not flags:
            return nb, resources
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            for grade_id, reason in flags.items():
                gb.find_grade(grade_id, info["notebook"], info["assignment"], info["student"]).needs_manual_grade = True
                if grade_id in answers:
                    add_auto_comment(gb, info, answers[grade_id], reason)
            gb.db.commit()
        return nb, resources
