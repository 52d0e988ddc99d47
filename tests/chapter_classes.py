"""Every chapter handed in by its class of answer sets and graded ONCE per test session, on the
parallel path instructors use (`make autograde`: grader.class_grading.autograde.autograde_all, behind
the wall), in one course (conftest's `graded_class`): test_chapters reads the scores, and
test_cluster_grading grades the same hand-ins on a Dask cluster and compares. That the parallel path
leaves exactly what plain serial nbgrader leaves is tests/test_parallel_grading.py's to show.

- `reference`: the solution notebook itself; `untouched`: the student release, as downloaded;
- one student per answer set of tests/answers/<chapter>.py (conftest.ANSWER_SETS), and per partial
  set the chapter has (the reference with some exercises answered by that set).
"""
import contextlib
import io
import shutil
from pathlib import Path

from grader.class_grading.autograde import autograde_all, default_jobs

from conftest import ANSWER_SETS, load_answers, partial_sets
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
    for name, answered in partial.items():
        place_submission(course, name, chapter, with_answers(reference, answered))
    return [*STUDENTS, *partial]


def grade_class(chapters, released_course: Path, workdir: Path) -> Path:
    """A copy of `released_course` where every chapter's class was handed in and graded by
    autograde_all on this machine's cores; what it said on stderr is in `grading-log.txt` beside it."""
    course = Path(workdir) / "course"
    shutil.copytree(released_course, course)
    for chapter in chapters:
        hand_in_chapter(chapter, course)
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        code = autograde_all(jobs=default_jobs(), course=course, progress=False)
    (Path(workdir) / "grading-log.txt").write_text(said.getvalue())
    assert code == 0, f"make autograde failed on the chapters' classes:\n{said.getvalue()[-6000:]}"
    return course
