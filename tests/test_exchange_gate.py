"""The exchange's gate (grader/inbound.py) attacked as a student would: real Unix users write into a real
nbgrader exchange (its own modes, a course that enrols its students as `make hub` does), each attack run
by a process of the student's own user; then the instructor's plain `nbgrader collect --update` (what the
formgrader's Collect runs, grader/gated_collect.py) and the feedback service's way in (Book.new, take)
must take only real hand-ins, follow no link, and move what they refuse into the quarantine, listed with
the reason. tests/test_hub.py does the same through a running hub. docs/GRADING.md, "The exchange".
"""
import json
import os
import shutil
import subprocess
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from grader import inbound
from grader.course import COURSE_ID, SOURCE, nbgrader_api, run_nbgrader
from grader.hub import autofeedback, unix_users
from grader.release import release
from submissions import copy_course

ASSIGNMENT = "00_setup"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
ANN, BEN = "ctgate-ann", "ctgate-ben"   # Unix users made and removed here
SYSTEM_PYTHON = "/usr/bin/python3"      # students cannot run the course's .venv (it links into /root)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not Path(SYSTEM_PYTHON).exists(),
                                reason="needs root to make Unix users, and the system's Python for them")

# What a student's process runs: a folder in inbound/ laid out as `nbgrader submit` lays one out (the
# timestamp in the name and in timestamp.txt), the notebook from stdin, or a link where it should be.
HAND_IN = r"""
import os, sys
inbound, name, link = sys.argv[1:4]
folder = os.path.join(inbound, name)
os.mkdir(folder)
with open(os.path.join(folder, "timestamp.txt"), "w") as out:
    out.write(name.split("+")[2])
if link:
    os.symlink(link, os.path.join(folder, "00_setup.ipynb"))
else:
    with open(os.path.join(folder, "00_setup.ipynb"), "wb") as out:
        out.write(sys.stdin.buffer.read())
"""
JUNK = r"""
import sys
with open(sys.argv[1], "wb") as out:
    for _ in range(101):
        out.write(b"x" * 1_000_000)
"""


