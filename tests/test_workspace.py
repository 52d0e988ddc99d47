"""A student's saved answers survive `make release`, `git pull` and course updates (grader/workspace.py)."""
import ast
import subprocess

import nbformat

from conftest import load_answers
from grader.course import COURSE_ID, REPO_ROOT, nbgrader_cmd, release_notebook, source_notebook
from grader.release import release
from submissions import copy_course, solution_cell_ids, with_answers
from grader.workspace import WORKSPACE, sync
from grader import selfcheck
from grader.authoring import write_notebook
from hostile import tiny

CHAPTER, UNTOUCHED = "01_tensors", "02_autograd"


def test_edited_notebook_survives_a_release_and_a_course_update(tmp_path):
    course = copy_course(tmp_path / "course")
    workspace = course / WORKSPACE
    assert f"new: {CHAPTER}/{CHAPTER}.ipynb" in sync(course)
    mine = workspace / CHAPTER / f"{CHAPTER}.ipynb"
    exercise = solution_cell_ids(nbformat.read(source_notebook(CHAPTER, course), as_version=4))[0]
    answer = load_answers(CHAPTER)["alternative"][exercise]
    nbformat.write(with_answers(nbformat.read(mine, as_version=4), {exercise: answer}), mine)
    saved = mine.read_bytes()

    release([CHAPTER, UNTOUCHED], course=course)            # `make release`: nothing new
    assert sync(course) == [] and mine.read_bytes() == saved

    # a course update: both chapters gain a paragraph, and are released again
    for chapter in (CHAPTER, UNTOUCHED):
        source = source_notebook(chapter, course)
        nb = nbformat.read(source, as_version=4)
        nb.cells.insert(1, nbformat.v4.new_markdown_cell("An erratum from the course update."))
        nbformat.write(nb, source)
    release([CHAPTER, UNTOUCHED], course=course)
    messages = sync(course)

    assert mine.read_bytes() == saved, "the student's own notebook was overwritten"
    updated = workspace / CHAPTER / f"{CHAPTER}.updated.ipynb"
    assert any("newer release" in m and updated.name in m for m in messages), messages
    merged = nbformat.read(updated, as_version=4)
    assert merged.cells[1].source == "An erratum from the course update."
    carried = [c for c in merged.cells if c.metadata.get("nbgrader", {}).get("grade_id") == exercise]
    assert carried[0].source == answer, "the answer was not carried into the new release"
    assert checked_notebook(merged) == updated.name, "the self-check of the new release checks the old copy"
    # a chapter the student never changed simply becomes the new release
    assert (workspace / UNTOUCHED / f"{UNTOUCHED}.ipynb").read_bytes() == release_notebook(UNTOUCHED, course).read_bytes()

    # a second update never overwrites the .updated notebook the student may now work in
    updated.write_text(updated.read_text().replace("An erratum", "My notes on an erratum"))
    nb = nbformat.read(source_notebook(CHAPTER, course), as_version=4)
    nb.cells.insert(1, nbformat.v4.new_markdown_cell("A second erratum."))
    nbformat.write(nb, source_notebook(CHAPTER, course))
    release([CHAPTER], course=course)
    sync(course)
    assert "My notes on an erratum" in updated.read_text()
    second = workspace / CHAPTER / f"{CHAPTER}.updated-2.ipynb"
    assert checked_notebook(nbformat.read(second, as_version=4)) == second.name
    assert checked_notebook(nbformat.read(mine, as_version=4)) == mine.name


def checked_notebook(nb) -> str:
    """The file name that the notebook's self-check cell passes to check_notebook, read by Python's parser."""
    [name] = [node.args[0].value for cell in nb.cells if "check_notebook(" in cell.source
              for node in ast.walk(ast.parse(cell.source))
              if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "check_notebook"]
    return name


def test_a_student_working_in_an_earlier_release_is_told_which_exercise_it_lacks(tmp_path, monkeypatch, capsys):
    """The course adds an exercise after the student began: make lab says so when it writes the new
    release beside the student's copy, and the self-check of the old copy says so too (issue 46)."""
    course = copy_course(tmp_path / "course")
    first_release = tiny.cells()[:-2]      # without its last exercise, `answer`
    write_notebook(first_release, source_notebook(tiny.NAME, course))
    release([tiny.NAME], course=course)
    sync(course)
    mine = course / WORKSPACE / tiny.NAME / f"{tiny.NAME}.ipynb"
    mine.write_text(mine.read_text().replace("raise NotImplementedError", "return 2 * x  #"))   # an answer
    assert selfcheck.older_release(mine) is None, "the current release, said to be an older one"

    write_notebook(tiny.cells(), source_notebook(tiny.NAME, course))
    release([tiny.NAME], course=course)
    messages = sync(course)
    assert any("hand in that one (yours lacks answer)" in m for m in messages), messages
    note = selfcheck.older_release(mine)
    assert note and "lacks the exercise answer" in note and f"{tiny.NAME}.updated.ipynb" in note, note
    assert selfcheck.older_release(mine.with_name(f"{tiny.NAME}.updated.ipynb")) is None

    monkeypatch.setattr(selfcheck, "run_checks", lambda path, timeout: [])   # the table is test_selfcheck's
    selfcheck.report(mine)
    assert capsys.readouterr().out.count("lacks the exercise answer") == 2, "above and under the table"


def test_git_never_sees_the_workspace():
    """`git pull` cannot collide with a student's files: the workspace is ignored."""
    probe = f"{WORKSPACE}/{CHAPTER}/{CHAPTER}.ipynb"
    result = subprocess.run(["git", "check-ignore", "-q", probe], cwd=REPO_ROOT)
    assert result.returncode == 0, f"{probe} is not gitignored"


def test_released_chapters_are_listed_and_fetched_into_the_workspace(tmp_path):
    """`make release` also releases into the exchange; in the workspace (where JupyterLab's
    Assignments tab reads its nbgrader_config.py) nbgrader lists the chapter, and Fetch puts it
    in workspace/<course id>/, which git ignores."""
    course = copy_course(tmp_path / "course")
    release([CHAPTER], course=course)
    sync(course)
    workspace = course / WORKSPACE
    listed = subprocess.run(nbgrader_cmd("list"), cwd=workspace, capture_output=True, text=True)
    assert f"{COURSE_ID} {CHAPTER}" in listed.stdout + listed.stderr, listed.stderr[-2000:]
    run = subprocess.run(nbgrader_cmd("fetch_assignment", CHAPTER), cwd=workspace, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    fetched = workspace / COURSE_ID / CHAPTER / f"{CHAPTER}.ipynb"
    assert fetched.read_bytes() == release_notebook(CHAPTER, course).read_bytes()
    assert (workspace / CHAPTER / f"{CHAPTER}.ipynb").exists(), "the workspace's own copy stays"
