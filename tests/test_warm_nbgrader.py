"""The warm nbgrader of a grading worker (grader/class_grading/warm_nbgrader.py): nbgrader's own
command line in a fork of a process that imported it once; a run past its time is killed and the
server goes on serving; several threads run nbgrader through one server at once, each on a
connection of its own (grader/wall/fork_server.py), a run whose client went away is stopped, and
what killed servers leave behind is removed."""
import json
import os
import socket
import tempfile
import threading
import time
from pathlib import Path

import psutil

from grader.class_grading.warm_nbgrader import WarmNbgrader
from grader.course import tool_env
from grader.wall import fork_server


def _stuck_course(folder):
    folder.mkdir()
    (folder / "nbgrader_config.py").write_text("import time\ntime.sleep(600)\n")   # nbgrader loads it first
    return folder


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:   # reaped between two looks
        return False


def test_runs_nbgrader_and_stops_a_run_past_its_time(tmp_path):
    server = WarmNbgrader(tool_env())
    try:
        assert server.run(["--version"], tmp_path, tool_env(), tmp_path / "log", timeout=60) == 0
        assert "nbgrader version" in (tmp_path / "log").read_text()

        stuck = _stuck_course(tmp_path / "stuck")
        start = time.perf_counter()
        assert server.run(["autograde", "ps1"], stuck, tool_env(), stuck / "log", timeout=3) == 124
        assert time.perf_counter() - start < 30

        (tmp_path / "bad").mkdir()
        code = server.run(["autograde", "ps1"], tmp_path / "bad", tool_env(), tmp_path / "bad" / "log", timeout=120)
        assert code != 0, "no course here: nbgrader fails, and says why"
        assert "error" in (tmp_path / "bad" / "log").read_text().lower()
        assert server.alive()
    finally:
        server.stop()


def test_threads_share_one_server_and_a_run_whose_client_left_is_stopped(tmp_path):
    server = WarmNbgrader(tool_env())
    try:
        assert server.run(["--version"], tmp_path, tool_env(), tmp_path / "log", timeout=60) == 0   # warm
        # one thread's run is stuck; another's, through the same server, still ends at once
        stuck = _stuck_course(tmp_path / "stuck")
        blocked = threading.Thread(target=server.run, args=(["autograde", "ps1"], stuck, tool_env(), stuck / "log", 8))
        blocked.start()
        start = time.perf_counter()
        assert server.run(["--version"], tmp_path, tool_env(), tmp_path / "log", timeout=60) == 0
        assert blocked.is_alive() and time.perf_counter() - start < 6, "the second run waited for the first"
        blocked.join()

        # a client that goes away (its worker was killed) takes its nbgrader with it
        with fork_server.connect(server.path) as channel:
            channel.sendall(json.dumps({"argv": ["autograde", "ps1"], "cwd": str(stuck), "env": tool_env(),
                                        "log": str(stuck / "log2")}).encode() + b"\n")
            pid = json.loads(channel.makefile("r").readline())["pid"]
            assert psutil.pid_exists(pid)
        deadline = time.time() + 10
        while _running(pid):
            assert time.time() < deadline, "nbgrader outlived the client that asked for it"
            time.sleep(0.1)
        assert server.alive()
    finally:
        server.stop()
    assert not Path(server.path).parent.exists(), "the folder of its socket stayed behind"


def test_a_server_start_removes_what_killed_servers_left(tmp_path):
    """A server killed with its owner (a killed worker) cannot remove its socket's folder: the next
    server started removes it, and leaves a live server's alone."""
    dead = Path(tempfile.mkdtemp(prefix=fork_server.FOLDER_PREFIX))
    with socket.socket(socket.AF_UNIX) as gone:
        gone.bind(str(dead / "socket"))    # bound, no longer listening: what a killed server leaves
    live = WarmNbgrader(tool_env())
    try:
        for folder in (dead, Path(live.path).parent):
            os.utime(folder, (time.time() - 3600,) * 2)
        second = WarmNbgrader(tool_env())
        second.stop()
        assert not dead.exists(), "the dead server's folder stayed"
        assert Path(live.path).exists(), "a live server's socket was removed"
        assert live.run(["--version"], tmp_path, tool_env(), tmp_path / "log", timeout=60) == 0
    finally:
        live.stop()


