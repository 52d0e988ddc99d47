"""`make bench-grading`: grade one generated class serially and in parallel, compare, time.

    .venv/bin/python tests/bench_grading.py --students 20 [--jobs 2]

1. copies the course to a temporary folder and releases the assignment (01_tensors);
2. hands in a class of N students: the reference solution, the untouched release, the
   "alternative" and "wrong" answers of tests/answers/, and mixes of right and wrong answers;
3. grades one copy with plain serial `nbgrader autograde ASSIGNMENT --force` and another with
   `make autograde`'s code (grader.class_grading.autograde, JOBS = cores, behind the wall), timing both;
4. checks that both gradebooks hold the same scores, flags and comments and that
   `nbgrader export` gives the same CSV;
5. does 3 and 4 again (--rounds, default 3), and prints the speed-up ratio of the fastest run of
   each as its last line.
"""
import argparse
import csv
import os
import random
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook

from grader import timings
from grader.class_grading.autograde import autograde_all, default_jobs
from grader.course import REPO_ROOT, run_nbgrader
from grader.release import release

from conftest import ANSWERS_DIR, load_answers
from gradebook_rows import db_url
from submissions import (copy_course, place_submission, release_copy, solution_cell_ids,
                         solution_copy, with_answers)

TIMESTAMP = "2030-01-01 12:00:00.000000 UTC"   # fixed, so that both CSVs can be compared byte for byte


def _answers(assignment: str):
    """The "alternative" and "wrong" answers of tests/answers/<assignment>.py, each {grade_id: source}."""
    if not (ANSWERS_DIR / f"{assignment}.py").exists():
        return {}, {}
    answers = load_answers(assignment)
    return answers["alternative"], answers["wrong"]


def build_class(course: Path, assignment: str, students: int, seed: int = 0) -> list:
    """Hand in `students` notebooks of `assignment`; return the student ids."""
    rng = random.Random(seed)
    reference = solution_copy(assignment, course)
    alternative, wrong = _answers(assignment)
    ids = solution_cell_ids(reference)
    names = []
    for i in range(students):
        kind = i % 5
        if kind == 0:
            nb = reference
        elif kind == 1:
            nb = release_copy(assignment, course)
        elif kind == 2 and alternative:
            nb = with_answers(reference, alternative)
        elif kind == 3 and wrong:
            nb = with_answers(reference, wrong)
        else:
            picks = {g: (wrong if rng.random() < 0.5 else alternative).get(g) for g in ids}
            nb = with_answers(reference, {g: src for g, src in picks.items() if src})
        name = f"student{i:03d}"
        path = place_submission(course, name, assignment, nb)
        (path.parent / "timestamp.txt").write_text(TIMESTAMP)
        names.append(name)
    return names


def gradebook_state(course: Path, assignment: str) -> dict:
    """{student: {cell: (auto, manual, max, needs manual grade), cell:comment: ..., ...}}."""
    state = {}
    with Gradebook(db_url(course)) as gb:
        for sub in gb.assignment_submissions(assignment):
            rows = {"timestamp": str(sub.timestamp), "extension": str(sub.extension)}
            for nb in sub.notebooks:
                rows[nb.name] = nb.late_submission_penalty
                for g in nb.grades:
                    rows[g.name] = (g.auto_score, g.manual_score, g.max_score, g.needs_manual_grade)
                for c in nb.comments:
                    rows[c.name + ":comment"] = c.auto_comment
            state[sub.student.id] = rows
    return state


def export_rows(course: Path) -> list:
    run_nbgrader("export", "--to", "grades.csv", course=course)
    with open(Path(course) / "grades.csv", newline="") as f:
        return sorted(csv.reader(f))


