"""Grade everything in submitted/ on a Dask cluster, each notebook behind the wall: a map and a reduce.

Map: for each assignment, one reference task (the judge's reference run, for all its students), then
its hand-ins dealt into batches, each graded by plain `nbgrader autograde` in a scratch course on a
worker (grader/class_grading/batch.py), from data sent to it. Reduce: here, the coordinator merges
each batch's results one submission at a time into the one gradebook and autograded/.

How and why: docs/GRADING.md, "How parallel grading works"; tests/test_parallel_grading.py checks
that the result is what a serial `nbgrader autograde` leaves, tests/test_cluster_grading.py the same
on a cluster of separate worker processes, one of them killed.
"""
import math
import os
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import closing
from pathlib import Path

from grader import timings
from grader.class_grading.transfer import read_rows, read_tree, write_batch_rows, write_rows, write_tree
from grader.course import REPO_ROOT, SOURCE
from grader.extensions import FILE as EXTENSIONS
from grader.judge.outcomes import outcome_folder
from grader.wall import sandbox

# One writer of gradebook.db and autograded/ at a time, and no snapshot of the gradebook taken while it
# is written, also where one process runs several autograde_all at once (the feedback service,
# grader/hub/autofeedback.py, grades each new hand-in as it comes), and whatever else writes them in
# this process (a regrade applied, grader/class_grading/regrade.py).
GRADEBOOK_WRITER = threading.Lock()


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


def merge_submission(scratch_db: Path, course_db: Path, assignment: str, student: str) -> None:
    """Write what autograde recorded for one submission in `scratch_db` into `course_db`."""
    write_rows(course_db, assignment, student, read_rows(scratch_db, assignment, student))


def collect(outcome, course: Path) -> None:
    """Merge one batch's results (a BatchOutcome) into the course: gradebook rows (one commit for
    the batch), then autograded/ and the judge's outcomes (grader/judge/outcomes.py)."""
    course = Path(course)
    # Merged even when nbgrader reported an error: serial nbgrader also leaves the submission it
    # had started (for example with a renamed notebook: no scores, flagged).
    rows = {student: outcome.rows[student] for student in outcome.students if outcome.rows.get(student) is not None}
    if rows:
        write_batch_rows(course / "gradebook.db", outcome.assignment, rows)
    for student in rows:
        for target, tree in ((course / "autograded" / student / outcome.assignment, outcome.graded.get(student)),
                             (outcome_folder(course, outcome.assignment, student), outcome.outcomes.get(student))):
            if target.exists():
                shutil.rmtree(target)
            if tree is not None:
                target.mkdir(parents=True)
                write_tree(target, tree)


def gradebook_snapshot(db: Path) -> bytes:
    """gradebook.db's bytes as of one moment, through SQLite's backup: GRADEBOOK_WRITER holds off this
    process's writers only, and a plain read of the file while another process writes it (an
    instructor's nbgrader, the formgrader) can copy half of a transaction."""
    with tempfile.TemporaryDirectory(prefix="gradebook-") as tmp:
        copy = Path(tmp) / "gradebook.db"
        with closing(sqlite3.connect(db)) as src, closing(sqlite3.connect(copy)) as dst:
            src.backup(dst)
        return copy.read_bytes()


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


BATCH_MAX = 10   # students per nbgrader process, at most


