"""`make lab` starts JupyterLab with nbgrader's student extensions answering."""
import json
import os
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from grader.course import REPO_ROOT

TOKEN = "course-test-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(port, path, data=None):
    body = urllib.parse.urlencode(data).encode() if data else None
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body,
                                     headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    port = free_port()
    workspace = tmp_path_factory.mktemp("lab") / "workspace"   # `make lab` fills it, then serves it
    args = f"--no-browser --port {port} --IdentityProvider.token={TOKEN} --ServerApp.open_browser=False"
    proc = subprocess.Popen(["make", "--no-print-directory", "lab", f"LAB_ARGS={args}", f"WORKSPACE={workspace}"],
                            cwd=REPO_ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                call(port, "/api/status")
                break
            except OSError:
                assert proc.poll() is None, proc.stdout.read().decode()[-3000:]
                time.sleep(1)
        else:
            pytest.fail("JupyterLab did not start within 90 s")
        yield port
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def test_nbgrader_lab_extension_is_installed(lab):
    names = [ext["name"] for ext in call(lab, "/lab/api/extensions")]
    assert "jupyter-nbgrader" in names, names


def test_assignment_list_answers(lab):
    """The workspace's nbgrader_config.py points the Assignments tab at the course's exchange."""
    reply = call(lab, "/assignments?course_id=pytorch-course")
    assert reply["success"] is True, reply


def test_students_see_their_workspace_not_solutions(lab):
    listing = {item["name"] for item in call(lab, "/api/contents")["content"]}
    assert "01_tensors" in listing and "solutions" not in listing, listing


def test_validate_reports_unsolved_exercises(lab):
    reply = call(lab, "/assignments/validate", {"path": "01_tensors/01_tensors.ipynb"})
    assert reply["success"] is True, reply
    failed = reply["value"].get("failed", [])
    assert failed and "NotImplementedError" in json.dumps(failed)
