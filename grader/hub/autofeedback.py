"""Feedback on submit: a service that grades each new hand-in and releases its feedback.

    python -m grader.hub.autofeedback --course DIR [--interval SECONDS] [--log FILE] [--once]

It watches the inbound folder of nbgrader's exchange (Exchange.root and the course id as the course's
nbgrader configuration sets them) and takes each student's newest valid hand-in of an assignment that
it has not handled yet (the course's gate, grader/inbound.py: what it refuses goes to the quarantine):
it copies it into submitted/ as the gate does, grades it behind the wall with the course's pipeline and
judge (autograde_all), writes its feedback without hidden tests (`nbgrader
generate_feedback`) and releases it (`nbgrader release_feedback`), so that the student's "Fetch
Feedback" gets it. A hand-in that cannot be graded gets a page that says why, released the same way.
One line per hand-in goes to the log (default <course>/autofeedback.log); what was handled is kept
in <course>/.autofeedback/, so that a restarted service grades nothing twice. `--once`: one pass,
then exit (tests, cron); otherwise it polls until SIGTERM or SIGINT.

docs/GRADING.md, "Feedback on submit"; tests/test_autofeedback.py; tests/bench_feedback.py measures
the seconds from Submit to fetchable feedback.
"""
import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from grader.course import nbgrader_api, run_nbgrader, tool_env
from grader.feedback import not_graded_reason, write_not_graded_pages
from grader.inbound import Entry, Gate, Refused, newest_unhandled
from grader.judge.outcomes import outcome_folder

STATE = ".autofeedback"      # in the course directory: what was handled, the copies being taken in
HANDLED = "handled.json"
ATTEMPTS = "attempts.jsonl"  # one JSON line per hand-in handled: what reports read (grader/reports/)
LOG = "autofeedback.log"
NBGRADER_SECONDS = 600       # generate_feedback, release_feedback: each far below this
RETRY_SECONDS = 30           # after a failed pass, before a fresh cluster takes its hand-ins again
SETTLE_WAIT = 10             # --once: seconds to wait at most for hand-ins still being written
RELEASERS = 2                # threads of a pass that write and release feedback while its grading goes on

MAX_TRIES = 3                # a hand-in that the grader itself failed on is taken again, on a fresh cluster, this often

# Why a notebook that is readable and rightly named was not graded, from what autograde_all says of it.
REFUSED = (f"the grader failed on its side {MAX_TRIES} times in a row, so it was not graded. Your instructor "
           "has been told; you need not submit again.")
TIMED_OUT = "grading ran past its time limit, so it was stopped. Look for a cell that never ends."
NO_PAGE = "it was graded, but its feedback page could not be made. Your instructor has been told."
FAILED = ("the kernel running your notebook died before the end (it crashed, called os._exit, or went over "
          "the CPU or memory limit). Run it top to bottom with Restart & Run All, fix what stops it, and "
          "submit again.")


@dataclass(frozen=True)
class Exchange:
    root: Path
    course_id: str
    enrolled_only: bool = False   # the gate's roster rule (grader/gated_collect.py, CourseGate)

    @property
    def inbound(self) -> Path:
        return self.root / self.course_id / "inbound"


# the course's configuration as nbgrader reads it for every command there
_EXCHANGE = """
import json
from nbgrader.exchange.default.exchange import Exchange
from grader.gated_collect import CourseGate
print(json.dumps([Exchange(coursedir=api.coursedir, parent=app).root, api.coursedir.course_id,
                  CourseGate(parent=app).enrolled_only]))
"""


def exchange_of(course: Path) -> Exchange:
    root, course_id, enrolled_only = json.loads(nbgrader_api(_EXCHANGE, course=course).stdout.strip().splitlines()[-1])
    return Exchange(Path(root), course_id, enrolled_only)


def course_gate(course: Path, exchange: Exchange) -> Gate:
    """The gate (grader/inbound.py) for the course's inbound/: the gradebook's assignments and, with
    `enrolled_only`, its students. Read with sqlite3, read-only: the service asks again each time the
    gradebook changed, every merge in a rush, and nbgrader's Gradebook costs a schema check each time."""
    uri = f"file:{Path(course) / 'gradebook.db'}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True, timeout=60)) as gb:
        assignments = [name for (name,) in gb.execute("SELECT name FROM assignment")]
        students = [sid for (sid,) in gb.execute("SELECT id FROM student")] if exchange.enrolled_only else None
    return Gate(exchange.inbound, students, assignments)


