# The course's verbs. Every target sets up .venv first if needed (see `setup`).
# Switches you can override:  make autograde JOBS=4 (or SCHEDULER=tcp://host:8786)   make check NB=notebooks/01_tensors/01_tensors.ipynb
#                             make audit-seeds CHAPTERS="00_setup 08_gpu_training"
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
STAMP  := $(VENV)/.installed
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
ASSIGNMENT ?=
APPLY  ?=
SCHEDULER ?=
NB     ?=
CHAPTERS ?=
WORKSPACE ?= workspace
BUNDLE_DIR ?= bundle
HUB_ROOT ?= /srv/pytorch-course
HUB_URL  ?= http://127.0.0.1:8000
ROSTER   ?= hub/roster.txt
# JupyterHub's proxy, from npm at the version hub/package-lock.json pins, into hub/node_modules
PROXY  := hub/node_modules/.bin/configurable-http-proxy

.PHONY: help setup lock lab instructor-lab hub test doctor gpu-check outputs release autograde feedback report regrade grades check student-bundle bench-grading bench-feedback audit-seeds stress-ddp clean

help:  ## list the verbs
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-15s %s\n", $$1, $$2}'

setup: $(STAMP)  ## create .venv and install the locked dependencies (seconds when nothing changed)

$(STAMP): requirements.lock pyproject.toml grader/install.py grader/debian.py grader/lab_settings.py torchcourse/fashion.py
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m grader.install -r requirements.lock   # uv with pip's package sources: 5x faster than pip
	$(PY) -m grader.install -e .
	$(PY) -c "import torch, torchvision, nbgrader, nbval, jupyterlab, torchcourse, grader"
	$(PY) -m grader.lab_settings   # every lab of .venv: no "get notified about Jupyter news?" question
	$(PY) -m grader.debian   # bubblewrap (the wall), chromium (browser test), FashionMNIST (apt-get, as root)
	$(PY) -m torchcourse.fashion --prepare   # Debian's FashionMNIST decompressed into data/, where graded kernels read it
	@touch $@

$(PROXY): hub/package.json hub/package-lock.json
	@command -v npm >/dev/null || { echo "make hub needs npm for JupyterHub's proxy: apt-get install -y nodejs npm"; exit 2; }
	npm ci --prefix hub --no-audit --no-fund --loglevel=error
	@touch $@

# The lock is complete, so it installs with --no-deps. It leaves out rfc3987-syntax (and its lark): an
# optional URI checker of jsonschema that builds a parser at import, 2.4 s added to every process
# that imports nbformat (each nbgrader command, JupyterLab, nbval); nothing in the course needs it.
lock:  ## regenerate requirements.lock from pyproject.toml (universal: platform markers for every OS)
	@test -x $(VENV)/bin/uv || $(PY) -m pip install -q uv
	$(VENV)/bin/uv pip compile --universal --python-version 3.10 --no-emit-package rfc3987-syntax \
		--no-emit-package lark pyproject.toml -o requirements.lock

# Students work in $(WORKSPACE): their own copies of the chapters, which nothing overwrites
# (grader/workspace.py); `make lab` brings in new chapters and newer releases without losing work.
lab: setup  ## start JupyterLab in workspace/, your own copies of the chapters (a release never overwrites them)
	@mkdir -p .exchange  # nbgrader's local exchange: the Assignments tab needs it to exist
	$(PY) -m grader workspace $(WORKSPACE)
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=$(WORKSPACE) $(LAB_ARGS) $(if $(filter 0,$(shell id -u)),--allow-root)

instructor-lab: setup  ## JupyterLab on the whole course: the formgrader, solutions/, notebooks/
	@mkdir -p .exchange
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=. $(LAB_ARGS) $(if $(filter 0,$(shell id -u)),--allow-root)