def busy_core_seconds() -> float:
    """CPU time the whole machine has spent busy since it booted, over every core (/proc/stat):
    what a run costs, whichever processes it started, and whatever else ran beside it."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")   # less idle and iowait


@dataclass
class Comparison:
    serial_s: float
    parallel_s: float
    serial_code: int
    parallel_code: int
    serial: Path
    parallel: Path
    jobs: int
    serial_spent: Counter = field(default_factory=Counter)     # {step: seconds}, grader/timings.py
    parallel_spent: Counter = field(default_factory=Counter)
    serial_cpu: float = 0.0      # busy core-seconds of the machine during each run
    parallel_cpu: float = 0.0

    @property
    def speedup(self) -> float:
        return self.serial_s / self.parallel_s

    def same_grades(self, assignment: str) -> bool:
        return (gradebook_state(self.serial, assignment) == gradebook_state(self.parallel, assignment)
                and export_rows(self.serial) == export_rows(self.parallel))


def grade_both(base: Path, assignment: str, workdir: Path, jobs: int | None = None,
               extra_args=(), progress: bool = False) -> Comparison:
    """Copy `base` (a released course with submissions) twice; grade serially and in parallel."""
    serial, parallel = Path(workdir) / "serial", Path(workdir) / "parallel"
    shutil.copytree(base, serial)
    shutil.copytree(base, parallel)
    jobs = jobs or default_jobs()
    serial_timings = Path(workdir) / "serial-timings"
    start, cpu = time.perf_counter(), busy_core_seconds()
    serial_code = run_nbgrader("autograde", assignment, "--force", *extra_args, course=serial, check=False,
                               env={timings.ENV: str(serial_timings)}).returncode
    serial_s, serial_cpu = time.perf_counter() - start, busy_core_seconds() - cpu
    spent = Counter()
    start, cpu = time.perf_counter(), busy_core_seconds()
    parallel_code = autograde_all(jobs=jobs, course=parallel, extra_args=extra_args, progress=progress, spent=spent)
    parallel_s, parallel_cpu = time.perf_counter() - start, busy_core_seconds() - cpu
    serial_spent = timings.read(serial_timings)
    serial_spent[timings.NBGRADER] = serial_s
    serial_spent[timings.NBGRADER_OWN] = timings.own_work(serial_spent)
    return Comparison(serial_s, parallel_s, serial_code, parallel_code, serial, parallel, jobs, serial_spent, spent,
                      serial_cpu, parallel_cpu)


def main(students: int = 20, jobs: int | None = None, assignment: str = "01_tensors", rounds: int = 3) -> int:
    """Grade the class `rounds` times each way, serial and parallel in turn; the ratio is taken
    between the fastest run of each (a run that the machine slowed down tells nothing about the
    grader), and every run is printed."""
    ok, runs = True, []
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        base = copy_course(Path(tmp) / "base")
        release([assignment], course=base)
        build_class(base, assignment, students)
        print(f"class: {students} submissions of {assignment}; {rounds} rounds, each grading serially, then with "
              f"{jobs or default_jobs()} jobs ...", flush=True)
        for round_ in range(1, rounds + 1):
            result = grade_both(base, assignment, Path(tmp) / f"round{round_}", jobs, progress=True)
            same = result.same_grades(assignment)
            ok = ok and same and result.serial_code == result.parallel_code == 0
            runs.append(result)
            print(f"round {round_}: serial nbgrader autograde {result.serial_s:.1f} s (exit {result.serial_code}), "
                  f"make autograde JOBS={result.jobs} {result.parallel_s:.1f} s (exit {result.parallel_code}): "
                  f"{result.speedup:.2f}x; same scores, comments and grades CSV: {'yes' if same else 'NO'}")
            print(f"    serial, seconds spent: {timings.report(result.serial_spent)}")
            print(f"    parallel, seconds spent (summed over the workers): {timings.report(result.parallel_spent)}")
            cores = default_jobs()
            print(f"    the machine's CPU: serial {result.serial_cpu:.1f} core-seconds "
                  f"({result.serial_cpu / result.serial_s:.2f} of {cores} cores busy), parallel "
                  f"{result.parallel_cpu:.1f} ({result.parallel_cpu / result.parallel_s:.2f}); the serial run's work "
                  f"spread over {cores} cores would take {result.serial_cpu / cores:.1f} s, a ceiling of "
                  f"{result.serial_s * cores / result.serial_cpu:.2f}x")
    serial = min(r.serial_s for r in runs)
    parallel = min(r.parallel_s for r in runs)
    print(f"fastest runs: serial nbgrader {serial:.1f} s ({serial / students:.2f} s per notebook), "
          f"make autograde JOBS={runs[0].jobs} {parallel:.1f} s ({parallel / students:.2f} s per notebook)")
    print(f"same scores, comments and grades CSV in every round: {'yes' if ok else 'NO'}")
    print(f"speed-up: {serial / parallel:.2f}x")
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=None, help="parallel batches (default: one per core)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each, serial and parallel in turn")
    args = parser.parse_args()
    raise SystemExit(main(students=args.students, jobs=args.jobs, rounds=args.rounds))
