"""Environment check: `make doctor`, and chapter 00's installation section.

Prints one line per requirement, [OK] or [FAIL], plus information lines for the hardware
(CPU threads, CUDA, MPS) that a laptop may or may not have. A GPU that is there but cannot be used
gets a [WARN] line (torch falls back to the CPU) or a [FAIL] line (torch would pick it and fail),
each naming the problem and the fix: the facts are gathered in gpu_facts() and judged in
judge_gpu(). Exits 1 if any requirement fails.
"""
import os
import platform
import re
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass, field
from importlib import metadata

# (distribution, minimum version, version below which it is too new to trust; None = no cap)
REQUIREMENTS = [
    ("torch", "2.4", None),
    ("torchvision", "0.19", None),
    ("nbgrader", "0.9", "0.10"),
    ("jupyterlab", "4.0", "5.0"),
    ("matplotlib", "3.5", None),
    ("tqdm", "4.0", None),
]
MIN_PYTHON = (3, 10)
# Needed to work in the course's JupyterLab and hand in with nbgrader; not where only the course's
# package is installed (Colab, Kaggle, a bare VM: grader/student_package.py), which hands in through the hub.
LAB_ONLY = {"nbgrader", "jupyterlab"}


def package_only() -> bool:
    """True where the course's package was installed alone (its wheel), without the repository's grader."""
    import importlib.util
    return importlib.util.find_spec("grader") is None


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


def _as_tuple(version: str) -> tuple:
    parts = []
    for piece in version.split("+")[0].split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def installed_version(dist: str):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def check_package(dist: str, minimum: str, below, version=None) -> Check:
    version = version if version is not None else installed_version(dist)
    if version is None:
        return Check(dist, False, "not installed (run `make setup`)")
    wanted = f">={minimum}" + (f",<{below}" if below else "")
    ok = _as_tuple(version) >= _as_tuple(minimum) and (below is None or _as_tuple(version) < _as_tuple(below))
    return Check(dist, ok, f"{version} (need {wanted})")


def run_checks(versions=None, lab: bool | None = None) -> list:
    """All requirement checks. `versions` overrides installed versions (used by the tests); `lab`
    whether the lab's tools are needed (default: unless only the course's package is installed)."""
    versions = versions or {}
    lab = not package_only() if lab is None else lab
    py = versions.get("python", platform.python_version())
    checks = [Check("python", _as_tuple(py) >= MIN_PYTHON, f"{py} (need >={'.'.join(map(str, MIN_PYTHON))})")]
    for dist, minimum, below in REQUIREMENTS:
        check = check_package(dist, minimum, below, versions.get(dist))
        if not lab and dist in LAB_ONLY and not check.ok:
            check = Check(dist, True, "not needed here (only the course's package is installed: hand in "
                                      "through your class's hub)")
        checks.append(check)
    return checks


# The oldest NVIDIA driver branch that runs each CUDA major version: NVIDIA's "CUDA Compatibility",
# "Minor Version Compatibility", table 1 (CUDA 13.x >= 580, 12.x >= 525, 11.x >= 450).
MIN_DRIVER = {13: 580, 12: 525, 11: 450}


@dataclass
class GpuFacts:
    """What this machine and this torch say about an NVIDIA GPU (gathered by gpu_facts())."""
    torch_version: str
    torch_cuda: str | None                  # torch.version.cuda: the CUDA the wheel is built for (None: none)
    available: bool                         # torch.cuda.is_available()
    arch_list: list = field(default_factory=list)   # torch.cuda.get_arch_list(): e.g. ["sm_75", ..., "sm_120"]
    capability: tuple | None = None         # torch.cuda.get_device_capability(0), when available
    device_name: str | None = None          # torch's name for GPU 0, else nvidia-smi's
    driver: str | None = None               # the NVIDIA driver's version ("580.95.05"), None: no driver loaded
    system_gpus: list = field(default_factory=list)  # the GPUs nvidia-smi lists
    visible_devices: str | None = None      # CUDA_VISIBLE_DEVICES in this process (None: not set)
    torch_warning: str | None = None        # what torch warned while answering is_available()


