"""The judge's notes in the formgrader: automatic comments on an exercise's answer cell.

nbgrader keeps comments for answer (solution) cells only, so a note about a test cell goes to the
last answer cell before it, the exercise that test cell grades. Used by FlagForManualGrading and
MarkKernelDecided, after SaveAutoGrades (which writes its own "No response." there).
"""
from nbgrader import utils


def answer_cells(nb) -> dict:
    """{test cell's grade id: grade id of the last answer cell before it} (test cells with none are left out)."""
    answers, last = {}, None
    for cell in nb.cells:
        if utils.is_solution(cell):
            last = cell.metadata["nbgrader"]["grade_id"]
        elif utils.is_grade(cell) and last:
            answers[cell.metadata["nbgrader"]["grade_id"]] = last
    return answers


def add_auto_comment(gb, info: dict, answer_id: str, text: str) -> None:
    """Append `text` to the automatic comment of one answer cell of the graded submission."""
    comment = gb.find_comment(answer_id, info["notebook"], info["assignment"], info["student"])
    comment.auto_comment = "\n".join(filter(None, [comment.auto_comment, text]))
