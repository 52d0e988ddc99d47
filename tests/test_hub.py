"""A class on one JupyterHub (`make hub`), in a real browser: one instructor, two students.

The hub is set up from a roster by grader.hub.deploy, exactly as `make hub` does it (its own folder,
ports and Unix users, all removed afterwards), and driven with Debian's chromium through playwright:
student A logs in, fetches 00_setup in the Assignments tab, answers one exercise and submits;
student B submits the untouched notebook; the feedback service grades both behind the wall and
releases their feedback, which each fetches in the Assignments tab; the instructor's formgrader
(inside JupyterLab, not blank) lists both with the same scores, and the class report (a hub service
page) shows its figures and the common mistakes to the instructor and a 403 to a student. Then what students must not reach:
each other's servers and homes, the course directory, the hub's state, the repository.
"""
import grp
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from grader.course import EXCHANGE, REPO_ROOT, SOURCE, release_notebook
from grader.hub import deploy, unix_users
from hub_session import SLOW, Hub, chromium, hub_alive, log_in, require_hub, running_hub
from waiting import wait_until
from test_browser import ANSWER, EXERCISE, cell, screenshot_on_failure

CHAPTER = "00_setup"
PREFIX = "cthub"   # the test's Unix users: cthub-teach, cthub-ada, cthub-bob
INSTRUCTOR, A, B = f"{PREFIX}-teach", f"{PREFIX}-ada", f"{PREFIX}-bob"


@pytest.fixture(scope="module")
def hub():
    require_hub()
    with running_hub(f"instructor {INSTRUCTOR}\nstudent {A}\nstudent {B}\n", chapters=[CHAPTER]) as hub:
        yield hub


@pytest.fixture(scope="module")
def browser(hub):
    with chromium() as browser:
        yield browser


def open_from_nbgrader_menu(page, item: str) -> None:
    page.click('.lm-MenuBar-itemLabel:text-is("Nbgrader")')
    page.click(f'#jp-mainmenu-nbgrader .lm-Menu-itemLabel:text-is("{item}")')


def fetch_and_submit(page, hub: Hub, name: str, answer: bool) -> None:
    from playwright.sync_api import expect
    open_from_nbgrader_menu(page, "Assignment List")
    page.locator("#released_assignments_list .list_item", has_text=CHAPTER).get_by_role("button", name="Fetch").click()
    expect(page.locator("#fetched_assignments_list .list_item", has_text=CHAPTER).first).to_be_visible()
    if answer:
        page.goto(f"{hub.url}/user/{name}/lab/tree/pytorch-course/{CHAPTER}/{CHAPTER}.ipynb")
        expect(page.get_by_text("Python 3 (ipykernel) | Idle")).to_be_visible(timeout=SLOW)
        cell(page, EXERCISE).locator(".cm-content").click()
        page.keyboard.press("Control+a")
        page.keyboard.insert_text(ANSWER)
        page.keyboard.press("Escape")
        page.keyboard.press("Control+s")
        expect(page.locator(".lm-TabBar-tab.jp-mod-dirty")).to_have_count(0)
        open_from_nbgrader_menu(page, "Assignment List")
    fetched = page.locator("#fetched_assignments_list .list_item", has_text=CHAPTER).first
    fetched.get_by_role("button", name="Submit").click()
    expect(page.locator("#submitted_assignments_list .list_item", has_text=CHAPTER).first).to_be_visible()


def fetch_feedback(page, alive=None) -> str:
    """Press Fetch Feedback until the service has released it (it grades in the background); return
    the feedback page's text."""
    from playwright.sync_api import expect
    submitted = page.locator("#submitted_assignments_list .list_item", has_text=CHAPTER).first

    def fetched():
        if page.get_by_text("view feedback").count():
            return True
        submitted.get_by_role("button", name="Fetch Feedback").click()
        page.wait_for_timeout(3000)
        return False
    wait_until(fetched, "the feedback of a Submit", alive=alive, every=0)
    page.get_by_text("view feedback").first.click()          # the file browser goes to the feedback's folder
    page.locator(".jp-DirListing-item", has_text=f"{CHAPTER}.html").dblclick()   # JupyterLab's HTML viewer
    feedback = page.frame_locator(".jp-HTMLViewer iframe").last
    expect(feedback.get_by_text("Score:").first).to_be_visible()
    return re.sub(r"\s+", " ", feedback.locator("body").text_content())


