"""What travels between make autograde's coordinator and its workers (grader/class_grading/transfer.py,
grader/judge/reference.py): folders as data, gradebook rows as data, a reference run as data."""
import contextvars
import os
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest
from jupyter_core.utils import ensure_event_loop

from grader.class_grading.transfer import read_tree, write_tree
from grader.judge.reference import fingerprint, records_from_saved, saved_reference


def test_a_folder_travels_as_its_plain_files_only(tmp_path):
    src = tmp_path / "handin"
    (src / "data").mkdir(parents=True)
    (src / "nb.ipynb").write_bytes(b"{}")
    (src / "data" / "x.bin").write_bytes(b"\x00\x01")
    (tmp_path / "gradebook.db").write_text("secret")
    os.symlink(tmp_path / "gradebook.db", src / "link.db")          # a student's link to the gradebook
    os.symlink(tmp_path, src / "up")
    os.mkfifo(src / "pipe")
    files = read_tree(src)
    assert files == {"nb.ipynb": b"{}", "data/x.bin": b"\x00\x01"}
    write_tree(tmp_path / "copy", files)
    assert read_tree(tmp_path / "copy") == files


@pytest.mark.parametrize("name", ["../outside", "/etc/passwd", "a/../../outside", ""])
def test_writing_a_folder_refuses_paths_that_leave_it(tmp_path, name):
    with pytest.raises(ValueError, match="refusing"):
        write_tree(tmp_path / "copy", {name: b"x"})
    assert not (tmp_path / "outside").exists()


def test_a_saved_reference_is_used_only_for_its_solution_hidden_tests_and_students(tmp_path):
    """The judge falls back to running the reference itself when the saved run does not match."""
    solution = tmp_path / "A.ipynb"
    solution.write_text('{"cells": []}')
    hidden = {"f_tests": "def hidden_checks(check, rng):\n    check('x', 1)\n"}
    saved = {"fingerprint": fingerprint(solution, hidden), "outputs": {"ann": {}}}
    assert records_from_saved(saved, solution, hidden, ["ann"]) == {"ann": {}}
    assert records_from_saved(saved, solution, hidden, ["ann", "bob"]) is None, "bob's seeds were not run"
    assert records_from_saved(saved, solution, {"f_tests": hidden["f_tests"] + "#"}, ["ann"]) is None
    solution.write_text('{"cells": [], "changed": 1}')
    assert records_from_saved(saved, solution, hidden, ["ann"]) is None


def test_two_reference_runs_at_once_in_one_process(tmp_path):
    """make autograde's worker threads run in the coordinator's process, each task in a copy of the
    context that submitted it (Dask's executor). A synchronous jupyter_client or nbclient call made
    earlier in that thread leaves jupyter_core's event loop in its context: two reference runs at
    once must not both run on it ("This event loop is already running")."""
    ensure_event_loop()   # what such an earlier call leaves in this thread's context
    solution = tmp_path / "A" / "A.ipynb"
    solution.parent.mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 6 * 7")]), solution)
    hidden = {"x_tests": "def hidden_checks(check, rng):\n    check('x', x)\n"}
    contexts = {student: contextvars.copy_context() for student in ("ann", "bob")}
    with ThreadPoolExecutor(2) as pool:
        runs = {student: pool.submit(context.run, saved_reference, solution, "A", "A", hidden, [student])
                for student, context in contexts.items()}
        saved = {student: run.result() for student, run in runs.items()}
    for student, run in saved.items():
        [check] = records_from_saved(run, solution, hidden, [student])[student]["x_tests"].checks
        assert check.value == 42
