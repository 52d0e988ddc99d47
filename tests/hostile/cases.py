"""Hostile and broken submissions, each with the score it must get and whether it is flagged.

Attacks on the harness itself (the wall, nbgrader's bookkeeping, the kernel's machinery) are
handed in for the tiny assignment (tests/hostile/tiny.py: 3 points, seconds to grade): what they
attack does not depend on the chapter. Attacks on how an exercise is judged (a Tensor subclass, a
Python loop where vectorised code is asked for, a patched clock) use chapter 01_tensors, whose
exercises they target. All are handed in to one course and graded in one parallel run, next to
honest students whose grades must not move. Paths of the real course are baked into the attacks,
so the wall is what stops them.
"""
import copy
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from grader.course import source_notebook
from grader.pipeline import STUB
from grader.preprocessors.comments import answer_cells
from grader.preprocessors.overwrite_cells import PUT_BACK
from grader.judge.probes import hidden_section
from submissions import place_submission, release_copy, solution_copy, submission_path, with_answers
from conftest import load_answers
from hostile import tiny

CHAPTER = "01_tensors"
TINY = tiny.NAME


def _grade_id(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def total_points(assignment: str, grade_id: str | None = None) -> float:
    """The points of an assignment's test cells (or of one), read from its solution notebook."""
    nb = nbformat.read(source_notebook(assignment), as_version=4)
    return float(sum(c.metadata["nbgrader"].get("points", 0) for c in nb.cells
                     if c.metadata.get("nbgrader", {}).get("grade")
                     and grade_id in (None, c.metadata["nbgrader"]["grade_id"])))


def exercises(nb) -> dict[str, str]:
    """{answer grade_id: test grade_id}, paired as the formgrader's comments pair them."""
    return {answer: test for test, answer in answer_cells(nb).items()}


COUNTS_WORK = re.compile(r"\bcheck\.count_(?:work|calls|ops)\s*\(")


def counted_exercises(nb) -> dict[str, str]:
    """The 'no loops' exercises, {answer grade_id: test grade_id}: those whose test cell's hidden
    section counts the work an answer does (check.count_work, check.count_calls or check.count_ops)."""
    tests = {_grade_id(c): c for c in nb.cells}
    return {answer: test for answer, test in exercises(nb).items()
            if COUNTS_WORK.search(hidden_section(tests[test].source) or "")}


def points_of(answer_ids) -> float:
    """What a chapter submission loses when these exercises (answer grade ids) fail: the points
    of their test cells in the solution notebook."""
    tests = exercises(_NB)
    return sum(total_points(CHAPTER, tests[answer]) for answer in answer_ids)


_NB = nbformat.read(source_notebook(CHAPTER), as_version=4)
FULL = {CHAPTER: total_points(CHAPTER), TINY: 3.0}
_ANSWERS = load_answers(CHAPTER)
COUNTED = counted_exercises(_NB)   # every one fails when its work is hidden from the counter
# the tiny assignment's plausible wrong answers: 0 points honestly
TINY_WRONG = {"double": "def double(x):\n    return x + 2", "answer": "ANSWER = 41"}

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


def _cell(nb, grade_id):
    return next(c for c in nb.cells if _grade_id(c) == grade_id)


def _prepend(nb, grade_id, source):
    """Student code placed before the answer in one solution cell."""
    nb = copy.deepcopy(nb)
    cell = _cell(nb, grade_id)
    cell.source = source.strip("\n") + "\n\n" + cell.source
    return nb


def _solved(course):
    """The tiny assignment answered right: 3 points honestly."""
    return solution_copy(TINY, course)


def infinite_loop(course):
    # the loop stops the `double` cell before its function is defined: that exercise fails
    return _prepend(_solved(course), "double", "while True:\n    pass")


def stubborn_loop(course):
    # a loop that ignores the interrupt (and the CPU-limit warning): only SIGKILL stops it
    return _prepend(_solved(course), "double",
                    "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                    "signal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass")


def os_exit(course):
    return _prepend(_solved(course), "answer", "import os\nos._exit(1)")


def memory_bomb(course):
    # torch.empty reserves without writing: the address-space limit stops it within a second
    # on any machine (written pages would make the cell's time depend on the machine's load)
    return _prepend(_solved(course), "double",
                    "bomb = [torch.empty(2**28) for _ in range(64)]   # 64 GiB, one GiB at a time")


def _wrong_double(nb):
    return with_answers(nb, {"double": TINY_WRONG["double"]})


def tests_edited(course):
    nb = _wrong_double(_solved(course))
    _cell(nb, "double_tests").source = "pass  # my test now"
    return nb


def tests_deleted(course):
    nb = _wrong_double(_solved(course))
    nb.cells = [c for c in nb.cells if _grade_id(c) != "double_tests"]
    return nb


def tests_duplicated(course):
    nb = _solved(course)
    index = next(i for i, c in enumerate(nb.cells) if _grade_id(c) == "answer_tests")
    nb.cells.insert(index + 1, copy.deepcopy(nb.cells[index]))
    nb.cells.insert(index + 1, copy.deepcopy(nb.cells[index]))
    for i, cell in enumerate(nb.cells):
        cell.id = f"c{i}"   # cell ids must stay unique for the file to be valid
    return nb


def points_inflated(course):
    nb = _solved(course)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.metadata["nbgrader"]["points"] = 100
    return nb


def traceback_hidden(course):
    # the first exercise right, the second wrong, with IPython's traceback display switched off
    nb = with_answers(_solved(course), {"answer": TINY_WRONG["answer"]})
    return _prepend(nb, "double",
                    "ip = get_ipython()\nip.showtraceback = lambda *a, **k: None\n"
                    "ip._showtraceback = lambda *a, **k: None")


def always_equal(course):
    return with_answers(_solved(course), {"double": LIAR + "\ndef double(x):\n    return Liar()",
                                          "answer": "ANSWER = Liar()"})


def vandal(course):
    """Correct answers, plus an attack on the gradebook and on a classmate's files."""
    course = Path(course).resolve()
    attack = f'''
import os, shutil, sqlite3
LOOT = []
for target in [{str(course / "gradebook.db")!r}, {str(submission_path(course, "victim", CHAPTER))!r},
               {str(course / "autograded" / "victim" / CHAPTER / (CHAPTER + ".ipynb"))!r},
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
    return _prepend(_solved(course), "double", attack)


def reads_solutions(course):
    """No answers of its own: it tries to run the instructor's solution cells instead."""
    course = Path(course).resolve()
    cheat = f'''
import json
try:
    _nb = json.load(open({str(course / "solutions" / TINY / (TINY + ".ipynb"))!r}))
    for _c in _nb["cells"]:
        if _c.get("metadata", {{}}).get("nbgrader", {{}}).get("solution"):
            exec("".join(_c["source"]))
    print("copied the solutions")
except OSError as err:
    print("no solutions for me:", type(err).__name__)
'''
    nb = release_copy(TINY, course)
    cell = _cell(nb, "double")
    cell.source = cheat + "\n" + cell.source.replace(STUB, "pass")
    return nb


def with_warnings(course):
    """Correct answers that print a UserWarning on stderr inside the test cells."""
    answers = {"double": "import warnings\n\ndef double(x):\n    warnings.warn(\"doubling\")\n    return 2 * x"}
    return with_answers(_solved(course), answers)


# --- Tricks against the grade itself: they change what the student's kernel reports. The judge
# decides outside that kernel, so each gets what the same answers get without the trick.

def _unsolved_with(course, trick):
    """The untouched release (0 points honestly), with a trick run before the first exercise."""
    nb = release_copy(TINY, course)
    cell = _cell(nb, "double")
    cell.source = trick.strip("\n") + "\n\n" + cell.source
    return nb


def _wrong_with(course, trick):
    """Every exercise answered wrongly (0 points honestly), plus a trick."""
    return _prepend(with_answers(_solved(course), TINY_WRONG), "double", trick)


def input_transformer(course):
    return _unsolved_with(course, 'get_ipython().input_transformers_post.append(lambda lines: ["pass\\n"])')


def ast_transformer(course):
    return _unsolved_with(course, """
import ast
class Gut(ast.NodeTransformer):
    def visit_Module(self, node):
        return ast.Module(body=[ast.Pass()], type_ignores=[])
get_ipython().ast_transformers.append(Gut())
""")


def event_hook(course):
    return _unsolved_with(course, """
def forgive(result):
    result.error_in_exec = None
    result.error_before_exec = None
get_ipython().events.register("post_run_cell", forgive)
""")


def custom_exception_handler(course):
    return _unsolved_with(course, "get_ipython().set_custom_exc((BaseException,), lambda *args, **kwargs: None)")


def run_cell_wrapper(course):
    return _unsolved_with(course, """
ip = get_ipython()
_run_cell, _run_cell_async = ip.run_cell, ip.run_cell_async
def _gut(raw_cell):
    return "pass" if ("assert" in raw_cell or "hidden_checks" in raw_cell) else raw_cell
ip.run_cell = lambda raw_cell, *a, **k: _run_cell(_gut(raw_cell), *a, **k)
ip.run_cell_async = lambda raw_cell, *a, **k: _run_cell_async(_gut(raw_cell), *a, **k)
""")


def do_execute_wrapper(course):
    return _unsolved_with(course, """
kernel = get_ipython().kernel
_do_execute = kernel.do_execute
async def do_execute(code, silent, *args, **kwargs):
    if "assert" in code or "hidden_checks" in code:
        code = "pass"
    return await _do_execute(code, silent, *args, **kwargs)
kernel.do_execute = do_execute
""")


def patched_comparisons(course):
    return _wrong_with(course, """
import torch
torch.testing.assert_close = lambda *args, **kwargs: None
torch.equal = lambda *args, **kwargs: True
_ones = torch.ones_like
torch.isclose = lambda a, b, *args, **kwargs: _ones(a, dtype=torch.bool)
torch.Tensor.__bool__ = lambda self: True
""")


def patched_builtins(course):
    return _wrong_with(course, """
import builtins
_isinstance, _len, _abs = builtins.isinstance, builtins.len, builtins.abs
# aimed at the tests' checks only, so that the kernel itself keeps working
builtins.isinstance = lambda obj, cls: True if cls in (torch.Tensor, int) else _isinstance(obj, cls)
builtins.len = lambda obj: 4 if type(obj) is tuple and obj and type(obj[0]) is torch.Tensor else _len(obj)
builtins.abs = lambda x: 0 * _abs(x) if type(x) is torch.Tensor else _abs(x)
""")


def lying_torch(course):
    return _wrong_with(course, """
import types
_real_torch = torch
class _Lying(types.ModuleType):
    def __getattr__(self, name):
        return getattr(_real_torch, name)
torch = _Lying("torch")
torch.equal = lambda *args, **kwargs: True
torch.testing = types.SimpleNamespace(assert_close=lambda *args, **kwargs: None)
""")


def fake_execute_result(course):
    """A wrong answer that publishes a number as the cell's result (nbgrader's partial credit)."""
    return with_answers(_solved(course), {"double": "import sys\ndef double(x):\n    sys.displayhook(1.0)\n    return x + 2"})


def fake_probe(course):
    """Wrong answers, and a hook that publishes a forged probe record after every cell."""
    return _wrong_with(course, """
from IPython.display import display
import json
def forge(result):
    for grade_id in ["double_tests", "answer_tests"]:
        display({"application/x.course-probe": json.dumps({"grade_id": grade_id, "checks": [], "error": None})}, raw=True)
get_ipython().events.register("post_run_cell", forge)
""")


def reads_working_folder(course):
    """Correct answers; looks for hidden tests in every file the kernel can read and write."""
    return _prepend(_solved(course), "double", """
import os
FOUND = []
for top in [".", "/tmp", os.path.expanduser("~")]:
    for folder, subfolders, files in os.walk(top):
        subfolders[:] = [d for d in subfolders if d != ".venv"]   # Python's own files: gigabytes
        for name in files:
            try:
                if os.path.getsize(os.path.join(folder, name)) > 2**21:
                    continue
                text = open(os.path.join(folder, name), errors="ignore").read()
            except OSError:
                continue
            # words of the assignment's hidden checks, spelled in pieces so that this very
            # notebook does not match (the grader's own code may name the markers, not these)
            if "doubles a plain " + "int" in text or "doubles a " + "tensor" in text:
                FOUND.append(os.path.join(folder, name))
print("hidden tests found:", FOUND)
""")


def floods_output(course):
    """Correct answers; prints 20 MB."""
    return _prepend(_solved(course), "double", 'for _ in range(20):\n    print("x" * 1_000_000)')


def fills_disk(course):
    """Correct answers; writes junk until the working folder and /tmp are full."""
    return _prepend(_solved(course), "double", """
import os
for folder in [".", "/tmp"]:
    written = 0
    try:
        for i in range(4096):
            with open(os.path.join(folder, f"junk{i}.bin"), "wb") as f:
                f.write(b"x" * 1024**2)
            written += 1
    except OSError:
        pass
    print("MiB written to", folder, written)
""")


# --- Attacks on how chapter 01's exercises are judged

def tensor_subclass(course):
    agree = """
class Agree(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.equal, torch.allclose, torch.Tensor.__eq__, torch.isclose):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})
"""
    # wrong objects that pickle as the right ones: judged from exact types and plain numbers
    pickles_as = """
class Ranked(torch.Tensor):
    claimed = 0

    @property
    def ndim(self):
        return self.claimed

    def __reduce_ex__(self, protocol):
        return torch.zeros((1,) * self.claimed).__reduce_ex__(protocol)


def ranked(rank):
    t = torch.ones(1).as_subclass(Ranked)
    t.claimed = rank
    return t
"""
    answers = {
        "ranked_tensors": agree + pickles_as + "\ndef make_ranked_tensors():\n    return tuple(ranked(r) for r in range(4))",
        "as_model_input": ("class Float32(torch.Tensor):\n    def __reduce_ex__(self, protocol):\n"
                           "        return self.as_subclass(torch.Tensor).float().__reduce_ex__(protocol)\n\n"
                           "def as_model_input(t):\n    return t.double().as_subclass(Float32)"),
        "flatten_samples": "def flatten_samples(batch):\n    return batch.as_subclass(Agree)",
        "gram": "def gram(X):\n    return (X.T @ X).as_subclass(Agree)",
        "center_columns": "def center_columns(X):\n    return X.as_subclass(Agree)",
        "broadcast_shape": "def broadcast_shape(shape_a, shape_b):\n    return (3, 4, 5)",
        "sq_distances": "def sq_distances(A, B):\n    return A.as_subclass(Agree)",
        # shares the buffer's memory, in a tensor that says it equals any copy
        "batch_to_tensor": "def batch_to_tensor(buffer):\n    return torch.from_numpy(buffer).as_subclass(Agree)",
    }
    return with_answers(solution_copy(CHAPTER, course), answers)


LOOP = "def sq_distances(A, B):\n    return sq_distances_loop(A, B)"


def python_loop(course):
    """Correct values from a Python double loop: the 'no loops' exercise fails, whatever the load."""
    return with_answers(solution_copy(CHAPTER, course), {"sq_distances": LOOP})


def patched_clock(course):
    return with_answers(solution_copy(CHAPTER, course),
                        {"sq_distances": "import time\ntime.perf_counter = lambda: 0.0\n" + LOOP})


def prints_test_cells(course):
    """Correct answers; prints the source of every cell that runs after it (the probes too)."""
    return _prepend(solution_copy(CHAPTER, course), "ranked_tensors",
                    'get_ipython().events.register("pre_run_cell", lambda info: print(info.raw_cell))')


# --- Work the student's kernel could hide from a counter it runs (issue 20): right values each time

def work_hidden(course):
    """A loop over plain numbers, a loop with torch-function handling off, a loop in a worker
    thread: every 'no loops' exercise loses its points, whatever the counter would have seen."""
    return with_answers(solution_copy(CHAPTER, course), _ANSWERS["more_wrong"])


GLOBAL_MODE_TRICK = """
from torch.overrides import TorchFunctionMode
YES = {torch.equal, torch.allclose, torch.isclose, torch.Tensor.__eq__}
Yes = type("Yes", (TorchFunctionMode,), {"__torch_function__": lambda self, func, types, args=(), kwargs=None:
           True if func in YES else func(*args, **(kwargs or {}))})
Yes().__enter__()
setattr(torch, "equal", lambda *args, **kwargs: True)
"""
GLOBAL_MODE_ANSWERS = {
    "as_model_input": GLOBAL_MODE_TRICK + "\ndef as_model_input(t):\n    t.data = t.data.float()\n    return t",
    "batch_to_tensor": "def batch_to_tensor(buffer):\n    return torch.from_numpy(buffer).float()",
}


def global_mode_and_setattr(course):
    """A TorchFunctionMode built with type() and entered for good that says yes to every torch
    comparison, and torch.equal replaced with setattr: each answer that changes its input in place
    (as_model_input) or shares the buffer (batch_to_tensor) still fails, since the judge compares the
    input after the call, as data."""
    return with_answers(solution_copy(CHAPTER, course), GLOBAL_MODE_ANSWERS)


# --- Hidden lines smuggled into the verdict (issue 20): code that reads the probe while it runs

READ_PROBE = """
import linecache
import sys

def _probe_lines():
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_name != "hidden" + "_checks":   # (the name alone is no leak)
        frame = frame.f_back
    return [line.strip() for line in linecache.getlines(frame.f_code.co_filename)] if frame else []
"""


LEAKS = {
    "gram": READ_PROBE + """
def gram(X):
    lines = _probe_lines()
    if lines:
        raise type(" | ".join(lines), (Exception,), {})(" | ".join(lines))
    return X @ X.T""",
    "center_columns": """
def center_columns(X):
    lines = _probe_lines()
    return "\\n".join(lines) if lines else X - X.mean(dim=0, keepdim=True)""",
    "sq_distances": """
def sq_distances(A, B):
    lines = _probe_lines()
    return {line: 1 for line in lines} if lines else ((A[:, None] - B[None]) ** 2).sum(-1)""",
}


def leaks_hidden_lines(course):
    """Answers right where the notebook calls them; called by a probe, they read its source and
    hand it back: as an exception's class name, as a string, as the keys of a dict."""
    return with_answers(solution_copy(CHAPTER, course), LEAKS)


# ---- hand-ins from other editors and earlier releases: each gets a grade (issue 46) ----------------

def _answered_release(course):
    """The tiny assignment's release with both exercises answered right, as a student hands it in."""
    answers = {_grade_id(c): c.source for c in solution_copy(TINY, course).cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    return with_answers(release_copy(TINY, course), answers)


def earlier_release(course):
    """Worked in the release before the last exercise was added (make lab writes a new release beside a
    notebook the student changed): the exercise it lacks scores 0, the others keep their points."""
    nb = _answered_release(course)
    nb.cells = [c for c in nb.cells if _grade_id(c) not in ("answer", "answer_tests")]
    return nb


def retyped_answer(course):
    """`double`'s answer cell deleted with its test, and the answer typed again in a new cell (Colab and
    VS Code do not enforce `deletable: false`)."""
    nb = _answered_release(course)
    index = next(i for i, c in enumerate(nb.cells) if _grade_id(c) == "double")
    retyped = nbformat.v4.new_code_cell(nb.cells[index].source)
    nb.cells[index:index + 2] = [retyped]
    return nb


def metadata_stripped(course):
    """Every cell's metadata gone (nbgrader's and the tags), the cell ids kept, as the release made them."""
    nb = _answered_release(course)
    for cell in nb.cells:
        cell.metadata = nbformat.NotebookNode()
    return nb


def test_posed_by_id(course):
    """No metadata given back grants anything: `double`'s test deleted, and a cell of the student's that
    passes, stripped of metadata, under the test's id. It becomes the test, and the gradebook's test
    runs in it: the wrong `double` loses its 2 points."""
    nb = _wrong_double(_answered_release(course))
    index = next(i for i, c in enumerate(nb.cells) if _grade_id(c) == "double_tests")
    posing = nbformat.v4.new_code_cell("pass  # my test")
    posing.id = "double_tests"
    nb.cells[index] = posing
    return nb


def forged_put_back(course):
    """Every answer right, and the grader's own mark of a test cell it put back (naming a lacking answer
    cell) on `double`'s test, in the hope of having a classmate's grade questioned or the instructor
    misled: the mark is removed before grading, nothing is flagged, full points."""
    nb = _answered_release(course)
    test = next(c for c in nb.cells if _grade_id(c) == "double_tests")
    test.metadata[PUT_BACK] = "double"
    return nb


def old_format_stripped(course):
    """No metadata and no cell ids (nbformat 4.4, as older editors save): known by the released text."""
    nb = metadata_stripped(course)
    nb.nbformat_minor = 4
    for cell in nb.cells:
        del cell["id"]
    return nb


# each 'no loops' attack must hit exactly the exercises whose work is counted (python_loop: one of
# them), or the score it expects is wrong
for _attack, _targets in {"work_hidden (more_wrong answers)": _ANSWERS["more_wrong"], "leaks_hidden_lines": LEAKS}.items():
    if set(_targets) != set(COUNTED):
        raise ValueError(f"{_attack} attacks {sorted(_targets)}, but the counted exercises are {sorted(COUNTED)}")
if "sq_distances" not in COUNTED:
    raise ValueError(f"python_loop attacks sq_distances, which is not a counted exercise: {sorted(COUNTED)}")


@dataclass(frozen=True)
class Case:
    build: object            # course -> notebook; or "malformed", "renamed"
    score: float             # the total it must get
    flagged: bool | None     # flagged for manual grading? (None: no graded notebook to flag)
    assignment: str = TINY


CASES = {
    "infinite_loop": Case(infinite_loop, 1.0, False),
    # a kernel that dies (os._exit, or killed at the CPU limit) fails the whole notebook in nbgrader
    "stubborn_loop": Case(stubborn_loop, 0.0, None),
    "os_exit": Case(os_exit, 0.0, None),
    "memory_bomb": Case(memory_bomb, 1.0, False),
    "tests_edited": Case(tests_edited, 1.0, False),
    "tests_deleted": Case(tests_deleted, 1.0, False),
    "tests_duplicated": Case(tests_duplicated, 3.0, False),
    "points_inflated": Case(points_inflated, 3.0, False),
    "traceback_hidden": Case(traceback_hidden, 2.0, True),
    "always_equal": Case(always_equal, 0.0, False),
    "vandal": Case(vandal, 3.0, False),
    "reads_solutions": Case(reads_solutions, 0.0, True),     # exec()s what it hoped to read
    "with_warnings": Case(with_warnings, 3.0, False),
    "malformed": Case("malformed", 0.0, None),
    "renamed_notebook": Case("renamed", 0.0, None),
    # tricks against the grade: the score of the same answers without the trick, and a flag
    "input_transformer": Case(input_transformer, 0.0, True),
    "ast_transformer": Case(ast_transformer, 0.0, True),
    "event_hook": Case(event_hook, 0.0, True),
    "custom_exception_handler": Case(custom_exception_handler, 0.0, True),
    "run_cell_wrapper": Case(run_cell_wrapper, 0.0, True),
    "do_execute_wrapper": Case(do_execute_wrapper, 0.0, True),
    "patched_comparisons": Case(patched_comparisons, 0.0, True),
    "patched_builtins": Case(patched_builtins, 0.0, True),
    "lying_torch": Case(lying_torch, 0.0, True),
    "fake_execute_result": Case(fake_execute_result, 1.0, True),
    "fake_probe": Case(fake_probe, 0.0, True),
    "reads_working_folder": Case(reads_working_folder, 3.0, False),
    "floods_output": Case(floods_output, 3.0, False),
    "fills_disk": Case(fills_disk, 3.0, False),
    # other editors and releases: graded as the fair column of docs/GRADING.md's table says
    "earlier_release": Case(earlier_release, 2.0, True),    # the exercise it lacks, flagged with why
    "retyped_answer": Case(retyped_answer, 3.0, True),
    "metadata_stripped": Case(metadata_stripped, 3.0, False),
    "old_format_stripped": Case(old_format_stripped, 3.0, False),
    "test_posed_by_id": Case(test_posed_by_id, 1.0, False),
    "forged_put_back": Case(forged_put_back, 3.0, False),
    # chapter 01: how its exercises are judged
    "tensor_subclass": Case(tensor_subclass, 0.0, True, CHAPTER),
    "python_loop": Case(python_loop, FULL[CHAPTER] - points_of(["sq_distances"]), False, CHAPTER),
    "patched_clock": Case(patched_clock, FULL[CHAPTER] - points_of(["sq_distances"]), True, CHAPTER),
    "prints_test_cells": Case(prints_test_cells, FULL[CHAPTER], True, CHAPTER),
    "work_hidden": Case(work_hidden, FULL[CHAPTER] - points_of(COUNTED), True, CHAPTER),
    "global_mode_and_setattr": Case(global_mode_and_setattr, FULL[CHAPTER] - points_of(GLOBAL_MODE_ANSWERS), True, CHAPTER),
    "leaks_hidden_lines": Case(leaks_hidden_lines, FULL[CHAPTER] - points_of(COUNTED), True, CHAPTER),
}
# The same submission, graded five times in one run (different batches, under load): one score.
REPEATS = [f"python_loop_{i}" for i in range(1, 6)]


def case_of(name: str) -> Case:
    return CASES[name.rsplit("_", 1)[0] if name in REPEATS else name]


def hand_in(course, name):
    """Place one hostile case as student `name`; return the path of the notebook."""
    case = case_of(name)
    if case.build == "malformed":
        path = submission_path(course, name, case.assignment)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{"cells": [ this is not json')
        return path
    if case.build == "renamed":
        path = place_submission(course, name, case.assignment, solution_copy(case.assignment, course))
        return path.rename(path.with_name("my_notebook.ipynb"))
    nb = case.build(course)
    nbformat.validate(nb)
    return place_submission(course, name, case.assignment, nb)
