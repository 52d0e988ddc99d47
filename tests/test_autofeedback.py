"""Feedback on submit (grader/hub/autofeedback.py), through a real nbgrader exchange in a scratch course:
students hand in with `nbgrader submit`, one pass of the service grades and releases, and the
students' `nbgrader fetch_feedback` gets the pages. docs/GRADING.md, "Feedback on submit"."""
import html
import json
import os
import threading
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest

from conftest import load_answers
from grader import inbound
from grader.course import source_notebook
from grader.feedback import write_not_graded_pages
from grader.hub import autofeedback
from grader.judge.probes import hidden_section, without_hidden_section
from grader.preprocessors.comments import answer_cells
from grader.release import release
from submissions import ExchangeStudent, copy_course, release_copy, with_answers
from waiting import HANG_SECONDS, process_alive, wait_until

ASSIGNMENT = "00_setup"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
RENAMED = "my_setup.ipynb"
ANSWERS = load_answers(ASSIGNMENT)["alternative"]
SOLUTION = nbformat.read(source_notebook(ASSIGNMENT), as_version=4)
TEST_OF = {answer: test for test, answer in answer_cells(SOLUTION).items()}    # exercise -> its test cell
POINTS = {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]["points"] for c in SOLUTION.cells
          if c.metadata.get("nbgrader", {}).get("grade")}
FIRST, SECOND = list(TEST_OF)[:2]     # the exercises alice answers: the first, then both




def answered(course, *exercises):
    """The student release with the "alternative" (right) answers of these exercises."""
    return with_answers(release_copy(ASSIGNMENT, course), {e: ANSWERS[e] for e in exercises})


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A scratch course with 00_setup released into its exchange (<course>/.exchange)."""
    course = copy_course(tmp_path_factory.mktemp("autofeedback") / "course")
    release([ASSIGNMENT], course=course)
    return course


@pytest.fixture(scope="module")
def cluster():
    """The warm grading cluster, which the service keeps for its whole life: here the module's passes
    share one, as the service's passes do (starting one costs about 8 CPU-s: a zygote and a warm
    nbgrader that import torch and nbgrader, a warm kernel)."""
    with autofeedback.warm_cluster(2) as client:
        yield client


@pytest.fixture(scope="module")
def first_pass(course, cluster, tmp_path_factory):
    """alice answers one exercise right, bob hands in a file that is not JSON, dave his notebook under
    another name, all at once; one pass; then each fetches their feedback."""
    homes = tmp_path_factory.mktemp("homes")
    students = {name: ExchangeStudent(course, name, homes / name) for name in ("alice", "bob", "dave")}
    handins = {"alice": {NOTEBOOK: answered(course, FIRST)}, "bob": {NOTEBOOK: b'{"cells": [ not json'},
               "dave": {RENAMED: answered(course, FIRST)}}
    with ThreadPoolExecutor() as pool:
        list(pool.map(lambda name: students[name].submit(ASSIGNMENT, handins[name]), students))
        handled = autofeedback.grade_pending(course, client=cluster)
        pages = dict(zip(students, pool.map(lambda student: student.fetch_feedback(ASSIGNMENT), students.values())))
    return {**students, "handled": handled, "pages": pages}


def page_text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def cell_scores(page: str) -> dict:
    """{test cell: (score, max)} as nbgrader's feedback page shows them."""
    found = re.findall(r"Grade cell: <code>([\w-]+)</code>.*?Score: ([\d.]+) / ([\d.]+)", page, flags=re.S)
    return {cell: (float(score), float(most)) for cell, score, most in found}


def hidden_lines() -> list:
    """Lines found only in the solution's hidden sections (long enough to be the test's own)."""
    visible = "\n".join(without_hidden_section(cell.source) for cell in SOLUTION.cells)
    return [line.strip() for cell in SOLUTION.cells for line in (hidden_section(cell.source) or "").splitlines()
            if len(line.strip()) > 15 and line.strip() not in visible]


def log_lines(course) -> list:
    path = course / autofeedback.LOG
    return [line.split("\t") for line in path.read_text().splitlines()] if path.exists() else []


def wait_for(condition, service) -> None:
    """Until `condition()`, while the service runs (tests/waiting.py)."""
    wait_until(condition, "the service", alive=process_alive(service, "the feedback service"), every=0.1)


def only_page(pages: dict, notebook: str = NOTEBOOK) -> str:
    (timestamp, notebooks), = pages.items()
    return notebooks[notebook.replace(".ipynb", ".html")]


