"""Hostile and broken submissions of chapter 01_tensors, built from its solution/release notebooks.

Each case is (how to build the hand-in, the total score it must get out of 10). They are all
handed in to one course and graded in one parallel run, next to honest students whose grades must
not move. Paths of the real course are baked into the attacks, so the wall is what stops them.
"""
import copy
import json
from pathlib import Path

import nbformat

from grader.submissions import place_submission, release_copy, solution_copy, submission_path, with_answers

ASSIGNMENT = "01_tensors"
FULL = 10.0

LIAR = '''
class Liar:
    """Equal to everything, every shape, every dtype."""
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __getattr__(self, name): return Liar()
    def __call__(self, *a, **k): return Liar()
    def __iter__(self): return iter([])
    def __len__(self): return 4
    def __bool__(self): return True
'''


def _grade_id(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def _cell(nb, grade_id):
    return next(c for c in nb.cells if _grade_id(c) == grade_id)


def _prepend(nb, grade_id, source):
    """Student code placed before the answer in one solution cell."""
    nb = copy.deepcopy(nb)
    cell = _cell(nb, grade_id)
    cell.source = source.strip("\n") + "\n\n" + cell.source
    return nb


def infinite_loop(course):
    # the loop stops the `ranked_tensors` cell before its function is defined: that exercise fails
    return _prepend(solution_copy(ASSIGNMENT, course), "ranked_tensors", "while True:\n    pass")


def stubborn_loop(course):
    # a loop that ignores the interrupt (and the CPU-limit warning): only SIGKILL stops it
    return _prepend(solution_copy(ASSIGNMENT, course), "ranked_tensors",
                    "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                    "signal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass")


def os_exit(course):
    return _prepend(solution_copy(ASSIGNMENT, course), "gram", "import os\nos._exit(1)")


def memory_bomb(course):
    return _prepend(solution_copy(ASSIGNMENT, course), "ranked_tensors",
                    "bomb = [torch.ones(2**28) for _ in range(64)]   # 64 GiB, one GiB at a time")


def _wrong_gram(nb):
    return with_answers(nb, {"gram": "def gram(X):\n    return X.T @ X"})


def tests_edited(course):
    nb = _wrong_gram(solution_copy(ASSIGNMENT, course))
    _cell(nb, "gram_tests").source = "pass  # my test now"
    return nb


def tests_deleted(course):
    nb = _wrong_gram(solution_copy(ASSIGNMENT, course))
    nb.cells = [c for c in nb.cells if _grade_id(c) != "gram_tests"]
    return nb


def tests_duplicated(course):
    nb = solution_copy(ASSIGNMENT, course)
    index = next(i for i, c in enumerate(nb.cells) if _grade_id(c) == "gram_tests")
    nb.cells.insert(index + 1, copy.deepcopy(nb.cells[index]))
    nb.cells.insert(index + 1, copy.deepcopy(nb.cells[index]))
    for i, cell in enumerate(nb.cells):
        cell.id = f"c{i}"   # cell ids must stay unique for the file to be valid
    return nb


def points_inflated(course):
    nb = solution_copy(ASSIGNMENT, course)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.metadata["nbgrader"]["points"] = 100
    return nb


def traceback_hidden(course):
    # the first exercise right, the others wrong, with IPython's traceback display switched off
    from conftest import load_answers
    wrong = dict(load_answers(ASSIGNMENT).WRONG)
    del wrong["ranked_tensors"]
    nb = with_answers(solution_copy(ASSIGNMENT, course), wrong)
    return _prepend(nb, "ranked_tensors",
                    "ip = get_ipython()\nip.showtraceback = lambda *a, **k: None\n"
                    "ip._showtraceback = lambda *a, **k: None")


def always_equal(course):
    answers = {
        "ranked_tensors": LIAR + "\ndef make_ranked_tensors():\n    return Liar()",
        "as_model_input": "def as_model_input(t):\n    return Liar()",
        "flatten_samples": "def flatten_samples(batch):\n    return Liar()",
        "gram": "def gram(X):\n    return Liar()",
        "center_columns": "def center_columns(X):\n    return Liar()",
        "broadcast_shape": "BROADCAST_SHAPE = Liar()",
        "sq_distances": "def sq_distances(A, B):\n    return Liar()",
    }
    return with_answers(solution_copy(ASSIGNMENT, course), answers)


def vandal(course):
    """Correct answers, plus an attack on the gradebook and on a classmate's files."""
    course = Path(course).resolve()
    attack = f'''
import os, shutil, sqlite3
LOOT = []
for target in [{str(course / "gradebook.db")!r}, {str(submission_path(course, "victim", ASSIGNMENT))!r},
               {str(course / "autograded" / "victim" / ASSIGNMENT / (ASSIGNMENT + ".ipynb"))!r},
               "../../../gradebook.db"]:
    try:
        with open(target, "r+b") as f:
            f.write(b"PWNED" * 100)
        LOOT.append(target)
    except OSError as err:
        print("blocked:", type(err).__name__)
for action in (lambda: sqlite3.connect({str(course / "gradebook.db")!r}).execute("DELETE FROM grade").connection.commit(),
               lambda: shutil.rmtree({str(course / "submitted")!r}),
               lambda: open({str(course / "PWNED.txt")!r}, "w").write("x")):
    try:
        action()
        LOOT.append("action")
    except Exception as err:
        print("blocked:", type(err).__name__)
print("damage done:", LOOT)
'''
    return _prepend(solution_copy(ASSIGNMENT, course), "ranked_tensors", attack)


def reads_solutions(course):
    """No answers of its own: it tries to run the instructor's solution cells instead."""
    course = Path(course).resolve()
    cheat = f'''
import json
try:
    _nb = json.load(open({str(course / "solutions" / ASSIGNMENT / (ASSIGNMENT + ".ipynb"))!r}))
    for _c in _nb["cells"]:
        if _c.get("metadata", {{}}).get("nbgrader", {{}}).get("solution"):
            exec("".join(_c["source"]))
    print("copied the solutions")
except OSError as err:
    print("no solutions for me:", type(err).__name__)
'''
    nb = release_copy(ASSIGNMENT, course)
    cell = _cell(nb, "ranked_tensors")
    cell.source = cheat + "\n" + cell.source.replace("raise NotImplementedError()", "pass")
    return nb


def with_warnings(course):
    """Correct answers that make torch print a UserWarning on stderr inside the test cells."""
    answers = {"as_model_input": "def as_model_input(t):\n    return torch.tensor(t, dtype=torch.float32)"}
    return with_answers(solution_copy(ASSIGNMENT, course), answers)


# name: (builder or special, expected total score)
CASES = {
    "infinite_loop": (infinite_loop, FULL - 1),
    # a kernel that dies (os._exit, or killed at the CPU limit) fails the whole notebook in nbgrader
    "stubborn_loop": (stubborn_loop, 0.0),
    "os_exit": (os_exit, 0.0),
    "memory_bomb": (memory_bomb, FULL - 1),
    "tests_edited": (tests_edited, FULL - 1),
    "tests_deleted": (tests_deleted, FULL - 1),
    "tests_duplicated": (tests_duplicated, FULL),
    "points_inflated": (points_inflated, FULL),
    "traceback_hidden": (traceback_hidden, 1.0),
    "always_equal": (always_equal, 0.0),
    "vandal": (vandal, FULL),
    "reads_solutions": (reads_solutions, 0.0),
    "with_warnings": (with_warnings, FULL),
    "malformed": ("malformed", 0.0),
    "renamed_notebook": ("renamed", 0.0),
}


def hand_in(course, name):
    """Place one hostile case as student `name`."""
    builder = CASES[name][0]
    if builder == "malformed":
        path = submission_path(course, name, ASSIGNMENT)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{"cells": [ this is not json')
        return path
    if builder == "renamed":
        path = place_submission(course, name, ASSIGNMENT, solution_copy(ASSIGNMENT, course))
        return path.rename(path.with_name("my_tensors.ipynb"))
    nb = builder(course)
    nbformat.validate(nb)
    return place_submission(course, name, ASSIGNMENT, nb)


def notebook_json(path) -> dict:
    return json.loads(Path(path).read_text())
