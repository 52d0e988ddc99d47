"""The judge's parts, unit by unit: comparison rules, probe records, seeds, and the static scan."""
import base64
import io
import json
import re

import pytest
import torch

from conftest import ALL_CHAPTERS, load_answers
from grader.judge.compare import compare
from grader.course import REPO_ROOT, source_notebook
from grader.judge.probe_kernel import PROBE_MIME
from grader.judge.probes import ProbeError, hidden_section, read_probe, student_seed, without_hidden_section
from grader.judge.scan import module_names, scan
from submissions import solution_copy


def test_exact_rule_checks_type_dtype_shape_and_values():
    t = torch.tensor([1.0, 2.0])
    assert compare(t.clone(), t) is None
    assert compare(t.double(), t) == "has dtype torch.float64"
    assert compare(t[:1], t) == "has shape (1,)"
    assert compare(t + 1e-6, t) == "has the wrong values"
    assert compare([1.0, 2.0], t) == "expected a tensor, got a list"
    assert compare((t, 3), (t, 3)) is None and compare([t, 3], (t, 3)) == "expected a tuple, got a list"
    assert compare(torch.tensor(float("nan")), torch.tensor(float("nan"))) is None


def test_tolerance_and_partial_rules():
    t = torch.tensor([1.0, 2.0])
    assert compare(t + 1e-6, t, {"atol": 1e-5}) is None
    assert compare(t + 1e-3, t, {"atol": 1e-5}) == "has the wrong values"
    assert compare(torch.zeros(2, 3), torch.ones(2, 3), {"only": "shape"}) is None
    assert compare(torch.zeros(3), torch.ones(2, 3), {"only": "ndim"}) == "has 1 dimensions"
    assert compare(t.double(), t, {"any_dtype": True}) is None
    assert compare(3, 3.0) is None and compare(True, 1) == "expected a number, got a bool"


def test_bounds_ignore_the_reference_and_say_nothing_of_it():
    assert compare(12, 5, {"at_most": 300}) is None
    assert compare(3000, 5, {"at_most": 300}) == "3000 is too many"
    assert compare("300", 5, {"at_most": 300}) == "expected a number, got a str"


def test_comparisons_never_crash_and_mappings_compare_by_content():
    from collections import OrderedDict, defaultdict
    state = OrderedDict(weight=torch.ones(2), bias=torch.zeros(1))
    assert compare(dict(state), state) is None and compare(defaultdict(int, state), dict(state)) is None
    assert compare({"weight": torch.ones(2)}, state) == "has 1 keys (0 unexpected), among them ['weight']"
    assert compare(torch.ones(2, device="meta"), torch.ones(2)) == "is on device meta, expected cpu"
    assert compare([torch.ones(2, device="meta")], [torch.ones(2)], {"atol": 1e-3}).startswith("item 0 is on device meta")

    class Unorderable:
        def __eq__(self, other):
            raise RuntimeError("no")
    assert compare(Unorderable(), Unorderable()) == "could not be compared (RuntimeError)"


def test_verdicts_quote_no_student_text():
    """Strings, keys and exception class names are the student's text: none is quoted."""
    from grader.judge.preprocessor import quotes_hidden
    from grader.judge.probes import exception_name
    secret = "check('the secret input', f(torch.tensor([3.0, 1.0])))"
    assert compare(secret, "expected text") == "is not the expected str"
    assert secret not in compare({secret: 1, "ok": 2}, {"ok": 2, "other": 1})
    assert compare({secret}, {"x"}) == "is not the expected set"
    assert exception_name("ValueError") == "ValueError" and exception_name("KeyboardInterrupt") == "KeyboardInterrupt"
    assert exception_name(secret) == exception_name("MyError") == "an exception of a class of its own"
    assert exception_name("print") == "an exception of a class of its own"     # a builtin, not an exception
    assert quotes_hidden(f"your code raised {secret}", f"def hidden_checks(check, rng):\n    {secret}\n")
    assert not quotes_hidden("hidden check 1 of 2 (the secret input): the result has the wrong values",
                             f"def hidden_checks(check, rng):\n    {secret}\n")