def split_batches(todo: list, jobs: int, max_size: int = BATCH_MAX) -> list:
    """[(students, assignment), ...]: each assignment's students dealt round-robin into a
    multiple of `jobs` batches of at most `max_size` (sizes differ by one at most).

    A batch has a cost of its own (a scratch course, the reference for its students when there
    are no reference tasks), so it grades several students; and with as many equal batches per worker, no worker idles while another still has two to do.
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


REFERENCE_MIN = 5   # students per reference task, at least: below that, one run is cheaper than two


def reference_chunks(students: list, jobs: int) -> list:
    """The students of one assignment, split for its reference tasks: one per worker thread, so
    that the threads run them side by side at the start, none waiting for another's (each runs the
    solution notebook once, then its students' probes), unless the class is too small for that to
    pay."""
    size = max(REFERENCE_MIN, math.ceil(len(students) / jobs))
    return [tuple(students[k:k + size]) for k in range(0, len(students), size)]




def autograde_all(jobs: int | None = None, course: Path = REPO_ROOT, extra_args=(),
                  wall: bool | None = None, progress: bool = True, only=None,
                  timeout: float | None = 3600, verbose: bool = False, scheduler: str | None = None,
                  client=None, spent: Counter | None = None, batch_max: int = BATCH_MAX, merged=None) -> int:
    """Grade every submission in `course`/submitted/ on `jobs` local workers, or on the Dask cluster
    at `scheduler` (or on `client`, a distributed.Client).

    extra_args go to every `nbgrader autograde` (for example "--Execute.timeout=10"); `only`
    limits grading to some (student, assignment) pairs; `timeout` bounds one submission's grading
    (a batch that overruns is graded again one student at a time); `spent`, if given, receives
    where the time went ({step: seconds}, grader/timings.py); `batch_max` caps the students of a batch;
    `merged`, if given, is called with each batch's BatchOutcome as soon as it is in the gradebook (the
    feedback service releases those students' feedback there, before the slower batches end).
    Returns 0 when every submission was
    graded, 1 otherwise (the others are still graded and merged)."""
    from grader.class_grading.cluster import grading_client
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
    if wall and scheduler is None and client is None:
        sandbox.ensure_bubblewrap()   # this machine's workers; a cluster's workers check their own
    elif not wall:
        print("WARNING: grading WITHOUT the wall: student code runs with your rights", file=sys.stderr)
    db = course / "gradebook.db"
    if not db.exists():
        raise FileNotFoundError(f"{db} is missing: run `make release` (nbgrader generate_assignment) first")
    env = worker_settings(wall, jobs)
    spent = Counter() if spent is None else spent
    started = time.perf_counter()
    if client is None:
        with grading_client(jobs, scheduler, wall=wall) as client:
            spent[timings.CLUSTER] += time.perf_counter() - started
            return _grade_on(client, course, todo, jobs, wall, env, extra_args, timeout, progress, verbose, spent,
                             batch_max, merged)
    return _grade_on(client, course, todo, jobs, wall, env, extra_args, timeout, progress, verbose, spent, batch_max,
                     merged)


def worker_settings(wall: bool, jobs: int) -> dict:
    """What the workers' processes take from here: the course's settings (the wall's limits, quick mode,
    COURSE_SANDBOX) and, unless set, their share of the cores for torch's threads."""
    env = {k: v for k, v in os.environ.items() if k.startswith("COURSE_")}
    env["COURSE_SANDBOX"] = "1" if wall else "0"
    if "OMP_NUM_THREADS" not in os.environ:
        env["OMP_NUM_THREADS"] = str(max(1, default_jobs() // jobs))
    return env


def warm_up(client, env: dict, wall: bool) -> list:
    """Every worker starts its zygote and warm nbgrader now, not in its first batch: the tasks end at
    once and the two start in the background. Hold the futures while that matters: Dask cancels a
    task whose future is let go of."""
    from grader.class_grading import batch as tasks
    return [client.submit(tasks.warm_up, env, wall, workers=[address], allow_other_workers=False, pure=False,
                          priority=1) for address in client.scheduler_info()["workers"]]


def _grade_on(client, course, todo, jobs, wall, env, extra_args, timeout, progress, verbose, spent,
              batch_max, merged) -> int:
    from distributed import KilledWorker, as_completed
    from grader.class_grading import batch as tasks
    # as many batches per round as the cluster has threads (a LocalCluster: jobs)
    jobs = max(1, min(len(todo), sum(w["nthreads"] for w in client.scheduler_info()["workers"].values()) or jobs))
    warming = warm_up(client, env, wall)
    with GRADEBOOK_WRITER:
        snapshot = gradebook_snapshot(course / "gradebook.db")   # one consistent copy for every task
    config = (course / "nbgrader_config.py").read_bytes()
    extensions = (course / EXTENSIONS).read_bytes() if (course / EXTENSIONS).is_file() else None
    judge_timeout = _judge_timeout(course, extra_args)
    batches = heaviest_first(split_batches(todo, jobs, batch_max), course)
    files, references = {}, {}
    assignments = sorted({a for _, a in todo})
    for assignment in assignments:
        source = read_tree(course / SOURCE / assignment) if (course / SOURCE / assignment).is_dir() else {}
        # a task that holds the data rather than client.scatter: scattered data dies with the worker
        # that holds it, and everything that needs it with it; a task's result is computed again
        files[assignment] = client.submit(tasks.hold,
                                          tasks.AssignmentFiles(assignment, config, snapshot, source, extensions),
                                          pure=False, key=f"files-{assignment}-{os.urandom(4).hex()}")
        # on every worker: where the data is would otherwise decide where the batches go (all to one)
        client.replicate([files[assignment]])
        students = [s for s, a in todo if a == assignment]
        # With no more batches than workers, each batch's nbgrader runs the reference for its own
        # students (the judge does when it is given none): as many runs as reference tasks would be,
        # and no worker waits for another's before it starts grading. Otherwise reference tasks, first
        # (priority), as many per assignment as its share of the threads: one run for all the students
        # of an assignment graded with others, whose tasks keep the other threads busy meanwhile.
        references[assignment] = {} if len(batches) <= jobs else {
            chunk: client.submit(tasks.reference_task, files[assignment], list(chunk), env, wall, judge_timeout,
                                 pure=False, priority=2, key=f"reference-{assignment}-{i}-{os.urandom(4).hex()}")
            for i, chunk in enumerate(reference_chunks(students, max(1, jobs // len(assignments))))}

    batch_of = {}   # task key -> (students, assignment)

    def submit(students, assignment):
        handins = {s: read_tree(course / "submitted" / s / assignment) for s in students}
        batch = tasks.Batch(assignment, tuple(students), handins, tuple(extra_args), env, wall,
                            timeout * len(students) if timeout else None)
        needed = [future for chunk, future in references[assignment].items() if set(chunk) & set(students)]
        future = client.submit(tasks.batch_task, batch, files[assignment], needed, pure=False)
        batch_of[future.key] = (list(students), assignment)
        return future

    pending = as_completed([submit(*b) for b in batches], loop=client.loop)
    failures, refused = [], []
    bar = _progress(len(todo), progress)
    for future in pending:
        try:
            outcome = future.result()
        except Exception as err:   # a task that raised (a worker without the wall, a broken reference)
            students, assignment = batch_of[future.key]
            if len(students) > 1 and isinstance(err, KilledWorker):
                # the batch took its workers down (Dask tried it on several): find whose notebook did
                for student in students:
                    pending.add(submit([student], assignment))
                continue
            refused += [(s, assignment, err) for s in students]
            bar.update(len(students))
            continue
        if outcome.returncode == 124 and len(outcome.students) > 1:
            # a batch ran out of time: grade its students one by one, so that one
            # endless notebook costs only its own grade
            for student in outcome.students:
                pending.add(submit([student], outcome.assignment))
            continue
        merging = time.perf_counter()
        with GRADEBOOK_WRITER:
            collect(outcome, course)   # here, one batch at a time: one writer on the gradebook
        spent.update(outcome.timings)
        spent[timings.MERGE] += time.perf_counter() - merging
        if merged:
            merged(outcome)
        failures += [(s, outcome) for s in outcome.failed]
        if verbose:
            print(outcome.log)
        bar.set_postfix_str(f"{outcome.students[-1]}/{outcome.assignment}", refresh=False)
        bar.update(len(outcome.students))
    bar.close()
    del warming   # held until here: Dask cancels a task whose future is let go of
    for chunks in references.values():
        for future in chunks.values():
            if future.status == "finished":
                spent[timings.REFERENCE_TASKS] += future.result()["seconds"]
    for student, outcome in failures:
        print(f"FAILED {student}/{outcome.assignment} (exit {outcome.returncode}); nbgrader's log:\n"
              f"{_student_log(outcome.log, student)[-3000:]}", file=sys.stderr)
    for student, assignment, err in refused:
        print(f"NOT GRADED {student}/{assignment}: {type(err).__name__}: {err}", file=sys.stderr)
    graded = len(todo) - len(failures) - len(refused)
    print(f"graded {graded}/{len(todo)} submissions on {len(client.scheduler_info()['workers'])} workers"
          f"{' behind the wall' if wall else ''}")
    return 1 if failures or refused else 0


def _student_log(log: str, student: str) -> str:
    """The part of a batch's log about one student (nbgrader logs students one after another)."""
    lines = log.splitlines()
    starts = [i for i, line in enumerate(lines) if f"/{student}/" in line or f"'{student}'" in line]
    return "\n".join(lines[starts[0]:starts[-1] + 1]) if starts else log


def _judge_timeout(course: Path, extra_args) -> int:
    """Judge.timeout as the batches' nbgrader sees it: on the command line, else in nbgrader_config.py."""
    from traitlets.config.loader import PyFileConfigLoader
    from grader.pipeline import REFERENCE_CELL_SECONDS
    for arg in extra_args:
        if arg.startswith("--Judge.timeout="):
            return int(arg.split("=", 1)[1])
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    return int(config.Judge.get("timeout", REFERENCE_CELL_SECONDS))


def _progress(total: int, enabled: bool):
    from tqdm.auto import tqdm
    return tqdm(total=total, desc="autograde", unit="nb", disable=not enabled, file=sys.stderr)