def state_dir(course: Path) -> Path:
    folder = Path(course) / STATE
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


class Book:
    """What the service has handled: the log the instructor reads, and the list on disk that keeps a
    restarted service from grading a hand-in twice. The passes that run at once share it."""

    def __init__(self, course: Path, log: Path | None = None):
        self.course = Path(course)
        self.log = Path(log or self.course / LOG)
        self.lock = threading.Lock()
        path = self.course / STATE / HANDLED
        self.handled = set(json.loads(path.read_text())) if path.exists() else set()
        self.tries = Counter()   # {hand-in: gradings that failed on the grader's side}

    def grader_failed(self, entry: Entry, why: str) -> bool:
        """A grading of `entry` failed on the grader's side (not the student's: their kernel did not die,
        their notebook is readable and rightly named). True while it should be taken again."""
        with self.lock:
            self.tries[entry.name] += 1
            tries = self.tries[entry.name]
        print(f"autofeedback: grading {entry.name!r} failed on the grader's side ({why}), try {tries} of "
              f"{MAX_TRIES}; nbgrader's log is above", flush=True)
        return tries < MAX_TRIES

    def new(self, gate: Gate, wait: float = 0) -> list:
        """The newest valid hand-in of each student and assignment in inbound/, unless handled; what the
        gate refuses is set aside (moved to the quarantine) and logged once. `wait`: seconds to wait at
        most for hand-ins still being written (grader/inbound.py, Gate.sort)."""
        valid, refused = gate.sort(os.listdir(gate.inbound), wait)
        for name, why in refused:
            if name not in self.handled:
                self.refuse(name, why, gate.set_aside(name, why))
        with self.lock:
            return newest_unhandled(valid, self.handled)

    def refuse(self, name: str, why: str, done: str) -> None:
        """One line in the log for an entry the gate refused; none in the attempts history, which is the
        students' (a forgery in a classmate's name is not that classmate's attempt)."""
        entry = Entry.parse(name) or Entry(name, "?", "?", "?", None)
        now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        fields = (now, entry.student, entry.assignment, entry.timestamp, f"refused: {why}; {done}", "0.0 s")
        with self.lock:
            with open(self.log, "a") as out:
                out.write("\t".join(_printable(f) for f in fields) + "\n")
            self._handled(name)

    def done(self, entry: Entry, result: str, noticed: float, points: tuple | None = None) -> None:
        """One line in the log: when, student, assignment, the hand-in's timestamp, score or error,
        seconds from noticing it to its released feedback; the same as data in the attempts history
        (`points`: (score, max score) when it was graded); and the hand-in is never taken again."""
        now, seconds = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), time.monotonic() - noticed
        fields = (now, entry.student, entry.assignment, entry.timestamp, result, f"{seconds:.1f} s")
        attempt = {"at": now, "student": entry.student, "assignment": entry.assignment, "handed_in": entry.timestamp,
                   "score": points[0] if points else None, "max_score": points[1] if points else None,
                   "result": result, "seconds": round(seconds, 1)}
        with self.lock:
            with open(self.log, "a") as out:
                out.write("\t".join(_printable(f) for f in fields) + "\n")
            with open(state_dir(self.course) / ATTEMPTS, "a") as out:
                out.write(json.dumps(attempt) + "\n")
            self._handled(entry.name)

    def _handled(self, name: str) -> None:
        self.handled.add(name)
        tmp = state_dir(self.course) / f"{HANDLED}.tmp"
        tmp.write_text(json.dumps(sorted(self.handled), indent=0))
        os.replace(tmp, tmp.with_name(HANDLED))   # atomic: a service stopped mid-write keeps the old list


def _printable(text: str) -> str:
    """A log field: names come from folder names that students chose, which may hold a tab or a newline."""
    return text if text.isprintable() else ascii(text)


# ---- nbgrader's commands ----------------------------------------------------------------------------

