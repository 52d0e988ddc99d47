"""Parallel grading leaves exactly what serial nbgrader leaves: same scores, comments, flags, CSV.

One class is handed in twice, to two copies of a course: one copy is graded by plain serial
`nbgrader autograde`, the other by grader.class_grading.autograde.autograde_all with 2 jobs behind the wall.
"""
import contextlib
import io
import json
import os
import shutil

import nbformat
import psutil
import pytest
from nbgrader.api import Gradebook

from grader.class_grading.autograde import merge_submission, submissions
from bench_grading import TIMESTAMP, export_rows, gradebook_state, grade_both
from grader.course import run_nbgrader
from grader.judge.outcomes import read_outcomes
from submissions import copy_course, place_submission, release_copy, solution_copy, with_answers
from hostile.tiny import add_tiny_assignment


def hand_in_class(course, assignment):
    """Six students: full marks, untouched, half right, no notebook at all, an extra file, and a
    renamed notebook (nbgrader reports an error and leaves an unscored submission)."""
    ref = solution_copy(assignment, course)
    place_submission(course, "ada", assignment, ref)
    place_submission(course, "bob", assignment, release_copy(assignment, course))
    place_submission(course, "cy", assignment, with_answers(ref, {"answer": "ANSWER = 41"}))
    (course / "submitted" / "dee" / assignment).mkdir(parents=True)   # the notebook is missing
    place_submission(course, "eve", assignment, with_answers(ref, {"double": "def double(x):\n    return x + x"}))
    (course / "submitted" / "eve" / assignment / "notes.txt").write_text("my notes")
    place_submission(course, "fay", assignment, ref).rename(
        course / "submitted" / "fay" / assignment / f"{assignment} (1).ipynb")
    for student in ("ada", "bob", "cy", "dee", "eve", "fay"):
        (course / "submitted" / student / assignment / "timestamp.txt").write_text(TIMESTAMP)


def _fork_servers_running() -> dict:
    """{pid: command line} of this process's descendants that are a zygote or a warm nbgrader."""
    found = {}
    for process in psutil.Process().children(recursive=True):
        try:
            command = process.cmdline()
        except psutil.Error:   # ended, or a zombie: not running
            continue
        if any("warm_kernels" in part or "warm_nbgrader" in part for part in command):
            found[process.pid] = " ".join(command)
    return found


# The class is a day late (TIMESTAMP is 2030-01-01 12:00 UTC) and every late hand-in scores zero
# (nbgrader's "zero" late penalty), except where extensions.csv gives a student a later due date.
CLASS_DUE = "2029-12-31 12:00:00"
EXTENSIONS = ("student,assignment,due\n"
              "ada,{assignment},2030-01-02 00:00\n"                 # after her hand-in: on time
              "cy,{assignment},2030-01-01T13:00:00+02:00\n")        # 11:00 UTC: still an hour late


