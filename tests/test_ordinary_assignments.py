"""An ordinary nbgrader assignment grades here with the scores stock nbgrader gives it.

tests/ordinary/homework.py is homework an instructor writes the ordinary nbgrader way: plain
asserts, visible and hidden, answers graded by hand (written and code), a task, and cells written
by JupyterLab's Create Assignment panel. It is graded twice from the same answers: by stock
nbgrader in a bare course directory (nbgrader's defaults, plus the one option this course sets on
that path: deleted test cells are restored), and here through every path (plain `nbgrader
autograde`, the formgrader's Autograde button, `make autograde`), behind the wall. Each course's
students start from that course's own release: nbgrader compares an answer left as released with
its own gradebook, and the two releases' code stubs differ. Every cell's score and manual-grading
state must agree, and so must the automatic comments of the answers graded by hand ("No
response." for one left as released); the test cells the judge does not stand behind say so.
"""
import csv
import html
import io
import json
import re

import nbformat
import pytest
from nbgrader.api import Gradebook
from nbgrader.utils import compute_checksum

from grader.class_grading.autograde import autograde_all
from grader.course import RELEASE, nbgrader_api, run_nbgrader
from gradebook_rows import db_url
from grader.judge.preprocessor import KERNEL_DECIDED
from grader.preprocessors.mark_kernel_decided import NOTE
from submissions import copy_course
from ordinary.homework import FORGED_CHECKSUM, NAME, STUDENTS, hand_in, write_source

STOCK_CONFIG = """c = get_config()
c.CourseDirectory.course_id = "stock"
c.OverwriteCells.add_missing_cells = True   # the course's setting (nbgrader_config.py): deleted test cells come back
"""
FORMGRADER = "import json\nprint(json.dumps([api.autograde(sys.argv[1], s) for s in sys.argv[2:]]))"
# every test cell of the homework: none has hidden checks, so the student's kernel decides each
TEST_CELLS = {"functions": ["squares_tests", "mean_tests"], "panel": ["cell-a07c3f9e12d84b66"]}


def grades(course) -> dict:
    """{(student, notebook, cell): (auto score, manual score, needs manual grade)} from the gradebook."""
    with Gradebook(db_url(course)) as gb:
        return {(student, nb.name, g.name): (g.auto_score, g.manual_score, g.needs_manual_grade)
                for student in STUDENTS for nb in gb.find_submission(NAME, student).notebooks
                for g in nb.grades}


def by_hand(course) -> dict:
    """{(student, notebook, cell): (auto score, needs manual grade, automatic comment)} for the cells
    graded by hand (answers with points, tasks): nbgrader keeps both a grade and a comment for them."""
    with Gradebook(db_url(course)) as gb:
        rows = {}
        for student in STUDENTS:
            for nb in gb.find_submission(NAME, student).notebooks:
                comments = {c.name: c.auto_comment for c in nb.comments}
                rows.update({(student, nb.name, g.name): (g.auto_score, g.needs_manual_grade, comments[g.name])
                             for g in nb.grades if g.name in comments})
        return rows


def gradebook_checksums(course, grade_id) -> set:
    """The checksums the gradebook keeps for one cell of the homework (the release's)."""
    with Gradebook(db_url(course)) as gb:
        return {cell.checksum for nb in gb.find_assignment(NAME).notebooks for cell in nb.source_cells
                if cell.name == grade_id}


def exported(course) -> list:
    """The rows of `nbgrader export` for the homework, without the course's own columns."""
    run_nbgrader("export", "--to", "grades.csv", course=course)
    rows = csv.DictReader(io.StringIO((course / "grades.csv").read_text()))
    return sorted((r["student_id"], r["raw_score"], r["late_submission_penalty"], r["score"], r["max_score"])
                  for r in rows if r["assignment"] == NAME)


@pytest.fixture(scope="module")
def stock(tmp_path_factory):
    """The homework graded by stock nbgrader, in a course directory of its own."""
    root = tmp_path_factory.mktemp("stock")
    (root / "nbgrader_config.py").write_text(STOCK_CONFIG)
    write_source(root / "source" / NAME)
    run_nbgrader("generate_assignment", NAME, "--force", course=root)
    for student in STUDENTS:
        hand_in(root / "release" / NAME, root / "submitted", student)
    run_nbgrader("autograde", NAME, "--force", course=root)
    return root


@pytest.fixture(scope="module")
def course(stock, tmp_path_factory):
    """The same homework and answers in a copy of this course (solutions/ is its source folder),
    handed in from this course's release (notebooks/, not stock's release/)."""
    course = copy_course(tmp_path_factory.mktemp("ordinary") / "course").resolve()
    write_source(course / "solutions" / NAME)
    run_nbgrader("generate_assignment", NAME, "--force", course=course)
    for student in STUDENTS:
        hand_in(course / RELEASE / NAME, course / "submitted", student)
    return course


def test_the_homework_exercises_what_stock_nbgrader_does(stock):
    """The comparison means something: full and zero scores, partial totals, manual cells, a deleted cell."""
    graded = grades(stock)
    assert graded[("ada", "functions", "squares_tests")][0] == 2 and graded[("bob", "functions", "squares_tests")][0] == 0
    assert graded[("bob", "functions", "mean_tests")][0] == 1, "the deleted test cell is restored and run"
    assert graded[("ada", "functions", "why_mean_fails")][2], "a written answer waits for the instructor"
    assert graded[("ada", "functions", "plot_task")][2], "so does a task"
    assert graded[("bob", "panel", "cell-a07c3f9e12d84b66")][0] == 0 and graded[("ada", "panel", "cell-a07c3f9e12d84b66")][0] == 1


