"""Where things are in a course directory, and how to run nbgrader in one."""
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SOURCE = "solutions"
RELEASE = "notebooks"
COURSE_ID = "pytorch-course"
EXCHANGE = ".exchange"     # nbgrader's local exchange, in the course directory


def chapters(course: Path = REPO_ROOT) -> list:
    """Assignment names (`NN_topic`), in course order, as found in solutions/."""
    return sorted(p.name for p in (Path(course) / SOURCE).iterdir()
                  if p.is_dir() and (p / f"{p.name}.ipynb").exists())


def source_notebook(chapter: str, course: Path = REPO_ROOT) -> Path:
    return Path(course) / SOURCE / chapter / f"{chapter}.ipynb"


def release_notebook(chapter: str, course: Path = REPO_ROOT) -> Path:
    return Path(course) / RELEASE / chapter / f"{chapter}.ipynb"


def nbgrader_cmd(*args) -> list:
    """The nbgrader command line, run with this interpreter so .venv is used."""
    return [sys.executable, "-m", "nbgrader", *map(str, args)]


def tool_env(extra=None) -> dict:
    """The environment for nbgrader: this interpreter's bin/ first on PATH, because nbgrader
    shells out to `alembic` and jupyter by name and fails if the venv is not on PATH."""
    env = dict(os.environ, **(extra or {}))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


# A WarmNbgrader (grader/class_grading/warm_nbgrader.py) for the commands below: each then runs in a
# fork of one process that imported nbgrader once, not in a fresh Python (1.2 CPU-s saved a command).
# Set by whoever runs many of them, the test suite (tests/conftest.py); None: a fresh process each.
warm = None


def _run_in_course(cmd: list, what: str, course: Path, check: bool, env, timeout, script=None):
    proc = (_run_warm(cmd, course, tool_env(env), timeout, script) if warm is not None else
            subprocess.run(cmd, cwd=course, env=tool_env(env), text=True, capture_output=True, timeout=timeout))
    if check and proc.returncode != 0:
        # the first traceback says why; the tail, how it ended (nbgrader logs a failed student, then goes on)
        log = proc.stdout + proc.stderr
        first = log.find("Traceback (most recent call last)")
        why = f"{log[first:first + 6000]}\n[...]\n" if first >= 0 else ""
        raise RuntimeError(f"{what} failed ({proc.returncode}):\n{why}{log[-4000:]}")
    return proc


def _run_warm(cmd: list, course: Path, env: dict, timeout, script) -> subprocess.CompletedProcess:
    """`cmd` (`nbgrader_cmd(...)`, or `python -c script ...` with `script` given) through `warm`."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="warm-nbgrader-") as folder:
        out, err = Path(folder) / "out", Path(folder) / "err"
        # cmd[3:]: what follows `python -m nbgrader`, or `python -c <script>`
        code = warm.run(cmd[3:], course, env, out, timeout, script=script, errors=err)
        if code == 124 and timeout is not None:
            raise subprocess.TimeoutExpired(cmd, timeout)
        return subprocess.CompletedProcess(cmd, code, out.read_text(errors="replace"), err.read_text(errors="replace"))


def run_nbgrader(*args, course: Path = REPO_ROOT, check: bool = True, env=None, timeout=None):
    """Run one nbgrader command in `course` and return the CompletedProcess (output captured)."""
    return _run_in_course(nbgrader_cmd(*args), f"nbgrader {' '.join(map(str, args))}", course,
                          check, env, timeout)


# nbgrader's API, built as the formgrader builds it (nbgrader/server_extensions/formgrader/base.py):
# the course's nbgrader_config.py loaded, so the API grades through the course's pipeline.
_API = """
from nbgrader.apps import NbGrader
from nbgrader.apps.api import NbGraderAPI
from nbgrader.coursedir import CourseDirectory
app = NbGrader()
app.load_config_file()
api = NbGraderAPI(CourseDirectory(parent=app), parent=app)
"""


def nbgrader_api(script: str, *args, course: Path = REPO_ROOT, check: bool = True, timeout=None):
    """Run `script` in a fresh Python process in `course`, with `api` (nbgrader's NbGraderAPI, as
    the formgrader has it) and `sys` defined; `args` are its sys.argv[1:]."""
    source = "import sys\n" + _API + script
    return _run_in_course([sys.executable, "-c", source, *map(str, args)],
                          "a script on nbgrader's API", course, check, None, timeout, script=source)
