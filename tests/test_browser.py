"""A student's session in a real browser: Debian's chromium, driven by playwright, against `make lab`.

One journey through chapter 00, as a person clicks it: open the chapter (it opens unmodified, and
no question about Jupyter news greets the student), Run All (the run reaches the self-check cell at
the bottom and an exercise's failure message is on screen), fill in one exercise, save, press
nbgrader's Validate button, run the self-check cell and read its table. Then a newer release of the
chapter: the self-check cell of the `.updated` copy that `make lab` writes checks that copy.
On a failure the screenshot lands in build/browser-test/ (a CI artefact).
"""
import hashlib
import json
import os
import shutil
from contextlib import contextmanager

import nbformat
import pytest

from conftest import LAB_TOKEN, load_answers
from grader.course import REPO_ROOT, release_notebook
from grader.lab_settings import OVERRIDES
from grader.workspace import RECORD, sync
from submissions import with_answers
from waiting import HANG_SECONDS

CHAPTER = "00_setup"


def _release_cells() -> list:
    return nbformat.read(release_notebook(CHAPTER), as_version=4).cells


EXERCISE = next(i for i, c in enumerate(_release_cells())          # the cell of `tensor_bytes` (exercise 1)
                if c.metadata.get("nbgrader", {}).get("grade_id") == "tensor_bytes")
SELF_CHECK = len(_release_cells()) - 1                               # the last cell: check_notebook(...)
ANSWER = 'import math\n\ndef tensor_bytes(shape, dtype):\n    return math.prod(shape) * torch.empty(0, dtype=dtype).element_size()\n'
STUB_MESSAGE = "not done yet: replace this line with your solution"
NOTIFICATIONS = "@jupyterlab/apputils-extension:notification"     # the plugin whose fetchNews asks
NEWS_QUESTION = "Would you like to get notified about official Jupyter news?"
ARTEFACTS = REPO_ROOT / "build" / "browser-test"
# Headless, and no calls home: this machine's closed network refuses them by the dozen.
CHROMIUM_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SLOW = HANG_SECONDS * 1000   # ms: a notebook run, nbgrader's validation, the self-check's fresh kernel (tests/waiting.py)


def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path:
        return path
    message = ("Debian's chromium is not installed (`make setup` installs it as root with apt-get; "
               "see grader/debian.py): the browser test cannot run")
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def page(lab):
    from playwright.sync_api import expect, sync_playwright
    expect.set_options(timeout=SLOW)   # its own default is 5 s
    executable = chromium_path()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(SLOW)   # a click waits for the page as long as any wait: a busy machine is slow
        yield page
        browser.close()


@contextmanager
def screenshot_on_failure(page, step: str):
    try:
        yield
    except BaseException:
        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTEFACTS / f"{step}.png"))
        raise


def cell(page, index: int):
    """The notebook's cell `index`, scrolled into view. JupyterLab 4 renders only the cells near
    the viewport, so the notebook is scrolled until the cell exists."""
    target = page.locator(f'.jp-NotebookPanel .jp-Cell[data-windowed-list-index="{index}"]')
    for _ in range(200):
        if target.count():
            target.scroll_into_view_if_needed()
            return target
        shown = page.locator(".jp-NotebookPanel .jp-Cell").evaluate_all(
            "cells => cells.map(c => Number(c.dataset.windowedListIndex))")
        step = 500 if index > max(shown) else -500
        page.locator(".jp-NotebookPanel .jp-WindowedPanel-outer").evaluate(f"outer => outer.scrollBy(0, {step})")
        page.wait_for_timeout(50)
    raise AssertionError(f"cell {index} never appeared")


def self_check_table(page) -> str:
    return cell(page, SELF_CHECK).locator(".jp-OutputArea-output").text_content()


def open_notebook(lab, page, name: str):
    """Open workspace/<CHAPTER>/<name> in a lab of that notebook alone, and wait for its kernel."""
    from playwright.sync_api import expect
    page.goto(lab.url(f"/lab/tree/{CHAPTER}/{name}?reset&token={LAB_TOKEN}"))
    expect(page.locator(".jp-NotebookPanel .jp-Cell").first).to_contain_text("Chapter 00", timeout=SLOW)
    expect(page.get_by_text("Python 3 (ipykernel) | Idle")).to_be_visible(timeout=SLOW)   # the status bar


def run_self_check(page, expected: str):
    from playwright.sync_api import expect
    cell(page, SELF_CHECK).locator(".cm-content").click()
    page.keyboard.press("Shift+Enter")
    expect(cell(page, SELF_CHECK).locator(".jp-OutputArea-output")).to_contain_text(expected, timeout=SLOW)