# A class on this server: users from the roster, JupyterHub on HUB_URL, feedback minutes after Submit
# (docs/GRADING.md, "A class on one server"). Run as root; Ctrl-C stops the hub, nothing is lost.
hub: setup $(PROXY)  ## JupyterHub for a class from ROSTER (hub/roster.txt): make hub HUB_URL=http://127.0.0.1:8000 HUB_ROOT=/srv/pytorch-course
	$(PY) -m grader.hub $(ROSTER) --root $(HUB_ROOT) --url $(HUB_URL)

# COURSE_QUICK shortens training and COURSE_OFFLINE keeps off the network (FashionMNIST from disk), as in CI,
# so that nbval compares against the outputs committed in solutions/. CUDA is hidden (CUDA_VISIBLE_DEVICES=):
# the stored outputs are CPU outputs, so the suite passes on a GPU machine too; `make gpu-check` runs the GPU. The class-on-a-hub tests
# (BESIDE: mostly waiting on a browser and a hub), then nbval, then the busy modules that need no
# fixture but the released course (LATER) run beside the suite, on the CPU it leaves idle: its serial tests
# first, then the gaps between its busy modules (tests/conftest.py runs those last; COURSE_TEST_TIMELINE=FILE
# logs when each test starts, from both chains, to see what ran while the CPU idled). They run at a
# lower priority so that they take that CPU rather than share the suite's; their log follows the suite's.
# One thread per torch process (OMP_NUM_THREADS=1): the two chains already keep both cores busy, and a
# second thread only spun: nbval alone took 233 CPU-s with torch's default 2 threads and 153 with one
# (one run each, 2026-11-29, every output still equal). Grading sets its own (grader/pipeline.py, GRADING_THREADS).
# A hang anywhere is stopped after TEST_TIMEOUT seconds (SIGINT: pytest still prints where it was)
# rather than holding CI to its own limit; a quiet 2-core machine needs about 700.
BESIDE_LOG := .beside.log
BESIDE := tests/test_hub.py tests/test_hub_limits.py tests/test_autofeedback.py
LATER := tests/test_run_all.py tests/test_no_answer_ships.py
TEST_TIMEOUT ?= 3600
STOP_HANG = timeout -k 60 -s INT $(TEST_TIMEOUT)
test: setup $(PROXY)  ## run the whole suite: harness tests, end-to-end grading, nbval on solutions/
	@export COURSE_QUICK=1 COURSE_OFFLINE=1 CUDA_VISIBLE_DEVICES= OMP_NUM_THREADS=1 MKL_NUM_THREADS=1; \
	{ nice -n 10 $(STOP_HANG) $(PY) -m pytest $(BESIDE) -p no:cacheprovider --durations=10 && hub=0 || hub=$$?; \
	  nice -n 10 $(STOP_HANG) $(PY) -m pytest --nbval solutions --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout 300 \
		-p no:cacheprovider && notebooks=0 || notebooks=$$?; \
	  nice -n 10 $(STOP_HANG) $(PY) -m pytest $(LATER) -p no:cacheprovider --durations=5 && later=0 || later=$$?; \
	  test $$notebooks = 0 && test $$hub = 0 && test $$later = 0; } > $(BESIDE_LOG) 2>&1 & beside=$$!; \
	$(STOP_HANG) $(PY) -m pytest tests $(addprefix --ignore=,$(BESIDE) $(LATER)) --durations=40 && suite=0 || suite=$$?; \
	wait $$beside && others=0 || others=$$?; \
	echo "---- $(BESIDE), nbval on solutions/, then $(LATER) (ran beside the suite) ----"; cat $(BESIDE_LOG); \
	test $$suite = 0 && test $$others = 0

doctor: setup  ## check Python, torch, nbgrader, jupyterlab, CPU threads, CUDA and MPS
	$(PY) -m torchcourse.doctor

