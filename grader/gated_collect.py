"""The instructors' Collect through the course's gate: `nbgrader collect` and the formgrader's Collect
button, installed by nbgrader_config.py (`c.ExchangeFactory.collect`).

nbgrader's own collect takes the newest folder of each name in inbound/, only warns when it belongs to
somebody else ("cheating attempt?") and copies it with shutil.copytree, which follows links as the
instructor: a student's folder dated 2099 in a classmate's name became the classmate's submission, and a
hand-in whose notebook linked to the solutions became the solutions (docs/GRADING.md, "The exchange").
Here every entry passes grader/inbound.py's Gate first; what it refuses is set aside and logged; the
newest valid hand-in of each student is copied by the gate (no link followed, its checked date in
timestamp.txt). nbgrader's options keep their meaning: --update, --before-duedate, --student.
"""
import os
import shutil
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import check_mode
from traitlets import Bool
from traitlets.config import LoggingConfigurable

from grader.inbound import FUTURE_SECONDS, Entry, Gate, Refused

SETTLE_WAIT = 10   # seconds to wait at most for hand-ins that nbgrader submit is still writing


class CourseGate(LoggingConfigurable):
    """Settings of the gate that every reader of inbound/ shares (the feedback service reads them too)."""

    enrolled_only = Bool(False, help=(
        "Take hand-ins only from students in the gradebook. make hub sets it: it enrols its roster. "
        "Without it, a hand-in must still belong to the Unix user it names.")).tag(config=True)


def enrolled(db_url: str) -> list:
    with Gradebook(db_url) as gb:
        return [student.id for student in gb.students]


class GatedCollect(ExchangeCollect):

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        assignment, student = self.coursedir.assignment_id, self.coursedir.student_id
        students = enrolled(self.coursedir.db_url) if CourseGate(parent=self).enrolled_only else None
        self.gate = Gate(self.inbound_path, students=students)
        names = [name for name in os.listdir(self.inbound_path)
                 if (entry := Entry.parse(name)) and entry.assignment == assignment
                 and (not student or student == "*" or entry.student == student)]
        valid, refused = self.gate.sort(names, wait=SETTLE_WAIT)
        for name, why in refused:
            done = self.gate.set_aside(name, why)
            self.log.warning("Refused %r: %s; %s", name, why, done)
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                self.duedate = gb.find_assignment(assignment).duedate
            except MissingEntry:
                self.duedate = None
        self.candidates = {}   # {student: [Entry, newest first]}: the next is tried when one is refused
        for entry in sorted(valid, key=lambda e: e.when, reverse=True):
            self.candidates.setdefault(entry.student, []).append(entry)
        if self.duedate is not None and self.before_duedate:
            for name, entries in self.candidates.items():
                on_time = [e for e in entries if e.when <= self.duedate]
                self.candidates[name] = on_time or entries
        self.src_records = [{"username": s, "filename": e[0].name, "timestamp": e[0].when}
                            for s, e in sorted(self.candidates.items())]

    def copy_files(self):
        if not self.candidates:
            self.log.warning("No submissions of '%s' for course '%s' to collect", self.coursedir.assignment_id,
                             self.coursedir.course_id)
            return
        self.log.info("Processing %d submissions of '%s' for course '%s'", len(self.candidates),
                      self.coursedir.assignment_id, self.coursedir.course_id)
        for student, entries in sorted(self.candidates.items()):
            dest = self.coursedir.format_path(self.coursedir.submitted_directory, student, self.coursedir.assignment_id)
            existing = self.coursedir.get_existing_timestamp(dest) if os.path.isdir(dest) else None
            if existing is not None and existing > datetime.utcnow() + timedelta(seconds=FUTURE_SECONDS):
                existing = None   # a date from the future, collected before the gate: it must not win
            if os.path.isdir(dest) and not self._replaces(entries[0], existing):
                self.log.info("No newer submission to collect: %s %s" if self.update else
                              "Submission already exists, use --update to update: %s %s",
                              student, self.coursedir.assignment_id)
                continue
            for entry in entries:
                if os.path.isdir(dest) and not self._replaces(entry, existing):
                    break
                if self._take(entry, dest):
                    break

    def _replaces(self, entry: Entry, existing) -> bool:
        """nbgrader's rule: with --update a newer hand-in replaces the collected one; with --before-duedate
        any other one does."""
        if self.update and (existing is None or entry.when > existing):
            return True
        return bool(self.before_duedate and existing != entry.when)

    def _take(self, entry: Entry, dest: str) -> bool:
        """The gate's copy of `entry` in place of submitted/'s; False (and set aside) if it is refused."""
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        # the copy is made beside the course's folders (one file system), never inside submitted/
        taking = Path(tempfile.mkdtemp(prefix=".collecting-", dir=self.coursedir.root)) / "copy"
        try:
            self.gate.take(entry, taking)
            replacing = os.path.isdir(dest)
            if replacing:
                shutil.rmtree(dest)
            os.rename(taking, dest)
        except Refused as why:
            self.log.warning("Refused %r: %s; %s", entry.name, why, self.gate.set_aside(entry.name, str(why)))
            return False
        except OSError as err:   # ours (a full disk): the hand-in stays in inbound/ for the next Collect
            self.log.error("Could not collect %r: %s", entry.name, err)
            return True
        finally:
            shutil.rmtree(taking.parent, ignore_errors=True)
        self._share(dest)
        self.log.info("%s submission: %s %s", "Updating" if replacing else "Collecting", entry.student,
                      self.coursedir.assignment_id)
        return True

    def _share(self, dest: str) -> None:
        """With groupshared, what was collected is the instructors' group's to change, as nbgrader's copy makes it."""
        if not self.coursedir.groupshared:
            return
        for folder, _, files in os.walk(dest):
            os.chmod(folder, (os.stat(folder).st_mode | 0o2770) & 0o2777)
            for name in files:
                path = os.path.join(folder, name)
                os.chmod(path, (os.stat(path).st_mode | 0o660) & 0o777)