class Nbgrader:
    """The service's nbgrader commands (generate_feedback, release_feedback) in the course.
    With `warm` (a WarmNbgrader, grader/class_grading/warm_nbgrader.py, which imported nbgrader once),
    each is forked from it: measured on 2 cores (load average 1.9), a release_feedback with nothing to
    release took 0.05 s so, 0.83 s as a fresh process (median of 5 each); a hand-in costs two such
    commands. Without `warm`, a fresh process each."""

    def __init__(self, course: Path, warm=None):
        self.course, self.warm = Path(course), warm

    def __call__(self, *args) -> tuple:
        """(exit status, output) of `nbgrader <args>`; status 124 when it ran past NBGRADER_SECONDS."""
        if self.warm is None or not self.warm.alive():
            try:
                proc = run_nbgrader(*args, course=self.course, check=False, timeout=NBGRADER_SECONDS)
            except subprocess.TimeoutExpired:
                return 124, ""
            return proc.returncode, proc.stdout + proc.stderr
        with tempfile.NamedTemporaryFile(dir=state_dir(self.course), prefix="nbgrader-", suffix=".log") as log:
            code = self.warm.run([str(a) for a in args], self.course, tool_env(), log.name, NBGRADER_SECONDS)
            return code, Path(log.name).read_text(errors="replace")


def _failed(command: str, code: int, output: str) -> str | None:
    """What the log says of a failed nbgrader command, None when it did not fail."""
    if code == 124:
        return f"nbgrader {command} ran past {NBGRADER_SECONDS} s"
    return f"nbgrader {command} failed: {_last_error(output)}" if code else None


# ---- one hand-in ----------------------------------------------------------------------------------

def take(course: Path, gate: Gate, entry: Entry, staging: Path) -> Path:
    """The hand-in, copied by the gate (grader/inbound.py) into `staging` and then moved to
    submitted/<student>/<assignment>/, as `nbgrader collect --update` would place it; returns that
    folder. Refused: nothing changes."""
    copy = staging / entry.name
    gate.take(entry, copy)
    # the last hand-in's graded notebook, outcomes and feedback go: its feedback is out, and a stale copy
    # would be taken for this one's if this one cannot be graded
    for done in ("submitted", "autograded", "feedback"):
        shutil.rmtree(Path(course) / done / entry.student / entry.assignment, ignore_errors=True)
    shutil.rmtree(outcome_folder(course, entry.assignment, entry.student), ignore_errors=True)
    handed_in = Path(course) / "submitted" / entry.student / entry.assignment
    handed_in.parent.mkdir(parents=True, exist_ok=True)
    os.rename(copy, handed_in)   # one file system: the course's
    return handed_in


def release(course: Path, entry: Entry, handed_in: Path, expected: list, problem: str,
            nbgrader: Nbgrader | None = None) -> str:
    """Feedback for one collected hand-in, generated and released; returns what the log says of it.
    `problem`: why it was not graded, if it was not and its notebooks show no reason."""
    student, assignment = entry.student, entry.assignment
    nbgrader = nbgrader or Nbgrader(course)
    graded = (Path(course) / "autograded" / student / assignment).is_dir()
    reasons = []
    if graded:
        why = _failed("generate_feedback", *nbgrader("generate_feedback", assignment, "--student", student, "--force"))
        reasons += [why] if why else []
    reasons += write_not_graded_pages(Path(course) / "feedback" / student / assignment, handed_in, expected,
                                      NO_PAGE if graded else problem,
                                      dict(student=student, assignment=assignment, timestamp=entry.timestamp))
    if not any(handed_in.glob("*.ipynb")):
        reasons.append("no notebook in the submission")
    why = _failed("release_feedback", *nbgrader("release_feedback", assignment, "--student", student))
    reasons += [why] if why else []
    if not graded:
        return "not graded: " + " ".join(reasons)
    return score(course, student, assignment) + "".join(f"; {r}" for r in reasons)


def score(course: Path, student: str, assignment: str) -> str:
    """The submission's score out of the assignment's, as the gradebook has it."""
    got, out_of, flagged = points_of(course, student, assignment)
    return f"{got:g}/{out_of:g}" + (" (flagged for manual grading)" if flagged else "")


def points_of(course: Path, student: str, assignment: str) -> tuple:
    """(score, max score, needs manual grading) of the submission, from the gradebook."""
    from nbgrader.api import Gradebook
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{Path(course) / 'gradebook.db'}") as gb:
        warnings.simplefilter("ignore")
        submission = gb.find_submission(assignment, student)
        return submission.score, submission.max_score, bool(submission.needs_manual_grade)


def assignment_notebooks(course: Path) -> dict:
    """{assignment: [its notebooks' names]}, from the gradebook."""
    from nbgrader.api import Gradebook
    if not (Path(course) / "gradebook.db").is_file():   # nbgrader would make an empty one, and refuse every hand-in
        raise FileNotFoundError(f"no gradebook.db in {course}: release the assignments first")
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{Path(course) / 'gradebook.db'}") as gb:
        warnings.simplefilter("ignore")
        return {a.name: [nb.name for nb in a.notebooks] for a in gb.assignments}