def expected_scores() -> tuple:
    """(points of the exercise A answers, the chapter's total), from the release's metadata."""
    nb = json.loads(release_notebook(CHAPTER).read_text())
    points = [c["metadata"]["nbgrader"].get("points", 0) for c in nb["cells"]
              if c["metadata"].get("nbgrader", {}).get("grade")]
    tests = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")]
    answered = next(c for c in tests if "tensor_bytes" in "".join(c["source"]))
    return float(answered["metadata"]["nbgrader"]["points"]), float(sum(points))


def test_two_students_submit_and_get_feedback_and_the_instructor_sees_both(hub, browser):
    from playwright.sync_api import expect
    exercise, total = expected_scores()

    a = log_in(browser, hub, A)
    with screenshot_on_failure(a, "hub-1-student-a-submits"):
        assert a.get_by_text("official Jupyter news").count() == 0, "the hub's lab asks about Jupyter news"
        fetch_and_submit(a, hub, A, answer=True)
    b = log_in(browser, hub, B)
    with screenshot_on_failure(b, "hub-2-student-b-submits"):
        fetch_and_submit(b, hub, B, answer=False)

    with screenshot_on_failure(a, "hub-3-feedback-a"):
        text = fetch_feedback(a, hub_alive(hub))
        assert f"{CHAPTER} (Score: {exercise} / {total})" in text, text[:2000]
        assert text.count(f"Score: {exercise} / {exercise})") >= 1
        assert "BEGIN HIDDEN TESTS" not in text and "hidden_checks" not in text
    with screenshot_on_failure(b, "hub-4-feedback-b"):
        text = fetch_feedback(b, hub_alive(hub))
        assert f"{CHAPTER} (Score: 0.0 / {total})" in text, text[:2000]

    teacher = log_in(browser, hub, INSTRUCTOR)
    with screenshot_on_failure(teacher, "hub-5-formgrader"):
        open_from_nbgrader_menu(teacher, "Formgrader")
        frame = teacher.frame_locator("iframe").last
        frame.get_by_role("link", name="Manual Grading").click()
        frame.get_by_role("link", name=CHAPTER).click()              # the assignment
        frame.get_by_role("link", name=CHAPTER).first.click()        # its notebook: one row per submission
        expect(frame.locator("body")).to_contain_text(B)
        table = re.sub(r"\s+", " ", frame.locator("body").text_content())
        assert f"{A}{exercise:g} / {total:g}" in table and f"{B}0 / {total:g}" in table, table

    with screenshot_on_failure(b, "hub-6-b-cannot-open-a"):
        response = b.goto(f"{hub.url}/user/{A}/api/contents")
        assert response.status in (403, 404), response.status

    with screenshot_on_failure(teacher, "hub-7-class-report"):
        teacher.goto(f"{hub.url}/services/reports/")
        expect(teacher.locator("h1")).to_have_text("Class reports")
        teacher.get_by_role("link", name=CHAPTER, exact=True).click()
        expect(teacher.locator("h2", has_text="The most common mistakes")).to_be_visible()
        assert "2 students graded" in teacher.locator("body").text_content()
        figures = teacher.locator("img.figure")
        assert figures.count() >= 3 and all(figures.nth(i).evaluate("img => img.naturalWidth") > 0
                                             for i in range(figures.count())), "a figure did not render"
        # B's untouched notebook failed every hidden check: linked under the mistakes, in the instructor's lab
        link = teacher.locator("td a", has_text=B).first.get_attribute("href")
        assert link.startswith(f"/hub/user-redirect/lab/tree/{deploy.COURSE_LINK}/autograded/{B}/{CHAPTER}/"), link
        # the reports follow the gradebook: a change there, and the next request remakes them
        index = hub.layout.course / "reports" / "index.html"
        made = index.stat().st_mtime
        later = time.time() + 5
        os.utime(hub.layout.course / "gradebook.db", (later, later))
        teacher.goto(f"{hub.url}/services/reports/")
        assert index.stat().st_mtime > made

    with screenshot_on_failure(b, "hub-8-no-report-for-students"):
        response = b.goto(f"{hub.url}/services/reports/")
        assert response.status == 403, response.status
        assert "Class reports" not in b.locator("body").text_content()


@pytest.mark.parametrize("what", ["home of the other student", "course directory", "hub state", "repository",
                                  "submissions in the exchange"])
def test_a_student_reads_none_of_what_is_not_theirs(hub, what):
    target = {"home of the other student": Path(f"/home/{A}"), "course directory": hub.layout.course,
              "hub state": hub.layout.state, "repository": REPO_ROOT / "solutions",
              "submissions in the exchange": hub.layout.exchange / "pytorch-course" / "inbound"}[what]
    proc = subprocess.run(["runuser", "-u", B, "--", "ls", str(target)], capture_output=True, text=True)
    assert proc.returncode != 0 and "Permission denied" in proc.stderr, (proc.stdout, proc.stderr)


