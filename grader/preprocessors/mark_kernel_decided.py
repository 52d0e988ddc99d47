"""MarkKernelDecided: say in the formgrader which grades the judge does not stand behind.

An ordinary nbgrader test cell (no `hidden_checks`) is graded by nbgrader's own rule, from the
outputs of the student's kernel (docs/GRADING.md, "Ordinary nbgrader cells"). Its exercise's answer
cell gets an automatic comment that says so; the score is nbgrader's, untouched.
"""
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor

from grader.preprocessors.comments import add_auto_comment, answer_cells
from grader.judge.handoff import handoff

NOTE = ("Decided in the student's kernel: {test} has no hidden checks, so nbgrader's own rule graded it "
        "from the outputs of the student's code, which that code could forge.")


class MarkKernelDecided(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        decided = handoff(resources).kernel_decided
        answers = answer_cells(nb)
        if not any(grade_id in answers for grade_id in decided):
            return nb, resources
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            for grade_id in decided:
                if grade_id in answers:
                    add_auto_comment(gb, info, answers[grade_id], NOTE.format(test=grade_id))
            gb.db.commit()
        return nb, resources