def _last_error(output: str) -> str:
    lines = output.splitlines()
    errors = [line for line in lines if "ERROR" in line or "CRITICAL" in line] or lines[-1:]
    return errors[-1].strip()[:300] if errors else "no output"


# ---- a pass ------------------------------------------------------------------------------------

class Pass:
    """Some new hand-ins, from inbound/ to released feedback: all collected in one command, all graded
    in one autograde_all, one batch each (so that a slow notebook holds back no other), each released
    as soon as its batch is in the gradebook, by RELEASERS threads, while the pass's other batches are
    graded and merged. `abandoned` set: the service is stopping or starting over, and a hand-in whose
    feedback is not out yet is left for the next start, not marked handled."""

    def __init__(self, book: Book, gate: Gate, entries: list, client=None, abandoned=None,
                 nbgrader: Nbgrader | None = None):
        self.book, self.gate, self.entries, self.client = book, gate, entries, client
        self.abandoned = abandoned or threading.Event()
        self.nbgrader = nbgrader or Nbgrader(book.course)
        self.noticed = time.monotonic()
        self.taken = {}       # {(student, assignment): (Entry, its folder in submitted/)}: not graded yet
        self.expected = {}
        self.failed = False
        self.preparing = True   # until its hand-ins are on their way to the cluster

    def run(self) -> None:
        from grader.class_grading.autograde import autograde_all
        course = self.book.course
        self.expected = assignment_notebooks(course)
        staging = Path(tempfile.mkdtemp(prefix="collect-", dir=state_dir(course)))
        self.releasing = ThreadPoolExecutor(RELEASERS, thread_name_prefix="autofeedback-release")
        try:
            for entry in self.entries:
                try:
                    self.taken[entry.key] = (entry, take(course, self.gate, entry, staging))
                except Refused as why:   # the next look takes the newest valid one before it
                    self.book.refuse(entry.name, str(why), self.gate.set_aside(entry.name, str(why)))
                except OSError as err:   # ours (a full disk): left in inbound/, taken again at a later look
                    print(f"autofeedback: could not take {entry.name!r} ({err}); it stays in inbound/", flush=True)
            if self.taken:
                # Graded by the course's coordinator, on a cluster that the service keeps. Measured on 2 idle
                # cores, one 00_setup notebook: `nbgrader autograde A --student S` takes 9.7 s each time
                # (nbgrader and torch imported, the judge's reference and the student's kernel started cold),
                # autograde_all with a cluster of its own 9.8 s, on a warm cluster 3.9 to 4.3 s (each worker
                # keeps a warm nbgrader and a zygote with torch imported).
                self.preparing = False
                autograde_all(course=course, only=list(self.taken), client=self.client, batch_max=1,
                              progress=False, merged=self._merged)
                for key in list(self.taken):   # its task raised, or never ran: the grader's failure
                    self._grader_failed(key, "its grading task did not run to the end")
        finally:
            self.preparing = False
            self.releasing.shutdown(wait=True)   # each release reads its copy in staging
            shutil.rmtree(staging, ignore_errors=True)

    def start(self) -> "Pass":
        """run() in a thread of its own; a pass that fails as a whole sets `failed`."""
        def run():
            try:
                self.run()
            except Exception:
                if not self.abandoned.is_set():
                    traceback.print_exc()
                    self.failed = True
        self.thread = threading.Thread(target=run, name="autofeedback-pass", daemon=True)
        self.thread.start()
        return self

    def busy(self) -> set:
        """(student, assignment) of the hand-ins still on their way."""
        return {e.key for e in self.entries if e.name not in self.book.handled} if self.thread.is_alive() else set()

    def ungraded(self) -> int:
        """How many of its hand-ins the cluster has still to grade (all, while they are collected)."""
        if not self.thread.is_alive():
            return 0
        return len(self.entries) if self.preparing else len(self.taken)

    def _merged(self, outcome) -> None:
        """autograde_all's word that a batch is in the gradebook. A hand-in it did not grade is the
        student's failure when their kernel died, the time limit stopped it, or its files show why;
        otherwise the grader's, and it is taken again (_grader_failed)."""
        for student in outcome.students:
            key = (student, outcome.assignment)
            if key not in self.taken:
                continue
            if outcome.returncode == 124:
                self._release(key, TIMED_OUT)
            elif (outcome.returncode == 0 or student in outcome.dead_kernels or self._graded(key)
                  or self._visible_problem(key)):
                self._release(key, FAILED)
            else:
                self._grader_failed(key, f"nbgrader autograde exited with {outcome.returncode}")

    def _graded(self, key: tuple) -> bool:
        return (self.book.course / "autograded" / key[0] / key[1]).is_dir()

    def _visible_problem(self, key: tuple) -> bool:
        """Whether the hand-in's own files say why it cannot be graded (no notebook, not JSON, renamed)."""
        entry, handed_in = self.taken[key]
        notebooks = list(handed_in.glob("*.ipynb"))
        return not notebooks or any(not_graded_reason(nb, self.expected[entry.assignment], None) for nb in notebooks)

    def _grader_failed(self, key: tuple, why: str) -> None:
        """Not the student's failure: the hand-in is left unhandled, and the next look takes it again;
        from its second failure on, the pass is marked failed, so that the service starts a fresh
        cluster (zygote, warm nbgrader, scratch folders) first. After MAX_TRIES its page says so: no
        verdict is made up."""
        entry, _ = self.taken[key]
        if self.book.grader_failed(entry, why):
            del self.taken[key]
            self.failed = self.failed or self.book.tries[entry.name] > 1
        else:
            self._release(key, REFUSED)

    def _release(self, key: tuple, problem: str) -> None:
        """The hand-in's feedback, written and released by a releasing thread."""
        self.releasing.submit(self._finish, self.taken.pop(key), problem)

    def _finish(self, taken: tuple, problem: str) -> None:
        entry, handed_in = taken
        if self.abandoned.is_set():
            return
        points = None
        try:
            result = release(self.book.course, entry, handed_in, self.expected[entry.assignment], problem,
                             self.nbgrader)
            if not result.startswith("not graded"):
                points = points_of(self.book.course, entry.student, entry.assignment)[:2]
        except Exception as err:   # this hand-in's feedback only; the others go on
            if self.abandoned.is_set():   # the service stopped under it: left for the next start
                return
            traceback.print_exc()
            result = f"not graded: feedback failed ({type(err).__name__}: {err})"
        self.book.done(entry, result, self.noticed, points)


