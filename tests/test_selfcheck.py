"""`make check NB=...` and the notebooks' last cell: visible tests only, a table, no recursion."""
import os
import subprocess
import sys
from pathlib import Path

import nbformat

from conftest import load_answers
from grader import selfcheck
from grader.course import REPO_ROOT, release_notebook, source_notebook
from grader.authoring import write_notebook
from submissions import with_answers
from hostile import tiny
from hostile.cases import total_points

CHAPTER = "01_tensors"


def test_untouched_release_fails_every_exercise_and_says_why(capsys):
    results = selfcheck.report(release_notebook(CHAPTER))
    table = capsys.readouterr().out
    assert results and not any(r.passed for r in results)
    assert "not attempted yet" in table and f"0/{total_points(CHAPTER):g} points" in table


def test_hidden_tests_are_not_run(tmp_path):
    """A solutions notebook passes even with a hidden test that always fails: it is stripped."""
    nb = nbformat.read(source_notebook(CHAPTER), as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "gram_tests":
            cell.source = cell.source.replace("### END HIDDEN TESTS", "assert False, 'hidden'\n### END HIDDEN TESTS")
    path = tmp_path / f"{CHAPTER}.ipynb"
    nbformat.write(nb, path)
    results = selfcheck.run_checks(path)
    assert all(r.passed for r in results), [r for r in results if not r.passed]
    assert sum(r.points for r in results) == total_points(CHAPTER)


def test_wrong_answers_fail_with_the_visible_hint(tmp_path):
    nb = with_answers(nbformat.read(source_notebook(CHAPTER), as_version=4), load_answers(CHAPTER)["wrong"])
    path = tmp_path / f"{CHAPTER}.ipynb"
    nbformat.write(nb, path)
    by_name = {r.name: r for r in selfcheck.run_checks(path)}
    assert not by_name["gram_tests"].passed and "X.T @ X" in by_name["gram_tests"].message
    assert not by_name["as_model_input_tests"].passed and "float32" in by_name["as_model_input_tests"].message


def test_the_check_cell_is_not_run_again():
    nb = nbformat.read(release_notebook(CHAPTER), as_version=4)
    assert any("check_notebook(" in c.source for c in nb.cells), "every chapter ends with the self-check cell"
    assert not any("check_notebook(" in c.source for c in selfcheck.prepare(nb).cells)


def test_command_line_exit_codes(tmp_path):
    """0 when every visible test passes, 1 when one fails, 2 for no notebook (on the tiny
    assignment: what the command does does not depend on the chapter, and it runs in seconds)."""
    run = lambda nb: subprocess.run([sys.executable, "-m", "grader", "check", str(nb)], cwd=REPO_ROOT,
                                    capture_output=True, text=True)
    solved = tmp_path / "solved" / f"{tiny.NAME}.ipynb"
    write_notebook(tiny.cells(), solved)
    unsolved = tmp_path / f"{tiny.NAME}.ipynb"
    nbformat.write(with_answers(nbformat.read(solved, as_version=4), {"answer": "ANSWER = 41.5"}), unsolved)
    assert run(solved).returncode == 0
    failed = run(unsolved)
    assert failed.returncode == 1 and "ANSWER is an int" in failed.stdout
    missing = run(tmp_path / "nope.ipynb")
    assert missing.returncode == 2 and "not found" in missing.stderr
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{ not json")
    assert run(broken).returncode == 2


def test_does_nothing_while_nbgrader_runs_the_notebook(monkeypatch, capsys):
    """During autograde the last cell must not execute the whole notebook a second time."""
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert selfcheck.report("does-not-matter.ipynb") == []
    assert "skipped" in capsys.readouterr().out


def run_check_cell(path, cells, checks: str, **kernel_options) -> list:
    """Write `cells` and a last cell calling check_notebook(`checks`) to `path`, run it as a
    front end does, and return the last cell's outputs."""
    from nbclient import NotebookClient
    nb = nbformat.v4.new_notebook(cells=[*cells, nbformat.v4.new_code_cell(
        f'from grader.selfcheck import check_notebook\ncheck_notebook("{checks}")')])
    nbformat.write(nb, path)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute(**kernel_options)
    return nb.cells[-1].outputs


def test_the_check_cell_shows_the_table_only(tmp_path):
    """Run as JupyterLab runs it, the last cell prints the table: no warning on stderr (the
    checking kernel talks over Unix sockets, not TCP), and no list echoed after the table."""
    path = tmp_path / f"{tiny.NAME}.ipynb"
    outputs = run_check_cell(path, tiny.cells(), checks=path.name)
    assert [(o.output_type, o.get("name")) for o in outputs] == [("stream", "stdout")], outputs
    assert "visible tests: 2/2 passed" in outputs[0].text and "WARNING" not in outputs[0].text


def test_the_check_cell_checks_the_notebook_it_runs_in(tmp_path):
    """A copy whose cell still names the original (a duplicate, an older workspace's .updated
    notebook) checks itself where the kernel says which notebook it runs for: jupyter_server starts
    it with JPY_SESSION_NAME, the notebook's path (grader/selfcheck.py)."""
    original = tmp_path / f"{tiny.NAME}.ipynb"
    nbformat.write(with_answers(nbformat.v4.new_notebook(cells=tiny.cells()), {"answer": "ANSWER = 41.5"}), original)
    copy = tmp_path / f"{tiny.NAME}.updated.ipynb"
    outputs = run_check_cell(copy, tiny.cells(), checks=original.name,
                             env={**os.environ, "JPY_SESSION_NAME": str(copy)})
    table = "".join(o.get("text", "") for o in outputs)
    assert f"checking {copy.name}" in table and "visible tests: 2/2 passed" in table, table


def test_the_running_notebook_as_each_server_names_it(tmp_path, monkeypatch):
    """Absolute (recent jupyter_server) or relative to the server's root (older ones); none for a
    console or a notebook renamed since its kernel started."""
    (tmp_path / "mine.ipynb").write_text("{}")
    monkeypatch.chdir(tmp_path)            # a notebook's kernel runs in the notebook's folder
    for session, found in [(str(tmp_path / "mine.ipynb"), tmp_path / "mine.ipynb"),
                           ("01_tensors/mine.ipynb", Path("mine.ipynb")),
                           ("console-1-2b6c", None), (str(tmp_path / "renamed.ipynb"), None)]:
        monkeypatch.setenv("JPY_SESSION_NAME", session)
        assert selfcheck.running_notebook() == found, session
    monkeypatch.delenv("JPY_SESSION_NAME")
    assert selfcheck.running_notebook() is None
