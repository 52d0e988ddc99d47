"""No answer ships: nothing students receive passes an exercise when bound to the exercise's name.

Students get the `torchcourse` package and `ddp_scripts/`. For every exercise, every public function
and class of those that could be called the way the exercise's own function or class is called is
bound, in turn, to the exercise's name in a kernel that has run the solution notebook; then the
exercise's probe runs and the judge compares its record with the reference's. A pass means the
course hands students that answer (docs/GRADING.md, "Answers the course ships are not answers").
A try stops where its record grows past what the grader reads: it cannot pass (RECORD_LIMIT).
tests/answers/<chapter>.py names the twins it knows as course_copy answers, graded by tests/test_chapters.py;
this test finds the ones nobody listed.
"""
import ast
import importlib
import inspect
import pkgutil
import runpy
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
import torch

import torchcourse
from conftest import ALL_CHAPTERS
from grader.course import REPO_ROOT, source_notebook
from grader.judge.preprocessor import verdict
from grader.judge.probes import MAX_PROBE_BYTES, ProbeError, hidden_section, probe_source, read_probe, student_seed
from grader.judge.reference import run_with_probes
from submissions import copy_course
from hostile.tiny import NAME as TINY, add_tiny_assignment

STUDENT = "course-copy"
SCRIPTS = sorted((REPO_ROOT / "ddp_scripts").glob("*.py"))


def shipped() -> dict:
    """{(where, name): the object} for every public function and class defined in what students get."""
    found = {}
    for info in pkgutil.iter_modules(torchcourse.__path__):
        module = importlib.import_module(f"torchcourse.{info.name}")
        found.update({(module.__name__, name): obj for name, obj in vars(module).items()
                      if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
                      and obj.__module__ == module.__name__})
    sys.path.insert(0, str(REPO_ROOT / "ddp_scripts"))     # the scripts import each other
    try:
        namespaces = {script: runpy.run_path(str(script), run_name="shipped_script") for script in SCRIPTS}
    finally:
        sys.path.remove(str(REPO_ROOT / "ddp_scripts"))
    for script, namespace in namespaces.items():
        found.update({(str(script.relative_to(REPO_ROOT)), name): obj for name, obj in namespace.items()
                      if not name.startswith("_") and inspect.isfunction(obj) and obj.__module__ == "shipped_script"})
    return found


def _positional(args: ast.arguments, skip: int = 0) -> int | None:
    """How many positional arguments a call with only the required ones passes (None: *args)."""
    if args.vararg:
        return None
    return len(args.posonlyargs) + len(args.args) - len(args.defaults) - skip


def exercise_names(source: str) -> dict:
    """{name: required positional arguments} for the functions and classes a solution cell defines."""
    names = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names[node.name] = _positional(node.args)
        elif isinstance(node, ast.ClassDef):
            init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
            names[node.name] = _positional(init.args, skip=1) if init else 0
    return names


def callable_like(obj, positional) -> bool:
    """Can `obj` be called with `positional` arguments, as the exercise's own object is?"""
    try:
        inspect.signature(obj).bind(*range(positional))
    except (TypeError, ValueError):
        return False
    return True


def exercises(nb) -> list:
    """[(solution grade id, test cell grade id, hidden section, names it defines)] of a notebook."""
    found, pending = [], []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code":
            continue
        if meta.get("solution"):
            pending.append((meta["grade_id"], exercise_names(cell.source)))
        elif meta.get("grade") and pending:
            for grade_id, names in pending:
                found.append((grade_id, meta["grade_id"], hidden_section(cell.source), names))
            pending = []
    return found


