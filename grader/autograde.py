"""Grade everything in submitted/ with nbgrader autograde."""
from pathlib import Path

from grader.course import REPO_ROOT, run_nbgrader


def submitted_assignments(course: Path = REPO_ROOT) -> list:
    """Assignment names that at least one student handed in (submitted/<student>/<assignment>/)."""
    root = Path(course) / "submitted"
    if not root.is_dir():
        return []
    return sorted({a.name for s in root.iterdir() if s.is_dir() for a in s.iterdir() if a.is_dir()})


def autograde_all(jobs: int = 1, course: Path = REPO_ROOT) -> int:
    assignments = submitted_assignments(course)
    if not assignments:
        print("nothing to grade: submitted/<student>/<assignment>/<notebook>.ipynb is empty")
        return 0
    status = 0
    for assignment in assignments:
        proc = run_nbgrader("autograde", assignment, "--force", course=course, check=False)
        print(proc.stdout + proc.stderr)
        status = status or proc.returncode
    return status
