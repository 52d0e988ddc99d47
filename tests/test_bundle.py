"""The student bundle holds what students need and nothing the instructor keeps."""
import subprocess
import sys

import nbformat
import pytest

from grader.bundle import FORBIDDEN_MARKERS, write_bundle
from grader.course import REPO_ROOT, chapters


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    return write_bundle(tmp_path_factory.mktemp("bundle") / "course")


def test_contents(bundle):
    top = {p.name for p in bundle.iterdir()}
    assert {"notebooks", "torchcourse", "grader", "pyproject.toml", "requirements.lock",
            "environment.yml", "Makefile", "README.md"} <= top
    for private in ("solutions", "gradebook.db", "submitted", "autograded", "feedback", "tests",
                    "nbgrader_config.py", ".venv", ".git"):
        assert private not in top, private
    assert not list(bundle.rglob("*.db")) and not list(bundle.rglob("solutions"))
    assert (bundle / "grader" / "selfcheck.py").exists()
    assert not (bundle / "grader" / "autograde.py").exists(), "only the self-check part of the harness"


def test_every_released_notebook_without_solutions_or_hidden_tests(bundle):
    names = sorted(p.parent.name for p in bundle.glob("notebooks/*/*.ipynb"))
    assert names == chapters(REPO_ROOT)
    for name in names:
        path = bundle / "notebooks" / name / f"{name}.ipynb"
        assert path.read_bytes() == (REPO_ROOT / "notebooks" / name / f"{name}.ipynb").read_bytes()
        for cell in nbformat.read(path, 4).cells:
            for marker in FORBIDDEN_MARKERS:
                assert marker not in cell.source, f"{name}: {marker}"


def test_environment_files_are_the_course_ones(bundle):
    for name in ("pyproject.toml", "requirements.lock", "environment.yml"):
        assert (bundle / name).read_text() == (REPO_ROOT / name).read_text()


def test_self_check_and_course_package_import_from_the_bundle(bundle):
    proc = subprocess.run([sys.executable, "-c", "import grader.selfcheck, grader.lab_settings, torchcourse.models; "
                           "print(grader.selfcheck.__file__); print(torchcourse.models.__file__)"],
                          cwd=bundle, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert all(line.startswith(str(bundle)) for line in proc.stdout.split())
    usage = subprocess.run([sys.executable, "-m", "grader", "check", "--help"], cwd=bundle,
                           capture_output=True, text=True)
    assert usage.returncode == 0 and "notebook" in usage.stdout


def test_student_makefile_verbs(bundle):
    proc = subprocess.run(["make", "-n", "check", "NB=notebooks/01_tensors/01_tensors.ipynb",
                           "PY=python3"], cwd=bundle, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "-m grader check" in proc.stdout
    setup = subprocess.run(["make", "-n", "--always-make", "setup", "PY=python3"], cwd=bundle, capture_output=True, text=True)
    assert "-m grader.lab_settings" in setup.stdout, "the student's lab would ask about Jupyter news"
    assert "make lab" in (bundle / "README.md").read_text()


def test_refuses_to_overwrite_a_folder_that_is_not_a_bundle(tmp_path):
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(FileExistsError):
        write_bundle(tmp_path)
    assert (tmp_path / "precious.txt").read_text() == "keep me"