def give_due_dates(course, assignment):
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(assignment, duedate=CLASS_DUE)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write('\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    (course / "extensions.csv").write_text(EXTENSIONS.format(assignment=assignment))


@pytest.fixture(scope="module")
def two_courses(tmp_path_factory):
    """The benchmark's own machinery (bench_grading.grade_both), on the tiny assignment."""
    base = copy_course(tmp_path_factory.mktemp("pg") / "course")
    assignment = add_tiny_assignment(base)
    hand_in_class(base, assignment)
    give_due_dates(base, assignment)
    # what autograde_all says on stderr (nbgrader's log of each failed submission), kept for the
    # failure messages below: a submission that only failed in one run must say why
    said = io.StringIO()
    environment = dict(os.environ)
    running = _fork_servers_running()   # the suite's own, for its nbgrader commands (conftest.py)
    with contextlib.redirect_stderr(said):
        result = grade_both(base, assignment, tmp_path_factory.mktemp("graded"), jobs=2)
    left = {"environment": (environment, dict(os.environ)),
            "servers": [command for pid, command in _fork_servers_running().items() if pid not in running]}
    return (assignment, result.serial, result.parallel, (result.parallel_code, result.serial_code), said.getvalue(),
            left)


def test_parallel_grading_succeeds(two_courses):
    assignment, serial, parallel, code, _, _ = two_courses
    parallel_code, serial_code = code
    assert parallel_code == serial_code == 1, "fay's renamed notebook is an error for both"
    assert [s for s, _ in submissions(parallel)] == ["ada", "bob", "cy", "dee", "eve", "fay"]


def test_the_coordinator_is_left_as_it_was(two_courses):
    """The LocalCluster's worker runs in the coordinator's process: the settings its tasks take stay
    out of the coordinator's environment, and its zygote and warm nbgrader stop with it."""
    *_, left = two_courses
    before, after = left["environment"]
    assert {k: after.get(k) for k in set(before) | set(after) if before.get(k) != after.get(k)} == {}
    assert left["servers"] == [], "a fork server outlived the grading that started it"


def test_same_gradebook_as_serial_nbgrader(two_courses):
    assignment, serial, parallel, _, log, _ = two_courses
    expected = gradebook_state(serial, assignment)
    assert set(expected) == {"ada", "bob", "cy", "eve", "fay"}, "dee handed in nothing"
    assert gradebook_state(parallel, assignment) == expected, log[-6000:]
    assert expected["ada"]["double_tests"][0] == 2 and expected["ada"]["answer_tests"][0] == 1
    assert expected["cy"]["answer_tests"][0] == 0 and expected["cy"]["double_tests"][0] == 2
    assert expected["fay"]["double_tests"] == (None, None, 2, True)


def test_late_penalties_count_from_each_students_own_due_date(two_courses):
    """extensions.csv reaches nbgrader's late penalty on both paths (the gradebooks are equal above)."""
    assignment, serial, parallel, _, log, _ = two_courses
    state = gradebook_state(parallel, assignment)
    assert state["ada"]["extension"] == "1 day, 12:00:00", log[-3000:]
    assert not state["ada"][assignment], "ada handed in before her own due date: no penalty"
    assert state["cy"]["extension"] == "23:00:00" and state["cy"][assignment] == 2, "cy is still late: her score goes"
    assert state["eve"]["extension"] == "None" and state["eve"][assignment] == 3
    assert state["bob"][assignment] == 0, "nothing to take from a zero"


def test_judge_outcomes_same_as_serial_nbgrader(two_courses):
    """What the judge decided per exercise (grader/judge/outcomes.py) comes back from the workers."""
    assignment, serial, parallel, _, log, _ = two_courses
    mine, theirs = read_outcomes(parallel, assignment), read_outcomes(serial, assignment)
    assert mine == theirs and set(mine) == {"ada", "bob", "cy", "eve"}, log[-3000:]
    answer = mine["cy"][assignment]["answer_tests"]
    assert answer["decided_in"] == "judge" and len(answer["failed"]) >= 1 and answer["checks"] >= len(answer["failed"])
    assert all(not e["failed"] for e in mine["ada"][assignment].values())
    assert all(e["failed"] for e in mine["bob"][assignment].values()), "the untouched release fails every exercise"
    # each record names the hand-in it judged, with the timestamp the gradebook has (reports match the two)
    records = {course: {p.relative_to(course).as_posix(): json.loads(p.read_text())
                        for p in sorted((course / "judge_outcomes").rglob("*.json"))} for course in (serial, parallel)}
    assert records[parallel] == records[serial]
    with Gradebook(f"sqlite:///{parallel / 'gradebook.db'}") as gb:
        handed_in = {s.student.id: s.timestamp.isoformat() for s in gb.find_assignment(assignment).submissions}
    assert records[parallel] and all(r["submitted"] == handed_in[r["student"]] for r in records[parallel].values())


def test_same_grades_csv_as_serial_nbgrader(two_courses):
    _, serial, parallel, _, log, _ = two_courses
    assert export_rows(parallel) == export_rows(serial), log[-6000:]


def test_autograded_notebooks_copied_back(two_courses):
    assignment, serial, parallel, _, log, _ = two_courses
    for student in ("ada", "bob", "cy", "eve"):
        mine = parallel / "autograded" / student / assignment / f"{assignment}.ipynb"
        theirs = serial / "autograded" / student / assignment / f"{assignment}.ipynb"
        assert mine.exists(), log[-6000:]
        a, b = nbformat.read(mine, 4), nbformat.read(theirs, 4)
        assert [c.source for c in a.cells] == [c.source for c in b.cells]
    assert (parallel / "autograded" / "eve" / assignment / "notes.txt").read_text() == "my notes"
    # generate_feedback works on what was copied back
    run_nbgrader("generate_feedback", assignment, "--force", course=parallel)
    page = (parallel / "feedback" / "ada" / assignment / f"{assignment}.html").read_text()
    assert "2030-01-02 00:00 UTC (your extension; the class's due date is 2029-12-31 12:00 UTC)" in page
    assert "2030-01-01 12:00 UTC, on time" in page
    assert "2030-01-01 12:00 UTC, 24 hours late" in (parallel / "feedback" / "bob" / assignment /
                                                    f"{assignment}.html").read_text()


def test_merge_keeps_manual_grades(two_courses, tmp_path):
    """Re-grading merges auto scores only: a grader's manual score survives, as in nbgrader."""
    assignment, _, parallel, _, _, _ = two_courses
    db = tmp_path / "gradebook.db"
    shutil.copyfile(parallel / "gradebook.db", db)
    with Gradebook(f"sqlite:///{db}") as gb:
        grade = gb.find_grade("answer_tests", assignment, assignment, "cy")
        grade.manual_score = 0.5
        gb.db.commit()
    merge_submission(parallel / "gradebook.db", db, assignment, "cy")
    with Gradebook(f"sqlite:///{db}") as gb:
        grade = gb.find_grade("answer_tests", assignment, assignment, "cy")
        assert grade.manual_score == 0.5 and grade.score == 0.5


def test_bench_builds_a_varied_class(tmp_path):
    """`make bench-grading`'s class: reference, untouched, alternative, wrong and mixed answers."""
    from bench_grading import build_class
    from grader.release import release
    course = copy_course(tmp_path / "course")
    release(["01_tensors"], course=course)
    names = build_class(course, "01_tensors", 10)
    assert len(names) == 10 and len(submissions(course)) == 10
    sources = {(course / "submitted" / n / "01_tensors" / "01_tensors.ipynb").read_text() for n in names}
    assert len(sources) >= 6, "at least five kinds of hand-in, mixes differ"


def test_failures_are_told_apart_within_a_batch():
    from grader.class_grading.batch import BatchOutcome as Result
    log = "[AutogradeApp | ERROR] There was an error processing assignment 'A' for student 'bo'\n"
    assert Result(["al", "bo"], "A", 1, log).failed == ["bo"]
    assert Result(["al", "bo"], "A", 0, "").failed == []
    assert Result(["al", "bo"], "A", 124, "").failed == ["al", "bo"], "a batch stopped at its time limit"


def test_batches_are_balanced_and_cover_every_submission():
    from grader.class_grading.autograde import split_batches
    todo = [(f"s{i:02d}", "A") for i in range(20)] + [("x", "B"), ("y", "B"), ("z", "B")]
    batches = split_batches(todo, jobs=2, max_size=10)
    a_sizes = sorted(len(s) for s, a in batches if a == "A")
    assert a_sizes == [10, 10], "20 students on 2 workers: one batch of 10 each"
    assert sorted(len(s) for s, a in batches if a == "B") == [1, 2]
    assert sorted((s, a) for students, a in batches for s in students) == sorted(todo)
    sizes = [len(s) for s, a in split_batches([(f"s{i}", "A") for i in range(45)], jobs=4, max_size=10)]
    assert len(sizes) % 4 == 0 and max(sizes) <= 10 and max(sizes) - min(sizes) <= 1, sizes


def test_the_likely_longest_batches_start_first(tmp_path):
    """A big notebook's batches start before a small one's, so no worker is left alone at the end."""
    from grader.class_grading.autograde import heaviest_first
    for assignment, size in (("small", 100), ("big", 10_000)):
        (tmp_path / "solutions" / assignment).mkdir(parents=True)
        (tmp_path / "solutions" / assignment / f"{assignment}.ipynb").write_text("x" * size)
    batches = [(["a", "b", "c"], "small"), (["d"], "big"), (["e", "f"], "big"), (["g"], "small")]
    assert heaviest_first(batches, tmp_path) == [(["e", "f"], "big"), (["d"], "big"),
                                                 (["a", "b", "c"], "small"), (["g"], "small")]


def test_each_assignment_graded_with_others_runs_its_reference_once_before_its_batches(tmp_path, monkeypatch,
                                                                                     in_process_cluster):
    """More batches than threads: one reference task per assignment (the thread's share), for all its
    students, run first; each batch is handed the one that covers its students. No more batches than
    threads: no reference task (each batch's nbgrader runs its own). docs/GRADING.md, "The reference,
    once per worker thread"."""
    import grader.class_grading.autograde as ag
    import grader.class_grading.batch as tasks
    course = tmp_path / "course"
    classes = {"A": [f"a{i}" for i in range(7)], "B": ["b0", "b1", "b2"]}
    for assignment, students in classes.items():
        for s in students:
            (course / "submitted" / s / assignment).mkdir(parents=True)
            (course / "submitted" / s / assignment / f"{assignment}.ipynb").write_text("{}")
    (course / "gradebook.db").write_text("")
    (course / "nbgrader_config.py").write_text("")
    log = tmp_path / "calls.jsonl"   # a file: Dask pickles the functions, closures and all

    def fake_reference(files, students, *rest):
        with open(log, "a") as f:
            f.write(json.dumps(["reference", files.assignment, sorted(students)]) + "\n")
        return {"seconds": 0.0, "notebooks": {}, "students": sorted(students)}

    def fake_grade(batch, files, references):
        with open(log, "a") as f:
            f.write(json.dumps(["batch", batch.assignment, sorted(batch.students),
                                [r["students"] for r in references]]) + "\n")
        return tasks.BatchOutcome(list(batch.students), batch.assignment, 0)

    monkeypatch.setattr(tasks, "reference_task", fake_reference)
    monkeypatch.setattr(tasks, "batch_task", fake_grade)
    monkeypatch.setattr(ag, "collect", lambda outcome, course_: None)
    assert ag.autograde_all(jobs=1, course=course, wall=False, progress=False, client=in_process_cluster,
                            batch_max=4) == 0
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    references = [c for c in calls if c[0] == "reference"]
    assert sorted(references) == [["reference", a, sorted(s)] for a, s in sorted(classes.items())], calls
    assert all(c[0] == "reference" for c in calls[:2]), f"the references first: {calls}"
    batches = [c for c in calls if c[0] == "batch"]
    assert sorted(s for _, _, students, _ in batches for s in students) == sorted(sum(classes.values(), []))
    for _, assignment, students, given in batches:
        assert given == [sorted(classes[assignment])], (students, given)

    log.unlink()
    assert ag.autograde_all(jobs=1, course=course, wall=False, progress=False, client=in_process_cluster,
                            only={(s, "B") for s in classes["B"]}) == 0
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls == [["batch", "B", classes["B"], []]], "one batch for one thread: no reference task"


def test_a_batch_that_runs_out_of_time_is_regraded_one_by_one(tmp_path, monkeypatch, in_process_cluster):
    """One endless notebook must not cost its batch-mates their grades: the batch is graded
    again student by student, and only the endless one is reported as failed. (The worker is a
    thread of this process, so that the fake grading below replaces the real one.)"""
    import grader.class_grading.autograde as ag
    import grader.class_grading.batch as tasks
    course = tmp_path / "course"
    students = ["ann", "bob", "cid", "endless"]
    for s in students:
        folder = course / "submitted" / s / "A"
        folder.mkdir(parents=True)
        (folder / "A.ipynb").write_text("{}")
    (course / "gradebook.db").write_text("")
    (course / "nbgrader_config.py").write_text("")
    collected, log = [], tmp_path / "calls.txt"   # a file: Dask pickles the function, closure and all

    def fake_grade(batch, files, references):
        with open(log, "a") as f:
            f.write(" ".join(batch.students) + "\n")
        return tasks.BatchOutcome(list(batch.students), batch.assignment, 124 if "endless" in batch.students else 0)

    monkeypatch.setattr(tasks, "batch_task", fake_grade)
    monkeypatch.setattr(tasks, "reference_task", lambda *args: {"seconds": 0.0, "notebooks": {}})
    monkeypatch.setattr(ag, "collect", lambda outcome, course_: collected.append(list(outcome.students)))
    code = ag.autograde_all(jobs=1, course=course, wall=False, progress=False, client=in_process_cluster)
    assert code == 1
    calls = [line.split() for line in log.read_text().splitlines()]
    assert calls[0] == students, "first, one batch with everybody"
    assert sorted(map(tuple, calls[1:])) == [(s,) for s in students], "then each student alone"
    assert sorted(s for batch in collected for s in batch) == students, "every student merged once"