def grade_pending(course: Path, exchange: Exchange | None = None, log: Path | None = None, client=None) -> int:
    """One pass over what is new in inbound/, in this thread; returns how many hand-ins it handled.
    `client`: a distributed.Client to grade on; None starts a cluster for this pass only."""
    course = Path(course).resolve()
    exchange = exchange or exchange_of(course)
    book = Book(course, log)
    assignment_notebooks(course)   # no gradebook: say so before anything is refused for it
    gate = course_gate(course, exchange)
    entries = book.new(gate, wait=SETTLE_WAIT)
    if entries:
        Pass(book, gate, entries, client).run()
    return len(entries)


def fair_share(entries: list, busy: set) -> list:
    """What the next pass takes of `entries`: one hand-in per student, the earliest, and none of a
    student in `busy` (one of theirs is on its way), so that no student's flood of hand-ins delays a
    classmate's feedback by more than one grading."""
    first = {}
    for entry in sorted(entries, key=lambda e: e.when):
        if entry.student not in busy:
            first.setdefault(entry.student, entry)
    return list(first.values())


# ---- the service -------------------------------------------------------------------------------

class Stopped(BaseException):
    """SIGTERM or SIGINT. A BaseException, as KeyboardInterrupt is, so that no `except Exception` holds it up."""


def _stop(signum, frame):
    signal.signal(signum, signal.SIG_DFL)   # a second signal ends it at once
    raise Stopped(signal.Signals(signum).name)


@contextmanager
def warm_cluster(jobs: int | None = None):
    """A distributed.Client on a LocalCluster of `jobs` threads (default: one per core), warming up
    at once (a zygote with torch imported, a warm nbgrader), so that the first hand-in does not wait
    for that. The service keeps one for its whole life."""
    from grader.class_grading.autograde import default_jobs, warm_up, worker_settings
    from grader.class_grading.cluster import grading_client
    from grader.wall import sandbox
    jobs = jobs or default_jobs()
    with grading_client(jobs, wall=sandbox.enabled()) as client:
        client.gather(warm_up(client, worker_settings(sandbox.enabled(), jobs), sandbox.enabled()))
        yield client