def test_a_new_gradebook_gets_the_schema_version_without_running_alembic_each_time(tmp_path, monkeypatch):
    """nbgrader runs `alembic heads` for each gradebook it creates (every batch's scratch course
    does): the warm nbgrader asked once, at its start. Here the run cannot find alembic at all, and
    its new gradebook still carries the version nbgrader's own way gives."""
    import sqlite3
    from nbgrader.api import get_alembic_version
    server = WarmNbgrader(tool_env())
    try:
        no_alembic = dict(tool_env(), PATH="/nonexistent")
        code = server.run(["db", "student", "add", "s1"], tmp_path, no_alembic, tmp_path / "log", timeout=120)
        assert code == 0, (tmp_path / "log").read_text()[-3000:]
    finally:
        server.stop()
    monkeypatch.setenv("PATH", tool_env()["PATH"])    # nbgrader's own way, here: it runs alembic
    with sqlite3.connect(tmp_path / "gradebook.db") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(get_alembic_version(),)]


def test_a_script_runs_as_python_c_would_with_its_output_and_errors_apart(tmp_path):
    """The suite's nbgrader-API scripts (grader/course.py, `warm`): sys.argv, the working folder first
    on sys.path, stdout and stderr each in their own file, the exit status of sys.exit."""
    (tmp_path / "beside.py").write_text("VALUE = 'found'\n")
    script = ("import sys, beside\nprint(sys.argv[1:], beside.VALUE)\n"
              "print('to stderr', file=sys.stderr)\nsys.exit(3)\n")
    server = WarmNbgrader(tool_env())
    try:
        code = server.run(["a", "b"], tmp_path, tool_env(), tmp_path / "out", timeout=60, script=script,
                          errors=tmp_path / "err")
    finally:
        server.stop()
    assert code == 3
    assert (tmp_path / "out").read_text() == "['a', 'b'] found\n"
    assert (tmp_path / "err").read_text() == "to stderr\n"


def test_a_fork_finds_the_database_driver_and_the_html_rendering_already_built(tmp_path, warm_nbgrader_commands):
    """Each batch, feedback page and `nbgrader db` command is a fork: what the server built before
    forking (PRELOAD) is not built again in each. A fork that renders a notebook to HTML as
    generate_feedback does imports no module and compiles no regular expression that the server
    had not (it did both, 0.45 CPU-s of a student's feedback, before the server rendered once)."""
    script = """
import re, sys
import nbformat
from nbconvert.exporters import HTMLExporter
from sqlalchemy import create_engine
modules, patterns = set(sys.modules), len(re._cache)
create_engine("sqlite:///" + sys.argv[1]).connect().close()
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("Some *prose*."),
                                     nbformat.v4.new_code_cell("x = [1, 2]  # a list\\nprint(sum(x))")])
nb.metadata["language_info"] = {"name": "python", "pygments_lexer": "ipython3"}
HTMLExporter(template_name="classic").from_notebook_node(nb)
print(sorted(set(sys.modules) - modules), len(re._cache) - patterns)
"""
    out = tmp_path / "out"
    code = warm_nbgrader_commands.run([str(tmp_path / "gradebook.db")], tmp_path, tool_env(), out, timeout=120,
                                      script=script, errors=tmp_path / "err")
    assert code == 0, (tmp_path / "err").read_text()[-3000:]
    assert out.read_text().strip() == "[] 0", out.read_text()


def test_cold_nbgrader_and_the_coordinators_gradebooks_get_the_schema_version_without_alembic(tmp_path):
    """The same outside the warm nbgrader (grader/gradebook_schema.py): a cold `nbgrader` command in a
    course with the course's nbgrader_config.py, and a process that makes gradebooks the way batches
    and the coordinator do (grader/class_grading/transfer.py). Neither finds alembic on PATH here,
    and each new gradebook carries the version that nbgrader's own `alembic heads` gives."""
    import shutil
    import sqlite3
    import subprocess
    import sys
    from grader.course import REPO_ROOT
    no_alembic = dict(tool_env(), PATH="/nonexistent")
    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(REPO_ROOT / "nbgrader_config.py", course)
    cold = subprocess.run([sys.executable, "-m", "nbgrader", "db", "student", "add", "s1"], cwd=course,
                          env=no_alembic, capture_output=True, text=True, timeout=300)
    assert cold.returncode == 0, cold.stderr[-3000:]
    made = subprocess.run([sys.executable, "-c", "import sys, grader.class_grading.transfer\n"
                           "from nbgrader.api import Gradebook\nGradebook('sqlite:///' + sys.argv[1]).close()",
                           str(tmp_path / "batch.db")], env=no_alembic, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr[-3000:]
    from nbgrader.dbutil import _temp_alembic_ini
    with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:    # nbgrader's own way, where alembic is
        heads = subprocess.run(["alembic", "-c", ini, "heads"], env=tool_env(), capture_output=True, text=True,
                               check=True).stdout
    for db in (course / "gradebook.db", tmp_path / "batch.db"):
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [(heads.split()[0],)]
