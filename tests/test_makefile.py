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
             "student-bundle", "bench-grading", "outputs", "lock", "gpu-check"]
    listed = make("help").stdout
    for verb in verbs:
        assert verb in listed, f"`make {verb}` is missing from `make help`"


def test_ci_runs_make_test_and_nothing_else():
    lines = [l.strip() for l in (REPO_ROOT / ".ci/run").read_text().splitlines()
             if l.strip() and not l.strip().startswith("#")]
    commands = [l for l in lines if not l.startswith(("set ", "cd "))]
    assert commands == ["make test"]
