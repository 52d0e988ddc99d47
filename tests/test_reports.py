"""Class reports (make report): what the instructor sees is what the gradebook and the judge decided."""
import base64
import csv
import io
import re
import statistics
from datetime import datetime
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from grader.course import COURSE_ID, EXCHANGE, run_nbgrader
from grader.inbound import Gate
from grader.judge.outcomes import read_outcomes
from grader.reports.__main__ import write_reports
from grader.reports.data import ClassData, Exercise, Submission, load
from grader.reports.page import assignment_csv, assignment_page
from grader.reports.stats import attempt_stats, discrimination, exercise_stats
from hostile.tiny import add_tiny_assignment
from submissions import copy_course, place_submission, solution_copy, with_answers


CLASS_CHAPTERS = ("05_training_loop",)
CHAPTER = "05_training_loop"


def _gradebook_scores(course: Path, assignment: str) -> dict:
    """{grade id: {student: score}}, read here with nbgrader's API, independently of grader.reports."""
    scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for submission in gb.assignment_submissions(assignment):
            for nb in submission.notebooks:
                for grade in nb.grades:
                    scores.setdefault(grade.name, {})[submission.student.id] = (grade.score, grade.max_score)
    return scores


def _csv(path: Path) -> dict:
    with open(path, newline="") as f:
        return {(r["section"], r["item"], r["measure"]): r["value"] for r in csv.DictReader(f)}


def test_report_of_a_graded_class(graded_class, tmp_path):
    out = tmp_path / "reports"
    # an entry the exchange's gate refused (grader/inbound.py), under a name that tries the page's HTML
    inbound_folder = graded_class / EXCHANGE / COURSE_ID / "inbound"
    forged = f"<b>bob</b>+{CHAPTER}+2099-01-01 00:00:00.000000 UTC+x"
    (inbound_folder / forged).mkdir(parents=True)
    gate = Gate(inbound_folder)
    gate.set_aside(forged, gate.problem(forged))
    write_reports(graded_class, [CHAPTER], out)
    for name in (f"{CHAPTER}.html", "index.html"):
        listed = (out / name).read_text()
        assert "<b>bob" not in listed and "&lt;b&gt;bob&lt;/b&gt;+05_training_loop+2099" in listed, name
        assert "not safe in a path" in listed and "moved to" in listed, name
    page, numbers = (out / f"{CHAPTER}.html").read_text(), _csv(out / f"{CHAPTER}.csv")
    scores = _gradebook_scores(graded_class, CHAPTER)
    assert len(scores) == 7
    for grade_id, by_student in scores.items():
        label = grade_id.removesuffix("_tests")
        values = [score for score, _ in by_student.values()]
        points = next(iter(by_student.values()))[1]
        full = sum(1 for v in values if v == points)
        zero = sum(1 for v in values if v == 0)
        assert (numbers[("exercise", label, "full")], numbers[("exercise", label, "zero")],
                numbers[("exercise", label, "partial")]) == (str(full), str(zero), str(len(values) - full - zero))
        assert float(numbers[("exercise", label, "mean")]) == pytest.approx(statistics.fmean(values))
        rest = {s: sum(scores[g][s][0] for g in scores if g != grade_id) for s in by_student}
        item = {s: by_student[s][0] for s in by_student}
        if len(set(item.values())) > 1 and len(set(rest.values())) > 1:
            r = statistics.correlation([item[s] for s in sorted(item)], [rest[s] for s in sorted(item)])
            assert float(numbers[("exercise", label, "discrimination")]) == pytest.approx(r)
        assert f"<td>{label}</td>" in page
    # the common mistakes are the judge's: the untouched release fails every check of every exercise
    outcomes = read_outcomes(graded_class, CHAPTER)
    for grade_id, outcome in outcomes["untouched"][CHAPTER].items():
        assert len(outcome["failed"]) == outcome["checks"] > 0
        for failure in outcome["failed"]:
            failed_by = sum(1 for s in outcomes if any(f["check"] == failure["check"]
                                                       for f in outcomes[s][CHAPTER][grade_id]["failed"]))
            key = ("hidden check failed", f"{grade_id.removesuffix('_tests')} / {failure['check']}", "students")
            assert numbers[key] == str(failed_by)
    assert "reference/05_training_loop" not in page, "the reference passes everything: never linked as a mistake"
    assert "untouched/05_training_loop/05_training_loop.ipynb" in page
    figures = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(figures) >= 2 and all(base64.b64decode(f).startswith(b"\x89PNG") for f in figures)
    assert CHAPTER in (out / "index.html").read_text()


