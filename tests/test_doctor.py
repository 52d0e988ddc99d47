"""`make doctor` / torchcourse.doctor: [OK]/[FAIL] per requirement and a failing exit code."""
import io
import subprocess
import sys

from torchcourse import doctor


def test_installed_environment_passes():
    out = io.StringIO()
    assert doctor.report(out=out) is True
    text = out.getvalue()
    for name in ("python", "torch", "torchvision", "nbgrader", "jupyterlab"):
        assert f"[OK] {name}" in text
    assert "CPU threads" in text and "CUDA available" in text and "MPS available" in text


def test_old_or_missing_packages_fail():
    out = io.StringIO()
    ok = doctor.report(versions={"torch": "1.13.1", "nbgrader": "0.10.1", "python": "3.8.10"}, out=out)
    text = out.getvalue()
    assert ok is False
    assert "[FAIL] torch" in text and "[FAIL] nbgrader" in text and "[FAIL] python" in text
    assert "[OK] torchvision" in text


def test_missing_package_is_reported(monkeypatch):
    monkeypatch.setattr(doctor, "installed_version", lambda dist: None if dist == "tqdm" else "99")
    check = doctor.check_package("tqdm", "4.0", None)
    assert not check.ok and "not installed" in check.detail


def test_command_exit_codes(tmp_path):
    good = subprocess.run([sys.executable, "-m", "torchcourse.doctor"], capture_output=True, text=True)
    assert good.returncode == 0, good.stdout + good.stderr
    # Same module with an impossible requirement: must exit non-zero.
    script = ("import sys; from torchcourse import doctor; "
              "doctor.REQUIREMENTS.append(('torch', '99.0', None)); sys.exit(doctor.main())")
    bad = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert bad.returncode == 1 and "[FAIL] torch" in bad.stdout
