"""A class's JupyterHub in a temporary folder, and people logging in to it in a browser.

The hub is set up from a roster by grader.hub.deploy, exactly as `make hub` does it, with its own
ports and Unix users, all removed afterwards (and the repository's mode, which the setup closes to
others, put back), in a folder whose students' environment the next hub of the same test process
finds built, as `make hub` run again does (hub_root). Used by tests/test_hub.py,
tests/test_hub_limits.py and the hub benchmarks.
"""
import atexit
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.course import REPO_ROOT
from grader.hub import deploy, unix_users
from grader.hub.layout import HubLayout
from grader.hub.roster import read_roster
from test_browser import CHROMIUM_FLAGS, chromium_path
from waiting import HANG_SECONDS, process_alive, wait_until

HUBS_FOLDER = Path("/srv")
SLOW = HANG_SECONDS * 1000   # ms: a first JupyterLab start, a grading on a busy machine (tests/waiting.py)


@dataclass
class Hub:
    url: str
    layout: HubLayout
    passwords: dict
    process: subprocess.Popen


def free_ports(count: int = 4) -> int:
    """A port p with p to p+3 free: the people's port, and the three after it, where the hub's API, the
    proxy's API and the reports service once listened (tests/test_hub_limits.py has a student take them).
    Below the range Linux hands out for port 0, as the spawner's (grader/hub/port_owner.py): a kernel's
    ZMQ socket of a test running beside is never given one of them, and so never connects to the
    student's squatter after it closed its own (make test saw a ZMQ greeting arrive there)."""
    from grader.hub import port_owner
    return port_owner.unclaimed_ports(count)


def require_hub(with_limits: bool = False) -> None:
    """Skip (fail in CI) where a hub cannot run: not root, no proxy, or, `with_limits`, no cgroups."""
    from grader.hub import limits
    why = None
    if os.geteuid() != 0 or not deploy.PROXY.exists():
        why = "the hub tests need root and the proxy (`make test` installs it with npm)"
    elif with_limits and limits.problem():
        why = f"no per-person limits on this machine: {limits.problem()}"
    if why and os.environ.get("CI", "").lower() == "true":
        pytest.fail(why)
    if why:
        pytest.skip(why)


def wait_healthy(url: str, hub: subprocess.Popen, log: Path) -> None:
    def healthy():
        try:
            return urllib.request.urlopen(f"{url}/hub/health", timeout=5).status == 200
        except OSError:
            return False
    wait_until(healthy, "JupyterHub to answer", alive=process_alive(hub, "JupyterHub", log), every=0.5)


_ROOT = None   # this test process's hubs' folder (hub_root)


def hub_root() -> Path:
    """The folder of this process's hubs, one after the other: the same each time, as `make hub`'s
    HUB_ROOT on a server, so that the next hub finds the students' environment (env/) that the first
    built and keeps it, as `make hub` run again does while the lock is the same; nothing else of
    the last hub is left in it (running_hub). The environment costs 14 CPU-s to build and `make test`
    sets up two hubs; it is removed when the process ends."""
    global _ROOT
    if _ROOT is None:
        # not under /tmp: each person's server has a /tmp of its own (grader/hub/private_mounts.py)
        HUBS_FOLDER.mkdir(parents=True, exist_ok=True)
        _ROOT = Path(tempfile.mkdtemp(prefix="course-hub-", dir=HUBS_FOLDER))
        atexit.register(shutil.rmtree, _ROOT, ignore_errors=True)
    os.chmod(_ROOT, 0o755)
    return _ROOT


def clear_but_environment(root: Path) -> None:
    """Everything of a hub in `root` removed but its students' environment, env/ (hub_root)."""
    kept = root / "hub" / "env"
    for path in [*root.iterdir(), *((root / "hub").iterdir() if (root / "hub").is_dir() else [])]:
        if path == kept or path == kept.parent:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


@contextmanager
def running_hub(roster_text: str, chapters=None):
    """A hub for the roster, set up and started as `make hub` does it (`chapters`: those released,
    default every one); everything it made is removed on the way out: the hub stopped (its process
    group), the roster's users, the folder but the students' environment (hub_root)."""
    root = hub_root()
    clear_but_environment(root)
    roster = root / "roster.txt"
    roster.write_text(roster_text)
    # each home a disk of its own, as make hub's default makes it, but small (its space is reserved)
    (root / "settings.txt").write_text("home_disk = 64M\n")
    url = f"http://127.0.0.1:{free_ports()}"
    repo_mode = REPO_ROOT.stat().st_mode
    process = None
    try:
        layout = deploy.setup(roster, root / "hub", url, chapters)
        passwords = dict(line.split() for line in layout.passwords.read_text().splitlines())
        process = deploy.start(layout)
        wait_healthy(url, process, layout.log)
        yield Hub(url, layout, passwords, process)
    finally:
        if process:
            try:
                os.killpg(process.pid, signal.SIGTERM)   # the hub stops the servers it started
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:                   # it had died: its log says why
                print(f"JupyterHub had stopped:\n{layout.log.read_text()[-3000:]}")
        stop_what_runs_from(root)
        for person in read_roster(roster):
            unix_users.remove_user(person.name)
        os.chmod(REPO_ROOT, repo_mode)
        clear_but_environment(root)