@pytest.fixture(scope="module")
def plain(course):
    """Plain `nbgrader autograde` in the course: (grades, export rows, graded notebooks' marks, comments,
    feedback's log, the cells graded by hand)."""
    run_nbgrader("autograde", NAME, "--force", course=course)
    marks = {}
    for student in STUDENTS:
        for notebook in TEST_CELLS:
            nb = json.loads((course / "autograded" / student / NAME / f"{notebook}.ipynb").read_text())
            marks[student, notebook] = {
                c["metadata"]["nbgrader"]["grade_id"]: c["metadata"].get("judge", {}).get("decided_in")
                for c in nb["cells"] if c["cell_type"] == "code" and c["metadata"].get("nbgrader", {}).get("grade")
                and not c["metadata"]["nbgrader"].get("solution")}
    with Gradebook(db_url(course)) as gb:
        comments = {(c.name, c.auto_comment) for nb in gb.find_submission(NAME, "ada").notebooks for c in nb.comments}
    feedback = run_nbgrader("generate_feedback", NAME, "--force", course=course)
    return grades(course), exported(course), marks, comments, feedback.stdout + feedback.stderr, by_hand(course)


def test_an_answer_graded_by_hand_left_as_released_scores_0(stock, course):
    """nbgrader's rule: 0 and "No response." for an answer with points that the student left as
    released, written or code; one that was answered waits for the instructor. The checksum
    nbgrader compares is the gradebook's (OverwriteCells writes it over the student's before
    SaveAutoGrades reads it), so one the student changed makes no difference."""
    no_response, waits = (0, False, "No response."), (None, True, None)
    assert {key: value for key, value in by_hand(stock).items() if key[1] == "functions"} == {
        ("ada", "functions", "why_mean_fails"): waits, ("ada", "functions", "largest_square"): waits,
        ("bob", "functions", "why_mean_fails"): no_response, ("bob", "functions", "largest_square"): no_response,
        ("ada", "functions", "plot_task"): waits, ("bob", "functions", "plot_task"): waits}
    # each handed in one of these answers with a checksum of their own, in both courses: bob's no
    # release has, ada's her answer's own, which says "left as released" if nbgrader believed it
    for root in (stock, course):
        for student, grade_id in FORGED_CHECKSUM.items():
            nb = nbformat.read(root / "submitted" / student / NAME / "functions.ipynb", as_version=4)
            cell, = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
            assert (cell.metadata.nbgrader["checksum"] == compute_checksum(cell)) == (student == "ada")
            assert cell.metadata.nbgrader["checksum"] not in gradebook_checksums(root, grade_id)


def test_plain_nbgrader_autograde_gives_stock_scores(stock, plain):
    graded, rows, marks, *_, manual = plain
    assert graded == grades(stock)
    assert rows == exported(stock)
    assert manual == by_hand(stock)
    # each test cell is marked in the graded notebook: decided in the student's kernel
    assert marks == {(student, notebook): {cell: KERNEL_DECIDED for cell in cells}
                     for student in STUDENTS for notebook, cells in TEST_CELLS.items()}


def test_the_formgrader_says_which_grades_the_student_kernel_decided(plain):
    """Each exercise whose test cell has no hidden checks carries the note as its automatic comment."""
    comments = plain[3]
    assert ("squares", NOTE.format(test="squares_tests")) in comments
    assert ("cell-5d1c0e2a9b7f4e31", NOTE.format(test="cell-a07c3f9e12d84b66")) in comments
    assert not any(text and "kernel" in text for name, text in comments if name == "why_mean_fails")


def test_feedback_hides_the_hidden_asserts_and_warns_of_nothing(course, plain):
    assert "WARNING" not in plain[4], plain[4]
    page = (course / "feedback" / "ada" / NAME / "functions.html").read_text()
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "squares(3) == [0, 1, 4]" in text and "squares(6)" not in text


def test_the_formgrader_button_gives_stock_scores(stock, course):
    proc = nbgrader_api(FORMGRADER, NAME, *STUDENTS, course=course, timeout=600)
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    assert all(r["success"] for r in results), [r.get("log", "")[-2000:] for r in results]
    assert grades(course) == grades(stock)
    assert by_hand(course) == by_hand(stock)


def test_make_autograde_gives_stock_scores(stock, course):
    assert autograde_all(jobs=2, course=course, progress=False) == 0
    assert grades(course) == grades(stock)
    assert exported(course) == exported(stock)
    assert by_hand(course) == by_hand(stock)


def test_a_course_can_require_hidden_checks(course):
    """With Judge.require_hidden_checks (nbgrader_config.py), a test cell without them is refused."""
    proc = run_nbgrader("autograde", NAME, "--force", "--student", "ada", "--Judge.require_hidden_checks=True",
                        course=course, check=False)
    assert proc.returncode != 0
    assert "has no hidden checks, and this course requires them" in proc.stdout + proc.stderr
