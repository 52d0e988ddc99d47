"""Which students' own kernels died while their notebooks ran (a crash, os._exit, the CPU or memory limit).

Only then is "the kernel running your notebook died" the student's verdict: any other failure of a
grading is the grader's, and the feedback service grades that hand-in again (grader/hub/autofeedback.py).
SandboxedExecute (grader/wall/execute.py) notes each student in the file that ENV names; a batch
(grader/class_grading/batch.py) sets it and reads it back. Not a COURSE_* variable: the wall keeps it
from student kernels.
"""
import json
import os

ENV = "GRADER_DEAD_KERNELS"


def note(student: str) -> None:
    path = os.environ.get(ENV)
    if path:
        with open(path, "a") as out:
            out.write(json.dumps(student) + "\n")


def read(path) -> set:
    """The students noted in the file at `path` (none when there is no file)."""
    try:
        with open(path) as lines:
            return {json.loads(line) for line in lines if line.strip()}
    except FileNotFoundError:
        return set()