def stamp(seconds: float = 0) -> str:
    """A timestamp as nbgrader submit writes it, `seconds` from now."""
    return (datetime.now(timezone.utc) + timedelta(seconds=seconds)).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def as_user(user: str, script: str, *args, stdin: bytes = b"") -> subprocess.CompletedProcess:
    proc = subprocess.run(["runuser", "-u", user, "--", SYSTEM_PYTHON, "-c", script, *map(str, args)],
                          input=stdin, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc


@pytest.fixture(scope="module")
def exchange_course():
    """A course whose exchange every user can reach (the course itself only root), enrolling ann and ben."""
    from nbgrader.api import Gradebook
    base = Path(tempfile.mkdtemp(prefix="ctgate-"))
    os.chmod(base, 0o755)
    exchange = base / "exchange"
    exchange.mkdir(mode=0o1777)
    os.chmod(exchange, 0o1777)
    course = copy_course(base / "course")
    os.chmod(course, 0o700)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.Exchange.root = {str(exchange)!r}\nc.CourseGate.enrolled_only = True\n")
    try:
        unix_users.ensure_group(unix_users.STUDENTS)
        for name in (ANN, BEN):
            unix_users.ensure_user(name, instructor=False)
        release([ASSIGNMENT], course=course, local_exchange=False)
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            for name in (ANN, BEN):
                gradebook.update_or_create_student(name)
        yield course, exchange / COURSE_ID / "inbound"
    finally:
        for name in (ANN, BEN):
            unix_users.remove_user(name)
        shutil.rmtree(base, ignore_errors=True)


def plant(course: Path, inbound_folder: Path) -> dict:
    """ann's attacks and ben's and ann's real hand-ins, each written by the student's own process.
    Returns {what: entry name}, and the notebooks' bytes under "bytes"."""
    names = {"ben_real": f"{BEN}+{ASSIGNMENT}+{stamp(-20)}+real",
             "ann_real": f"{ANN}+{ASSIGNMENT}+{stamp(-40)}+real",
             "as_ben_2099": f"{BEN}+{ASSIGNMENT}+2099-01-01 00:00:00.000000 UTC+forged",
             "ann_link": f"{ANN}+{ASSIGNMENT}+{stamp(-10)}+link",
             **{f"ghost{i}": f"ghost0{i}+{ASSIGNMENT}+{stamp(-5)}+x" for i in range(3)},
             "not_a_name": "notes.bin"}
    notebooks = {who: json.dumps({"cells": [], "metadata": {"who": who}, "nbformat": 4, "nbformat_minor": 5}).encode()
                 for who in ("ben_real", "ann_real", "as_ben_2099", "ghost")}
    as_user(BEN, HAND_IN, inbound_folder, names["ben_real"], "", stdin=notebooks["ben_real"])
    as_user(ANN, HAND_IN, inbound_folder, names["ann_real"], "", stdin=notebooks["ann_real"])
    as_user(ANN, HAND_IN, inbound_folder, names["as_ben_2099"], "", stdin=notebooks["as_ben_2099"])
    as_user(ANN, HAND_IN, inbound_folder, names["ann_link"], course / SOURCE / ASSIGNMENT / NOTEBOOK)
    for i in range(3):
        as_user(ANN, HAND_IN, inbound_folder, names[f"ghost{i}"], "", stdin=notebooks["ghost"])
    as_user(ANN, JUNK, inbound_folder / names["not_a_name"])
    return {**names, "bytes": notebooks}


def refused_reasons(inbound_folder: Path) -> dict:
    return {line["name"]: (line["why"], line["done"]) for line in inbound.refused_entries(inbound_folder)}


def reset(course: Path, inbound_folder: Path) -> None:
    for folder in (inbound_folder, inbound_folder.parent / inbound.QUARANTINE, course / "submitted"):
        if folder.is_dir():
            for path in folder.iterdir():
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


# The formgrader's Collect button: nbgrader's API as the formgrader builds it, with the course's configuration.
FORMGRADER_COLLECT = """
result = api.collect(sys.argv[1])
assert result["success"], result
"""


@pytest.mark.parametrize("path", ["nbgrader collect", "the formgrader's Collect"])
def test_the_instructors_collect_takes_only_real_hand_ins_and_follows_no_link(exchange_course, path):
    """Stock nbgrader collect took ann's folder dated 2099 as ben's submission (its date beats every real
    one), ann's link to the solutions as her notebook (copied as the instructor), and the ghosts as students."""
    course, inbound_folder = exchange_course
    reset(course, inbound_folder)
    planted = plant(course, inbound_folder)
    if path == "nbgrader collect":
        run_nbgrader("collect", "--update", ASSIGNMENT, course=course)
    else:
        nbgrader_api(FORMGRADER_COLLECT, ASSIGNMENT, course=course)

    submitted = course / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == [ANN, BEN], "no ghost became a student"
    assert (submitted / BEN / ASSIGNMENT / NOTEBOOK).read_bytes() == planted["bytes"]["ben_real"]
    assert (submitted / BEN / ASSIGNMENT / "timestamp.txt").read_text() == planted["ben_real"].split("+")[2]
    assert (submitted / ANN / ASSIGNMENT / NOTEBOOK).read_bytes() == planted["bytes"]["ann_real"], \
        "ann's newest hand-in (a link) is refused, and her newest valid one counts"
    assert not (submitted / ANN / ASSIGNMENT / NOTEBOOK).is_symlink()

    reasons = refused_reasons(inbound_folder)
    assert "in the future" in reasons[planted["as_ben_2099"]][0]
    assert "a link" in reasons[planted["ann_link"]][0]
    for i in range(3):
        assert f"ghost0{i} is not a student of this course" in reasons[planted[f"ghost{i}"]][0]
    assert sorted(os.listdir(inbound_folder)) == sorted([planted["ben_real"], planted["ann_real"], planted["not_a_name"]]), \
        "root's Collect moved what it refused out of inbound/ (a Collect of one assignment leaves other names)"
    quarantine = inbound_folder.parent / inbound.QUARANTINE
    assert len([p for p in quarantine.iterdir() if p.is_dir()]) == 5
    proc = subprocess.run(["runuser", "-u", ANN, "--", "ls", str(quarantine)], capture_output=True, text=True)
    assert proc.returncode != 0 and "Permission denied" in proc.stderr, "students cannot read the quarantine"


def test_the_feedback_service_takes_only_real_hand_ins_and_sets_the_rest_aside(exchange_course):
    """The service's way in (Book.new picks, take copies into submitted/), without grading: the 2099
    folder in ben's name never shadows ben's real hand-in (stock newest_unhandled picked it, refused it,
    and never graded ben again), junk over nbgrader's size limit is deleted, the rest quarantined."""
    course, inbound_folder = exchange_course
    reset(course, inbound_folder)
    planted = plant(course, inbound_folder)
    book = autofeedback.Book(course)
    gate = autofeedback.course_gate(course, autofeedback.exchange_of(course))
    assert gate.students == {ANN, BEN}, "the hub's course enrols its roster and takes only them"

    first = {e.student: e for e in book.new(gate, wait=10)}
    assert {e.name for e in first.values()} == {planted["ben_real"], planted["ann_link"]}
    reasons = refused_reasons(inbound_folder)
    assert reasons[planted["not_a_name"]][1].startswith("deleted"), "101 MB of junk does not stay on the disk"
    assert not (inbound_folder / planted["not_a_name"]).exists()
    assert {planted["as_ben_2099"], *(planted[f"ghost{i}"] for i in range(3))} <= set(reasons)

    staging = Path(tempfile.mkdtemp(dir=course))
    handed_in = autofeedback.take(course, gate, first[BEN], staging)
    assert (handed_in / NOTEBOOK).read_bytes() == planted["bytes"]["ben_real"]
    with pytest.raises(inbound.Refused, match="link"):
        autofeedback.take(course, gate, first[ANN], staging)
    book.refuse(first[ANN].name, "a link", gate.set_aside(first[ANN].name, "a link"))
    book.done(first[BEN], "graded", 0.0)
    (again,) = book.new(gate)
    assert again.name == planted["ann_real"], "the next look takes ann's newest valid hand-in"
    attempts = (course / autofeedback.STATE / autofeedback.ATTEMPTS).read_text()
    assert "forged" not in attempts and "ghost" not in attempts, "refusals are not a student's attempts"


def test_a_hand_in_changed_after_its_date_or_dated_in_the_future_is_refused(exchange_course, tmp_path):
    """A student keeps write access to their own folder in inbound/: a hand-in whose files changed long
    after the date in its name (a notebook edited after the deadline, or a name backdated by hand) is
    refused, as is one dated beyond a minute from now; the date the system keeps (ctime) decides."""
    course, inbound_folder = exchange_course
    reset(course, inbound_folder)
    late = f"{ANN}+{ASSIGNMENT}+{stamp(-3600)}+late"
    ahead = f"{ANN}+{ASSIGNMENT}+{stamp(600)}+ahead"
    for name in (late, ahead):
        as_user(ANN, HAND_IN, inbound_folder, name, "", stdin=b"{}")
    gate = inbound.Gate(inbound_folder, students={ANN, BEN})
    with pytest.raises(inbound.Refused, match="changed at .* after it was handed in"):
        gate.take(inbound.Entry.parse(late), tmp_path / "late")
    assert not (tmp_path / "late").exists()
    with pytest.raises(inbound.Refused, match="in the future"):
        gate.take(inbound.Entry.parse(ahead), tmp_path / "ahead")
    assert gate.problem(late) is None, "its name and owner are fine: only the copy sees the change"


def test_a_flood_of_one_students_hand_ins_delays_no_classmate_by_more_than_one_grading():
    """The service's next pass takes one hand-in per student (the earliest), none of a student with one
    on its way: ann's 100 hand-ins over three assignments cannot queue ahead of ben's."""
    def entry(student, assignment, minute, tag):
        return inbound.Entry.parse(f"{student}+{assignment}+2026-01-01 10:{minute:02d}:00.000000 UTC+{tag}")
    flood = [entry(ANN, f"0{i % 3}_x", i % 50, i) for i in range(100)]
    bens = entry(BEN, "00_setup", 59, "b")
    taken = autofeedback.fair_share(flood + [bens], busy=set())
    assert sorted(e.student for e in taken) == [ANN, BEN]
    assert autofeedback.fair_share(flood + [bens], busy={ANN}) == [bens]
