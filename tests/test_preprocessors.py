"""Each course preprocessor on its own, in nbgrader's own test pattern: a small notebook (and, where
the preprocessor reads or writes one, a small gradebook) in, the expected cells or rows out. The
whole pipeline is tested end to end elsewhere (test_grading_paths, test_chapters); these take
seconds and point at the one step that broke."""
import base64
import io
import json
import sqlite3

import nbformat
import pytest
import torch
from nbgrader.api import Gradebook

from grader.authoring import code, md, solution, tests as graded
from grader.class_grading.autograde import merge_submission, students_with_handins
from grader.course import tool_env
from grader.feedback import HideHiddenTests
from grader.preprocessors.deduplicate_ids import DeduplicateIds
from grader.preprocessors.flag_for_manual_grading import PREFIX, FlagForManualGrading
from grader.judge.handoff import JudgeHandoff, handoff, hidden_sections
from grader.judge.preprocessor import KERNEL_DECIDED, Judge
from grader.preprocessors.mark_kernel_decided import MarkKernelDecided
from grader.preprocessors.restore_test_cells import RestoreTestCells
from grader.preprocessors.strip_hidden_tests import StripHiddenTests
from grader.preprocessors.tag_cells_that_raise import RAISES, USES_EXERCISE, TagCellsThatRaise
from grader.judge.probe_kernel import PROBE_MIME

VISIBLE = "assert double(2) == 4, 'double(2) should be 4'"
PROBE = "def hidden_checks(check, rng):\n    check('double(3)', double(3))"
JUDGED = f"{VISIBLE}\n### BEGIN HIDDEN TESTS\n{PROBE}\n### END HIDDEN TESTS"
ORDINARY = f"{VISIBLE}\n### BEGIN HIDDEN TESTS\nassert double(5) == 10\n### END HIDDEN TESTS"


def notebook(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


def exercise(judged_source=JUDGED, ordinary_source=ORDINARY):
    """An answer cell and its judged test cell, then another answer and an ordinary test cell."""
    return notebook(md("### Exercise 1 (2 points)"), solution("double", "def double(x):\n    return 2 * x"),
                    graded("double_tests", judged_source, points=2),
                    solution("triple", "def triple(x):\n    return 3 * x"),
                    graded("triple_tests", ordinary_source, points=1))


@pytest.fixture(scope="module")
def empty_gradebook(tmp_path_factory):
    """A gradebook that knows the exercise() notebook and one student's submission of it, made once
    (nbgrader creates a gradebook through alembic, a second each)."""
    path = tmp_path_factory.mktemp("gradebook") / "gradebook.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", tool_env()["PATH"])           # nbgrader runs `alembic` by name
        with Gradebook(f"sqlite:///{path}") as gb:
            gb.add_assignment("hw")
            gb.add_notebook("nb", "hw")
            for name, source in [("double_tests", JUDGED), ("triple_tests", ORDINARY)]:
                gb.add_grade_cell(name, "nb", "hw", max_score=2, cell_type="code")
                gb.add_source_cell(name, "nb", "hw", cell_type="code", locked=True, source=source, checksum="x")
            for name in ("double", "triple"):
                gb.add_solution_cell(name, "nb", "hw")
                gb.add_source_cell(name, "nb", "hw", cell_type="code", source="", checksum="y")
            gb.add_student("ada")
            gb.add_submission("hw", "ada")
    return path.read_bytes()


@pytest.fixture
def gradebook(tmp_path, empty_gradebook):
    """A fresh copy of it for one test: its URL."""
    (tmp_path / "gradebook.db").write_bytes(empty_gradebook)
    return f"sqlite:///{tmp_path / 'gradebook.db'}"


def resources_for(db_url):
    return {"nbgrader": {"db_url": db_url, "assignment": "hw", "notebook": "nb", "student": "ada"}}


def test_strip_hidden_tests_keeps_only_the_visible_part_of_judged_cells():
    nb, _ = StripHiddenTests().preprocess(exercise(), {})
    assert nb.cells[2].source.strip() == VISIBLE                  # the probe section is gone
    assert nb.cells[4].source == ORDINARY                         # an ordinary cell runs whole, as in nbgrader
    assert nb.cells[1].source == "def double(x):\n    return 2 * x"


