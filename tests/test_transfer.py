"""What travels between make autograde's coordinator and its workers (grader/class_grading/transfer.py,
grader/judge/reference.py): folders as data, gradebook rows as data, a reference run as data."""
import os

import pytest

from grader.class_grading.transfer import read_tree, write_tree
from grader.judge.reference import fingerprint, records_from_saved


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