# A try whose record read_probe would refuse (longer than MAX_PROBE_BYTES) does not pass, whatever
# its values are. Such a try used to be serialized, sent and refused whole: bound to torch_build,
# torchcourse.fashion.fashion_mnist returns a 47 MB dataset 33 times, 2 GB of record and 45 s of
# chapter 00. So every try sizes each value first (torch.save into a file that only counts: the
# probe's own bytes, not kept) and stops at the one that takes the record past the limit; the cell
# then says so (TOO_LARGE) and the search counts the try as not passing, as the grader would.
# A rule on sizes, not on time: the same try always gets the same answer.
TOO_LARGE = "application/x.course-try-too-large"
RECORD_LIMIT = f"""
import torch as _course_torch

class _CourseRecordTooLarge(BaseException):   # not an Exception: `except Exception` in a hidden check lets it by
    pass

class _CourseSize:                            # a file that counts what torch.save writes, and keeps nothing
    def __init__(self):
        self.written = 0

    def write(self, data):
        self.written += len(data)
        return len(data)

    def flush(self):
        pass

_course_record = {{"characters": 0, "too_large": False}}   # of the probe that runs now

def _course_within_limit(hidden_checks):
    # hidden_checks, stopped before its check records a value that takes the record's base64 past
    # MAX_PROBE_BYTES; every check after that one stops too (the record stays refused)
    def bounded(check, rng):
        def sized_check(name, value, **rule):
            if not _course_record["too_large"]:
                size = _CourseSize()
                try:
                    _course_torch.save(value, size)
                except Exception:      # not plain data: the probe's check records no value either
                    size.written = 0
                _course_record["characters"] += 4 * -(-size.written // 3)    # its base64
                _course_record["too_large"] = _course_record["characters"] > {MAX_PROBE_BYTES}
            if _course_record["too_large"]:
                raise _CourseRecordTooLarge()
            check(name, value, **rule)
        sized_check.__dict__.update(vars(check))    # check.count_work, count_calls, count_ops
        _course_record.update(characters=0, too_large=False)
        hidden_checks(sized_check, rng)
    return bounded

def _course_report_too_large():
    if _course_record["too_large"]:
        from IPython.display import display
        display({{{TOO_LARGE!r}: ""}}, raw=True)
"""


def too_large(outputs: list) -> bool:
    """Did the try stop at a value that makes its probe record longer than read_probe reads?"""
    return any(TOO_LARGE in o.get("data", {}) for o in outputs if o.get("output_type") == "display_data")


def _script_path(where: str) -> str:
    """Where the kernel finds a shipped script: the course's (ddp_scripts/, which the wall shows it
    read-only), or else a file of the assignment's own folder, in the kernel's working folder."""
    return str(REPO_ROOT / where) if (REPO_ROOT / where).is_file() else where


def _loading_cell(keys) -> str:
    """A cell that loads every object to try once, into _course_shipped[(where, name)]."""
    lines = ["import importlib as _importlib, os as _os, runpy as _runpy, sys as _sys", RECORD_LIMIT,
             "_course_shipped = {}"]
    for where in sorted({where for where, _ in keys}):
        if where.endswith(".py"):
            path = _script_path(where)
            lines += [f"_sys.path.insert(0, _os.path.dirname(_os.path.abspath({path!r})))",
                      f"_namespace = _runpy.run_path({path!r}, run_name='shipped_script')"]
        else:
            lines.append(f"_namespace = vars(_importlib.import_module({where!r}))")
        lines += [f"_course_shipped[({where!r}, {name!r})] = _namespace[{name!r}]" for w, name in sorted(keys) if w == where]
    return "\n".join(lines)


def bindings(chapter: str, objects: dict, course: Path = REPO_ROOT) -> list:
    """[(solution grade id, test grade id, exercise name, (where, shipped name))] worth trying."""
    nb = nbformat.read(source_notebook(chapter, course), as_version=4)
    tries = []
    for solution_id, test_id, hidden, names in exercises(nb):
        for name, positional in names.items():
            if positional is None or hidden is None:
                continue
            tries += [(solution_id, test_id, name, key) for key, obj in objects.items()
                      if callable_like(obj, positional)]
    return tries


def passes_with_shipped_code(chapter: str, objects: dict, course: Path = REPO_ROOT) -> list:
    """The bindings of `chapter` under which the exercise's hidden checks all pass."""
    tries = bindings(chapter, objects, course)
    if not tries:
        return []
    solution = source_notebook(chapter, course)
    nb = nbformat.read(solution, as_version=4)
    hidden = {test_id: code for _, test_id, code, _ in exercises(nb) if code}
    names = sorted({name for _, _, name, _ in tries})
    restore = "globals().update(_course_originals)\n"
    # Each exercise's probe cell, as grading sends it (its hidden section, the probe's kernel side, the
    # call), compiled once: a try runs it with exec. Sent as a cell of its own, each try's 10 kB of
    # source cost the kernel more than most tries do (the search took twice as long).
    probes = {test_id: probe_source(f"{code}\nhidden_checks = _course_within_limit(hidden_checks)\n",
                                    student_seed(chapter, chapter, STUDENT, test_id), test_id)
              for test_id, code in hidden.items()}
    nb.cells.append(nbformat.v4.new_code_cell(
        _loading_cell({key for *_, key in tries}) + f"\n_course_originals = {{n: globals()[n] for n in {names!r}}}"
        f"\n_course_probes = {{i: compile(source, f'<probe {{i}}>', 'exec') for i, source in {probes!r}.items()}}"))
    for i, (_, test_id, name, key) in enumerate(tries):    # one cell per try: few cells, a fast run
        nb.cells.append(nbformat.v4.new_code_cell(
            f"{restore}{name} = _course_shipped[{key!r}]\nexec(_course_probes[{test_id!r}], globals())\n"
            "_course_report_too_large()\n", metadata={"probe_for": [f"try {i}", test_id]}))
    nb.cells.append(nbformat.v4.new_code_cell(restore))
    # the reference's own records come last, after every binding was undone
    outputs = run_with_probes(nb, solution, chapter, chapter, hidden, [STUDENT], timeout=120)
    reference = {grade_id: read_probe(out, grade_id) for (who, grade_id), out in outputs.items() if who == STUDENT}
    passing = []
    for i, (solution_id, test_id, name, key) in enumerate(tries):
        try_outputs = outputs.get((f"try {i}", test_id), [])
        if too_large(try_outputs):
            continue
        try:
            record = read_probe(try_outputs, test_id)
        except ProbeError:
            continue
        if verdict(record, reference[test_id]) is None:
            passing.append(f"{chapter} {solution_id}: {name} = {key[0]}.{key[1]}")
    return passing


