"""The reference side of the judge: the solution notebook and the same probes, in a trusted kernel.

A kernel that never saw student code runs the assignment's solution notebook from the instructor's
source folder, then every probe for every student asked about (their own seeds), and returns
{student: {grade_id: ProbeRecord}}. One run serves a whole class: `make autograde` runs it once per
notebook as a task of its own (grader/class_grading/batch.py) and hands its outputs, as JSON, to
every batch (the Judge's `reference_dir`); plain nbgrader computes it at the first notebook it
grades, for every student handed in (submitted/*/<assignment>/), and reuses it from memory. A
reference probe that fails is an instructor's bug and stops grading loudly (RuntimeError), rather
than costing students points.
"""
import asyncio
import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from grader.wall import sandbox
from grader.judge.compare import compare
from grader.pipeline import GRADING_KERNEL_ARGS, GRADING_THREADS, SKIP_WHEN_GRADING
from grader.judge.probes import ProbeError, probe_source, read_probe, student_seed

_CACHE = {}   # (notebook path, its sha256, hidden sections) -> {student: {grade_id: record}}


def fingerprint(solution: Path, hidden: dict) -> str:
    """What a reference run depends on: the solution notebook's bytes and the hidden sections."""
    digest = hashlib.sha256(Path(solution).read_bytes())
    digest.update(json.dumps(sorted(hidden.items())).encode())
    return digest.hexdigest()


def _key(solution: Path, hidden: dict) -> tuple:
    return (str(solution), fingerprint(solution, hidden))


def reference_records(solution: Path, assignment: str, notebook: str, hidden: dict,
                      students: list, timeout: int = 120) -> dict:
    """{student: {grade_id: ProbeRecord}} for `students`, computed once per process and student.

    `hidden` maps each test cell's grade id to its hidden section (from the gradebook)."""
    solution = Path(solution)
    if not solution.is_file():
        raise FileNotFoundError(f"the judge needs the solution notebook {solution}")
    cache = _CACHE.setdefault(_key(solution, hidden), {})
    missing = [s for s in dict.fromkeys(students) if s not in cache]
    if missing:
        cache.update(_run(solution, assignment, notebook, hidden, missing, timeout))
    return {s: cache[s] for s in students}


def run_with_probes(nb, solution: Path, assignment: str, notebook: str, hidden: dict, students: list,
                    timeout: int) -> dict:
    """Run notebook `nb` as grading runs a kernel, then every probe for every student (their own
    seeds), in the assignment's shipped files; return {(student, grade_id): probe cell outputs}."""
    nb = nbformat.from_dict(nb)
    for student in students:
        for grade_id, code in hidden.items():
            cell = nbformat.v4.new_code_cell(
                probe_source(code, student_seed(assignment, notebook, student, grade_id), grade_id))
            cell.metadata["probe_for"] = [student, grade_id]
            nb.cells.append(cell)
    with tempfile.TemporaryDirectory(prefix="reference-") as workdir:
        # the files the assignment ships (data, helpers), as in a student's folder; not the notebooks
        shutil.copytree(Path(solution).parent, workdir, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints", "__pycache__"))
        # a cell past its time is interrupted and the run goes on (a reference probe that fails
        # that way still stops grading, in _run); without it one slow cell ends the whole run
        # behind the wall as the student's kernel is (same environment, warm: torch already imported),
        # with no CPU or memory limit: it runs the instructor's code and a whole class's probes
        km = sandbox.kernel_manager(dataclasses.replace(sandbox.Limits.from_env(), cpu_seconds=None,
                                                        memory_bytes=None))
        client = NotebookClient(nb, km=km, timeout=timeout, allow_errors=True, kernel_name="python3",
                                interrupt_on_timeout=True,
                                skip_cells_with_tag=SKIP_WHEN_GRADING,   # as in the student's kernel
                                shutdown_kernel="immediate",             # as in the student's kernel
                                extra_arguments=list(GRADING_KERNEL_ARGS),   # and the same settings
                                resources={"metadata": {"path": workdir}})
        # on an event loop of its own: make autograde's worker threads run references side by side
        # in one process, where nbclient's synchronous execute() could share one loop between them
        asyncio.run(client.async_execute(env=dict(os.environ, **GRADING_THREADS)))
    # (cells of `nb` that carry "probe_for" metadata of their own come back too)
    return {tuple(cell.metadata["probe_for"]): cell.outputs for cell in nb.cells if "probe_for" in cell.metadata}


def saved_reference(solution: Path, assignment: str, notebook: str, hidden: dict, students: list,
                    timeout: int = 120) -> dict:
    """One reference run for `students`, as JSON-ready data for `records_from_saved`: the probe
    cells' outputs (decoded and checked here, so that a broken reference fails at once)."""
    outputs = run_with_probes(nbformat.read(solution, as_version=4), solution, assignment, notebook,
                              hidden, students, timeout)
    _records(outputs, students)
    saved = {s: {} for s in students}
    for (student, grade_id), cell_outputs in outputs.items():
        saved[student][grade_id] = cell_outputs
    return {"fingerprint": fingerprint(solution, hidden), "outputs": saved}


def records_from_saved(saved: dict, solution: Path, hidden: dict, students: list) -> dict | None:
    """{student: {grade_id: ProbeRecord}} from `saved_reference`'s data, or None when it was made
    from another solution or other hidden tests, or lacks one of `students`."""
    if saved.get("fingerprint") != fingerprint(solution, hidden) or not set(students) <= set(saved["outputs"]):
        return None
    outputs = {(s, g): cell_outputs for s in students for g, cell_outputs in saved["outputs"][s].items()}
    return _records(outputs, students)


def _run(solution: Path, assignment: str, notebook: str, hidden: dict, students: list, timeout: int) -> dict:
    outputs = run_with_probes(nbformat.read(solution, as_version=4), solution, assignment, notebook,
                              hidden, students, timeout)
    return _records(outputs, students)


def _records(outputs: dict, students: list) -> dict:
    """{student: {grade_id: ProbeRecord}} from {(student, grade_id): probe cell outputs}."""
    records = {s: {} for s in students}
    for (student, grade_id), cell_outputs in outputs.items():
        try:
            record = read_probe(cell_outputs, grade_id)
        except ProbeError as err:
            raise RuntimeError(f"the reference solution's probe for {grade_id} failed: {err}; "
                               f"outputs: {cell_outputs}") from None
        # a bound the reference's own count breaks (or a count the counter stopped) is a bug too
        broken = [c.name for c in record.checks if c.error or (c.rule.keys() & {"at_most", "at_least"}
                                                               and compare(c.value, c.value, c.rule))]
        if record.error or broken:
            raise RuntimeError(f"the reference solution fails its own hidden checks in {grade_id}: "
                               f"{record.error or broken}")
        records[student][grade_id] = record
    return records
