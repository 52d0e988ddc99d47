"""The inbound folder of nbgrader's exchange, read by root: which hand-ins are new, and a safe copy of one.

Every student can write into inbound/ (nbgrader's submit makes it so), and owns the folder they hand
in, so what is there is what a student chose: a name that claims another student, a link to a file
only root may read, a folder changed while it is read. The feedback service
(grader/hub/autofeedback.py) takes hand-ins in through this module only.
"""
import functools
import os
import pwd
import re
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

# A student or assignment id that is safe in paths and in nbgrader's globs (no *, [, +, /, leading dot).
SAFE_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@-]*\Z")
MAX_BYTES = 100_000 * 1000   # nbgrader's own default limit on a hand-in (CourseDirectory.max_dir_size, kB)


@dataclass(frozen=True)
class Entry:
    """One folder in inbound/, as `nbgrader submit` names it:
    {student}+{assignment}+{timestamp}+{random} (nbgrader/exchange/default/submit.py)."""
    name: str
    student: str
    assignment: str
    timestamp: str
    when: datetime | None

    @staticmethod
    @functools.cache   # every poll reads every name in inbound/, and parsing a time costs 0.2 ms
    def parse(name: str):
        """The entry, or None where nbgrader's collect could not read the name either. Split as
        its collect splits it (on the last three '+'; the timestamp is the third part)."""
        from nbgrader.utils import parse_utc
        parts = name.rsplit("+", 3)
        if len(parts) < 3:
            return None
        try:
            when = parse_utc(parts[2])
        except (ValueError, OverflowError, TypeError):
            return None
        return Entry(name, parts[0], parts[1], parts[2], when)

    @property
    def key(self) -> tuple:
        return self.student, self.assignment


def newest_unhandled(names, handled: set) -> tuple:
    """([Entry], [junk name]): the newest hand-in of each (student, assignment) unless handled, and the
    names that are no hand-in's. Only the newest counts, as for `nbgrader collect --update`, which
    copies the newest when it is newer than the copy in submitted/; a resubmission is a new name."""
    newest, junk = {}, []
    for name in names:
        entry = Entry.parse(name)
        if entry is None:
            junk.append(name)
        elif entry.key not in newest or entry.when > newest[entry.key].when:
            newest[entry.key] = entry
    return ([e for _, e in sorted(newest.items()) if e.name not in handled],
            [n for n in junk if n not in handled])


class Refused(Exception):
    """A hand-in that `nbgrader submit` cannot have made: nothing of it is graded."""


def check_owner(folder: Path, student: str) -> None:
    """A hand-in must belong to the student it names (or to root), else any student could hand in
    as another; nbgrader's collect only warns. Where the student is no Unix user (the tests, a hub
    whose users are not), there is nothing to compare with."""
    try:
        expected = pwd.getpwnam(student).pw_uid
    except KeyError:
        return
    owner = os.lstat(folder).st_uid
    if owner not in (0, expected):
        try:
            name = pwd.getpwuid(owner).pw_name
        except KeyError:
            name = str(owner)
        raise Refused(f"its folder belongs to Unix user {name}, not to {student}")


def snapshot(folder: Path, dest: Path, limit: int = MAX_BYTES) -> None:
    """Copy a hand-in to `dest` without following any link. A link to the solutions or the gradebook,
    followed by root, would hand their content to the student in the feedback; and the student can
    swap a file for a link while it is read. So folders are opened by descriptor (os.fwalk), files
    with O_NOFOLLOW and checked after opening (a plain file with one link), and only the copy, which
    the student cannot touch, is used afterwards."""
    if not stat.S_ISDIR(os.lstat(folder).st_mode):
        raise Refused("it is not a folder")
    dest.mkdir(parents=True)
    total = 0
    for path, dirs, files, dir_fd in os.fwalk(folder, follow_symlinks=False):
        here = dest / os.path.relpath(path, folder)
        for name in dirs:
            if not stat.S_ISDIR(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
                raise Refused(f"it holds a link: {name!r}")
            (here / name).mkdir()
        for name in files:
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
            except OSError as err:
                raise Refused(f"it holds a link or a file that cannot be read: {name!r} ({err.strerror})") from None
            with open(fd, "rb") as src:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
                    raise Refused(f"it holds something other than a plain file: {name!r}")
                with open(here / name, "wb") as out:
                    while chunk := src.read(1 << 20):
                        total += len(chunk)
                        if total > limit:
                            raise Refused(f"it is larger than {limit / 1e6:g} MB")
                        out.write(chunk)
