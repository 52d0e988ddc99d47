"""How the judge compares a student's recorded value with the reference's, rule by rule.

The rule comes from the REFERENCE kernel's record (the student's copy is ignored), as keyword
arguments of `check(name, value, **rule)` in a test cell's `hidden_checks`:

    check(name, value)                       same type, structure, dtype, shape and exact values
    check(name, value, atol=.., rtol=..)     the same, values within tolerance (torch.isclose)
    check(name, value, only="shape")         compare only shapes ("ndim", "dtype", "type" alike)
    check(name, value, any_dtype=True)       values compared in float64, dtypes may differ
    check(name, value, at_most=N)            a number <= N (at_least=N: >= N); reference ignored

`compare` returns None when the value passes, else a short reason that describes the STUDENT's
value only, never the expected one (feedback must not leak hidden expectations). It never raises:
a record it cannot compare (a tensor on another device, an odd container) is a failed check with
a reason, so one student's strange value cannot stop the grading of their other exercises.
Mappings (dict, OrderedDict, defaultdict: a state dict can be any of them) compare by content.
"""
import math
from collections.abc import Mapping

import torch

NUMBER = (int, float)


def _is_number(x) -> bool:
    return isinstance(x, NUMBER) and not isinstance(x, bool)


def _type_name(x) -> str:
    return "a tensor" if isinstance(x, torch.Tensor) else f"a {type(x).__name__}"


def _bound(student, rule) -> str | None:
    if not _is_number(student) or (isinstance(student, float) and math.isnan(student)):
        return f"expected a number, got {_type_name(student)}"
    if "at_most" in rule and student == math.inf:
        return "is too many to count (the counter stopped the function)"
    if "at_most" in rule and student > rule["at_most"]:
        return f"{student} is too many"
    if "at_least" in rule and student < rule["at_least"]:
        return f"{student} is too few"
    return None


def _tensors(student: torch.Tensor, reference: torch.Tensor, rule) -> str | None:
    only = rule.get("only")
    if only == "type":
        return None
    if only == "ndim":
        return None if student.ndim == reference.ndim else f"has {student.ndim} dimensions"
    if only == "dtype":
        return None if student.dtype == reference.dtype else f"has dtype {student.dtype}"
    if student.device != reference.device:
        return f"is on device {student.device}, expected {reference.device}"
    if student.shape != reference.shape:
        return f"has shape {tuple(student.shape)}"
    if only == "shape":
        return None
    if rule.get("any_dtype"):
        if student.dtype.is_complex != reference.dtype.is_complex:
            return f"has dtype {student.dtype}"
        student, reference = student.detach().double(), reference.detach().double()
    elif student.dtype != reference.dtype:
        return f"has dtype {student.dtype}"
    student, reference = student.detach(), reference.detach()
    if "atol" in rule or "rtol" in rule:
        if not (student.is_floating_point() or student.is_complex()):
            student, reference = student.double(), reference.double()
        ok = torch.isclose(student, reference, rtol=float(rule.get("rtol", 1e-5)),
                           atol=float(rule.get("atol", 1e-8)), equal_nan=True).all()
    elif student.is_floating_point() or student.is_complex():
        ok = torch.isclose(student, reference, rtol=0, atol=0, equal_nan=True).all()
    else:
        ok = torch.equal(student, reference)
    return None if bool(ok) else "has the wrong values"


def _numbers(student, reference, rule) -> str | None:
    if rule.get("only") == "type":
        return None
    if "atol" in rule or "rtol" in rule:
        ok = math.isclose(student, reference, rel_tol=float(rule.get("rtol", 1e-9)),
                          abs_tol=float(rule.get("atol", 0.0)))
    else:
        ok = student == reference
    return None if ok or (math.isnan(student) and math.isnan(reference)) else f"is {student!r}, the wrong value"


def compare(student, reference, rule: dict | None = None) -> str | None:
    """None if `student` passes against `reference` under `rule`, else why not."""
    try:
        return _compare(student, reference, rule or {})
    except Exception as err:   # a value no rule foresaw: the check fails, the grading goes on
        return f"could not be compared ({type(err).__name__})"


def _compare(student, reference, rule: dict) -> str | None:
    if "at_most" in rule or "at_least" in rule:
        return _bound(student, rule)
    if isinstance(reference, torch.Tensor):
        # the loader only yields plain tensors (and Parameters): no subclass can get here
        if not isinstance(student, torch.Tensor):
            return f"expected a tensor, got {_type_name(student)}"
        return _tensors(student, reference, rule)
    if _is_number(reference):
        if not _is_number(student):
            return f"expected a number, got {_type_name(student)}"
        return _numbers(student, reference, rule)
    if isinstance(reference, Mapping) and isinstance(student, Mapping):
        if set(student) != set(reference):
            # only the expected keys it has are named: a key is student text, which may hold anything
            known = sorted(map(str, set(student) & set(reference)))
            return f"has {len(student)} keys ({len(set(student) - set(reference))} unexpected), among them {known}"
        for key in reference:
            why = _compare(student[key], reference[key], rule)
            if why:
                return f"[{key!r}] {why}"
        return None
    if type(student) is not type(reference):
        return f"expected {_type_name(reference)}, got {_type_name(student)}"
    if isinstance(reference, (tuple, list)):
        if len(student) != len(reference):
            return f"has {len(student)} items"
        for i, (s, r) in enumerate(zip(student, reference)):
            why = _compare(s, r, rule)
            if why:
                return f"item {i} {why}"
        return None
    if rule.get("only") == "type":
        return None
    if student == reference:
        return None
    # only values that cannot carry text are quoted: a string (or a set of them) is student text,
    # which could hold anything the student's code read while the probe ran
    if isinstance(student, (bool, type(None), torch.dtype, torch.device, torch.Size)):
        return f"is {student!r}, the wrong value"
    return f"is not the expected {type(student).__name__}"


def failed_checks(student, reference) -> list:
    """Why each of the reference record's checks fails for the student's record (probe records,
    grader/judge/probes.py), in the reference's order: a check is matched by its name, and its rule
    is the reference's. An empty list: every check passes."""
    return [why for _, why in check_failures(student, reference)]


def check_failures(student, reference) -> list:
    """`failed_checks` with each reason's check: [(the check's name, why it fails)]."""
    done = {c.name: c for c in student.checks}
    failed = []
    for number, expected in enumerate(reference.checks, 1):
        label = f"hidden check {number} of {len(reference.checks)} ({expected.name})"
        mine = done.get(expected.name)
        if mine is None:
            stopped = f"your code raised {student.error}" if student.error else "it did not run"
            failed.append((expected.name, f"{label}: {stopped}"))
        elif mine.error:
            failed.append((expected.name, f"{label}: {mine.error}"))
        else:
            why = compare(mine.value, expected.value, expected.rule)
            if why:
                failed.append((expected.name, f"{label}: the result {why}"))
    return failed