def stop_what_runs_from(root: Path) -> None:
    """Kill, by id, every process still running from the hub's folder: the proxy and the services run in
    sessions of their own, which the hub stops on SIGTERM, but not when it was killed after 30 s (a busy
    machine): they outlived the test, and the next hub's tests found its reports service."""
    import psutil
    left = []
    for proc in psutil.process_iter(["cmdline"]):
        if any(str(root) in part for part in proc.info["cmdline"] or []):
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
                left.append(proc)
    psutil.wait_procs(left, timeout=30)
    if left:
        print(f"killed {len(left)} processes the hub left running from {root}")


def hub_alive(hub: Hub):
    """An `alive` for wait_until (tests/waiting.py): the hub still runs."""
    return process_alive(hub.process, "JupyterHub", hub.layout.log)


def hub_call(url: str, token: str | None = None, method: str = "GET", body=None, timeout: float = 60):
    """One call of the hub's REST API (or a server's) with a person's token; the JSON it answers."""
    headers = {"Authorization": f"token {token}"} if token else {}
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text = response.read()
            return json.loads(text) if text else None
    except urllib.error.HTTPError as err:   # its text, and the connection closed: it says what went wrong
        with err:
            raise AssertionError(f"{method} {url}: HTTP {err.code}: {err.read()[:300]!r}") from None


def token_of(hub: Hub, name: str) -> str:
    """An API token of `name`'s own, asked for with their Unix password (as a person could)."""
    return hub_call(f"{hub.url}/hub/api/users/{name}/tokens", method="POST",
                    body={"auth": {"username": name, "password": hub.passwords[name]}})["token"]


def wait_for_server(hub: Hub, name: str, token: str, seconds: float = HANG_SECONDS) -> None:
    """Until the hub reports `name`'s server ready: its spawn-progress stream, whose events the hub
    pushes (no polling: 30 people polled twice a second kept the hub busy answering them while it
    started their servers). Fails at once when the hub says the start failed or ends the stream;
    `seconds` only stops a hang (the hub sends a keep-alive every 8 s)."""
    url = f"{hub.url}/hub/api/users/{name}/server/progress"
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=seconds) as stream:
            for line in stream:
                if not line.startswith(b"data:"):
                    continue
                event = json.loads(line[len(b"data:"):])
                if event.get("ready"):
                    return
                if event.get("failed"):
                    raise AssertionError(f"the hub stopped starting it: {event.get('message')}")
    except urllib.error.HTTPError as err:   # 400: neither starting nor running
        with err:
            raise AssertionError(f"{name}'s server is not starting: HTTP {err.code}: {err.read()[:300]!r}") from None
    raise AssertionError(f"the hub ended {name}'s progress stream before the server was ready")


def start_servers_at_once(hub: Hub, tokens: dict, on_ready=None, seconds: float = HANG_SECONDS) -> tuple:
    """A class logging in together: every `tokens` person's server asked for at the same moment, one
    thread each, through the hub's API; each waits on the hub's progress events until it reports
    it ready, then `on_ready(name)` called in that thread, if given. A start the hub gave up
    on fails at once; `seconds` only stops a hang (tests/waiting.py). Returns
    ({name: seconds until ready}, [what went wrong, for each one that did not come up])."""
    ready, errors = {}, []
    go = threading.Barrier(len(tokens) + 1)

    def start(name, token):
        go.wait()
        try:
            hub_call(f"{hub.url}/hub/api/users/{name}/server", token, "POST", {})
            wait_for_server(hub, name, token, seconds)
            ready[name] = time.perf_counter() - started
            if on_ready:
                on_ready(name)
        except Exception as err:   # noqa: BLE001 (every person's failure is reported, the others go on)
            errors.append(f"{name}: {type(err).__name__}: {err}")

    threads = [threading.Thread(target=start, args=item) for item in tokens.items()]
    for thread in threads:
        thread.start()
    started = time.perf_counter()
    go.wait()
    for thread in threads:
        thread.join()
    return ready, errors


@contextmanager
def chromium():
    """Debian's chromium, headless, driven by playwright."""
    from playwright.sync_api import expect, sync_playwright
    expect.set_options(timeout=SLOW)   # its own default is 5 s
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


def log_in(browser, hub: Hub, name: str):
    """A fresh browser session of `name`, logged in, on their JupyterLab."""
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.set_default_timeout(SLOW)   # a busy machine lists the assignments in minutes, not 60 s
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", name)
    page.fill("#password_input", hub.passwords[name])
    page.click("#login_submit")
    page.wait_for_selector('.lm-MenuBar-itemLabel:text-is("Nbgrader")', timeout=SLOW)
    return page