def test_a_fresh_lab_never_fetches_news(lab):
    """`make setup` wrote the course's overrides (grader/lab_settings.py) where `make lab` reads
    them: the lab's settings API says what the student's lab does."""
    reply = lab.call(f"/lab/api/settings/{NOTIFICATIONS}")
    in_effect = reply["settings"].get("fetchNews", reply["schema"]["properties"]["fetchNews"]["default"])
    assert in_effect == OVERRIDES[NOTIFICATIONS]["fetchNews"] == "false", reply["settings"]


def test_a_student_runs_fills_in_validates_and_checks_a_chapter(lab, page):
    from playwright.sync_api import expect

    with screenshot_on_failure(page, "1-open"):
        open_notebook(lab, page, f"{CHAPTER}.ipynb")
        page.wait_for_timeout(1000)   # JupyterLab writes the kernel's metadata into the notebook as it connects
        assert page.locator(".lm-TabBar-tab.jp-mod-dirty").count() == 0, "the notebook opened modified"
        # the lab asks (a toast that stays until answered) as soon as it has restored its layout
        assert page.get_by_text(NEWS_QUESTION).count() == 0, "the lab asks about Jupyter news"

    with screenshot_on_failure(page, "2-run-all"):
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").click()
        page.get_by_text("Run All Cells", exact=True).click()
        last = cell(page, SELF_CHECK)
        expect(last.locator(".jp-OutputArea-output")).to_contain_text("visible tests: 0/5 passed", timeout=SLOW)
        assert last.locator(".jp-InputPrompt").text_content().strip() not in ("[ ]:", "[*]:")
        expect(cell(page, EXERCISE + 1).locator(".jp-OutputArea-output")).to_contain_text(STUB_MESSAGE)

    with screenshot_on_failure(page, "3-fill-in"):
        cell(page, EXERCISE).locator(".cm-content").click()
        page.keyboard.press("Control+a")
        page.keyboard.insert_text(ANSWER)          # as pasted: no auto-closed brackets
        page.keyboard.press("Escape")
        page.keyboard.press("Control+s")
        expect(page.locator(".lm-TabBar-tab.jp-mod-dirty")).to_have_count(0)

    with screenshot_on_failure(page, "4-validate"):
        page.get_by_role("button", name="Validate").click()
        dialog = page.locator(".jp-Dialog")
        expect(dialog).to_contain_text("Validation Results", timeout=SLOW)
        report = dialog.text_content()
        assert "tensor_bytes(" not in report, "the solved exercise is reported as failing"
        assert report.count("The following cell failed") == 4 and "NotImplementedError" in report
        dialog.get_by_role("button", name="Ok").click()

    with screenshot_on_failure(page, "5-self-check"):
        run_self_check(page, "visible tests: 1/5 passed")
        rows = {parts[0]: parts[1] for parts in map(str.split, self_check_table(page).splitlines())
                if len(parts) >= 3 and parts[1] in ("PASS", "FAIL")}
        assert rows.get("tensor_bytes_tests") == "PASS", rows
        assert [name for name, result in rows.items() if result == "FAIL"] == [
            "torch_build_tests", "devices_offered_tests", "pick_device_tests", "to_device_tests"], rows


def pretend_an_older_release(workspace, name: str):
    """Record that the student's copy of `name` came from a release older than the one in notebooks/."""
    record = workspace / RECORD
    releases = json.loads(record.read_text())
    releases[name] = hashlib.sha256(b"an older release").hexdigest()
    record.write_text(json.dumps(releases))


def test_the_self_check_of_an_updated_chapter_checks_that_copy(lab, page):
    """`make lab` after a newer release of a chapter the student changed writes <chapter>.updated.ipynb
    with their answers; where they go on working, its self-check checks it, not the old copy."""
    answers = load_answers(CHAPTER)["alternative"]
    mine = lab.workspace / CHAPTER / f"{CHAPTER}.ipynb"
    nbformat.write(with_answers(nbformat.read(release_notebook(CHAPTER), as_version=4),
                                {"tensor_bytes": answers["tensor_bytes"]}), mine)
    pretend_an_older_release(lab.workspace, f"{CHAPTER}/{mine.name}")
    sync(workspace=lab.workspace)
    updated = mine.with_name(f"{CHAPTER}.updated.ipynb")
    nbformat.write(with_answers(nbformat.read(updated, as_version=4), {"torch_build": answers["torch_build"]}), updated)

    with screenshot_on_failure(page, "6-updated-self-check"):
        open_notebook(lab, page, updated.name)
        run_self_check(page, "visible tests: 2/5 passed")     # the old copy has 1 of 5