def test_an_instructor_grades_as_themselves_behind_the_wall(hub):
    """The formgrader's buttons run nbgrader in the instructor's JupyterLab, as their Unix user, with
    their home's settings (which load the course's): here the same from their home's command line,
    on A's submission (collected by the feedback service in the browser test above)."""
    from nbgrader.api import Gradebook
    exercise, _ = expected_scores()
    env = {"HOME": f"/home/{INSTRUCTOR}", "PATH": hub.layout.path}
    for step in (["autograde", CHAPTER, "--student", A, "--force"], ["generate_feedback", CHAPTER, "--student", A, "--force"]):
        proc = subprocess.run(["runuser", "-u", INSTRUCTOR, "--", "env", *(f"{k}={v}" for k, v in env.items()),
                               "nbgrader", *step], cwd=env["HOME"], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with Gradebook(f"sqlite:///{hub.layout.course / 'gradebook.db'}") as gradebook:
        assert gradebook.find_submission(CHAPTER, A).score == exercise
    assert not (hub.layout.course / EXCHANGE).exists(), "the course releases into the hub's exchange only"
    # what one instructor writes, the others can change (the setgid course directory, groupshared)
    feedback = (hub.layout.course / "feedback" / A / CHAPTER / f"{CHAPTER}.html").stat()
    assert feedback.st_gid == grp.getgrnam(unix_users.INSTRUCTORS).gr_gid and feedback.st_mode & 0o020


# What A's kernel could run, as A: folders in inbound/ laid out as nbgrader submit lays them out, but
# in a classmate's name dated 2099, in names that are nobody's, or with a link to the solutions (and a
# secret of A's choosing, which names the feedback page A would fetch), and junk over the size limit.
FORGE = r"""
import os, sys, datetime
inbound, victim, me, solutions, secret, what = sys.argv[1:7]
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
def hand_in(name, link=None):
    folder = os.path.join(inbound, name)
    os.mkdir(folder)
    for file, text in (("timestamp.txt", name.split("+")[2]), ("submission_secret.txt", secret)):
        with open(os.path.join(folder, file), "w") as out:
            out.write(text)
    if link:
        os.symlink(link, os.path.join(folder, "00_setup.ipynb"))
    else:
        with open(os.path.join(folder, "00_setup.ipynb"), "w") as out:
            out.write('{"cells": [], "metadata": {"forged": true}, "nbformat": 4, "nbformat_minor": 5}')
if what == "forgeries":
    hand_in(f"{victim}+00_setup+2099-01-01 00:00:00.000000 UTC+forged")
    for i in range(3):
        hand_in(f"ghost0{i}+00_setup+{now}+ghost")
    with open(os.path.join(inbound, "junk.bin"), "wb") as out:
        for _ in range(101):
            out.write(b"x" * 1_000_000)
else:
    hand_in(f"{me}+00_setup+{now}+link", link=solutions)
"""


def as_person(hub: Hub, name: str, *command, timeout: float = 300) -> subprocess.CompletedProcess:
    """`command` run as `name`'s Unix user, with the hub's environment (what their kernel or terminal runs)."""
    env = {"HOME": f"/home/{name}", "PATH": hub.layout.path}
    return subprocess.run(["runuser", "-u", name, "--", "env", *(f"{k}={v}" for k, v in env.items()), *command],
                          cwd=env["HOME"], capture_output=True, text=True, timeout=timeout)


def test_a_students_forgeries_and_flood_reach_no_grade_and_a_classmates_feedback_still_comes(hub):
    """A, as A's Unix user, plants forgeries in the exchange (a hand-in in B's name dated 2099, ghosts, a
    link to the solutions, 101 MB of junk) and hands in five times in a row; B hands in meanwhile. B's
    hand-in is graded and its feedback released with a score; then the instructor's Collect, as their
    user, takes B's real notebook; no ghost is in the gradebook; the solutions reached no submission and
    no feedback page; what was refused is in the quarantine, which A cannot list. Before the gate, the
    service refused the 2099 folder and never graded B again, Collect took it as B's submission and
    A's link as A's notebook, and the ghosts became students (docs/GRADING.md, "The exchange")."""
    from nbgrader.api import Gradebook
    from nbgrader.utils import notebook_hash
    inbound_folder = hub.layout.exchange / "pytorch-course" / "inbound"
    solutions = hub.layout.course / SOURCE / CHAPTER / f"{CHAPTER}.ipynb"
    log = hub.layout.course / "autofeedback.log"
    for name in (A, B):   # fetched in the browser test, unless it ran alone
        if not Path(f"/home/{name}/pytorch-course/{CHAPTER}").is_dir():
            proc = as_person(hub, name, "nbgrader", "fetch_assignment", CHAPTER)
            assert proc.returncode == 0, proc.stdout + proc.stderr
    forge = ["python", "-c", FORGE, str(inbound_folder), B, A, str(solutions), "a-secret"]
    proc = as_person(hub, A, *forge, "forgeries")
    assert proc.returncode == 0, proc.stderr
    flood = subprocess.Popen(["runuser", "-u", A, "--", "env", f"HOME=/home/{A}", f"PATH={hub.layout.path}", "bash",
                              "-c", f"for i in $(seq 5); do nbgrader submit {CHAPTER} >/dev/null 2>&1; done"],
                             cwd=f"/home/{A}")
    try:
        proc = as_person(hub, B, "nbgrader", "submit", CHAPTER)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        (stamp,) = re.findall(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ UTC)", proc.stdout + proc.stderr)[-1:]

        def b_line():
            lines = [line.split("\t") for line in log.read_text().splitlines()] if log.exists() else []
            return next((fields for fields in lines if fields[1] == B and fields[3] == stamp), None)
        wait_until(b_line, "the feedback of B's hand-in (each look reads the service's log)",
                   alive=hub_alive(hub), every=1)
        why = "\n".join(line for line in hub.layout.log.read_text().splitlines()
                        if "autofeedback" in line or "FAILED" in line or "Error" in line)[-4000:]
        assert re.fullmatch(r"[\d.]+/[\d.]+", b_line()[4]), f"B's hand-in was not graded: {b_line()[4]}\n{why}"
    finally:
        flood.wait(timeout=600)

    proc = as_person(hub, A, *forge, "link")   # now A's newest hand-in, the one a Collect takes
    assert proc.returncode == 0, proc.stderr
    teacher = as_person(hub, INSTRUCTOR, "nbgrader", "collect", "--update", CHAPTER)
    assert teacher.returncode == 0, teacher.stdout[-3000:] + teacher.stderr[-3000:]
    course = hub.layout.course
    b_notebook = Path(f"/home/{B}/pytorch-course/{CHAPTER}/{CHAPTER}.ipynb").read_bytes()
    assert (course / "submitted" / B / CHAPTER / f"{CHAPTER}.ipynb").read_bytes() == b_notebook
    a_notebook = course / "submitted" / A / CHAPTER / f"{CHAPTER}.ipynb"
    assert not a_notebook.is_symlink() and "BEGIN SOLUTION" not in a_notebook.read_text()
    assert sorted(p.name for p in (course / "submitted").iterdir()) == sorted([A, B])
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        assert sorted(s.id for s in gradebook.students) == sorted([A, B]), "no ghost became a student"
    released = hub.layout.exchange / "pytorch-course" / "feedback" / f"{notebook_hash(secret='a-secret', notebook_id=CHAPTER)}.html"
    assert not released.exists(), "no feedback page for the hand-in that linked to the solutions"
    for page in (hub.layout.exchange / "pytorch-course" / "feedback").iterdir():
        assert "BEGIN SOLUTION" not in page.read_text(errors="replace") and "hidden_checks" not in page.read_text(errors="replace")

    def refused_now():
        quarantine = inbound_folder.parent / "quarantine" / "refused.jsonl"
        return {line["name"]: line for line in map(json.loads, quarantine.read_text().splitlines())}
    # the service's next look (every 2 s) sets the junk aside
    wait_until(lambda: "junk.bin" in refused_now(), "the junk set aside from inbound/", alive=hub_alive(hub), every=1)
    refused = refused_now()
    forged = [n for n in refused if n.startswith(f"{B}+{CHAPTER}+2099")]
    assert forged and "in the future" in refused[forged[0]]["why"] and refused[forged[0]]["owner"] == A
    assert len([n for n in refused if n.startswith("ghost0")]) == 3
    assert any(n.endswith("+link") and "link" in line["why"] for n, line in refused.items())
    assert refused["junk.bin"]["done"].startswith("deleted")
    proc = subprocess.run(["runuser", "-u", A, "--", "ls", str(inbound_folder.parent / "quarantine")],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "Permission denied" in proc.stderr
