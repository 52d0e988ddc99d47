"""Every chapter handed in by its class of answer sets and graded ONCE per test session, on the
parallel path instructors use (`make autograde SCHEDULER=...`: grader.class_grading.autograde.autograde_all,
behind the wall, on a real Dask cluster of two worker processes, one killed while it grades), in one
course (conftest's `graded_class`): test_chapters reads the scores, test_cluster_grading what the
killed worker left. That the parallel path leaves exactly what plain serial nbgrader leaves is
tests/test_parallel_grading.py's to show (on a LocalCluster: the same tasks, another client).

- `reference`: the solution notebook itself; `untouched`: the student release, as downloaded;
- one student per answer set of tests/answers/<chapter>.py (conftest.ANSWER_SETS), and for the partial
  sets the chapter has, the reference with some exercises answered by them: sets that answer
  exercises apart, which name nothing of each other's, share a student (conftest.partial_students).
"""
import contextlib
import io
import json
import shutil
import threading
from collections import Counter
from pathlib import Path

from grader.class_grading.autograde import autograde_all

from conftest import ANSWER_SETS, load_answers, partial_sets, partial_students
from dask_cluster import dask_cluster, kill_a_worker_while_it_grades
from submissions import place_submission, release_copy, solution_copy, with_answers

STUDENTS = ("reference", "untouched", *ANSWER_SETS)


def hand_in_chapter(chapter: str, course: Path) -> list:
    """Hand in every version of one chapter in `course`; return the students."""
    answers = load_answers(chapter)
    reference = solution_copy(chapter, course)
    place_submission(course, "reference", chapter, reference)
    place_submission(course, "untouched", chapter, release_copy(chapter, course))
    for name in ANSWER_SETS:
        place_submission(course, name, chapter, with_answers(reference, answers[name]))
    partial = partial_sets(answers)
    packs = partial_students(chapter, answers)
    for student, sets in packs.items():
        answered = {grade_id: source for name in sets for grade_id, source in partial[name].items()}
        place_submission(course, student, chapter, with_answers(reference, answered))
    return [*STUDENTS, *packs]


CLUSTER_RUN = "cluster-run.json"   # beside the course: what test_cluster_grading checks of the run


def grade_class(chapters, released_course: Path, workdir: Path) -> Path:
    """A copy of `released_course` where every chapter's class was handed in and graded by
    autograde_all, as `make autograde SCHEDULER=...` does, on a real Dask cluster of two worker
    processes (tests/dask_cluster.py), one of them killed the moment it grades. What the grading said
    on stderr is in `grading-log.txt` beside the course; the killed worker, its nbgrader processes and
    the seconds spent per stage in CLUSTER_RUN."""
    course = Path(workdir) / "course"
    shutil.copytree(released_course, course)
    for chapter in chapters:
        hand_in_chapter(chapter, course)
    said, killed, spent, done = io.StringIO(), {}, Counter(), threading.Event()
    with dask_cluster(Path(workdir) / "cluster") as address:
        killer = threading.Thread(target=kill_a_worker_while_it_grades, args=(address, killed, done))
        killer.start()
        try:
            with contextlib.redirect_stderr(said):
                code = autograde_all(jobs=2, course=course, scheduler=address, progress=False, spent=spent)
        finally:
            done.set()
            killer.join()
    (Path(workdir) / "grading-log.txt").write_text(said.getvalue())
    (Path(workdir) / CLUSTER_RUN).write_text(json.dumps({"code": code, "killed": killed, "spent": spent}))
    assert code == 0, f"make autograde failed on the chapters' classes:\n{said.getvalue()[-6000:]}"
    return course
