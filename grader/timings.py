"""Where grading time goes: each timed step appends one line to the file named by GRADER_TIMINGS.

`make autograde` sets it for each batch (the file stays in the batch's scratch course and comes back
with its results) and `make bench-grading` prints the sums. Not a COURSE_* variable, so the wall
does not pass it into student kernels (grader/wall/sandbox.py, passthrough_env).
"""
import json
import os
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

ENV = "GRADER_TIMINGS"

# the steps, in the order a report lists them
KERNEL_START = "kernel starts"     # a graded kernel, from its start to its first reply
STUDENT_CODE = "student code"      # the notebook's cells and the probes, in the student's kernel
REFERENCE = "reference"            # the judge's reference run(s) inside nbgrader
REFERENCE_TASKS = "reference tasks"  # make autograde's reference runs, each a task of its own
NBGRADER = "nbgrader"              # an nbgrader autograde process, from start to end
MERGE = "merge"                    # the coordinator's writes into the gradebook and autograded/
CLUSTER = "cluster start"          # starting (or reaching) the Dask cluster
NBGRADER_OWN = "nbgrader's own work"   # NBGRADER less the kernels and the reference inside it: its start,
                                       # sanitizing, the judge's comparisons, saving
REPORTED = (CLUSTER, REFERENCE_TASKS, REFERENCE, KERNEL_START, STUDENT_CODE, NBGRADER_OWN, MERGE)


def record(step: str, seconds: float) -> None:
    path = os.environ.get(ENV)
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"step": step, "seconds": seconds}) + "\n")


@contextmanager
def timed(step: str):
    start = time.perf_counter()
    try:
        yield
    finally:
        record(step, time.perf_counter() - start)


def own_work(one_process: Counter) -> float:
    """NBGRADER_OWN of one nbgrader process's timings."""
    return one_process[NBGRADER] - one_process[KERNEL_START] - one_process[STUDENT_CODE] - one_process[REFERENCE]


def report(spent: Counter) -> str:
    """One line: seconds per step, in REPORTED's order."""
    return ", ".join(f"{step} {spent[step]:.1f}" for step in REPORTED if spent[step])


def read(path) -> Counter:
    """{step: seconds} summed over a timings file (empty when there is none)."""
    totals = Counter()
    if Path(path).is_file():
        for line in Path(path).read_text().splitlines():
            entry = json.loads(line)
            totals[entry["step"]] += entry["seconds"]
    return totals
