"""Probes, the trusted side: what is sent to a kernel after the notebook has run, and what comes back.

Each test cell's hidden section defines `hidden_checks(check, rng)`. The grader turns it into a
probe cell (`probe_source`) that runs it with a seed of the student's own (`student_seed`): the
same probe runs in the student's kernel and in the reference kernel (grader/judge/reference.py), and
`read_probe` turns a probe cell's outputs back into data, refusing anything that could run code.
"""
import base64
import builtins
import hashlib
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import torch

from grader.judge.probe_kernel import PROBE_MIME

HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[^\n]*\n(.*?)^[ \t]*### END HIDDEN TESTS[^\n]*(\n|$)",
                    re.S | re.M)
KERNEL_SIDE = Path(__file__).with_name("probe_kernel.py").read_text()
MAX_PROBE_BYTES = 32 * 1024**2   # what one probe may send back; more is refused


def hidden_section(source: str) -> str | None:
    """The code between a test cell's hidden-test markers (None when it has none)."""
    match = HIDDEN.search(source)
    return match.group(1) if match else None


def without_hidden_section(source: str) -> str:
    return HIDDEN.sub("", source).rstrip() + "\n" if HIDDEN.search(source) else source


PROBE = re.compile(r"^def hidden_checks\s*\(", re.M)


def probe_section(source: str) -> str | None:
    """The hidden section of a JUDGED test cell: one that defines `hidden_checks(check, rng)`.
    A test cell without one is an ordinary nbgrader cell (plain asserts, hidden or not), graded
    by nbgrader's own rule in the student's kernel (docs/GRADING.md, "Ordinary nbgrader cells")."""
    code = hidden_section(source)
    return code if code is not None and PROBE.search(code) else None


def without_probe_section(source: str) -> str:
    """A test cell as the student's kernel runs it: a judged cell without its hidden section; an
    ordinary cell whole, hidden asserts included, as stock nbgrader runs it."""
    return without_hidden_section(source) if probe_section(source) is not None else source


def gradebook_hidden_sections(db_url: str, notebook: str, assignment: str) -> dict:
    """{judged test cell's grade id: its hidden section} for one notebook, from nbgrader's gradebook
    (which keeps test cells whole, hidden sections included)."""
    from nbgrader.api import Gradebook
    with Gradebook(db_url) as gb:
        sections = {}
        for grade_cell in gb.find_notebook(notebook, assignment).grade_cells:
            if grade_cell.cell_type == "code":
                code = probe_section(gb.find_source_cell(grade_cell.name, notebook, assignment).source)
                if code is not None:
                    sections[grade_cell.name] = code
        return sections


def student_seed(assignment: str, notebook: str, student: str, grade_id: str) -> int:
    """The seed of one student's hidden inputs for one exercise: stable across regrading,
    different between students, so an answer tuned to one set of inputs meets another."""
    digest = hashlib.sha256(f"{assignment}/{notebook}/{student}/{grade_id}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def probe_source(hidden: str, seed: int, grade_id: str) -> str:
    """The code of one probe cell."""
    return f"{hidden}\n{KERNEL_SIDE}\n_course_probe(hidden_checks, {int(seed)}, {grade_id!r})\n"


@dataclass
class Check:
    name: str
    rule: dict = field(default_factory=dict)
    value: object = None
    error: str | None = None      # why there is no value


@dataclass
class ProbeRecord:
    grade_id: str
    checks: list = field(default_factory=list)
    error: str | None = None      # the exception that stopped hidden_checks, by type name


def exception_name(name) -> str:
    """How a verdict may name an exception the student's kernel reported: by its name when that is a
    builtin exception's, else generically. A class name is student text: code that reads the probe
    while it runs could name a class after a hidden line (docs/GRADING.md, the threat model)."""
    found = getattr(builtins, str(name), None) if str(name).isidentifier() else None
    if isinstance(found, type) and issubclass(found, BaseException):
        return str(name)
    return "an exception of a class of its own"


class ProbeError(Exception):
    """What came back is not a probe record."""


def _payload(outputs: list) -> str:
    found = [o["data"][PROBE_MIME] for o in outputs
             if o.get("output_type") == "display_data" and PROBE_MIME in o.get("data", {})]
    if not found:
        raise ProbeError("the probe sent nothing back (the kernel stopped, timed out, or was tampered with)")
    payload = found[-1]
    payload = "".join(payload) if isinstance(payload, list) else payload
    if not isinstance(payload, str) or len(payload) > MAX_PROBE_BYTES:
        raise ProbeError("the probe sent back something too large or not text")
    return payload


def load_value(encoded: str):
    """One recorded value, loaded without running code: weights_only refuses every class but
    tensors, numbers, strings, containers, dtypes and sizes (a Tensor subclass included)."""
    return torch.load(io.BytesIO(base64.b64decode(encoded, validate=True)), weights_only=True,
                      map_location="cpu")


def read_probe(outputs: list, grade_id: str) -> ProbeRecord:
    """The probe record in a probe cell's outputs. Raises ProbeError when there is none."""
    try:
        raw = json.loads(_payload(outputs))
        if not isinstance(raw, dict) or raw.get("grade_id") != grade_id or not isinstance(raw.get("checks"), list):
            raise ProbeError("the probe record is not for this exercise")
        record = ProbeRecord(grade_id, error=exception_name(raw["error"]) if raw.get("error") else None)
        for entry in raw["checks"]:
            check = Check(str(entry["name"]), dict(entry.get("rule") or {}))
            if "value" in entry:
                try:
                    check.value = load_value(entry["value"])
                except Exception as err:
                    check.error = f"the value is not plain data the grader accepts ({type(err).__name__})"
            else:   # the exception that torch.save raised, named only when it is a builtin one
                check.error = f"the value could not be saved as plain data ({exception_name(entry.get('error'))})"
            record.checks.append(check)
        return record
    except ProbeError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise ProbeError(f"the probe record is malformed ({type(err).__name__})") from None
