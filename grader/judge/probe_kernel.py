"""The probe's kernel side. Its SOURCE is sent to a kernel (the student's or the reference's) after
the notebook has run; the grader itself never imports it to run student code.

A probe cell is: the hidden section of one test cell (`def hidden_checks(check, rng): ...`), this
file's source, then `_course_probe(hidden_checks, SEED, GRADE_ID)`. `hidden_checks` calls the
notebook's functions on inputs drawn from `rng` and hands each result to `check(name, value,
**rule)`. Every value is serialized on its own with torch.save; the record is published as one
display message of type PROBE_MIME and read back by the grader with torch.load(weights_only=True),
which refuses anything but plain data (tensors, numbers, strings, containers). Nothing here
decides a grade: in the student's kernel all of it may be tampered with, and the judge
(grader/judge/preprocessor.py) treats what arrives as untrusted data.
"""
PROBE_MIME = "application/x.course-probe"   # a text payload: JSON inside
# A function that runs more lines than this is stopped, and both its counts are reported as infinite:
# a Python loop is then caught in a fraction of a second instead of running for the cell's timeout
# under the counters, and its verdict never depends on how fast the machine is. Every `at_most` a
# hidden check puts on a count must be below it (tests/test_judge.py checks the solutions).
MAX_STEPS = 5000