def _probe_output(payload) -> list:
    return [{"output_type": "display_data", "data": {PROBE_MIME: json.dumps(payload)}, "metadata": {}}]


def _encoded(value) -> str:
    buffer = io.BytesIO()
    torch.save(value, buffer)
    return base64.b64encode(buffer.getvalue()).decode()


class Sneaky(torch.Tensor):
    """A tensor subclass could answer every comparison with yes: the loader refuses it."""


def test_probe_records_load_only_plain_data():
    record = read_probe(_probe_output({"grade_id": "g", "error": None, "checks": [
        {"name": "plain", "rule": {}, "value": _encoded({"t": torch.ones(2), "n": 3})},
        {"name": "subclass", "rule": {}, "value": _encoded(torch.ones(2).as_subclass(Sneaky))},
    ]}), "g")
    assert torch.equal(record.checks[0].value["t"], torch.ones(2)) and record.checks[0].error is None
    assert record.checks[1].value is None and "not plain data" in record.checks[1].error


def test_missing_or_foreign_probe_records_are_errors():
    with pytest.raises(ProbeError):
        read_probe([], "g")
    with pytest.raises(ProbeError):
        read_probe(_probe_output({"grade_id": "other", "checks": [], "error": None}), "g")
    with pytest.raises(ProbeError):
        read_probe([{"output_type": "display_data", "data": {PROBE_MIME: "not json"}}], "g")


def test_seeds_are_stable_and_differ_between_students():
    seed = student_seed("01_tensors", "01_tensors", "ada", "gram_tests")
    assert seed == student_seed("01_tensors", "01_tensors", "ada", "gram_tests")
    assert seed != student_seed("01_tensors", "01_tensors", "bob", "gram_tests")


def test_hidden_sections_are_found_and_stripped():
    source = "x = 1\nassert x\n### BEGIN HIDDEN TESTS\ndef hidden_checks(check, rng):\n    pass\n### END HIDDEN TESTS\n"
    assert hidden_section(source).startswith("def hidden_checks")
    assert without_hidden_section(source) == "x = 1\nassert x\n"


@pytest.mark.parametrize("code, expected", [
    ("get_ipython().events.register('pre_run_cell', print)", "get_ipython"),
    ("import sys\nsys.setprofile(None)", "imports sys"),
    ("import sys\nloaded = sys.modules", "uses sys.modules"),
    ("n = sum(1 for m in model.modules())", None),
    ("torch.equal = lambda *a: True", "attribute of a module"),
    ("import torch as t\nt.equal = lambda *a: True", "attribute of a module"),
    ("torch = object()", "rebinds the module name torch"),
    ("class T(torch.Tensor):\n    pass", "subclasses torch.Tensor"),
    ("import builtins", "imports builtins"),
    ("exec('1')", "calls exec()"),
    ("f = (lambda: 0).__globals__", "uses .__globals__"),
    ("%time x = 1", "IPython magic"),
    # issue 20: threads and processes, torch below its Python layer, running modules, setattr, type(), source
    ("from concurrent.futures import ThreadPoolExecutor", "imports from concurrent.futures"),
    ("import threading", "imports threading"),
    ("import multiprocessing as mp", "imports multiprocessing"),
    ("import os\npid = os.fork()", "uses .fork"),
    ("import os\nos.system('true')", "uses os.system"),
    ("with torch._C.DisableTorchFunction():\n    pass", "uses ._C"),
    ("from torch.overrides import TorchFunctionMode", "imports TorchFunctionMode from torch.overrides"),
    ("from torch.utils._python_dispatch import TorchDispatchMode", "imports from torch.utils._python_dispatch"),
    ("import runpy\nrunpy.run_module('torchcourse.training', run_name='mine')", "imports runpy"),
    ("import importlib", "imports importlib"),
    ("m = __import__('torchcourse')", "calls __import__()"),
    ("setattr(torch, 'equal', print)", "calls setattr()"),
    ("put = setattr\nput(torch, 'equal', print)", "uses setattr without calling it"),
    ("torch.__setattr__('equal', print)", "uses .__setattr__"),
    ("object.__setattr__(torch, 'equal', print)", "uses .__setattr__"),
    ("Mode = type('Mode', (object,), {})", "builds a class with type()"),
    ("import linecache", "imports linecache"),
    ("import inspect", "imports inspect"),
    ("import traceback", "imports traceback"),
    ("name = (lambda: 0).__code__.co_filename", "uses .co_filename"),
])
def test_scan_flags_reaches_into_the_machinery(code, expected):
    reasons = scan(code, module_names([code]))
    if expected is None:    # honest code that looks like a reach
        assert reasons == []
    else:
        assert any(expected in r for r in reasons), reasons


