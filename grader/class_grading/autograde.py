"""Grade everything in submitted/ in parallel, each notebook behind the wall: the hand-ins are dealt
into batches, each batch graded by plain `nbgrader autograde` in a scratch course of its own, and
the results merged one submission at a time into the one gradebook and autograded/.

How and why: docs/GRADING.md, "How parallel grading works"; tests/test_parallel_grading.py checks
that the result is what a serial `nbgrader autograde` leaves.
"""
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from grader.wall import sandbox
from grader.course import REPO_ROOT, SOURCE, nbgrader_cmd, tool_env

@dataclass
class Result:
    """One nbgrader run in one scratch course: a batch of students of one assignment."""
    students: list
    assignment: str
    returncode: int
    log: str = ""
    seconds: float = 0.0
    scratch: Path | None = field(default=None, repr=False)

    @property
    def failed(self) -> list:
        """Students nbgrader reported an error for (all of them when it was stopped)."""
        if self.returncode == 124:
            return list(self.students)
        named = set(re.findall(r"error processing assignment '[^']*' for student '([^']*)'", self.log))
        return [s for s in self.students if s in named] or (list(self.students) if self.returncode else [])


def submitted_assignments(course: Path = REPO_ROOT) -> list:
    """Assignment names that at least one student handed in (submitted/<student>/<assignment>/)."""
    return sorted({a for _, a in submissions(course)})


def submissions(course: Path = REPO_ROOT) -> list:
    """[(student, assignment)] for every folder submitted/<student>/<assignment>/."""
    root = Path(course) / "submitted"
    if not root.is_dir():
        return []
    return sorted((s.name, a.name) for s in root.iterdir() if s.is_dir() and not s.is_symlink()
                  for a in s.iterdir() if a.is_dir() and not a.is_symlink())


def students_with_handins(root: Path, assignment: str, submitted: str = "submitted", student_glob: str = "*") -> list:
    """The students whose hand-in of `assignment` the course directory `root` holds, as nbgrader
    finds them (`student_glob` is its --student). In a scratch course (make_scratch) these are the
    batch's students, and the Judge runs the reference for them, once."""
    return sorted(Path(p).parts[-2] for p in Path(root).glob(f"{submitted}/{student_glob}/{assignment}"))


def _copy_plain(src: Path, dst: Path) -> None:
    """Copy a folder tree, leaving out symlinks and anything that is not a plain file: a student's
    folder could hold a link to the gradebook, which a plain copy would follow."""
    def ignore(folder, names):
        return [n for n in names if os.path.islink(os.path.join(folder, n))
                or not (os.path.isfile(os.path.join(folder, n)) or os.path.isdir(os.path.join(folder, n)))]
    shutil.copytree(src, dst, ignore=ignore, symlinks=True, dirs_exist_ok=True)