@pytest.fixture(scope="module")
def found():
    objects = shipped()
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(ALL_CHAPTERS, pool.map(lambda c: passes_with_shipped_code(c, objects), ALL_CHAPTERS)))
    return results


def test_the_search_tries_what_could_answer():
    """What the search binds: every shipped function and class, wherever its arguments fit."""
    objects = shipped()
    assert ("torchcourse.models", "NeuralNetwork") in objects
    assert any(where.startswith("ddp_scripts/") for where, _ in objects)
    assert exercise_names("def f(a, b, c=1):\n    pass\nclass D:\n    def __init__(self, x, y=2):\n        pass\n"
                          "def g(*args):\n    pass\nLIMIT = 3\n") == {"f": 2, "D": 1, "g": None}
    assert callable_like(objects[("torchcourse.models", "NeuralNetwork")], 2)
    assert not callable_like(objects[("torchcourse.models", "NeuralNetwork")], 0)


def test_the_search_finds_an_answer_that_ships(tmp_path):
    """The search's own check: shipped next to the tiny assignment, a function that doubles is
    found to answer its `double` exercise; the wrong ones are not."""
    course = copy_course(tmp_path / "course")
    add_tiny_assignment(course)
    helpers = Path(__file__).parent / "hostile" / "shipped_helpers.py"
    # shipped in the assignment's folder: the reference kernel, behind the wall, sees it there
    shutil.copyfile(helpers, course / "solutions" / TINY / helpers.name)
    where = helpers.name
    namespace = runpy.run_path(str(helpers))
    objects = {(where, name): namespace[name] for name in ("twice", "plus_two", "pair")}
    assert [key for *_, key in bindings(TINY, objects, course)] == [(where, "twice"), (where, "plus_two")]
    assert passes_with_shipped_code(TINY, objects, course) == [f"{TINY} double: double = {where}.twice"]


def test_a_try_stops_at_a_value_too_large_for_its_record():
    """The kernel side of a try, run here: each value goes on to the probe's check (its counters
    with it) until the record's base64 would pass MAX_PROBE_BYTES; from there on every check stops,
    caught or not. The next try starts afresh."""
    kernel = {}
    exec(RECORD_LIMIT, kernel)
    recorded = []

    def check(name, value, **rule):
        recorded.append(name)
    check.count_work = "the probe's counter"
    half = torch.zeros(MAX_PROBE_BYTES * 3 // 8, dtype=torch.uint8)    # its base64: half the limit and a bit

    def hidden_checks(check, rng):
        check("plain data", [1, 2.5, "x"], atol=0.1)
        check("not plain data (the probe records why)", lambda: 0)
        check("a counter of the probe", check.count_work)
        check("half", half)
        for name in ("half again", "after it"):
            try:
                check(name, half)
            except Exception:
                pass
    with pytest.raises(kernel["_CourseRecordTooLarge"]):
        kernel["_course_within_limit"](hidden_checks)(check, None)
    assert recorded == ["plain data", "not plain data (the probe records why)", "a counter of the probe", "half"]
    assert kernel["_course_record"]["too_large"]
    kernel["_course_within_limit"](lambda check, rng: check("the next try", half))(check, None)
    assert recorded[-1] == "the next try" and not kernel["_course_record"]["too_large"]


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_nothing_students_receive_answers_an_exercise(found, chapter):
    assert found[chapter] == [], "shipped code passes these exercises:\n" + "\n".join(found[chapter])