def _course_probe(hidden_checks, seed, grade_id):
    import base64
    import io
    import json
    import random
    import sys

    import torch
    from IPython.display import display

    checks = []
    max_steps = MAX_STEPS    # bound now: the function under count could rebind the global

    def check(name, value, **rule):
        """Record `value` for the judge; `rule` says how it is compared (used from the reference)."""
        entry = {"name": str(name), "rule": rule}
        try:
            buffer = io.BytesIO()
            torch.save(value, buffer)
            entry["value"] = base64.b64encode(buffer.getvalue()).decode("ascii")
        except Exception as err:  # a module, a generator, a lambda...: not plain data
            entry["error"] = type(err).__name__
        checks.append(entry)

    def _stop_tqdm_monitor():
        """A notebook that showed a tqdm bar left tqdm's monitor thread running: it wakes every 10 s
        and runs Python, which the counters would see as the function's work whenever a wake-up fell
        inside a measurement (a count, and a grade, that depends on timing). It is tqdm's, not the
        student's: stopped, and no new one started."""
        tqdm_std = sys.modules.get("tqdm.std")
        tqdm_class = getattr(tqdm_std, "tqdm", None)
        if tqdm_class is None:
            return
        tqdm_class.monitor_interval = 0
        monitor = getattr(tqdm_class, "monitor", None)
        if monitor is not None:
            try:
                monitor.exit()
            finally:
                tqdm_class.monitor = None

    class _TooManySteps(BaseException):     # not an Exception: `except Exception` in the function lets it by
        pass

    def measure(function, *args, **kwargs):
        """(result, Python steps, torch operations) while computing it, in every thread; past
        MAX_STEPS lines the function is stopped and returns (None, inf, inf).

        Steps are Python and C function calls plus lines run, so that a loop counts every turn,
        even one that calls nothing. torch's profiler sees each torch operation at the dispatcher
        (under DisableTorchFunction too) and each call in the threads alive when it starts; a
        trace function counts lines here and in threads the function starts. Counts, unlike
        seconds, do not depend on machine load. docs/GRADING.md says what they cannot see."""
        import re
        import threading
        from torch.profiler import ProfilerActivity, profile
        from torch._C._profiler import _ExperimentalConfig

        _stop_tqdm_monitor()
        steps = []     # lines run (a loop's every turn, one line or not), and calls in new threads
        # the kernel's own code (what a print() runs, its output and history threads) takes a
        # number of steps that depends on timing: it is not the function's work, and not counted
        machinery = re.compile(r"(^|/)(ipykernel|IPython|jupyter_client|jupyter_core|zmq|tornado|traitlets|comm)/")

        def lines(frame, event, arg):
            if event == "call":
                caller = frame
                while caller is not None and caller is not outside:   # up to the function's caller
                    if machinery.search(caller.f_code.co_filename):
                        return None
                    caller = caller.f_back
            elif event == "line":
                steps.append(1)
                if len(steps) > max_steps:
                    if threading.get_ident() == measuring_thread:
                        raise _TooManySteps()
                    # Another thread is left to run, untraced: stopped anywhere in its library code
                    # (a pool's worker loop), it could leave the caller waiting for it forever.
                    # Its count is infinite all the same.
                    sys.settrace(None)
                    return None
            return lines

        def calls_of_new_thread(frame, event, arg):
            if event in ("call", "c_call"):
                steps.append(1)
        outside = sys._getframe()
        measuring_thread = threading.get_ident()
        previous = sys.gettrace()
        threading.setprofile(calls_of_new_thread)
        threading.settrace(lines)
        try:
            with profile(activities=[ProfilerActivity.CPU], with_stack=True,
                         experimental_config=_ExperimentalConfig(profile_all_threads=True)) as prof:
                sys.settrace(lines)
                try:
                    result = function(*args, **kwargs)
                except _TooManySteps:
                    result = None
                finally:
                    sys.settrace(previous)
        finally:
            threading.setprofile(None)
            threading.settrace(None)

        events = prof.events()
        # not the function's work: the profiler's own start and stop, and the frames that were
        # already running when it started (this one, hidden_checks, ... the cell)
        mine = set()
        for event in events:
            if "profiler.py(" in event.name:
                while event is not None:
                    mine.add(id(event))
                    event = event.cpu_parent

        def own(event):
            while event is not None:
                if "profiler.py(" in event.name:
                    return True
                event = event.cpu_parent
            return False

        def nested_op(event):              # an aten op that another aten op ran
            parent = event.cpu_parent
            while parent is not None:
                if parent.name.startswith("aten::"):
                    return True
                parent = parent.cpu_parent
            return False
        # the kernel's own threads (its output, history and control loops) wake up on their own
        # schedule: their calls are not the function's, and counting them would make the count
        # depend on timing. A thread is the kernel's when it runs the kernel's libraries' code.
        here = {e.thread for e in events if id(e) in mine}
        kernels_own = {e.thread for e in events if e.is_python_function and machinery.search(e.name)} - here
        # Another thread's frames that were open when the profiler started (an idle pool's worker loop,
        # a thread waiting for a job) are reported too, as calls: the same count whatever the function
        # does, and a different one for each notebook that left a thread behind. Only calls that begin
        # after the profiler's start are the function's.
        entered = max((e.time_range.end for e in events if id(e) in mine and e.name.endswith(": __enter__")
                       and "profiler.py(" in e.name), default=float("-inf"))

        def already_open(event):
            return event.thread not in here and event.time_range.start < entered

        def kernel_work(event):            # what the kernel does for a print(): its own timing
            while event is not None and id(event) not in mine:    # up to the function's caller
                if machinery.search(event.name):
                    return True
                event = event.cpu_parent
            return False
        calls = sum(1 for e in events if e.is_python_function and id(e) not in mine and not own(e)
                    and e.thread not in kernels_own and not kernel_work(e) and not already_open(e)) + len(steps)
        ops = sum(1 for e in events if e.name.startswith("aten::") and not nested_op(e))
        if len(steps) > max_steps:       # stopped (even if the function swallowed the stop)
            return None, float("inf"), float("inf")
        return result, calls, ops

    def count_calls(function, *args, **kwargs):
        """(result, Python steps: calls and lines run while computing it): how much work runs in
        Python, a loop over plain numbers included."""
        result, calls, _ = measure(function, *args, **kwargs)
        return result, calls

    def count_ops(function, *args, **kwargs):
        """(result, torch operations it ran, indexing and operators included): a loop over rows runs
        some per row where whole-tensor code runs a handful."""
        result, _, ops = measure(function, *args, **kwargs)
        return result, ops

    check.count_work = measure
    check.count_calls = count_calls
    check.count_ops = count_ops
    # Functions that draw from the global generators draw the same numbers in both kernels.
    torch.manual_seed(seed)
    random.seed(seed)
    try:
        import numpy
        numpy.random.seed(seed % 2**32)
    except ImportError:
        pass
    error = None
    try:
        hidden_checks(check, torch.Generator().manual_seed(seed))
    except BaseException as err:  # an exception in the student's code, or a timeout's interrupt
        error = type(err).__name__
    display({PROBE_MIME: json.dumps({"grade_id": grade_id, "checks": checks, "error": error})}, raw=True)
