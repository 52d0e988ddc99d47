"""The worker's side of `make autograde`: Dask tasks that take data and return data.

`reference_task` runs the judge's reference once per assignment (every notebook of it, for every
student handed in); `batch_task` grades a batch of students of one assignment with plain
`nbgrader autograde` (forked from the worker's warm nbgrader) in a scratch course of its own, the reference's outputs handed to the judge
(`--Judge.reference_dir`). Both build their course folder from what they are sent and give back
the results as data: no file system is shared with the coordinator. docs/GRADING.md, "How parallel
grading works".
"""
import json
import os
import re
import shutil
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

# What the tasks use is imported here, once, when a worker first unpickles a task: not in each task's
# thread. torch's import is not thread-safe: a `dask worker` whose task imported it while another
# thread of the process did refused a whole class ("cannot import name 'nn' from partially initialized
# module 'torch'", and Python 3.11's "AST constructor recursion depth mismatch" from torch.jit's parsing).
from nbgrader.api import Gradebook

from grader import timings
from grader.class_grading.transfer import read_batch_rows, read_tree, write_tree
from grader.judge.probes import gradebook_hidden_sections
from grader.judge.reference import saved_reference
from grader.class_grading.warm_nbgrader import WarmNbgrader
from grader.course import SOURCE, tool_env
from grader.extensions import FILE as EXTENSIONS
from grader.judge.outcomes import outcome_folder
from grader.wall import dead_kernels, sandbox

@dataclass(frozen=True)
class AssignmentFiles:
    """What every task of one assignment needs, sent once to each worker that needs it."""
    assignment: str
    config: bytes            # nbgrader_config.py: the course's pipeline, the wall included
    gradebook: bytes         # a snapshot of gradebook.db taken before grading starts
    source: dict             # solutions/<assignment>/ as {path: bytes}: the judge's solution notebooks
    extensions: bytes | None = None   # the course's extensions.csv (grader/extensions.py), if it has one


@dataclass(frozen=True)
class Batch:
    assignment: str
    students: tuple
    handins: dict            # {student: {path: bytes}}: submitted/<student>/<assignment>/
    extra_args: tuple = ()   # for nbgrader autograde, e.g. "--Execute.timeout=10"
    env: dict = field(default_factory=dict)   # the coordinator's COURSE_* settings (COURSE_SANDBOX
                                              # says whether the wall stands), thread counts
    wall: bool = True        # False only where the instructor said so (COURSE_SANDBOX=0)
    timeout: float | None = None   # for the whole batch


@dataclass
class BatchOutcome:
    """What one batch gives back: per student, the gradebook rows and autograded/<student>/<assignment>/."""
    students: list
    assignment: str
    returncode: int
    log: str = ""
    seconds: float = 0.0
    rows: dict = field(default_factory=dict)      # {student: rows or None}, transfer.read_batch_rows
    graded: dict = field(default_factory=dict)    # {student: {path: bytes}}
    outcomes: dict = field(default_factory=dict)  # {student: {path: bytes}}: judge_outcomes/<assignment>/<student>/
    timings: dict = field(default_factory=dict)   # {step: seconds}, grader/timings.py
    worker: str = ""
    dead_kernels: set = field(default_factory=set)   # students whose own kernel died (grader/wall/dead_kernels.py)

    @property
    def failed(self) -> list:
        """Students nbgrader reported an error for (all of them when it was stopped)."""
        if self.returncode == 124:
            return list(self.students)
        named = set(re.findall(r"error processing assignment '[^']*' for student '([^']*)'", self.log))
        return [s for s in self.students if s in named] or (list(self.students) if self.returncode else [])


def warm_up(env: dict, wall: bool = True) -> None:
    """Start this worker's zygote and warm nbgrader without waiting for them to be ready: the task
    ends at once, so the worker looks free to the scheduler, and its first batches find them warm (or
    wait for them). Here, in a task's thread, which lives as long as the worker: each of the two
    dies with the thread that started it (PR_SET_PDEATHSIG)."""
    _take_settings(env, wall)
    start_servers(wall)


def start_servers(wall: bool) -> None:
    """This process's zygote (`wall`: kernels will be walled, warm ones then) and warm nbgrader,
    started if they are not running; `stop_servers` stops both."""
    if wall:
        sandbox.Zygote.for_child()
    warm_nbgrader()


