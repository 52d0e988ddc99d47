"""The numbers of a class report, computed from a ClassData (grader/reports/data.py); no I/O here."""
import math
import statistics
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class ExerciseStats:
    exercise: object                 # data.Exercise
    students: int
    full: int
    partial: int
    zero: int
    mean: float                      # points
    discrimination: float | None     # see `discrimination`; None when it cannot be computed
    flagged: int                     # students whose answer needs manual grading
    # [(check name, students who failed it, one reason as the judge gave it)], most failed first
    mistakes: list = field(default_factory=list)
    failing: dict = field(default_factory=dict)   # {check name: [students]}, for links to their notebooks
    kernel_decided: int = 0          # ordinary nbgrader cells: graded by nbgrader's rule, no hidden checks


def exercise_stats(data) -> list:
    totals = {s: sub.total for s, sub in data.submissions.items()}
    stats = []
    for ex in data.exercises:
        key = (ex.notebook, ex.grade_id)
        scores = {s: sub.scores.get(key, 0.0) for s, sub in data.submissions.items()}
        values = list(scores.values())
        full = sum(1 for v in values if ex.points and math.isclose(v, ex.points))
        zero = sum(1 for v in values if v == 0)
        mistakes, failing, decided = _mistakes(data, ex)
        stats.append(ExerciseStats(
            ex, len(values), full, len(values) - full - zero, zero,
            statistics.fmean(values) if values else 0.0,
            discrimination(scores, {s: totals[s] - scores[s] for s in scores}),
            sum(1 for sub in data.submissions.values() if key in sub.flagged),
            mistakes, failing, decided))
    return stats


def discrimination(item: dict, rest: dict) -> float | None:
    """The corrected item-total correlation: Pearson's r between the students' points on one exercise
    and their points on the rest of the assignment. Near 1: the exercise separates the students who
    do well from those who do not; near 0 or below: it measures something else (or its grading does).
    None when fewer than 3 students, or when either side is the same for everyone."""
    students = sorted(item)
    if len(students) < 3:
        return None
    x, y = [item[s] for s in students], [rest[s] for s in students]
    if len(set(x)) < 2 or len(set(y)) < 2:
        return None
    return statistics.correlation(x, y)


def _mistakes(data, ex) -> tuple:
    """The hidden checks of one exercise that the class failed, most failed first."""
    failed, reason, decided = Counter(), {}, 0
    failing = {}
    for student in data.submissions:
        outcome = data.outcomes.get(student, {}).get(ex.notebook, {}).get(ex.grade_id)
        if not outcome:
            continue
        if outcome.get("decided_in") != "judge":
            decided += 1
            continue
        for failure in outcome.get("failed", []):
            name = failure.get("check") or "the checks could not run"
            failed[name] += 1
            reason.setdefault(name, failure.get("why", ""))
            failing.setdefault(name, []).append(student)
    ranked = [(name, count, reason[name]) for name, count in sorted(failed.items(), key=lambda kv: (-kv[1], kv[0]))]
    return ranked, failing, decided


def score_summary(data) -> dict:
    totals = [sub.total for sub in data.submissions.values()]
    if not totals:
        return {"students": 0, "max_score": data.max_score}
    return {"students": len(totals), "max_score": data.max_score, "mean": statistics.fmean(totals),
            "median": statistics.median(totals), "min": min(totals), "max": max(totals),
            "full_marks": sum(1 for t in totals if math.isclose(t, data.max_score))}


@dataclass
class AttemptStats:
    student: str
    attempts: int
    first: float | None              # the first graded attempt's score
    best: float | None
    last_at: str


def attempt_stats(data) -> list:
    """Per student, from the feedback service's history: how many hand-ins, first and best score."""
    by_student = {}
    for record in data.attempts:
        by_student.setdefault(str(record.get("student")), []).append(record)
    stats = []
    for student, records in sorted(by_student.items()):
        scores = [r["score"] for r in records if isinstance(r.get("score"), (int, float))]
        stats.append(AttemptStats(student, len(records), scores[0] if scores else None,
                                  max(scores) if scores else None, str(records[-1].get("at", ""))))
    return stats