def _data(**overrides) -> ClassData:
    exercises = [Exercise("hw", "a_tests", 2.0, "a"), Exercise("hw", "b_tests", 1.0, "b")]
    subs = {s: Submission(s, None, None, 0.0, {("hw", "a_tests"): a, ("hw", "b_tests"): b}, set())
            for s, a, b in [("s1", 2, 1), ("s2", 1, 0), ("<script>x</script>", 0, 0), ("s4", 2, 1)]}
    outcome = {"decided_in": "judge", "checks": 2,
               "failed": [{"check": "edge <b>case</b>", "why": "hidden check 1 of 2 (edge <b>case</b>): "
                           "the result is '<img src=x onerror=alert(1)>'"}]}
    fields = dict(assignment="hw", duedate=datetime(2030, 1, 1), exercises=exercises, submissions=subs,
                  outcomes={"<script>x</script>": {"hw": {"a_tests": outcome}}, "s2": {"hw": {"a_tests": outcome}}})
    fields.update(overrides)
    return ClassData(**fields)


def test_student_text_is_escaped_in_the_page():
    page = assignment_page(_data())
    assert "<script>x</script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page
    assert "<img src=x" not in page and "<b>case</b>" not in page
    assert "2 of 4" in page, "two students failed the check"
    assert "<td>the result is &#x27;&lt;img src=x onerror=alert(1)&gt;&#x27;</td>" in page, "the reason, without its label"


def test_discrimination_is_the_item_rest_correlation():
    assert discrimination({"a": 1, "b": 0, "c": 1}, {"a": 5, "b": 1, "c": 4}) == pytest.approx(
        statistics.correlation([1, 0, 1], [5, 1, 4]))
    assert discrimination({"a": 1, "b": 1, "c": 1}, {"a": 5, "b": 1, "c": 4}) is None, "everyone alike: no signal"
    assert discrimination({"a": 1, "b": 0}, {"a": 5, "b": 1}) is None, "two students are too few"
    stats = {s.exercise.grade_id: s for s in exercise_stats(_data())}
    assert (stats["a_tests"].full, stats["a_tests"].partial, stats["a_tests"].zero) == (2, 1, 1)
    assert stats["a_tests"].discrimination > 0.8, "those who do a well also do b well"


def test_attempts_first_and_best_from_the_feedback_history():
    attempts = [{"at": f"2030-01-01T0{i}:00:00Z", "student": s, "assignment": "hw", "score": score,
                 "max_score": 3.0, "handed_in": f"2030-01-01 0{i}:00:00.000000 UTC"}
                for i, (s, score) in enumerate([("s1", 1.0), ("s2", None), ("s1", 3.0), ("s1", 2.0), ("s2", 0.0)])]
    stats = {a.student: a for a in attempt_stats(_data(attempts=attempts))}
    assert (stats["s1"].attempts, stats["s1"].first, stats["s1"].best) == (3, 1.0, 3.0)
    assert (stats["s2"].attempts, stats["s2"].first, stats["s2"].best) == (2, 0.0, 0.0), "not graded: no score"
    page = assignment_page(_data(attempts=attempts))
    assert "2 students handed in 5 times" in page and "the feedback service's history" in page
    rows = _csv_text(assignment_csv(_data(attempts=attempts)))
    assert rows[("attempts", "s1", "best score")] == "3.0"


def _csv_text(text: str) -> dict:
    return {(r["section"], r["item"], r["measure"]): r["value"] for r in csv.DictReader(io.StringIO(text))}


def test_a_report_leaves_out_what_the_judge_said_of_an_earlier_hand_in(tmp_path):
    """Plain `nbgrader autograde` leaves the judge's record of a student's earlier hand-in in place
    when their newer one cannot be graded at all (nbgrader has already put the new timestamp in the
    gradebook); a report leaves that record out, rather than show mistakes of a notebook the student
    replaced (grader/judge/outcomes.py)."""
    course = copy_course(tmp_path / "course")
    assignment = add_tiny_assignment(course)
    path = place_submission(course, "cy", assignment,
                            with_answers(solution_copy(assignment, course), {"answer": "ANSWER = 41"}))
    (path.parent / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
    run_nbgrader("autograde", assignment, course=course)
    assert load(course, assignment).outcomes["cy"][assignment]["answer_tests"]["failed"]
    path.write_text("{ this is not a notebook")
    (path.parent / "timestamp.txt").write_text("2026-11-21 10:00:00.000000 UTC")
    run_nbgrader("autograde", assignment, "--force", course=course, check=False)
    assert read_outcomes(course, assignment)["cy"], "the earlier record is still on disk"
    data = load(course, assignment)
    assert str(data.submissions["cy"].timestamp) == "2026-11-21 10:00:00"
    assert "cy" not in data.outcomes, "the report shows the judge's record of the replaced hand-in"