def test_a_right_answer_shows_its_points_and_no_hidden_test(first_pass):
    page = only_page(first_pass["pages"]["alice"])
    scores = cell_scores(page)
    assert set(scores) == set(POINTS), "every test cell is in the feedback, with its score"
    for cell, points in POINTS.items():
        assert scores[cell] == ((points if cell == TEST_OF[FIRST] else 0), points), cell
    text = page_text(page)
    leaks = [line for line in hidden_lines() if line in text]
    assert hidden_lines() and not leaks, f"hidden test source in the feedback: {leaks[:3]}"
    test_cell = next(c for c in SOLUTION.cells if c.metadata.get("nbgrader", {}).get("grade_id") == TEST_OF[FIRST])
    visible = [line.strip() for line in without_hidden_section(test_cell.source).splitlines() if len(line.strip()) > 15]
    assert visible[0] in text, "the check above reads the page's text (a visible test line is there)"


def test_broken_hand_ins_get_their_error_and_others_are_still_graded(first_pass, course):
    text = page_text(only_page(first_pass["pages"]["bob"]))
    assert "could not be graded" in text and f"{NOTEBOOK} is not valid JSON" in text
    text = page_text(only_page(first_pass["pages"]["dave"], RENAMED))
    assert f"{RENAMED} is not a notebook of this assignment (it has {NOTEBOOK})" in text
    assert first_pass["handled"] == 3
    assert (course / "autograded" / "alice" / ASSIGNMENT / NOTEBOOK).exists()
    assert not (course / "autograded" / "bob" / ASSIGNMENT).exists()


def test_the_log_has_a_line_for_each_hand_in(first_pass, course):
    lines = {fields[1]: fields for fields in log_lines(course)}
    assert set(lines) == {"alice", "bob", "dave"}
    for student, fields in lines.items():
        _, _, assignment, timestamp, _, seconds = fields
        assert assignment == ASSIGNMENT
        assert timestamp == first_pass[student].last_submission(ASSIGNMENT).name.split("+")[2]
        assert 0 < float(seconds.removesuffix(" s")) < 300
    assert lines["alice"][4] == f"{POINTS[TEST_OF[FIRST]]:g}/{sum(POINTS.values()):g}"
    assert lines["bob"][4].startswith(f"not graded: {NOTEBOOK} is not valid JSON")
    assert lines["dave"][4].startswith(f"not graded: {RENAMED} is not a notebook of this assignment")


def test_a_second_pass_grades_nothing_even_after_a_restart(first_pass, course):
    """A new pass, which reads what was handled from disk as a restarted service does: nothing new,
    nothing graded, logged or released again. (The service started below is a fresh process too.)"""
    before = (course / autofeedback.LOG).read_text()
    released = sorted(p.name for p in (course / ".exchange" / "pytorch-course" / "feedback").iterdir())
    assert autofeedback.main(["--course", str(course), "--once"]) == 0
    assert (course / autofeedback.LOG).read_text() == before
    assert sorted(p.name for p in (course / ".exchange" / "pytorch-course" / "feedback").iterdir()) == released


def test_a_class_handing_in_together_is_graded_once_each(first_pass, course, cluster, tmp_path):
    """The deadline rush, not timed: six students hand in at once, three more while those are graded;
    the service's polls (Service._poll, on a warm cluster and a warm nbgrader) take them in passes as
    the cluster frees: each graded once, with its own score, and its feedback released."""
    answers = {f"rush{i}": [(), (FIRST,), (FIRST, SECOND)][i % 3] for i in range(9)}
    students = {name: ExchangeStudent(course, name, tmp_path / name) for name in answers}
    service = autofeedback.Service(course, autofeedback.exchange_of(course))
    abandoned, passes, started = threading.Event(), [], []

    def hand_in(names):
        list(pool.map(lambda name: students[name].submit(ASSIGNMENT, {NOTEBOOK: answered(course, *answers[name])}),
                      names))

    with autofeedback.warm_nbgrader(course) as nbgrader, ThreadPoolExecutor() as pool:
        hand_in(list(answers)[:6])
        later = pool.submit(hand_in, list(answers)[6:])
        try:
            released, stalled = 0, time.time() + HANG_SECONDS   # progress: each released page moves it on
            while not (later.done() and released == len(answers)):
                now = sum(students[name].has_submitted(ASSIGNMENT)   # the later three may not have yet
                          and students[name].released_feedback(ASSIGNMENT, ASSIGNMENT).exists() for name in answers)
                if now > released:
                    released, stalled = now, time.time() + HANG_SECONDS
                assert time.time() < stalled, f"no feedback released for {HANG_SECONDS} s ({released} of {len(answers)})"
                passes[:] = [p for p in passes if p.thread.is_alive()]
                before = len(passes)
                service._poll(cluster, passes, abandoned, nbgrader, threads=2)
                started += passes[before:]
                time.sleep(0.3)
            for each in started:
                each.thread.join(60)
        finally:
            abandoned.set()
    assert not any(p.failed for p in started)
    taken = [e.student for p in started for e in p.entries]
    assert sorted(taken) == sorted(answers), "each hand-in taken by one pass, once"
    attempts = [json.loads(line) for line in (course / autofeedback.STATE / autofeedback.ATTEMPTS).read_text()
                .splitlines()]
    total = sum(POINTS.values())
    for name, done in answers.items():
        (attempt,) = [a for a in attempts if a["student"] == name]
        want = sum(POINTS[TEST_OF[exercise]] for exercise in done)
        assert (attempt["score"], attempt["max_score"]) == (want, total), name
        page = students[name].released_feedback(ASSIGNMENT, ASSIGNMENT).read_text()
        assert re.search(r"Score: ([\d.]+) / ([\d.]+)", page).groups() == (f"{want:.1f}", f"{total:.1f}"), name


