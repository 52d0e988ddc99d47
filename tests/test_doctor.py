"""`make doctor` / torchcourse.doctor: [OK]/[FAIL] per requirement and a failing exit code."""
import io
import subprocess
import sys

import pytest

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


# The GPU checks: facts injected as each case's machine would report them (these tests run on a CPU).
CU130_ARCHS = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]   # torch 2.14.1+cu130's get_arch_list()


def facts(**changes):
    """A healthy H100 under torch 2.14.1+cu130, with `changes`."""
    base = dict(torch_version="2.14.1+cu130", torch_cuda="13.0", available=True, arch_list=CU130_ARCHS,
                capability=(9, 0), device_name="NVIDIA H100 80GB HBM3", driver="580.95.05",
                system_gpus=["NVIDIA H100 80GB HBM3"])
    return doctor.GpuFacts(**{**base, **changes})


def levels(verdicts):
    return [v.level for v in verdicts]


def test_a_usable_gpu_is_ok():
    verdicts = doctor.judge_gpu(facts())
    assert levels(verdicts) == ["OK"] and "H100" in verdicts[0].text and "9.0" in verdicts[0].text
    # machine code runs on the same major version, same or higher minor: 8.9 (an L4) runs sm_86 code
    assert levels(doctor.judge_gpu(facts(capability=(8, 9), device_name="NVIDIA L4"))) == ["OK"]


def test_no_gpu_says_nothing_more():
    assert doctor.judge_gpu(facts(available=False, capability=None, device_name=None, driver=None,
                                  system_gpus=[])) == []
    assert doctor.judge_gpu(facts(torch_cuda=None, available=False, arch_list=[], capability=None,
                                  device_name=None, driver=None, system_gpus=[])) == []


def test_a_driver_older_than_the_wheel_needs():
    """(a) torch 2.14.1+cu130 needs R580+: on R535 the GPU is unusable."""
    old = dict(available=False, capability=None, device_name=None, driver="535.104.05")
    [verdict] = doctor.judge_gpu(facts(**old))
    assert verdict.level == "WARN"
    for words in ("driver 535.104.05", "R580", "Update the driver", "CUDA 12.x", "cu126", "R525", "CPU"):
        assert words in verdict.text, words
    # a driver too old for CUDA 12 as well: no CUDA 12 wheel is offered
    [verdict] = doctor.judge_gpu(facts(**{**old, "driver": "470.256.02"}))
    assert verdict.level == "WARN" and "R580" in verdict.text and "wheel" not in verdict.text
    # a cu126 wheel on that driver (12.x needs R525+)
    [verdict] = doctor.judge_gpu(facts(**{**old, "driver": "470.256.02", "torch_cuda": "12.6"}))
    assert "R525" in verdict.text and "older" in verdict.text


@pytest.mark.parametrize("gpu, capability", [("Tesla V100-SXM2-16GB", (7, 0)), ("Tesla P100-PCIE-16GB", (6, 0))])
def test_a_gpu_the_wheel_has_no_kernels_for(gpu, capability):
    """(b) torch.cuda.is_available() is True, but the cu130 wheel has no code for sm_70 or sm_60."""
    [verdict] = doctor.judge_gpu(facts(capability=capability, device_name=gpu, system_gpus=[gpu]))
    assert verdict.level == "FAIL"
    for words in (gpu, f"{capability[0]}.{capability[1]}", "sm_75", "cu126", "torch==2.14.1", "CPU",
                  "CUDA_VISIBLE_DEVICES="):
        assert words in verdict.text, words


def test_a_gpu_the_system_sees_but_torch_does_not():
    """(c) nvidia-smi lists a GPU, the driver is recent enough, torch.cuda.is_available() is False."""
    warning = "CUDA initialization: Unexpected error from cudaGetDeviceCount(). Error 304"
    [verdict] = doctor.judge_gpu(facts(available=False, capability=None, torch_warning=warning))
    assert verdict.level == "WARN"
    for words in ("H100", "is_available() is False", "Error 304", "nvidia-smi", "CPU"):
        assert words in verdict.text, words
    # a CPU-only torch beside an NVIDIA GPU
    [verdict] = doctor.judge_gpu(facts(torch_version="2.14.1+cpu", torch_cuda=None, available=False,
                                       arch_list=[], capability=None))
    assert verdict.level == "WARN" and "without CUDA" in verdict.text


def test_a_gpu_hidden_on_purpose_is_information():
    """CUDA_VISIBLE_DEVICES= (nbval's runs, graded kernels on a GPU host): said, not a warning."""
    assert levels(doctor.judge_gpu(facts(available=False, capability=None, visible_devices=""))) == ["INFO"]


def test_driver_version_is_read_from_proc_and_nvidia_smi():
    assert doctor.driver_from_proc("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 "
                                   "01:15:15 UTC 2023\nGCC version:  gcc version 12.3.0") == "535.104.05"
    assert doctor.driver_from_proc("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  "
                                   "Release Build  (dvs-builder@U16-I3-B03-4-3)") == "580.95.05"
    assert doctor.driver_from_proc("") is None
    assert doctor.smi_gpus("NVIDIA H100 80GB HBM3, 580.95.05\nTesla V100-SXM2-16GB, 535.104.05\n") == [
        ("NVIDIA H100 80GB HBM3", "580.95.05"), ("Tesla V100-SXM2-16GB", "535.104.05")]
    assert doctor.smi_gpus("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.") == []


def test_report_prints_the_gpu_verdict_and_fails_on_a_fail():
    out = io.StringIO()
    assert doctor.report(out=out, gpu=facts(capability=(7, 0), device_name="Tesla V100-SXM2-16GB")) is False
    text = out.getvalue()
    assert "[FAIL] gpu" in text and "[INFO] CUDA available: True (Tesla V100-SXM2-16GB)" in text
    out = io.StringIO()
    assert doctor.report(out=out, gpu=facts(available=False, capability=None, driver="535.104.05")) is True
    assert "[WARN] gpu" in out.getvalue() and "Environment OK." in out.getvalue()


def test_facts_of_this_machine_are_gathered_quietly(capsys):
    found = doctor.gpu_facts()
    assert isinstance(found.available, bool) and found.torch_version
    assert capsys.readouterr().err == ""


def test_where_only_the_course_package_is_the_lab_tools_are_not_needed(monkeypatch):
    """Colab, Kaggle, a bare VM (grader/student_package.py): no nbgrader, no JupyterLab, and no [FAIL]
    for them; in the course's own environment, their absence still fails."""
    monkeypatch.setattr(doctor, "installed_version",
                        lambda dist: None if dist in doctor.LAB_ONLY else "99")
    alone = {c.name: c for c in doctor.run_checks(lab=False)}
    assert alone["nbgrader"].ok and alone["jupyterlab"].ok and "not needed here" in alone["nbgrader"].detail
    lab = {c.name: c for c in doctor.run_checks(lab=True)}
    assert not lab["nbgrader"].ok and not lab["jupyterlab"].ok
    assert doctor.package_only() is False       # here the repository's grader is installed
