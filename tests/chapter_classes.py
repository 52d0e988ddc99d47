"""Every chapter handed in by its class of answer sets and graded by plain serial nbgrader, once
per test session (conftest's `serially_graded`): test_chapters reads the scores, and
test_cluster_grading grades the same hand-ins on a Dask cluster and compares.

- `reference`: the solution notebook itself; `untouched`: the student release, as downloaded;
- one student per answer set of tests/answers/<chapter>.py (conftest.ANSWER_SETS), and per partial
  set the chapter has (the reference with some exercises answered by that set).
"""
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader.wall import sandbox, warm_kernels

from conftest import ANSWER_SETS, grade_assignment, load_answers, partial_sets
from submissions import place_submission, release_copy, solution_copy, with_answers

STUDENTS = ("reference", "untouched", *ANSWER_SETS)
# The longest to grade first, so that no core idles at the end: seconds each, graded 3 at a time on
# 2 quiet cores, 2026-11-26 (07 94, 10 83, 06 72, 09 52, 08 47, 02 43, 04 35, 03 34, 05 28, 01 27,
# 00 17; in alphabetical order, 05 ran alone for the last 18 s). A chapter not listed goes first.
LONGEST_FIRST = ["07_fashion_mnist_lab", "10_distributed", "06_debugging", "09_performance", "08_gpu_training",
                 "02_autograd", "04_data_loading", "03_neural_networks", "05_training_loop", "01_tensors",
                 "00_setup"]


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


def grade_serially(chapters, released_course: Path, workdir: Path) -> dict:
    """{chapter: course}: each chapter handed in and graded by plain `nbgrader autograde` in its own
    copy of `released_course` (its own gradebook), so chapters are graded side by side without
    sharing a sqlite file."""
    copies = {}
    for chapter in chapters:
        copies[chapter] = Path(workdir) / f"serial_{chapter}" / "course"
        shutil.copytree(released_course, copies[chapter])

    # The nbgrader processes share one warm-kernel zygote, named to them as make autograde names its
    # own (grader/wall/sandbox.py, Zygote): torch is imported once, not once per chapter. Its kernels'
    # own messages go to a file beside the courses.
    with open(Path(workdir) / "kernels-stderr.txt", "ab") as kernels_stderr:
        zygote = sandbox.start_zygote(kernels_stderr) if warm_kernels.available() else None
    named = {sandbox.Zygote.PATH: zygote.path} if zygote else {}

    def grade(chapter):
        hand_in_chapter(chapter, copies[chapter])
        grade_assignment(chapter, copies[chapter], env=named)

    ordered = sorted(chapters, key=lambda c: (LONGEST_FIRST.index(c) if c in LONGEST_FIRST else -1, c))
    # one more nbgrader than cores: each waits now and then (a kernel starting, the reference run)
    try:
        with ThreadPoolExecutor(max_workers=(os.cpu_count() or 2) + 1) as pool:
            for future in [pool.submit(grade, chapter) for chapter in ordered]:
                future.result()
    finally:
        if zygote:
            zygote.stop()
    return copies
