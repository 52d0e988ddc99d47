"""Where things are in a course directory, and how to run nbgrader in one."""
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SOURCE = "solutions"
RELEASE = "notebooks"


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


def run_nbgrader(*args, course: Path = REPO_ROOT, check: bool = True, env=None, timeout=None):
    """Run one nbgrader command in `course` and return the CompletedProcess (output captured)."""
    full_env = tool_env(env)
    proc = subprocess.run(nbgrader_cmd(*args), cwd=course, env=full_env, text=True,
                          capture_output=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(map(str, args))} failed ({proc.returncode}):\n"
                           f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def nbgrader_python(script: str, *args, course: Path = REPO_ROOT, timeout=None):
    """Run a Python script that drives nbgrader's API in `course` (as the formgrader does)."""
    proc = subprocess.run([sys.executable, "-c", script, *map(str, args)], cwd=course, env=tool_env(),
                          text=True, capture_output=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"nbgrader script failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc
