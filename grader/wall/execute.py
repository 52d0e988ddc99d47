"""SandboxedExecute: nbgrader's Execute with the kernel behind the wall (grader/wall/sandbox.py), output
capped per cell and per notebook, cells tagged `skip-when-grading` not run, and, after the last
cell, one probe per judged test cell run in the same kernel with the student's seed; the probes'
outputs go to the Judge as untrusted data (grader/judge/handoff.py). docs/GRADING.md,
"Who decides a grade".
"""
import json
import sys
import time

import nbformat
from nbclient.exceptions import DeadKernelError
from nbgrader.preprocessors import Execute
from traitlets import Integer, Unicode

from grader import timings
from grader.wall import dead_kernels, sandbox
from grader.pipeline import GRADING_KERNEL_ARGS, SKIP_WHEN_GRADING
from grader.judge.handoff import handoff, hidden_sections
from grader.judge.probes import MAX_PROBE_BYTES, probe_source, student_seed


def _size(content: dict) -> int:
    return len(json.dumps(content, default=str))


class SandboxedExecute(Execute):
    max_cell_output = Integer(100_000, help="bytes of output kept per cell").tag(config=True)
    max_notebook_output = Integer(2_000_000, help="bytes of output kept per notebook").tag(config=True)
    # not configurable: the reference run skips the same cells (grader/judge/reference.py)
    skip_cells_with_tag = Unicode(SKIP_WHEN_GRADING)

    def __init__(self, *args, **kwargs):
        # every output is in by then: a graceful shutdown would cost a second per notebook while
        # the kernel tears torch down (1.0-1.3 s measured), a kill 0.1 s
        kwargs.setdefault("shutdown_kernel", "immediate")
        kwargs["kernel_manager_class"] = sandbox.kernel_manager_class()
        if not sandbox.enabled():
            print("WARNING: COURSE_SANDBOX=0: student code runs WITHOUT the wall, with your rights",
                  file=sys.stderr)
        super().__init__(*args, **kwargs)
        self.extra_arguments = [*self.extra_arguments, *GRADING_KERNEL_ARGS]

    def preprocess(self, nb, resources, *args, **kwargs):
        info = resources["nbgrader"]
        shared = handoff(resources)
        probes = self._probe_cells(info, hidden_sections(resources))
        self._notebook_cells = len(nb.cells)
        self._kept = {}             # cell index -> bytes kept
        self._cut = set()           # cells that got their truncation note
        nb.cells.extend(probes)
        started, self._kernel_seconds, self._kernel_answered = time.perf_counter(), 0.0, False
        try:
            nb, resources = super().preprocess(nb, resources, *args, **kwargs)
        except DeadKernelError:
            if self._kernel_answered:   # it ran student code, then died (not a kernel that never started)
                dead_kernels.note(info["student"])
            raise
        finally:
            timings.record(timings.STUDENT_CODE, time.perf_counter() - started - self._kernel_seconds)
            ran = nb.cells[self._notebook_cells:]
            del nb.cells[self._notebook_cells:]
        for cell in nb.cells:
            if cell.cell_type == "code" and self.skip_cells_with_tag in cell.metadata.get("tags", []):
                cell.outputs = [nbformat.v4.new_output(
                    "stream", name="stdout", text="[not run while grading: a demonstration that no "
                                                  "graded cell depends on]\n")]
        shared.probes = {cell.metadata["probe_for"]: list(cell.get("outputs", [])) for cell in ran}
        return nb, resources

    def start_new_kernel(self, **kwargs):
        self._kernel_start_began = time.perf_counter()
        return super().start_new_kernel(**kwargs)

    def start_new_kernel_client(self):
        """The kernel is up once it answers (nbclient waits for that here): its start is timed."""
        client = super().start_new_kernel_client()
        self._kernel_answered = True
        self._kernel_seconds = time.perf_counter() - self._kernel_start_began
        timings.record(timings.KERNEL_START, self._kernel_seconds)
        return client

    @staticmethod
    def _probe_cells(info, hidden: dict) -> list:
        cells = []
        for grade_id, code in sorted(hidden.items()):   # a test cell without one: the Judge reports it
            seed = student_seed(info["assignment"], info["notebook"], info["student"], grade_id)
            cell = nbformat.v4.new_code_cell(probe_source(code, seed, grade_id))
            cell.metadata["probe_for"] = grade_id
            cells.append(cell)
        return cells

    def output(self, outs, msg, display_id, cell_index):
        """Keep output until the cell's or the notebook's budget is spent, then note the cut."""
        if msg["msg_type"] not in ("stream", "display_data", "execute_result", "error"):
            return super().output(outs, msg, display_id, cell_index)
        size = _size(msg["content"])
        if cell_index >= self._notebook_cells:       # a probe: its own, larger budget
            budget, total_left = MAX_PROBE_BYTES, MAX_PROBE_BYTES
        else:
            budget = self.max_cell_output
            total_left = self.max_notebook_output - sum(
                v for k, v in self._kept.items() if k < self._notebook_cells)
        used = self._kept.get(cell_index, 0)
        if used + size <= budget and size <= total_left:
            self._kept[cell_index] = used + size
            return super().output(outs, msg, display_id, cell_index)
        if cell_index not in self._cut:
            self._cut.add(cell_index)
            note = nbformat.v4.new_output(
                "stream", name="stdout",
                text=f"\n[output cut by the grader: at most {budget:,} bytes per cell and "
                     f"{self.max_notebook_output:,} per notebook are kept]\n")
            outs.append(note)
        return None