def driver_from_proc(text: str) -> str | None:
    """The driver version in /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX x86_64 Kernel
    Module  580.95.05  ..." or "... Open Kernel Module for x86_64  580.95.05 ...")."""
    found = re.search(r"Kernel Module.*?\s(\d+\.\d+(?:\.\d+)?)(?:\s|$)", text)
    return found.group(1) if found else None


def smi_gpus(text: str) -> list:
    """(name, driver version) per line of `nvidia-smi --query-gpu=name,driver_version --format=csv,noheader`."""
    rows = []
    for line in text.splitlines():
        name, _, driver = line.rpartition(",")
        if name.strip() and re.fullmatch(r"\d+(\.\d+)+", driver.strip()):
            rows.append((name.strip(), driver.strip()))
    return rows


def gpu_facts() -> GpuFacts:
    """Gather the facts judge_gpu() needs, quietly: what torch warns is kept in torch_warning."""
    import torch

    driver, gpus = None, []
    try:
        with open("/proc/driver/nvidia/version") as f:
            driver = driver_from_proc(f.read())
    except OSError:
        pass
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=20).stdout
            gpus = smi_gpus(out)
        except (OSError, subprocess.SubprocessError):
            pass
    driver = driver or (gpus[0][1] if gpus else None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        available = torch.cuda.is_available()
    facts = GpuFacts(torch.__version__, torch.version.cuda, available, driver=driver,
                     system_gpus=[name for name, _ in gpus], visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
                     torch_warning=" ".join(str(w.message).split()) if caught else None)
    if torch.version.cuda:
        facts.arch_list = list(torch.cuda.get_arch_list())
    if available:
        facts.capability = tuple(torch.cuda.get_device_capability(0))
        facts.device_name = torch.cuda.get_device_name(0)
    elif gpus:
        facts.device_name = gpus[0][0]
    return facts


def _runs_on(arch: str, capability: tuple) -> bool:
    """Can code built for `arch` ("sm_86", "sm_90a", "compute_90") run on a GPU of `capability`?
    Machine code (sm_) runs on the same major version with the same or a higher minor one; PTX
    (compute_) is compiled for any GPU of the same or a higher capability."""
    kind, _, number = arch.partition("_")
    digits = re.match(r"\d+", number)
    if not digits:
        return False
    built = (int(digits.group()) // 10, int(digits.group()) % 10)
    if kind == "compute":
        return capability >= built
    return capability[0] == built[0] and capability[1] >= built[1]


@dataclass
class Verdict:
    level: str     # "OK", "INFO", "WARN" (torch uses the CPU instead) or "FAIL" (torch would fail)
    text: str


CPU_FALLBACK = "or use the CPU: the course runs on one"


def judge_gpu(facts: GpuFacts) -> list:
    """[Verdict] on the GPU: usable, hidden on purpose, or present and unusable (and why); [] without one."""
    seen = facts.driver is not None or bool(facts.system_gpus)
    name = facts.device_name or (facts.system_gpus[0] if facts.system_gpus else "an NVIDIA GPU")
    wheel = f"torch {facts.torch_version}"
    if facts.visible_devices == "" and not facts.available:
        return [Verdict("INFO", "CUDA_VISIBLE_DEVICES is empty: torch sees no GPU (unset it to use one)")] if seen else []
    if not seen and not facts.available:
        return []       # no NVIDIA GPU: "CUDA available: False" says it, and the course runs on the CPU
    if facts.torch_cuda is None:    # a CPU build (or ROCm's, whose GPU torch.cuda reports as available)
        return [] if facts.available else [
            Verdict("WARN", f"{name} is present but {wheel} is built without CUDA: install a CUDA wheel "
                            f"of torch (`make setup` on Linux), {CPU_FALLBACK}")]
    cuda_major = int(facts.torch_cuda.split(".")[0])
    need = MIN_DRIVER.get(cuda_major)
    if facts.available:
        cap = facts.capability
        if cap is not None and facts.arch_list and not any(_runs_on(a, cap) for a in facts.arch_list):
            # torch's own table (torch.cuda.PYTORCH_RELEASES_CODE_CC) gives its cu126 x86_64 wheels sm_50 to sm_90
            example = (f" (e.g. a cu126 wheel: pip install torch=={facts.torch_version.split('+')[0]} "
                       f"--index-url https://download.pytorch.org/whl/cu126)" if cap >= (5, 0) else "")
            return [Verdict("FAIL", f"{name} has compute capability {cap[0]}.{cap[1]} and {wheel} has kernels "
                                    f"only for {' '.join(facts.arch_list)}: every CUDA operation would fail. "
                                    f"Install a torch wheel built for this GPU's architecture{example}, or use "
                                    f"the CPU: the course runs on one (set CUDA_VISIBLE_DEVICES= before "
                                    f"starting Jupyter)")]
        cap_text = f"compute capability {cap[0]}.{cap[1]}, " if cap else ""
        return [Verdict("OK", f"{name} ({cap_text}driver {facts.driver or 'unknown'}) runs {wheel} (CUDA {facts.torch_cuda})")]
    driver_major = int(facts.driver.split(".")[0]) if facts.driver else None
    if need is not None and driver_major is not None and driver_major < need:
        # the oldest CUDA of torch's wheels for this release is 12.6 (torch.cuda.PYTORCH_RELEASES_CODE_CC)
        wheel_fix = (f", or install a torch wheel built for CUDA 12.x (the cu126 wheels, which need "
                     f"R{MIN_DRIVER[12]}+)" if cuda_major > 12 and driver_major >= MIN_DRIVER[12] else "")
        return [Verdict("WARN", f"{name} is unusable: NVIDIA driver {facts.driver} is older than {wheel} "
                                f"(CUDA {facts.torch_cuda}) needs (R{need} or newer). Update the driver to "
                                f"R{need}+{wheel_fix}, {CPU_FALLBACK}")]
    said = f" (torch: {facts.torch_warning})" if facts.torch_warning else ""
    return [Verdict("WARN", f"{name} is seen by the system (driver {facts.driver or 'unknown'}) but "
                            f"torch.cuda.is_available() is False{said}. Check that `nvidia-smi` works for this "
                            f"user and that CUDA_VISIBLE_DEVICES does not hide the GPU, reinstall torch's CUDA "
                            f"wheel (`make setup`), {CPU_FALLBACK}")]


def hardware_lines(facts: GpuFacts | None = None) -> list:
    import torch
    from torchcourse.devices import best_device, mps_available

    if facts is None:
        cuda = torch.cuda.is_available()
        name = torch.cuda.get_device_name(0) if cuda else None
    else:
        cuda, name = facts.available, facts.device_name
    gpu = f" ({name})" if cuda and name else ""
    return [
        f"CPU threads used by torch: {torch.get_num_threads()}",
        f"CUDA available: {cuda}{gpu}",
        f"MPS available: {mps_available()}",
        f"best device: {best_device()}",
    ]


def report(versions=None, out=sys.stdout, gpu: GpuFacts | None = None, lab: bool | None = None) -> bool:
    """Print the check; return True when every requirement is met and no GPU check fails.
    `gpu` replaces the facts gathered about the GPU (used by the tests); `lab` as in run_checks."""
    checks = run_checks(versions, lab)
    for check in checks:
        print(f"[{'OK' if check.ok else 'FAIL'}] {check.name:<12} {check.detail}", file=out)
    verdicts = []
    if all(c.ok for c in checks if c.name == "torch"):
        facts = gpu or gpu_facts()
        for line in hardware_lines(facts):
            print(f"[INFO] {line}", file=out)
        verdicts = judge_gpu(facts)
        for verdict in verdicts:
            print(f"[{verdict.level}] {'gpu':<12} {verdict.text}", file=out)
    ok = all(c.ok for c in checks) and not any(v.level == "FAIL" for v in verdicts)
    print("Environment OK." if ok else "Some checks failed: see [FAIL] above.", file=out)
    return ok


def main() -> int:
    return 0 if report() else 1


if __name__ == "__main__":
    sys.exit(main())