def _student_written_code(chapter):
    nb = solution_copy(chapter, REPO_ROOT)
    answers = load_answers(chapter)
    yield from (("reference", c.source) for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))
    for kind in ("alternative", "wrong"):
        yield from ((kind, src) for src in answers[kind].values())


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_scan_flags_no_reference_solution_and_no_honest_answer(chapter):
    nb = solution_copy(chapter, REPO_ROOT)
    modules = module_names([c.source for c in nb.cells if c.cell_type == "code"])
    flagged = {(kind, src[:60]): scan(src, modules) for kind, src in _student_written_code(chapter)}
    assert not {k: v for k, v in flagged.items() if v}


def test_scan_flags_go_to_the_next_test_cell_past_a_code_answer_graded_by_hand(tmp_path):
    """A code answer graded by hand is scanned like any student code, and its reasons flag the next
    test cell, which the judge reports; it never takes the flags of the cells before it."""
    import nbformat
    from grader.judge.preprocessor import Judge

    def cell(source, grade_id=None, grade=False, solution=False):
        c = nbformat.v4.new_code_cell(source)
        if grade_id:
            c.metadata.nbgrader = {"grade_id": grade_id, "grade": grade, "solution": solution, "locked": False}
        return c
    released = [cell("x = 1"), cell("def f():\n    raise NotImplementedError", "f", solution=True),
                cell("assert f() == 1", "f_tests", grade=True),
                cell("def g():\n    raise NotImplementedError", "g_by_hand", grade=True, solution=True),
                cell("assert True", "h_tests", grade=True)]
    solution = tmp_path / "solution.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=released), solution)
    handed_in = nbformat.v4.new_notebook(cells=[c.copy() for c in released])
    handed_in.cells[1].source = "import inspect\ndef f():\n    return 1"
    handed_in.cells[3].source = "import importlib\ndef g():\n    return 2"
    flags = Judge._scan(handed_in, solution)
    assert set(flags) == {"f_tests", "h_tests"}, flags
    assert "inspect" in flags["f_tests"] and "importlib" not in flags["f_tests"]
    assert "importlib" in flags["h_tests"] and "inspect" not in flags["h_tests"]
    handed_in.cells[3].source = released[3].source
    assert set(Judge._scan(handed_in, solution)) == {"f_tests"}


def test_counters_tell_a_loop_from_whole_tensor_code(monkeypatch):
    """check.count_ops and check.count_calls, as the probe gives them to hidden checks: the same
    numbers on any machine, and a loop over rows shows in both, even one with no Python calls."""
    import IPython.display
    from grader.judge.probe_kernel import _course_probe
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: None)
    seen = {}

    def by_rows(a):
        out = torch.empty(len(a), len(a))
        for i in range(len(a)):     # indexing and operators only: no Python call per row
            out[i] = a[i] @ a.T
        return out

    def hidden_checks(check, rng):
        x = torch.randn(40, 6, generator=rng)
        for name, f in {"whole": lambda a: a @ a.T, "rows": by_rows}.items():
            result, seen[f"{name} ops"] = check.count_ops(f, x)
            assert torch.allclose(result, x @ x.T, atol=1e-5)
            seen[f"{name} calls"] = check.count_calls(f, x)[1]

    for _ in range(2):
        before = dict(seen)
        _course_probe(hidden_checks, 7, "gram_tests")
        assert not before or seen == before, "the counts changed between runs"
    assert seen["whole ops"] <= 2 and seen["rows ops"] >= 80, seen
    assert seen["rows calls"] > seen["whole calls"], seen