def make_scratch(course: Path, snapshot: Path, students: list, assignment: str) -> Path:
    """A private course directory holding only what grading these submissions needs."""
    course = Path(course)
    scratch = Path(tempfile.mkdtemp(prefix=f"grade-{assignment[:20]}-"))
    # the course's config: its pipeline puts every kernel behind the wall (grader/pipeline.py)
    shutil.copyfile(course / "nbgrader_config.py", scratch / "nbgrader_config.py")
    shutil.copyfile(snapshot, scratch / "gradebook.db")
    source = course / SOURCE / assignment
    extras = scratch / SOURCE / assignment
    extras.mkdir(parents=True)
    if source.is_dir():
        # the solution notebook is for the judge's reference run; student kernels never see it
        shutil.copytree(source, extras, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    for student in students:
        _copy_plain(course / "submitted" / student / assignment,
                    scratch / "submitted" / student / assignment)
    return scratch


def grade_batch(scratch: Path, students: list, assignment: str, extra_args=(), env=None,
                timeout: float | None = None) -> Result:
    """Run plain nbgrader autograde in a scratch course (which holds only `students`)."""
    start = time.perf_counter()
    who = ["--student", students[0]] if len(students) == 1 else []
    cmd = nbgrader_cmd("autograde", assignment, *who, "--force", *extra_args)
    try:
        proc = subprocess.run(cmd, cwd=scratch, env=tool_env(env), text=True, capture_output=True,
                              timeout=timeout)
        code, log = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as err:
        code, log = 124, f"nbgrader autograde ran past {timeout} s and was stopped\n{err.stdout or ''}"
    return Result(list(students), assignment, code, log, time.perf_counter() - start, scratch)


def merge_submission(scratch_db: Path, course_db: Path, assignment: str, student: str) -> None:
    """Write what autograde recorded for one submission in `scratch_db` into `course_db`.

    These are exactly the fields nbgrader's autograde writes (Autograde.init_assignment,
    SaveAutoGrades, AssignLatePenalties); manual scores and anything else are left alone."""
    with warnings.catch_warnings(), \
            Gradebook(f"sqlite:///{scratch_db}") as src, Gradebook(f"sqlite:///{course_db}") as dst:
        # nbgrader's own add_submission trips SQLAlchemy's autoflush warnings; they are harmless
        warnings.simplefilter("ignore")
        graded = src.find_submission(assignment, student)
        dst.update_or_create_student(student)
        kwargs = {"timestamp": graded.timestamp} if graded.timestamp is not None else {}
        dst.update_or_create_submission(assignment, student, **kwargs)
        for notebook in graded.notebooks:
            target = dst.find_submission_notebook(notebook.name, assignment, student)
            target.late_submission_penalty = notebook.late_submission_penalty
            for grade in notebook.grades:
                mine = dst.find_grade(grade.name, notebook.name, assignment, student)
                mine.auto_score = grade.auto_score
                # SaveAutoGrades' rule, applied to the real gradebook's manual score, plus the
                # judge's flags for manual grading (FlagForManualGrading)
                mine.needs_manual_grade = (mine.manual_score is not None or grade.auto_score is None
                                           or grade.needs_manual_grade)
            for comment in notebook.comments:
                mine = dst.find_comment(comment.name, notebook.name, assignment, student)
                mine.auto_comment = comment.auto_comment
        dst.db.commit()


def collect(result: Result, course: Path) -> None:
    """Merge one graded scratch course back into the real one, then delete the scratch."""
    course = Path(course)
    try:
        for student in result.students:
            # Merged even when nbgrader reported an error: serial nbgrader also leaves the
            # submission it had started (for example with a renamed notebook: no scores, flagged).
            try:
                merge_submission(result.scratch / "gradebook.db", course / "gradebook.db",
                                 result.assignment, student)
            except MissingEntry:
                continue
            graded = result.scratch / "autograded" / student / result.assignment
            target = course / "autograded" / student / result.assignment
            if target.exists():
                shutil.rmtree(target)
            if graded.is_dir():   # nbgrader removes it for a notebook it could not grade
                _copy_plain(graded, target)
    finally:
        shutil.rmtree(result.scratch, ignore_errors=True)


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


BATCH_MAX = 10   # students per nbgrader process, at most


def split_batches(todo: list, jobs: int, max_size: int = BATCH_MAX) -> list:
    """[(students, assignment), ...]: each assignment's students dealt round-robin into a
    multiple of `jobs` batches of at most `max_size` (sizes differ by one at most).

    One nbgrader process costs about 4 s to start, so a batch grades several students; and
    with as many equal batches per worker, no worker idles while another still has two to do.
    Round-robin spreads students that sort together (and may cost alike) over the batches."""
    batches = []
    for assignment in sorted({a for _, a in todo}):
        students = [s for s, a in todo if a == assignment]
        count = min(len(students), jobs * math.ceil(len(students) / (jobs * max_size)))
        batches += [(students[i::count], assignment) for i in range(count)]
    return batches


def heaviest_first(batches: list, course: Path) -> list:
    """The batches in the order to start them: the likely longest first, so that no worker is left
    with a long one at the end while the others idle. A batch's cost is guessed as its number of
    students times the size of its assignment's source notebooks (a bigger notebook runs longer)."""
    def size(assignment):
        return sum(p.stat().st_size for p in (Path(course) / SOURCE / assignment).glob("*.ipynb"))
    sizes = {assignment: size(assignment) for _, assignment in batches}
    return sorted(batches, key=lambda batch: len(batch[0]) * sizes[batch[1]], reverse=True)


def autograde_all(jobs: int | None = None, course: Path = REPO_ROOT, extra_args=(),
                  wall: bool | None = None, progress: bool = True, only=None,
                  timeout: float | None = 3600, verbose: bool = False) -> int:
    """Grade every submission in `course`/submitted/ with `jobs` parallel workers.

    extra_args go to every `nbgrader autograde` (for example "--Execute.timeout=10"); `only`
    limits grading to some (student, assignment) pairs; `timeout` bounds one nbgrader run (a
    batch that overruns is graded again one student at a time). Returns 0 when every submission was
    graded, 1 otherwise (the others are still graded and merged)."""
    course = Path(course).resolve()
    todo = [pair for pair in submissions(course) if only is None or pair in set(only)]
    # Serial nbgrader does not see a folder without any notebook in it: neither do we.
    empty = [(s, a) for s, a in todo if not any((course / "submitted" / s / a).glob("*.ipynb"))]
    for s, a in empty:
        print(f"skipped {s}/{a}: no notebook in submitted/{s}/{a}/ (nbgrader ignores it too)")
    todo = [pair for pair in todo if pair not in empty]
    if not todo:
        print("nothing to grade: submitted/<student>/<assignment>/<notebook>.ipynb is empty")
        return 0
    jobs = max(1, min(jobs or default_jobs(), len(todo)))
    wall = sandbox.enabled() if wall is None else wall
    if wall:
        sandbox.ensure_bubblewrap()
    else:
        print("WARNING: grading WITHOUT the wall: student code runs with your rights", file=sys.stderr)
    db = course / "gradebook.db"
    if not db.exists():
        raise FileNotFoundError(f"{db} is missing: run `make release` (nbgrader generate_assignment) first")
    env = {"OMP_NUM_THREADS": str(max(1, default_jobs() // jobs))} if "OMP_NUM_THREADS" not in os.environ else {}

    batches = heaviest_first(split_batches(todo, jobs), course)

    with tempfile.TemporaryDirectory(prefix="gradebook-") as tmp:
        snapshot = Path(tmp) / "gradebook.db"
        shutil.copyfile(db, snapshot)  # one consistent copy for every worker to start from
        failures = []
        bar = _progress(len(todo), progress)
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            def submit(students, assignment):
                return pool.submit(_grade_in_scratch, course, snapshot, students, assignment,
                                   extra_args, env, wall, timeout)
            pending = {submit(*batch) for batch in batches}
            while pending:
                future = next(as_completed(pending))
                pending.remove(future)
                result = future.result()
                if result.returncode == 124 and len(result.students) > 1:
                    # a batch ran out of time: grade its students one by one, so that one
                    # endless notebook costs only its own grade
                    shutil.rmtree(result.scratch, ignore_errors=True)
                    pending |= {submit([s], result.assignment) for s in result.students}
                    continue
                collect(result, course)   # serially, in this thread: one writer on the gradebook
                failures += [(s, result) for s in result.failed]
                if verbose:
                    print(result.log)
                bar.set_postfix_str(f"{result.students[-1]}/{result.assignment}", refresh=False)
                bar.update(len(result.students))
        bar.close()
    for student, result in failures:
        print(f"FAILED {student}/{result.assignment} (exit {result.returncode}); nbgrader's log:\n"
              f"{_student_log(result.log, student)[-3000:]}", file=sys.stderr)
    print(f"graded {len(todo) - len(failures)}/{len(todo)} submissions with {jobs} jobs"
          f"{' behind the wall' if wall else ''}")
    return 1 if failures else 0


def _student_log(log: str, student: str) -> str:
    """The part of a batch's log about one student (nbgrader logs students one after another)."""
    lines = log.splitlines()
    starts = [i for i, line in enumerate(lines) if f"/{student}/" in line or f"'{student}'" in line]
    return "\n".join(lines[starts[0]:starts[-1] + 1]) if starts else log


def _grade_in_scratch(course, snapshot, students, assignment, extra_args, env, wall, timeout):
    scratch = make_scratch(course, snapshot, students, assignment)
    if not wall:
        env = dict(env or {}, COURSE_SANDBOX="0")
    return grade_batch(scratch, students, assignment, extra_args, env,
                       timeout * len(students) if timeout else None)


def _progress(total: int, enabled: bool):
    from tqdm.auto import tqdm
    return tqdm(total=total, desc="autograde", unit="nb", disable=not enabled, file=sys.stderr)