@contextmanager
def warm_nbgrader(course: Path):
    """An Nbgrader whose commands fork from a warm nbgrader, kept for the service's life (it dies with
    the thread that started it)."""
    from grader.class_grading.warm_nbgrader import WarmNbgrader
    warm = WarmNbgrader(tool_env())
    try:
        yield Nbgrader(course, warm)
    finally:
        warm.stop()


class Service:
    """Polls inbound/ and starts a pass, in a thread, for what is new and not already on its way: a
    notebook that runs long holds back no later hand-in, only one worker thread of the cluster (kept
    warm for the service's life). In a rush (a class handing in together), what comes while the
    cluster has more than one hand-in per thread still to grade waits, and goes in one pass once it
    has no more than that: the cluster always has the next hand-ins queued, and a pass's fixed costs
    (a collect, the judge's reference run for its batches) are paid once for many hand-ins, not per
    hand-in. A pass that fails as a whole (the cluster broke) leaves its hand-ins unhandled; the
    service then starts a fresh cluster and takes them again.

    Fair shares: a student with a hand-in on its way has no other taken until it is out, and a pass
    takes one hand-in per student (the earliest), so that a student who hands in over and over, or
    many assignments at once, delays a classmate's feedback by one grading at most."""

    def __init__(self, course: Path, exchange: Exchange, log: Path | None = None, interval: float = 2.0):
        self.course, self.exchange, self.interval = Path(course), exchange, interval
        self.book = Book(course, log)
        self._gate, self._gradebook_changed = None, None
        for stale in Path(course).glob(f"{STATE}/collect-*"):   # left by a service that was killed
            shutil.rmtree(stale, ignore_errors=True)

    def run(self) -> int:
        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGINT, _stop)
        try:
            while True:
                abandoned, passes = threading.Event(), []
                try:
                    with warm_cluster() as client, warm_nbgrader(self.course) as nbgrader:
                        threads = sum(w["nthreads"] for w in client.scheduler_info()["workers"].values()) or 1
                        try:
                            print(f"autofeedback: watching {self.exchange.inbound} every {self.interval:g} s, "
                                  f"log in {self.book.log}", flush=True)
                            while not any(p.failed for p in passes):
                                passes = [p for p in passes if p.thread.is_alive() or p.failed]
                                self._poll(client, passes, abandoned, nbgrader, threads)
                                time.sleep(self.interval)
                        finally:
                            abandoned.set()   # before the cluster goes: what it was grading is left for later
                except Exception:   # inbound/ unreadable, the cluster would not start
                    traceback.print_exc()
                time.sleep(RETRY_SECONDS)
        except Stopped as why:
            print(f"autofeedback: stopped ({why})", flush=True)
            return 0

    def _poll(self, client, passes: list, abandoned: threading.Event, nbgrader: Nbgrader | None = None,
              threads: int = 1) -> None:
        gate = self.gate()
        entries = fair_share(self.book.new(gate), {student for p in passes for student, _ in p.busy()})
        if entries and sum(p.ungraded() for p in passes) <= threads:   # else they wait to go together
            passes.append(Pass(self.book, gate, entries, client, abandoned, nbgrader).start())

    def gate(self) -> Gate:
        """The course's gate, made again when the gradebook changed (an assignment added, a student enrolled)."""
        changed = (Path(self.course) / "gradebook.db").stat().st_mtime_ns
        if changed != self._gradebook_changed:
            self._gate, self._gradebook_changed = course_gate(self.course, self.exchange), changed
        return self._gate


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.hub.autofeedback", description=__doc__.split("\n")[0])
    parser.add_argument("--course", required=True, type=Path,
                        help="the course directory (nbgrader_config.py, gradebook.db)")
    parser.add_argument("--interval", type=float, default=2.0,
                        help="seconds between two looks at inbound/ (default 2)")
    parser.add_argument("--log", type=Path, default=None,
                        help="one line per hand-in (default <course>/autofeedback.log)")
    parser.add_argument("--once", action="store_true", help="one pass, then exit")
    args = parser.parse_args(argv)
    course = args.course.resolve()
    # A hub's course directory belongs to the instructors' group (setgid, grader/hub/layout.py): what
    # the service writes there (autograded/, feedback/, the log) stays theirs to regrade and remove.
    os.umask(0o007)
    if args.once:
        grade_pending(course, log=args.log)
        return 0
    return Service(course, exchange_of(course), args.log, args.interval).run()


if __name__ == "__main__":
    sys.exit(main())