def stop_servers() -> None:
    stop_warm_nbgrader()
    sandbox.Zygote.stop()


def hold(files: AssignmentFiles) -> AssignmentFiles:
    """A task whose result is `files`: what the coordinator sends once for all tasks of an assignment."""
    return files


class WallMissing(RuntimeError):
    """A worker that cannot put student code behind the wall refuses to grade."""


_settings_lock = threading.Lock()   # the worker's threads take the same settings, one at a time


def _take_settings(env: dict, wall: bool) -> None:
    """The coordinator's COURSE_* settings (the wall's limits, quick mode...) replace this worker's own,
    for its kernels and the nbgrader processes it starts; then check that the wall can stand here."""
    wanted = {k: v for k, v in env.items() if k.startswith("COURSE_")}   # COURSE_SANDBOX included
    with _settings_lock:
        if wanted != {k: v for k, v in os.environ.items() if k.startswith("COURSE_")}:
            for name in [n for n in os.environ if n.startswith("COURSE_")]:
                del os.environ[name]
            os.environ.update(wanted)
        if sandbox.Zygote.stderr is None:
            # kernels' own messages (torch's profiler writes some) go to a file in the worker's folder,
            # not to the terminal of the command that started a LocalCluster
            sandbox.Zygote.stderr = open(Path(_scratch_root()) / "kernels-stderr.txt", "ab")
    if wall and not sandbox.bwrap():
        raise WallMissing(f"worker {socket.gethostname()} cannot grade behind the wall: {sandbox.INSTALL_HINT} "
                          "Install bubblewrap on every worker, or grade without the wall (COURSE_SANDBOX=0) "
                          "if you trust every submission.")


def _this_worker():
    """The Dask worker this task runs on, or None outside one."""
    try:
        from distributed import get_worker
        return get_worker()
    except (ImportError, ValueError):
        return None


def _worker_name() -> str:
    worker = _this_worker()
    return worker.address if worker else socket.gethostname()


def _scratch_root() -> str:
    """The worker's own folder (Dask purges what a killed worker left there), else the system's."""
    worker = _this_worker()
    return worker.local_directory if worker else tempfile.gettempdir()


def make_course(folder: Path, files: AssignmentFiles, handins: dict) -> Path:
    """A private course directory holding only what grading these hand-ins needs."""
    folder = Path(folder)
    (folder / "nbgrader_config.py").write_bytes(files.config)
    (folder / "gradebook.db").write_bytes(files.gradebook)
    if files.extensions is not None:
        (folder / EXTENSIONS).write_bytes(files.extensions)
    (folder / SOURCE / files.assignment).mkdir(parents=True)
    write_tree(folder / SOURCE / files.assignment, files.source)
    for student, tree in handins.items():
        (folder / "submitted" / student / files.assignment).mkdir(parents=True)
        write_tree(folder / "submitted" / student / files.assignment, tree)
    return folder


def reference_task(files: AssignmentFiles, students: list, env: dict, wall: bool = True, timeout: int = 120) -> dict:
    """{"notebooks": {notebook: saved reference run}, "seconds": s} for `students`, one run per
    notebook that has hidden checks (grader/judge/reference.py, saved_reference)."""
    start = time.perf_counter()
    _take_settings(env, wall)
    if wall:
        sandbox.Zygote.for_child()   # started here, in the task's thread (see warm_up), if not yet
    with tempfile.TemporaryDirectory(prefix=f"reference-{files.assignment[:20]}-", dir=_scratch_root()) as tmp:
        course = make_course(Path(tmp), files, {})
        db = f"sqlite:///{course / 'gradebook.db'}"
        with Gradebook(db) as gb:
            notebooks = [nb.name for nb in gb.find_assignment(files.assignment).notebooks]
        saved = {}
        for notebook in notebooks:
            hidden = gradebook_hidden_sections(db, notebook, files.assignment)
            solution = course / SOURCE / files.assignment / f"{notebook}.ipynb"
            if hidden and solution.is_file():
                saved[notebook] = saved_reference(solution, files.assignment, notebook, hidden, students, timeout)
        return {"notebooks": saved, "seconds": time.perf_counter() - start}