def test_counters_see_work_the_student_could_hide(monkeypatch):
    """Work moved where a counter inside torch's Python layer or the calling thread would miss it:
    torch-function handling off, a loop over plain floats, a thread started for the call, and a
    thread that was already running before the probe. Each still counts as a loop."""
    import struct
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import IPython.display
    from grader.judge.probe_kernel import _course_probe
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: None)
    requests, answers = [], []
    wake = threading.Condition()

    def standing_worker():          # started before the probe, like a pool made in an earlier cell
        with wake:
            while True:
                wake.wait_for(lambda: requests)
                job = requests.pop()
                if job is None:
                    return
                answers.append(torch.stack([row @ job.T for row in job]))
                wake.notify_all()

    def by_rows(a):
        return torch.stack([row @ a.T for row in a])

    def torch_function_off(a):
        with torch._C.DisableTorchFunction():
            return by_rows(a)

    def plain_floats(a):
        rows = a.tolist()
        return torch.tensor([[sum(x * y for x, y in zip(r, s)) for s in rows] for r in rows])

    def no_calls(a):                # a loop of arithmetic only: no call per turn, a line per turn
        rows = a.tolist()
        return torch.tensor([[r[0] * s[0] + r[1] * s[1] + r[2] * s[2] + r[3] * s[3] + r[4] * s[4] + r[5] * s[5]
                              for s in rows] for r in rows])

    def new_thread(a):
        with ThreadPoolExecutor(2) as pool:
            return torch.stack(list(pool.map(lambda row: struct.pack("6f", *row.tolist()) and row @ a.T, a)))

    def old_thread(a):
        with wake:
            requests.append(a)
            wake.notify_all()
            wake.wait_for(lambda: answers)
            return answers.pop()

    worker = threading.Thread(target=standing_worker, daemon=True)
    worker.start()
    seen = {}

    def hidden_checks(check, rng):
        x = torch.randn(40, 6, generator=rng)
        for f in (lambda a: a @ a.T, by_rows, torch_function_off, plain_floats, no_calls, new_thread, old_thread):
            result, calls, ops = check.count_work(f, x)
            # right values, or stopped past MAX_STEPS lines (then counted as infinite)
            assert calls == float("inf") if result is None else torch.allclose(result, x @ x.T, atol=1e-4)
            seen[f.__name__] = calls, ops

    try:
        _course_probe(hidden_checks, 7, "gram_tests")
    finally:
        with wake:
            requests.append(None)
            wake.notify_all()
    whole_calls, whole_ops = seen["<lambda>"]
    assert whole_calls <= 10 and whole_ops <= 2, seen
    for name in ("by_rows", "torch_function_off", "new_thread", "old_thread"):
        assert seen[name][1] >= 40, (name, seen)        # one matmul per row, whatever the thread
    for name in ("plain_floats", "no_calls", "new_thread"):
        assert seen[name][0] >= 300, (name, seen)       # a step per number or per row, in any thread


# In a process of its own, as a student's kernel is: here, the test process's own threads (what earlier
# tests left running) would be counted too, and once were (91 calls in one measurement of five).
EARLIER_CELLS_THREADS = """
import json, threading, time
import IPython.display
import torch
from tqdm import tqdm
from grader.judge.probe_kernel import _course_probe
IPython.display.display = lambda *a, **k: None
tqdm.monitor_interval = 0.001
bar = tqdm(total=1, mininterval=0, miniters=2, disable=False)   # starts the monitor
monitor = tqdm.monitor
assert monitor is not None and monitor.is_alive()
from concurrent.futures import ThreadPoolExecutor
idle_pool, started = ThreadPoolExecutor(4), threading.Barrier(4)
for done in [idle_pool.submit(started.wait) for _ in range(4)]:   # all four threads made, then idle
    done.result()
seen = []

def hidden_checks(check, rng):
    x = torch.randn(40, 6, generator=rng)
    for _ in range(5):
        seen.append(check.count_work(lambda a: (time.sleep(0.02), a @ a.T)[1], x)[1:])

try:
    _course_probe(hidden_checks, 7, "gram_tests")
finally:
    idle_pool.shutdown()
    bar.close()
    if tqdm.monitor is not None:
        tqdm.monitor.exit()
print(json.dumps({"seen": seen, "monitor_alive": monitor.is_alive()}))
"""


