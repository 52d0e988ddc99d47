"""The gate between nbgrader's exchange and grading: which hand-ins in inbound/ are real, a safe copy of
one, and the quarantine for the rest.

Every student can write into inbound/ (nbgrader's submit makes it so) and owns what they put there, so
what is there is what a student chose: a name that claims a classmate or a student who does not exist,
a date in the future, a link to a file that only root or the instructors may read, a file swapped for a
link while it is read, a hand-in changed after it was handed in, a file of any size. Everything that
reads inbound/ goes through `Gate`: the feedback service (grader/hub/autofeedback.py) and the
instructors' Collect, plain `nbgrader collect` and the formgrader's button (grader/gated_collect.py,
which nbgrader_config.py installs); `make autograde` and regrade grade submitted/, which only those
fill. docs/GRADING.md, "The exchange", has the threat model and the test of each rule.
"""
import functools
import json
import os
import pwd
import re
import shutil
import stat
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

# A student or assignment id that is safe in paths and in nbgrader's globs (no *, [, +, /, leading dot).
SAFE_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@-]*\Z")
MAX_BYTES = 100_000 * 1000   # nbgrader's own default limit on a hand-in (CourseDirectory.max_dir_size, kB)
MAX_FILES = 2000             # a hand-in is a few files; a million empty ones would hold up every reader
MAX_DEPTH = 16               # folders in folders: os.fwalk recurses, and a deeper tree would crash the reader
FUTURE_SECONDS = 60          # a hand-in dated later than this after now is refused (one machine's clock, some slack)
CHANGED_SECONDS = 300        # ... and one changed this long after its date: nbgrader submit's own copy is done by then
SETTLE_SECONDS = 2           # a folder changed this recently may still be being written by nbgrader submit: next look
QUARANTINE = "quarantine"    # beside inbound/: what the gate refused, for the instructors only
REFUSED_LOG = "refused.jsonl"


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

    @property
    def seconds(self) -> float:
        """The hand-in's date as seconds since the epoch (nbgrader writes it in UTC)."""
        return self.when.replace(tzinfo=timezone.utc).timestamp()


def newest_unhandled(entries, handled: set) -> list:
    """The newest of `entries` (the gate's valid ones) for each (student, assignment), unless handled:
    the newest valid hand-in counts, as for `nbgrader collect --update`; a resubmission is a new name."""
    newest = {}
    for entry in entries:
        if entry.key not in newest or entry.when > newest[entry.key].when:
            newest[entry.key] = entry
    return [e for _, e in sorted(newest.items()) if e.name not in handled]


class Refused(Exception):
    """A hand-in that `nbgrader submit` cannot have made, or not for the student it names: nothing of
    it is graded."""


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def check_owner(folder: Path, student: str, me: int | None = None) -> None:
    """A hand-in must belong to the student it names, else any student could hand in as a classmate
    (nbgrader's collect only warns). Root's folders are accepted (no student can make one). Where the
    student is no Unix user (a course on one account, the tests), only the collecting user's own
    folders are: a folder of a real user in a name that is nobody's is a forgery."""
    me = os.geteuid() if me is None else me
    try:
        allowed, whose = {0, pwd.getpwnam(student).pw_uid}, student
    except KeyError:
        allowed, whose = {0, me}, f"{_user(me)}, who collects ({student} is no Unix user)"
    owner = os.lstat(folder).st_uid
    if owner not in allowed:
        raise Refused(f"its folder belongs to Unix user {_user(owner)}, not to {whose}")


def snapshot(folder: Path, dest: Path, limit: int = MAX_BYTES) -> float:
    """Copy a hand-in to `dest` without following any link; returns the latest change time (ctime) of
    anything in it. A link to the solutions or the gradebook, followed by root or an instructor, would
    hand their content to the student in the feedback; and the student can swap a file for a link
    while it is read. So folders are opened by descriptor (os.fwalk), files with O_NOFOLLOW and checked
    after opening (a plain file with one link), and only the copy, which the student cannot touch, is
    used afterwards. A ctime is set by the system, not by the student: it tells when the hand-in was
    last changed."""
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise Refused("it is not a folder")
    dest.mkdir(parents=True)
    total, count, changed = 0, 0, info.st_ctime
    for path, dirs, files, dir_fd in os.fwalk(folder, follow_symlinks=False):
        here = dest / os.path.relpath(path, folder)
        _check_size(path, folder, count := count + len(dirs) + len(files))
        changed = max(changed, os.fstat(dir_fd).st_ctime)
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
                changed = max(changed, os.fstat(fd).st_ctime)
    return changed