def batch_task(batch: Batch, files: AssignmentFiles, references: list) -> BatchOutcome:
    """Grade one batch with plain `nbgrader autograde` in a scratch course; results as data.
    `references`: the reference tasks' results that cover the batch's students."""
    _take_settings(batch.env, batch.wall)
    scratch = Path(tempfile.mkdtemp(prefix=f"grade-{batch.assignment[:20]}-", dir=_scratch_root()))
    try:
        make_course(scratch, files, batch.handins)
        (scratch / ".reference").mkdir()
        for notebook, saved in _for_students(references, batch.students).items():
            (scratch / ".reference" / f"{notebook}.json").write_text(json.dumps(saved))
        outcome = _run_nbgrader(scratch, batch, scratch / ".reference")
        outcome.rows = read_batch_rows(scratch / "gradebook.db", batch.assignment, batch.students)
        for student in batch.students:
            graded = scratch / "autograded" / student / batch.assignment
            if graded.is_dir():   # nbgrader removes it for a notebook it could not grade
                outcome.graded[student] = read_tree(graded)
            judged = outcome_folder(scratch, batch.assignment, student)
            if judged.is_dir():
                outcome.outcomes[student] = read_tree(judged)
        return outcome
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _for_students(references: list, students) -> dict:
    """{notebook: saved run} holding only `students`' probes, from reference tasks' results."""
    merged = {}
    for result in references:
        for notebook, saved in result["notebooks"].items():
            mine = merged.setdefault(notebook, {"fingerprint": saved["fingerprint"], "outputs": {}})
            mine["outputs"].update({s: saved["outputs"][s] for s in students if s in saved["outputs"]})
    return merged


_warm = None   # this worker's WarmNbgrader
_warm_lock = threading.Lock()


def warm_nbgrader(instead_of: WarmNbgrader | None = None) -> WarmNbgrader:
    """This worker's warm nbgrader, started if it is not running, or started again if it died or
    failed (`instead_of`). It dies with the thread that started it (PR_SET_PDEATHSIG)."""
    global _warm
    with _warm_lock:
        if _warm is None or not _warm.alive() or _warm is instead_of:
            if _warm is not None:
                _warm.stop()
            _warm = WarmNbgrader(tool_env())
        return _warm


def stop_warm_nbgrader() -> None:
    global _warm
    with _warm_lock:
        if _warm is not None:
            _warm.stop()
        _warm = None


def _run_nbgrader(scratch: Path, batch: Batch, references: Path) -> BatchOutcome:
    students = list(batch.students)
    who = ["--student", students[0]] if len(students) == 1 else []
    # the scratch course, whatever root the course's own nbgrader_config.py names (a hub's names its course
    # directory): a batch that graded there would be a second writer of the real gradebook and autograded/
    argv = ["autograde", batch.assignment, *who, "--force", f"--CourseDirectory.root={scratch}",
            f"--Judge.reference_dir={references}", *batch.extra_args]
    timings_file = scratch / ".timings"
    # the worker's zygote, already warm from warm_up, a reference run or another batch
    zygote = sandbox.Zygote.for_child() if batch.wall else {}
    dead = scratch / ".dead-kernels"
    env = dict(batch.env, **zygote, **{timings.ENV: str(timings_file), dead_kernels.ENV: str(dead)})
    start = time.perf_counter()
    warm = warm_nbgrader()
    try:
        code = warm.run(argv, scratch, tool_env(env), scratch / ".log", batch.timeout)
    except (OSError, RuntimeError):   # it stopped (killed?): once more, on a fresh one
        code = warm_nbgrader(instead_of=warm).run(argv, scratch, tool_env(env), scratch / ".log", batch.timeout)
    log = (scratch / ".log").read_text(errors="replace")
    if code == 124:
        log = f"nbgrader autograde ran past {batch.timeout} s and was stopped\n{log}"
    seconds = time.perf_counter() - start
    spent = timings.read(timings_file)
    spent[timings.NBGRADER] = seconds
    spent[timings.NBGRADER_OWN] = timings.own_work(spent)
    return BatchOutcome(students, batch.assignment, code, log, seconds, timings=spent, worker=_worker_name(),
                        dead_kernels=dead_kernels.read(dead))