def test_threads_an_earlier_cell_left_add_nothing_to_the_count():
    """A notebook that showed a tqdm bar leaves tqdm's monitor thread running; it wakes on its own
    schedule (10 s; here every millisecond) and runs Python: counted, whole-tensor code would score as
    a loop whenever a wake-up fell inside a measurement, a grade that depends on timing. An idle thread
    pool's worker (a DataLoader's, an executor's) is reported by the profiler with the frames it has
    open: counted, every measurement of that notebook grows by its depth (CI saw 19 calls where 10 is
    the bound, after a test had left Dask's offload thread in the process)."""
    import subprocess
    import sys
    run = subprocess.run([sys.executable, "-c", EARLIER_CELLS_THREADS], cwd=REPO_ROOT, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert all(calls <= 10 and ops <= 2 for calls, ops in result["seen"]), result["seen"]
    assert not result["monitor_alive"], "tqdm's monitor stopped, not the function's work"


def test_a_thread_past_the_limit_never_leaves_its_caller_waiting(monkeypatch):
    """A loop in a thread the function started goes past MAX_STEPS while the function waits for
    it. Stopping that thread would leave the wait unanswered (a pool's worker dies outside the
    job, and the probe, the cell and the test hang: CI did, once); it runs on and counts as
    infinite."""
    import threading
    import time
    import IPython.display
    from grader.judge.probe_kernel import MAX_STEPS, _course_probe
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: None)
    seen, finished = {}, []

    def handed_off(a):
        done, out = threading.Event(), []

        def work():
            time.sleep(0.5)            # the caller is waiting (in C, running no lines) by then
            total = 0
            for i in range(3 * MAX_STEPS):
                total += i
            out.append(a @ a.T)
            finished.append(total)
            done.set()
        threading.Thread(target=work, daemon=True).start()
        if not done.wait(timeout=10):
            raise TimeoutError("the thread was stopped before it answered")
        return out[0]

    def hidden_checks(check, rng):
        seen["handed_off"] = check.count_work(handed_off, torch.randn(5, 3, generator=rng))

    _course_probe(hidden_checks, 3, "handoff_tests")
    assert finished, "the thread was stopped, and its caller waited in vain"
    assert seen["handed_off"] == (None, float("inf"), float("inf"))


def test_a_long_loop_is_stopped_and_counted_as_too_many(monkeypatch):
    """Past MAX_STEPS lines the counter stops the function: a loop over thousands of pairs fails at
    once, in the same way on any machine, even if it swallows the stop; whole-tensor code is untouched."""
    import IPython.display
    from grader.judge.probe_kernel import MAX_STEPS, _course_probe
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: None)
    seen = {}

    def pairs(a):
        out = torch.zeros(len(a), len(a))
        for i in range(len(a)):
            for j in range(len(a)):
                out[i, j] = (a[i] * a[j]).sum()
        return out

    def stubborn(a):               # swallows the stop, and answers anyway
        try:
            return pairs(a)
        except BaseException:
            return a @ a.T

    def hidden_checks(check, rng):
        x = torch.randn(60, 4, generator=rng)    # 3,600 pairs, two lines each
        for f in (lambda a: a @ a.T, pairs, stubborn):
            seen[f.__name__] = check.count_work(f, x)

    _course_probe(hidden_checks, 3, "pairs_tests")
    result, calls, ops = seen["<lambda>"]
    assert result.shape == (60, 60) and calls < 20 and ops <= 2
    assert seen["pairs"] == (None, float("inf"), float("inf"))
    assert seen["stubborn"][1:] == (float("inf"), float("inf"))
    assert compare(float("inf"), 0, {"at_most": 300}) == "is too many to count (the counter stopped the function)"
    # every bound a hidden check puts on a count can be told apart from a stopped count
    bounds = [int(n.replace("_", "")) for chapter in ALL_CHAPTERS
              for n in re.findall(r"at_most=([\d_]+)", source_notebook(chapter).read_text())]
    assert bounds and max(bounds) < MAX_STEPS
