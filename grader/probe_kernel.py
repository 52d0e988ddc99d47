"""The probe's kernel side. Its SOURCE is sent to a kernel (the student's or the reference's) after
the notebook has run; the grader itself never imports it to run student code.

A probe cell is: the hidden section of one test cell (`def hidden_checks(check, rng): ...`), this
file's source, then `_course_probe(hidden_checks, SEED, GRADE_ID)`. `hidden_checks` calls the
notebook's functions on inputs drawn from `rng` and hands each result to `check(name, value,
**rule)`. Every value is serialized on its own with torch.save; the record is published as one
display message of type PROBE_MIME and read back by the grader with torch.load(weights_only=True),
which refuses anything but plain data (tensors, numbers, strings, containers). Nothing here
decides a grade: in the student's kernel all of it may be tampered with, and the judge
(grader/preprocessors/judge.py) treats what arrives as untrusted data.
"""
PROBE_MIME = "application/x.course-probe"   # a text payload: JSON inside


def _course_probe(hidden_checks, seed, grade_id):
    import base64
    import io
    import json
    import random
    import sys

    import torch
    from IPython.display import display

    checks = []

    def check(name, value, **rule):
        """Record `value` for the judge; `rule` says how it is compared (used from the reference)."""
        entry = {"name": str(name), "rule": rule}
        try:
            buffer = io.BytesIO()
            torch.save(value, buffer)
            entry["value"] = base64.b64encode(buffer.getvalue()).decode("ascii")
        except Exception as err:  # a module, a generator, a lambda...: not plain data
            entry["error"] = f"the value could not be saved as plain data ({type(err).__name__})"
        checks.append(entry)

    def count_calls(function, *args, **kwargs):
        """(result, number of Python and C function calls made while computing it): a measure of
        how much work runs in Python, which unlike seconds does not depend on machine load."""
        calls = 0

        def profiler(frame, event, arg):
            nonlocal calls
            if event in ("call", "c_call"):
                calls += 1
        sys.setprofile(profiler)
        try:
            result = function(*args, **kwargs)
        finally:
            sys.setprofile(None)
        return result, calls

    def count_ops(function, *args, **kwargs):
        """(result, number of torch operations it ran, indexing and operators included): a loop over
        rows runs some per row where whole-tensor code runs a handful, and unlike count_calls
        it also sees a loop that only indexes and uses operators (no Python calls to count)."""
        from torch.overrides import TorchFunctionMode

        class Counter(TorchFunctionMode):
            ops = 0

            def __torch_function__(self, func, types, args=(), kwargs=None):
                self.ops += 1
                return func(*args, **(kwargs or {}))

        with Counter() as counter:
            result = function(*args, **kwargs)
        return result, counter.ops

    def calls_into(modules, function, *args, **kwargs):
        """(result, whether a Python function of `modules` (a name or a tuple of names) ran while
        computing it): tells an answer written in the notebook from one that calls the course's
        own copy (torchcourse), or one that builds layers where it should count."""
        modules = (modules,) if isinstance(modules, str) else tuple(modules)
        ran = []

        def profiler(frame, event, arg):
            if event == "call" and frame.f_globals.get("__name__") in modules:
                ran.append(frame.f_code.co_name)
        previous = sys.getprofile()
        sys.setprofile(profiler)
        try:
            result = function(*args, **kwargs)
        finally:
            sys.setprofile(previous)
        return result, bool(ran)

    check.count_calls = count_calls
    check.count_ops = count_ops
    check.calls_into = calls_into
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