def test_deduplicate_ids_grades_the_last_copy_and_leaves_a_plain_cell():
    nb = exercise()
    nb.cells.insert(2, graded("double_tests", "assert True", points=2))   # a pasted copy before the original
    nb, _ = DeduplicateIds().preprocess(nb, {})
    kept = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "double_tests"]
    assert len(kept) == 1 and kept[0].source == JUDGED
    assert "nbgrader" not in nb.cells[2].metadata                  # no empty dict left for OverwriteCells


def test_tag_cells_that_raise_tags_exercises_and_cells_that_use_them_once():
    demo = code("print(double(21))", tags=[USES_EXERCISE])
    plain = code("x = 1")
    nb = exercise()
    nb.cells += [demo, plain]
    nb.cells[1].metadata["tags"] = [RAISES]                         # already tagged: not twice
    nb, _ = TagCellsThatRaise().preprocess(nb, {})
    assert [c.metadata.get("tags", []).count(RAISES) for c in nb.cells] == [0, 1, 1, 1, 1, 1, 0]


def test_restore_test_cells_gives_untouched_cells_their_hidden_section_back(gradebook):
    released = exercise(judged_source=VISIBLE, ordinary_source="assert triple(1) == 3  # edited")
    nb, _ = RestoreTestCells().preprocess(released, resources_for(gradebook))
    assert nb.cells[2].source == JUDGED                                  # untouched: the full cell again
    assert nb.cells[4].source == "assert triple(1) == 3  # edited"      # edited: OverwriteCells' business


def test_handoff_reads_the_hidden_sections_once_from_the_gradebook(gradebook, tmp_path):
    resources = resources_for(gradebook)
    assert hidden_sections(resources) == {"double_tests": PROBE + "\n"}   # the ordinary cell has no probe section
    sqlite3.connect(tmp_path / "gradebook.db").execute("DELETE FROM source_cell").connection.commit()
    assert hidden_sections(resources) == {"double_tests": PROBE + "\n"}   # passed on, not read again
    assert isinstance(resources["judge"], JudgeHandoff) and handoff(resources) is resources["judge"]


def test_flag_for_manual_grading_marks_the_flagged_exercise_only(gradebook):
    resources = resources_for(gradebook)
    handoff(resources).flags = {"double_tests": "imports the grader"}
    FlagForManualGrading().preprocess(exercise(), resources)
    with Gradebook(gradebook) as gb:
        assert gb.find_grade("double_tests", "nb", "hw", "ada").needs_manual_grade
        assert gb.find_comment("double", "nb", "hw", "ada").auto_comment == PREFIX + "imports the grader"
        assert gb.find_comment("triple", "nb", "hw", "ada").auto_comment is None


def test_mark_kernel_decided_comments_on_the_ordinary_exercise(gradebook):
    resources = resources_for(gradebook)
    handoff(resources).kernel_decided = ["triple_tests"]
    with Gradebook(gradebook) as gb:
        before = [(g.auto_score, g.needs_manual_grade) for g in gb.find_submission("hw", "ada").notebooks[0].grades]
    MarkKernelDecided().preprocess(exercise(), resources)
    with Gradebook(gradebook) as gb:
        assert "Decided in the student's kernel: triple_tests" in gb.find_comment("triple", "nb", "hw", "ada").auto_comment
        assert gb.find_comment("double", "nb", "hw", "ada").auto_comment is None
        after = [(g.auto_score, g.needs_manual_grade) for g in gb.find_submission("hw", "ada").notebooks[0].grades]
        assert after == before                                          # the scores stay nbgrader's


def test_hide_hidden_tests_clears_hidden_code_and_tracebacks_of_test_cells():
    nb = exercise()
    failed = nbformat.v4.new_output("error", ename="AssertionError", evalue="double(5) is wrong",
                                    traceback=["  File ...", "assert double(5) == 10", "AssertionError"])
    nb.cells[4].outputs = [failed]
    nb, _ = HideHiddenTests().preprocess(nb, {})
    assert "hidden_checks" not in nb.cells[2].source and "double(5)" not in nb.cells[4].source
    assert nb.cells[4].outputs[0].traceback[0] == "AssertionError: double(5) is wrong"
    assert not any("assert double(5)" in line for line in nb.cells[4].outputs[0].traceback)