def _check_size(path: str, top: Path, count: int) -> None:
    """Refused past MAX_FILES entries or MAX_DEPTH levels (checked top-down, before os.fwalk goes deeper)."""
    if count > MAX_FILES:
        raise Refused(f"it holds more than {MAX_FILES} files and folders")
    if len(Path(os.path.relpath(path, top)).parts) > MAX_DEPTH:
        raise Refused(f"it has folders more than {MAX_DEPTH} deep")


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


class Gate:
    """The rules every reader of inbound/ applies (docs/GRADING.md, "The exchange"):

    - the name is one that `nbgrader submit` makes, of an assignment of the course (`assignments`, when
      given) and of a student of the course (`students`, when given: the enrolled ones, on a hub);
    - the folder is a folder, not a link, and belongs to the student it names (check_owner);
    - it is not dated in the future, and nothing in it changed long after its date (a student keeps
      write access to their own hand-in: edits after the deadline would keep its date);
    - it is copied without following links (snapshot), at most MAX_BYTES.

    The newest hand-in that passes them counts. What fails them is moved out of inbound/ into
    quarantine/ beside it (`set_aside`), so that it can neither shadow a real hand-in nor sit there
    for ever, and is listed with the reason in quarantine/refused.jsonl, which the class report shows.
    `me`: the uid of the reader (the instructor running Collect, or root)."""

    def __init__(self, inbound: Path, students=None, assignments=None, me: int | None = None, clock=time.time):
        self.inbound = Path(inbound)
        self.students = None if students is None else set(students)
        self.assignments = None if assignments is None else set(assignments)
        self.me = os.geteuid() if me is None else me
        self.clock = clock

    @property
    def quarantine(self) -> Path:
        return self.inbound.parent / QUARANTINE

    def problem(self, name: str) -> str | None:
        """Why the entry `name` is refused, from its name and its folder's own status; None if it may be
        taken. FileNotFoundError when it is gone."""
        entry = Entry.parse(name)
        if entry is None:
            return "its name is not one that nbgrader submit makes (student+assignment+time+random)"
        if not (SAFE_ID.match(entry.student) and SAFE_ID.match(entry.assignment)):
            return "its student or assignment id is not safe in a path"
        if self.assignments is not None and entry.assignment not in self.assignments:
            return f"{entry.assignment} is not an assignment of this course"
        if self.students is not None and entry.student not in self.students:
            return f"{entry.student} is not a student of this course"
        if entry.seconds > self.clock() + FUTURE_SECONDS:
            return f"it is dated {entry.timestamp}, in the future"
        info = os.lstat(self.inbound / name)
        if not stat.S_ISDIR(info.st_mode):
            return "it is not a folder"
        try:
            check_owner(self.inbound / name, entry.student, self.me)
        except Refused as why:
            return str(why)
        return None

    def settled(self, name: str) -> bool:
        """False while the folder was changed in the last SETTLE_SECONDS: nbgrader submit may still be
        writing it (it sets the modes last), and a half-written hand-in must not be taken."""
        return os.lstat(self.inbound / name).st_ctime < self.clock() - SETTLE_SECONDS

    def _settles(self, name: str, deadline: float) -> bool:
        while not self.settled(name):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.2)
        return True

    def sort(self, names, wait: float = 0) -> tuple:
        """([valid Entry], [(refused name, why)]) of `names`; those still being written are in neither
        (`wait`: up to this many seconds in all for them to settle; the service never waits, its next
        look takes them)."""
        valid, refused = [], []
        deadline = time.monotonic() + wait
        for name in names:
            try:
                why = self.problem(name)
                if why is None and not self._settles(name, deadline):
                    continue
            except FileNotFoundError:   # gone since it was listed
                continue
            if why:
                refused.append((name, why))
            else:
                valid.append(Entry.parse(name))
        return valid, refused

    def take(self, entry: Entry, dest: Path) -> None:
        """A safe copy of the hand-in in `dest` (made here), or Refused (nothing left in `dest`). Its
        timestamp.txt is written from its checked name: nbgrader records the hand-in's time from it."""
        try:
            why = self.problem(entry.name)
            if why:
                raise Refused(why)
            changed = snapshot(self.inbound / entry.name, dest)
            if changed > entry.seconds + CHANGED_SECONDS:
                raise Refused(f"it was changed at {_stamp(changed)}, after it was handed in ({entry.timestamp})")
        except (Refused, OSError):
            shutil.rmtree(dest, ignore_errors=True)
            raise
        (dest / "timestamp.txt").write_text(entry.timestamp)

    def set_aside(self, name: str, why: str) -> str:
        """Move a refused entry out of inbound/ into the quarantine (deleted instead when it is larger
        than MAX_BYTES: the disk is not the student's to fill) and list it with the reason. Returns what
        was done. An instructor's Collect may not be allowed to move a student's folder; it lists it,
        and the feedback service, which runs as root, moves it at its next look."""
        source = self.inbound / name
        try:
            owner = _user(os.lstat(source).st_uid)
        except FileNotFoundError:
            return "gone"
        folder = self._quarantine_folder()
        try:
            if folder is None:
                raise PermissionError("no quarantine folder of the course's")
            if _larger_than(source, MAX_BYTES):
                _remove(source)
                done = f"deleted (larger than {MAX_BYTES / 1e6:g} MB)"
            else:
                target = folder / f"{datetime.now(timezone.utc):%Y%m%dT%H%M%S.%f}-{_safe_name(name)}"
                os.rename(source, target)
                done = f"moved to {target}"
        except OSError as err:
            done = f"left in inbound/ ({_user(self.me)} may not move it: {err.strerror or err})"
        self._record(folder, {"at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "name": name,
                              "owner": owner, "why": why, "done": done})
        return done

    def _quarantine_folder(self) -> Path | None:
        """quarantine/, made now (mode 2770: the course folder's group, nobody else) unless it exists;
        None when it is not one that the course made: a link, another user's, open to others."""
        folder = self.quarantine
        try:
            folder.mkdir(mode=0o2770)
            os.chmod(folder, 0o2770)   # the umask may have taken bits off
        except FileExistsError:
            pass
        except OSError:
            return None
        info = os.lstat(folder)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid not in (0, self.me) or info.st_mode & 0o007:
            return None
        return folder

    def _record(self, folder: Path | None, line: dict) -> None:
        if folder is None:
            return
        log = folder / REFUSED_LOG
        try:
            listed = [json.loads(old) for old in log.read_text().splitlines() if old.strip()] if log.exists() else []
            if any(old["name"] == line["name"] and _kind(old["done"]) == _kind(line["done"]) for old in listed):
                return   # listed already (a Collect that may not move it sees it again each time)
            fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o660)
            if os.fstat(fd).st_uid == os.geteuid():
                os.fchmod(fd, 0o660)   # every instructor appends to it, whatever the first one's umask
            with open(fd, "a") as out:
                out.write(json.dumps(line) + "\n")
        except (OSError, ValueError):
            pass


def _kind(done: str) -> str:
    return done.split(" ")[0]   # moved, deleted, left, gone


def refused_entries(inbound: Path) -> list:
    """What the gate refused, as listed in quarantine/refused.jsonl beside `inbound` (oldest first)."""
    log = Path(inbound).parent / QUARANTINE / REFUSED_LOG
    try:
        return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    except (OSError, ValueError):
        return []


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.@+ :-]", "_", name)[:200]


def _larger_than(path: Path, limit: int) -> bool:
    """Whether what is at `path` holds more than `limit` bytes, counted without following links."""
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        return info.st_size > limit
    total, count = 0, 0
    for folder, dirs, files, dir_fd in os.fwalk(path, follow_symlinks=False):
        try:
            _check_size(folder, path, count := count + len(dirs) + len(files))
        except Refused:
            return True   # too many or too deep to keep: deleted as too large
        for name in files:
            total += os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_size
            if total > limit:
                return True
    return False


def _remove(path: Path) -> None:
    if stat.S_ISDIR(os.lstat(path).st_mode):
        shutil.rmtree(path)   # fd-based on Linux: it follows no link a student swaps in
    else:
        os.unlink(path)
