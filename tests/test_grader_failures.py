"""When grading fails, whose failure it is: the student's (their kernel died) gets a verdict, the
grader's is graded again; and a grading batch never touches the course it grades for. The feedback
service's side of docs/GRADING.md, "Feedback on submit" (what holds). In the suite's chain, not beside
it with tests/test_autofeedback.py: both grade, and this chain has the CPU to spare."""
import pytest

from grader.hub import autofeedback
from grader.release import release
from submissions import ExchangeStudent, copy_course, release_copy, with_answers
from test_autofeedback import (ASSIGNMENT, FIRST, NOTEBOOK, POINTS, TEST_OF, answered, log_lines, only_page,
                               page_text)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A scratch course with 00_setup released into its exchange (<course>/.exchange)."""
    course = copy_course(tmp_path_factory.mktemp("grader-failures") / "course")
    release([ASSIGNMENT], course=course)
    return course


def test_a_failure_on_the_graders_side_is_graded_again_and_a_dead_kernel_is_the_students(course, tmp_path, monkeypatch):
    """frank's first grading fails on the grader's side (its nbgrader exits with an error, his notebook is
    fine, his kernel did not die: simulated); gina's kernel calls os._exit. gina's page says her kernel
    died; frank gets no verdict, his hand-in stays unhandled, and the next look grades it. Before, both
    got "the kernel running your notebook died", and frank's hand-in was never graded again."""
    from grader.class_grading import batch
    real, failed = batch.batch_task, tmp_path / "failed-once"   # a file: Dask sends the task a copy of it

    def grader_breaks_once_for_frank(work, files, references):
        if "frank" in work.students and not failed.exists():
            failed.touch()
            return batch.BatchOutcome(list(work.students), work.assignment, 1, "simulated: the grader broke")
        return real(work, files, references)

    monkeypatch.setattr(batch, "batch_task", grader_breaks_once_for_frank)
    frank, gina = (ExchangeStudent(course, name, tmp_path / name) for name in ("frank", "gina"))
    stamp = frank.submit(ASSIGNMENT, {NOTEBOOK: answered(course, FIRST)})
    gina.submit(ASSIGNMENT, {NOTEBOOK: with_answers(release_copy(ASSIGNMENT, course), {FIRST: "import os\nos._exit(1)"})})
    with autofeedback.warm_cluster(2) as client:
        autofeedback.grade_pending(course, client=client)
        lines = {fields[1]: fields for fields in log_lines(course)}
        assert failed.exists() and "frank" not in lines, "no verdict for a grading the grader failed"
        assert not frank.released_feedback(ASSIGNMENT, ASSIGNMENT).exists()
        assert lines["gina"][4] == f"not graded: {autofeedback.FAILED}"
        assert "died" in page_text(only_page(gina.fetch_feedback(ASSIGNMENT)))
        autofeedback.grade_pending(course, client=client)   # the service's next look
    (line,) = [fields for fields in log_lines(course) if fields[1] == "frank"]
    assert line[3:5] == [stamp, f"{POINTS[TEST_OF[FIRST]]:g}/{sum(POINTS.values()):g}"]


def test_a_batch_grades_its_scratch_course_whatever_root_the_courses_config_names(course, tmp_path):
    """A hub's course configuration named its folder as CourseDirectory.root, and each grading batch runs
    nbgrader in a scratch course made from that configuration: every batch graded the real course
    instead, a second writer of its gradebook.db and autograded/ beside the coordinator (the service's
    false "your kernel died" verdicts after an instructor's autograde, on the hub). A batch must grade
    its scratch course and nothing else, here with the configuration naming a decoy folder."""
    import nbformat
    from grader.class_grading import batch
    from grader.class_grading.autograde import worker_settings
    from grader.class_grading.transfer import read_tree
    from grader.course import SOURCE
    from grader.wall import sandbox
    decoy = tmp_path / "decoy"
    config = (course / "nbgrader_config.py").read_bytes() + f"\nc.CourseDirectory.root = {str(decoy)!r}\n".encode()
    files = batch.AssignmentFiles(ASSIGNMENT, config, (course / "gradebook.db").read_bytes(),
                                  read_tree(course / SOURCE / ASSIGNMENT))
    handin = {NOTEBOOK: nbformat.writes(answered(course, FIRST)).encode()}
    work = batch.Batch(ASSIGNMENT, ("hana",), {"hana": handin}, env=worker_settings(sandbox.enabled(), 1),
                       wall=sandbox.enabled())
    outcome = batch.batch_task(work, files, [])
    assert outcome.returncode == 0, outcome.log[-3000:]
    assert outcome.rows["hana"] is not None and "hana" in outcome.graded, "graded in the scratch course"
    assert not decoy.exists(), "nothing written where the configuration pointed"