def record(grade_id, values, error=None):
    """A probe cell's output as the kernel side publishes it (grader/judge/probe_kernel.py)."""
    checks = []
    for name, value in values:
        buffer = io.BytesIO()
        torch.save(value, buffer)
        checks.append({"name": name, "rule": {}, "value": base64.b64encode(buffer.getvalue()).decode()})
    payload = json.dumps({"grade_id": grade_id, "checks": checks, "error": error})
    return [nbformat.v4.new_output("display_data", data={PROBE_MIME: payload})]


def test_judge_decides_from_the_records_and_leaves_ordinary_cells_to_nbgrader(gradebook, tmp_path, monkeypatch):
    import grader.judge.preprocessor as judge_module
    from grader.judge.probes import read_probe
    source = tmp_path / "source" / "hw"
    source.mkdir(parents=True)
    nbformat.write(exercise(), source / "nb.ipynb")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(judge_module, "reference_records", lambda *args, **kwargs: {
        "ada": {"double_tests": read_probe(record("double_tests", [("double(3)", 6)]), "double_tests")}})
    results = {}
    for student_value in (6, 7):
        nb = exercise()
        nb.cells[2].outputs = [nbformat.v4.new_output("error", ename="ValueError", evalue="forged", traceback=[])]
        nb.cells[4].outputs = [nbformat.v4.new_output("stream", name="stdout", text="kernel says ok\n")]
        resources = resources_for(gradebook)
        handoff(resources).probes = {"double_tests": record("double_tests", [("double(3)", student_value)])}
        nb, resources = Judge().preprocess(nb, resources)
        results[student_value] = nb
        assert handoff(resources).kernel_decided == ["triple_tests"]
        assert nb.cells[4].metadata["judge"] == {"decided_in": KERNEL_DECIDED}
        assert nb.cells[4].outputs[0].text == "kernel says ok\n"          # nbgrader's rule reads these
    passed, failed = results[6].cells[2].outputs, results[7].cells[2].outputs
    assert [o.output_type for o in passed] == ["stream", "stream"]        # the kernel's error is text now
    assert "passed all 1 hidden checks" in passed[-1].text
    assert failed[-1].output_type == "error" and failed[-1].ename == "GraderCheckFailed"


def test_merge_submission_copies_what_autograde_writes_and_keeps_manual_grades(tmp_path, gradebook):
    scratch = tmp_path / "scratch.db"
    (tmp_path / "gradebook.db").rename(scratch)
    course = tmp_path / "course.db"
    course.write_bytes(scratch.read_bytes())
    with Gradebook(f"sqlite:///{scratch}") as gb:
        gb.find_grade("double_tests", "nb", "hw", "ada").auto_score = 2
        gb.find_grade("triple_tests", "nb", "hw", "ada").auto_score = 0
        gb.find_grade("triple_tests", "nb", "hw", "ada").needs_manual_grade = True   # flagged by the judge
        gb.find_comment("double", "nb", "hw", "ada").auto_comment = "No response."
        gb.find_submission_notebook("nb", "hw", "ada").late_submission_penalty = 1.0
        gb.db.commit()
    with Gradebook(f"sqlite:///{course}") as gb:
        gb.find_grade("double_tests", "nb", "hw", "ada").manual_score = 1.5    # the instructor's, before regrading
        gb.db.commit()
    merge_submission(scratch, course, "hw", "ada")
    with Gradebook(f"sqlite:///{course}") as gb:
        double, triple = (gb.find_grade(n, "nb", "hw", "ada") for n in ("double_tests", "triple_tests"))
        assert (double.auto_score, double.manual_score, double.needs_manual_grade) == (2, 1.5, True)
        assert (triple.auto_score, triple.manual_score, triple.needs_manual_grade) == (0, None, True)
        assert gb.find_comment("double", "nb", "hw", "ada").auto_comment == "No response."
        assert gb.find_submission_notebook("nb", "hw", "ada").late_submission_penalty == 1.0


def test_students_with_handins_are_the_ones_the_reference_serves(tmp_path):
    for student, assignment in [("bo", "hw"), ("al", "hw"), ("cy", "other")]:
        (tmp_path / "submitted" / student / assignment).mkdir(parents=True)
    (tmp_path / "submitted" / "di").mkdir()                                # a folder, no hand-in of hw
    assert students_with_handins(tmp_path, "hw") == ["al", "bo"]
    assert students_with_handins(tmp_path, "hw", student_glob="bo") == ["bo"]   # nbgrader's --student