# No `setup`: a lent GPU machine has torch, torchvision and matplotlib but no Jupyter or nbgrader, and this
# needs no more (python3 is .venv's where there is one). Full mode on the best device; GPU_CHECK_ARGS=--quick
# for quick mode; the table and its log go to docs/measurements/<date>-<device>/.
gpu-check:  ## every chapter as a student's Run All on this machine's best device: make gpu-check CHAPTERS="00_setup 10_distributed"
	python3 -m grader.gpu_check $(CHAPTERS) $(GPU_CHECK_ARGS)

outputs: setup  ## re-execute solutions/ in place, as CI does (CPU, quick mode), to refresh the committed outputs
	COURSE_QUICK=1 COURSE_OFFLINE=1 CUDA_VISIBLE_DEVICES= $(PY) -m grader outputs $(CHAPTERS)

release: setup  ## solutions/ -> notebooks/ and the exchange, every chapter (nbgrader generate_assignment, release_assignment)
	$(PY) -m grader release

autograde: setup  ## grade everything in submitted/ on JOBS local workers, or a Dask cluster: SCHEDULER=tcp://host:8786
	$(PY) -m grader autograde --jobs $(JOBS) $(if $(SCHEDULER),--scheduler $(SCHEDULER))

feedback: setup  ## HTML feedback for every graded submission (nbgrader generate_feedback)
	$(PY) -m grader feedback

# From the gradebook and the judge's outcomes: reports/<assignment>.html (figures, the most common mistakes,
# similar answers) and .csv (every number), reports/index.html. docs/GRADING.md, "What the class got wrong".
report: setup  ## class reports in reports/: make report (every graded assignment) or make report ASSIGNMENT=05_training_loop
	$(PY) -m grader report $(ASSIGNMENT)

# After fixing an exercise's hidden checks in solutions/: every hand-in graded again into a scratch gradebook,
# each student's change printed (and shown in the report); APPLY=1 writes them, with new feedback.
regrade: setup  ## make regrade ASSIGNMENT=05_training_loop shows what changes; add APPLY=1 to apply it
	@test -n "$(ASSIGNMENT)" || { echo "usage: make regrade ASSIGNMENT=<assignment> [APPLY=1]"; exit 2; }
	$(PY) -m grader regrade "$(ASSIGNMENT)" $(if $(filter 1,$(APPLY)),--apply) --jobs $(JOBS)

grades: setup  ## export the gradebook to grades.csv (nbgrader export)
	$(VENV)/bin/nbgrader export --to grades.csv

check: setup  ## run a notebook's visible tests: make check NB=notebooks/01_tensors/01_tensors.ipynb
	@test -n "$(NB)" || { echo "usage: make check NB=<path to notebook>"; exit 2; }
	$(PY) -m grader check "$(NB)"

student-bundle: setup  ## what students get, without solutions or hidden tests: make student-bundle BUNDLE_DIR=dir
	$(PY) -m grader bundle "$(BUNDLE_DIR)"

bench-grading: setup  ## grade a class serially and in parallel; prints the speed-up ratio last
	$(PY) tests/bench_grading.py

bench-feedback: setup  ## the deadline rush: STUDENTS (30) hand in 05 within WITHIN s (60; 0: all at once) to the feedback service (CLI=1: by cold `nbgrader submit`s); prints the median and the last
	$(PY) tests/bench_feedback.py --rush $(or $(STUDENTS),30) --within $(or $(WITHIN),60) $(if $(CLI),--cli)

audit-seeds: setup  ## every answer set in tests/answers judged for 8 students' seeds: the same verdict for each
	$(PY) tests/seed_audit.py $(CHAPTERS)

stress-ddp: setup  ## run every DDP script 10 times in a row on 2 CPU processes (about 3 minutes)
	COURSE_DDP_STRESS=1 COURSE_OFFLINE=1 $(PY) -m pytest tests/test_ddp.py -k ten_times

clean:  ## remove the virtual environment and nbgrader's working folders
	rm -rf $(VENV) autograded feedback judge_outcomes reports gradebook.db grades.csv