def test_the_running_service_grades_a_resubmission_while_a_notebook_loops(first_pass, course, tmp_path):
    """The service as the hub runs it (a process that polls). carol hands in a notebook that loops for
    ever; once the service has taken it, alice hands in again with a second answer, and her new
    feedback (both answers right) is out while carol's notebook still runs. SIGTERM then ends the
    service cleanly, and carol's hand-in, whose feedback was not out, is left for the next start."""
    lines = len(log_lines(course))
    service = subprocess.Popen([sys.executable, "-m", "grader.hub.autofeedback", "--course", str(course),
                                "--interval", "0.5"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert "watching" in service.stdout.readline()
        carol = ExchangeStudent(course, "carol", tmp_path / "carol")
        carol.submit(ASSIGNMENT, {NOTEBOOK: with_answers(release_copy(ASSIGNMENT, course),
                                                         {FIRST: "import time\nwhile True:\n    time.sleep(1)"})})
        # taken (the gate's copy in submitted/): a pass of its own, which alice's hand-in cannot join
        wait_for(lambda: (course / "submitted" / "carol" / ASSIGNMENT / NOTEBOOK).exists(), service)
        alice = first_pass["alice"]
        timestamp = alice.submit(ASSIGNMENT, {NOTEBOOK: answered(course, FIRST, SECOND)})
        # alice's feedback, or carol's once Execute.timeout (120 s) has ended her loop: whichever comes first
        wait_for(lambda: len(log_lines(course)) > lines, service)
        service.send_signal(signal.SIGTERM)
        assert service.wait(timeout=60) == 0
        assert "stopped (SIGTERM)" in service.stdout.read()
    finally:
        if service.poll() is None:
            service.kill()
    last = log_lines(course)[lines]   # the first line since carol handed in
    assert last[1:4] == ["alice", ASSIGNMENT, timestamp], "alice's feedback waited for carol's notebook"
    assert last[4] == f"{POINTS[TEST_OF[FIRST]] + POINTS[TEST_OF[SECOND]]:g}/{sum(POINTS.values()):g}"
    assert "carol" not in (course / autofeedback.STATE / autofeedback.HANDLED).read_text()
    pages = alice.fetch_feedback(ASSIGNMENT)
    assert len(pages) == 2, "the first feedback stays; the second comes beside it"
    scores = cell_scores(pages[timestamp][f"{ASSIGNMENT}.html"])
    assert scores[TEST_OF[SECOND]] == (POINTS[TEST_OF[SECOND]],) * 2


# ---- the pieces, without grading ----------------------------------------------------------------

def test_only_the_newest_unhandled_hand_in_of_each_student_counts():
    names = ["alice+00_setup+2026-01-01 10:00:00.000000 UTC+abc", "alice+00_setup+2026-01-01 11:00:00.000000 UTC+def",
             "bob+00_setup+2026-01-01 09:00:00.000000 UTC+ghi", "alice+01_tensors+2026-01-01 08:00:00.000000 UTC+jkl"]
    entries = [inbound.Entry.parse(name) for name in names]
    new = inbound.newest_unhandled(entries, handled={names[2]})
    assert [e.name for e in new] == [names[1], names[3]]
    assert (new[0].student, new[0].assignment) == ("alice", "00_setup")
    assert new[0].timestamp == "2026-01-01 11:00:00.000000 UTC"
    assert inbound.newest_unhandled(entries, handled=set(names)) == []
    assert inbound.newest_unhandled(entries, handled={names[1]}) == [entries[3], entries[2]], \
        "a handled newest hides alice's older one"


@pytest.mark.parametrize("make", ["file_link", "folder_link", "fifo", "hard_link"])
def test_a_hand_in_with_links_or_special_files_is_refused(tmp_path, make):
    """root's collect would follow a link to the solutions: the snapshot refuses what nbgrader submit never makes."""
    secret = tmp_path / "solutions.ipynb"
    secret.write_text("the answers")
    folder = tmp_path / "inbound" / "mallory+00_setup+2026-01-01 10:00:00.000000 UTC+x"
    folder.mkdir(parents=True)
    (folder / "timestamp.txt").write_text("2026-01-01 10:00:00.000000 UTC")
    {"file_link": lambda: (folder / NOTEBOOK).symlink_to(secret),
     "folder_link": lambda: (folder / "data").symlink_to(tmp_path),
     "fifo": lambda: os.mkfifo(folder / NOTEBOOK),
     "hard_link": lambda: os.link(secret, folder / NOTEBOOK)}[make]()
    with pytest.raises(inbound.Refused):
        inbound.snapshot(folder, tmp_path / "copy")


def test_a_plain_hand_in_is_copied_whole(tmp_path):
    folder = tmp_path / "hand-in"
    (folder / "data").mkdir(parents=True)
    (folder / NOTEBOOK).write_text("{}")
    (folder / "data" / "x.csv").write_text("1,2")
    inbound.snapshot(folder, tmp_path / "copy")
    assert (tmp_path / "copy" / "data" / "x.csv").read_text() == "1,2"
    with pytest.raises(inbound.Refused, match="larger than"):
        inbound.snapshot(folder, tmp_path / "small", limit=3)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a folder to another user")
def test_a_hand_in_in_another_students_name_is_refused(tmp_path):
    """nobody's folder may claim to be nobody's, root's may claim anything, daemon's may not claim nobody's,
    nor a name that is no Unix user (a ghost student: only the collecting user's own folders may)."""
    import pwd
    folder = tmp_path / "hand-in"
    folder.mkdir()
    inbound.check_owner(folder, "nobody")                 # root's
    os.chown(folder, pwd.getpwnam("nobody").pw_uid, -1)
    inbound.check_owner(folder, "nobody")
    os.chown(folder, pwd.getpwnam("daemon").pw_uid, -1)
    with pytest.raises(inbound.Refused, match="daemon"):
        inbound.check_owner(folder, "nobody")
    with pytest.raises(inbound.Refused, match="daemon, not to root, who collects"):
        inbound.check_owner(folder, "no-such-unix-user")
    os.chown(folder, 0, -1)
    inbound.check_owner(folder, "no-such-unix-user")


def test_a_not_graded_page_escapes_what_the_student_named(tmp_path):
    (tmp_path / "<script>.ipynb").write_text("{")
    (tmp_path / "submission_secret.txt").write_text("s")
    folder = tmp_path / "feedback"
    reasons = write_not_graded_pages(folder, tmp_path, [ASSIGNMENT], "unused: the name says why",
                                     dict(student="<b>eve</b>", assignment=ASSIGNMENT, timestamp="now"))
    assert len(reasons) == 1 and "not a notebook of this assignment" in reasons[0]
    page = (folder / "<script>.html").read_text()
    assert "<script>" not in page and "&lt;script&gt;" in page and "<b>eve" not in page
    assert (folder / "submission_secret.txt").read_text() == "s"   # what release_feedback names the page by


@pytest.mark.parametrize("shape", ["many_files", "deep"])
def test_a_hand_in_too_many_files_or_too_deep_is_refused_and_deleted(tmp_path, shape):
    """A million empty files or folders nested past Python's recursion would hold up or crash whoever reads
    inbound/ (os.fwalk recurses): refused before that, and deleted rather than kept."""
    inbound_folder = tmp_path / "inbound"
    folder = inbound_folder / f"mallory+00_setup+{inbound._stamp(0).replace(' UTC', '.000000 UTC')}+x"
    folder.mkdir(parents=True)
    if shape == "many_files":
        for i in range(inbound.MAX_FILES + 1):
            (folder / f"f{i}").touch()
    else:
        (folder / "/".join(["d"] * (inbound.MAX_DEPTH + 2))).mkdir(parents=True)
    with pytest.raises(inbound.Refused, match="more than"):
        inbound.snapshot(folder, tmp_path / "copy")
    assert inbound.Gate(inbound_folder).set_aside(folder.name, "test").startswith("deleted")
    assert not folder.exists()
