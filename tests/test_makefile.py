"""The Makefile's setup is incremental and its verbs exist."""
import subprocess

from grader.course import REPO_ROOT


def make(*args):
    return subprocess.run(["make", "--no-print-directory", *args], cwd=REPO_ROOT, capture_output=True, text=True)


def test_second_setup_has_nothing_to_do():
    """After `make setup`, the install stamp is newer than the lock: a rerun installs nothing."""
    assert make("setup").returncode == 0
    assert make("--question", "setup").returncode == 0, "make setup would reinstall although nothing changed"


def test_setup_reinstalls_when_the_lock_changes():
    dry = make("--dry-run", "--always-make", "setup").stdout
    assert "grader.install -r requirements.lock" in dry


def test_every_documented_verb_exists():
    verbs = ["setup", "lab", "instructor-lab", "test", "doctor", "release", "autograde", "feedback", "grades", "check",
             "student-bundle", "bench-grading", "outputs", "lock", "gpu-check", "report", "regrade"]
    listed = make("help").stdout
    for verb in verbs:
        assert verb in listed, f"`make {verb}` is missing from `make help`"


def test_ci_runs_make_test_and_nothing_else():
    lines = [l.strip() for l in (REPO_ROOT / ".ci/run").read_text().splitlines()
             if l.strip() and not l.strip().startswith("#")]
    commands = [l for l in lines if not l.startswith(("set ", "cd "))]
    assert commands == ["make test"]


def test_stored_outputs_are_made_and_compared_with_cuda_hidden():
    """On a GPU machine too, make outputs writes and make test's nbval compares CPU outputs (a chapter
    that prints its device, or a GPU's numbers, would differ from what CI stored)."""
    for verb in ("test", "outputs"):
        dry = make("--dry-run", verb).stdout
        assert "CUDA_VISIBLE_DEVICES= " in dry or "CUDA_VISIBLE_DEVICES=;" in dry, f"make {verb} leaves CUDA visible"


def test_gpu_check_needs_no_setup():
    """A lent GPU machine has torch but no .venv, Jupyter or nbgrader: gpu-check must not run setup."""
    dry = make("--dry-run", "gpu-check", "CHAPTERS=00_setup", "GPU_CHECK_ARGS=--quick").stdout
    assert dry.strip() == "python3 -m grader.gpu_check 00_setup --quick", dry
