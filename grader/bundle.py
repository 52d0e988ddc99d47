"""The student bundle: what students get, and nothing an instructor keeps to themselves.

`make student-bundle BUNDLE_DIR=dist/course` writes:

    notebooks/            the released notebooks (nbgrader's student version: no solutions, no hidden tests)
    torchcourse/          the course package the notebooks import
    grader/               only what the self-check and the install need (cli, selfcheck, install, lab_settings)
    ddp_scripts/          the torchrun scripts chapter 10 runs
    pyproject.toml, requirements.lock, environment.yml   the same pinned environment as the course
    Makefile              setup, lab, check, doctor (a student's verbs only)
    README.md             for students
    wheels/               torchcourse and ddp_scripts as one wheel, for machines with only PyTorch
                          (Colab, Kaggle, a bare VM): each chapter's first code cell installs it
                          from the URL in pyproject.toml's [tool.torchcourse] (grader/student_package.py)

It contains no solutions/, no hidden tests, no gradebook, no submissions, no tests/ (which hold the
answers): tests/test_bundle.py checks the contents, and `write_bundle` itself refuses to finish if
a notebook it copied carries a solution or hidden-test marker.
"""
import shutil
from pathlib import Path

import nbformat

from grader import student_package
from grader.course import REPO_ROOT, RELEASE

SELF_CHECK_MODULES = ["__init__.py", "__main__.py", "cli.py", "install.py", "lab_settings.py", "pipeline.py",
                      "selfcheck.py"]
ENVIRONMENT_FILES = ["pyproject.toml", "requirements.lock", "environment.yml"]
FORBIDDEN_MARKERS = ["### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"]
MARKER = ".student-bundle"
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", "*.db", "*.egg-info")

MAKEFILE = """\
# A student's verbs. Switch: make check NB=notebooks/01_tensors/01_tensors.ipynb
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NB     ?=

.PHONY: help setup lab check doctor

help:  ## list the verbs
\t@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\\n", $$1, $$2}'

setup: $(STAMP)  ## create .venv and install the pinned packages (once)

$(STAMP): requirements.lock pyproject.toml
\t@test -x $(PY) || $(PYTHON) -m venv $(VENV)
\t$(PY) -m grader.install -r requirements.lock
\t$(PY) -m grader.install -e .
\t$(PY) -m grader.lab_settings
\t@touch $@

lab: setup  ## open the notebooks in JupyterLab
\t$(VENV)/bin/jupyter lab notebooks

check: setup  ## run a notebook's visible tests: make check NB=notebooks/01_tensors/01_tensors.ipynb
\t@test -n "$(NB)" || { echo "usage: make check NB=<path to notebook>"; exit 2; }
\t$(PY) -m grader check "$(NB)"

doctor: setup  ## is the environment right? one [OK]/[FAIL] line per check
\t$(PY) -m torchcourse.doctor
"""

README = """\
# PyTorch, hands on: the student edition

One Jupyter notebook per chapter, in `notebooks/`, each with exercises and test cells.

## Start

You need Python 3.10 or newer.

- Linux, macOS, WSL (with `make`):

      make lab        # first time: creates .venv and installs the pinned packages, then opens JupyterLab
      make doctor     # checks Python, torch, JupyterLab, CUDA/MPS: [OK] or [FAIL] per line

- Without `make` (Windows PowerShell shown; on Linux/macOS use `.venv/bin/`):

      python -m venv .venv
      .venv\\Scripts\\python -m grader.install -r requirements.lock
      .venv\\Scripts\\python -m grader.install -e .
      .venv\\Scripts\\jupyter lab notebooks

- Conda: `conda env create -f environment.yml`, `conda activate pytorch-course`, `jupyter lab notebooks`.

## Working on an exercise

Each exercise tells you what to write and what shape or type to return. Replace
the `raise NotImplementedError(...)` line with your code, then run the test cell under it: if it fails, its
message says what to look at. Do not edit the test cells: they are restored when your work is graded.

## Checking a whole notebook

Save the notebook, then run its last cell; or, from a terminal,

    make check NB=notebooks/01_tensors/01_tensors.ipynb
    # without make: python -m grader check notebooks/01_tensors/01_tensors.ipynb

It runs the notebook from the top in a fresh kernel and prints one line per exercise: passed or
failed, and the points. Grading also runs hidden tests (other inputs, edge cases), so a full
self-check is necessary but not sufficient: write code that is right, not code that passes.

## What is here

| folder | what |
|---|---|
| `notebooks/` | the chapters, in order |
| `torchcourse/` | code the chapters share (models, data, training helpers, device choice) |
| `ddp_scripts/` | the multi-process scripts of chapter 10 (each docstring gives the command) |
| `grader/` | the self-check |

Set `COURSE_QUICK=1` to shorten long training runs, and `COURSE_OFFLINE=1` never to use the
network: FashionMNIST then comes from disk (an earlier download, or Debian's package
`dataset-fashion-mnist`), or else from a generated stand-in (the notebooks say so loudly).
"""


def release_notebooks(course: Path = REPO_ROOT) -> list:
    return sorted((Path(course) / RELEASE).glob("*/*.ipynb"))


def leaks(nb_path) -> list:
    """Solution or hidden-test markers found in a notebook's cells (should be empty)."""
    nb = nbformat.read(nb_path, as_version=4)
    return [(nb_path, marker) for cell in nb.cells for marker in FORBIDDEN_MARKERS
            if marker in cell.source]


def write_bundle(dest, course: Path = REPO_ROOT) -> Path:
    """Write the student bundle to `dest` (replacing a previous bundle there)."""
    course, dest = Path(course), Path(dest).resolve()
    if dest.exists() and any(dest.iterdir()):
        if not (dest / MARKER).exists():
            raise FileExistsError(f"{dest} exists and is not a student bundle: choose an empty folder")
        shutil.rmtree(dest)   # a previous bundle: replace it
    dest.mkdir(parents=True, exist_ok=True)
    (dest / MARKER).write_text("written by `make student-bundle`; safe to delete\n")

    for nb_path in release_notebooks(course):
        target = dest / nb_path.relative_to(course)
        shutil.copytree(nb_path.parent, target.parent, ignore=_SKIP, dirs_exist_ok=True)
    shutil.copytree(course / "torchcourse", dest / "torchcourse", ignore=_SKIP)
    if (course / "ddp_scripts").is_dir():
        shutil.copytree(course / "ddp_scripts", dest / "ddp_scripts", ignore=_SKIP)
    (dest / "grader").mkdir()
    for name in SELF_CHECK_MODULES:
        shutil.copyfile(course / "grader" / name, dest / "grader" / name)
    for name in ENVIRONMENT_FILES:
        shutil.copyfile(course / name, dest / name)
    wheel = student_package.build_wheel(dest / "wheels", course)   # for Colab, Kaggle, a bare VM
    (dest / "Makefile").write_text(MAKEFILE)
    (dest / "README.md").write_text(README)

    found = [leak for nb_path in dest.glob("notebooks/**/*.ipynb") for leak in leaks(nb_path)]
    if found:
        shutil.rmtree(dest)
        raise RuntimeError(f"refusing to bundle notebooks with solutions or hidden tests: {found}")
    print(f"student bundle written to {dest}: {len(release_notebooks(course))} notebooks; publish "
          f"{wheel.relative_to(dest)} at pyproject.toml's [tool.torchcourse] package_url")
    return dest
