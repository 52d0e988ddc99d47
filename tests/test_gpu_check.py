"""make gpu-check (grader/gpu_check.py): every chapter as a student's Run All on the best device, a
failing cell recorded and the run going on, the hidden checks' records compared with a CPU run, and
all of it without Jupyter, nbgrader or IPython (a lent GPU machine has torch only). CI has no GPU:
the comparison is forced with --compare-cpu, and a check that reads CUDA_VISIBLE_DEVICES (hidden
in the CPU run) stands in for a device-dependent record."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from grader import gpu_check
from grader.authoring import code, md, write_notebook
from grader import authoring

ROOT = Path(__file__).resolve().parents[1]
# What a bare GPU machine lacks: importing any of it in a check's process fails, as it would there.
BLOCKER = '''
import sys
class _Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"IPython", "nbgrader", "nbformat", "nbclient", "jupyter_client", "ipykernel"}:
            raise ImportError(f"{name} is not installed on a bare GPU machine")
sys.meta_path.insert(0, _Absent())
# nor is the course pip-installed there: drop the editable install's finder (pip's __editable__ hook)
sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")]
'''


def bare_env(tmp_path) -> dict:
    (tmp_path / "bare").mkdir(exist_ok=True)
    (tmp_path / "bare" / "sitecustomize.py").write_text(BLOCKER)
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "bare"))
    env.pop("CUDA_VISIBLE_DEVICES", None)    # make test hides CUDA; a device run here must not inherit it
    return env


def check(*args, env):
    return subprocess.run([sys.executable, "-m", "grader.gpu_check", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_blocker_blocks(tmp_path):
    done = subprocess.run([sys.executable, "-c", "import IPython"], env=bare_env(tmp_path), capture_output=True,
                          text=True)
    assert done.returncode != 0 and "bare GPU machine" in done.stderr
    elsewhere = subprocess.run([sys.executable, "-c", "import torchcourse"], env=bare_env(tmp_path), cwd=tmp_path,
                               capture_output=True, text=True)
    assert "No module named 'torchcourse'" in elsewhere.stderr, elsewhere.stderr


def test_a_failing_cell_is_recorded_the_run_goes_on_and_differing_records_are_listed(tmp_path):
    solutions = tmp_path / "solutions"
    write_notebook([
        md("# a chapter"),
        code("import inspect, os, torch\ndef twice(x):\n    return 2 * x"),
        code("raise RuntimeError('Expected all tensors to be on the same device')"),
        # as chapter 10 writes a DDP script: the source of a function a cell defined
        code("print('source:', inspect.getsource(twice).splitlines()[0])"),
        authoring.tests("twice_tests", """
            assert twice(2) == 4
            ### BEGIN HIDDEN TESTS
            def hidden_checks(check, rng):
                check("the same everywhere", twice(torch.arange(3)))
                check("where it ran", os.environ.get("CUDA_VISIBLE_DEVICES", "all"))
            ### END HIDDEN TESTS""", points=1),
        code("print('the last cell ran')"),
        code("print('on cpus', sorted(os.sched_getaffinity(0)), 'threads', torch.get_num_threads())"),
    ], solutions / "99_demo" / "99_demo.ipynb")
    out = tmp_path / "out"
    done = check("--solutions", solutions, "--quick-for", "99_demo", "--no-ddp", "--compare-cpu", "--out", out,
                 env=bare_env(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr       # a cell failed
    report = (out / "gpu-check.md").read_text()
    row = next(line for line in report.splitlines() if line.startswith("| 99_demo "))
    cells = [part.strip() for part in row.split("|")[1:-1]]
    assert cells[1] == "5", row                                  # five cells ran through, one failed
    assert cells[2] == "2 (RuntimeError: Expected all tensors to be on the same device)", row
    assert cells[4] == "cpu (quick)" and "(quick for 99_demo)" in report, row      # the mode it ran in
    # only the record that depends on the run
    assert cells[5] == "twice_tests: hidden check 2 of 2 (where it ran): the result is not the expected str", row
    log = (out / "gpu-check-log.txt").read_text()
    assert "source: def twice(x):" in log and "the last cell ran" in log, log
    assert "not installed on a bare GPU machine" not in log, log
    # the device run and the CPU run beside it on two halves of the CPUs, as many threads as CPUs each
    lanes = re.findall(r"on cpus (\[[\d, ]+\]) threads (\d+)", log)
    assert len(lanes) == 2, log
    (device_cpus, device_threads), (cpu_cpus, cpu_threads) = [(set(json.loads(c)), int(t)) for c, t in lanes]
    assert not device_cpus & cpu_cpus and device_cpus | cpu_cpus <= os.sched_getaffinity(0), lanes
    assert (device_threads, cpu_threads) == (len(device_cpus), len(cpu_cpus)), lanes


def test_a_chapter_runs_on_a_machine_without_jupyter(tmp_path):
    """CI's gpu-check: chapter 00 on the CPU, quick, with what a bare GPU machine lacks blocked."""
    out = tmp_path / "out"
    done = check("00_setup", "--quick", "--no-ddp", "--out", out, env=bare_env(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(line for line in (out / "gpu-check.md").read_text().splitlines() if line.startswith("| 00_setup "))
    cells = [part.strip() for part in row.split("|")[1:-1]]
    assert int(cells[1]) > 10 and cells[2] == "0" and cells[4] == "cpu (quick)", row
    assert "hidden checks of pick_device_tests" in (out / "gpu-check-log.txt").read_text()


def test_a_chapter_past_its_timeout_is_stopped_and_says_where(tmp_path):
    solutions = tmp_path / "solutions"
    write_notebook([code("print('started')"), code("import time\ntime.sleep(600)"), code("print('never')")],
                   solutions / "98_slow" / "98_slow.ipynb")
    out = tmp_path / "out"
    done = check("--solutions", solutions, "--no-ddp", "--timeout", "8", "--out", out, env=bare_env(tmp_path))
    assert done.returncode == 1
    assert "stopped by the timeout after cell 0" in (out / "gpu-check.md").read_text()


def test_a_chapter_stopped_in_its_first_cell_is_reported_stopped(tmp_path):
    solutions = tmp_path / "solutions"
    write_notebook([code("import time\ntime.sleep(600)")], solutions / "97_stuck" / "97_stuck.ipynb")
    out = tmp_path / "out"
    done = check("--solutions", solutions, "--no-ddp", "--timeout", "8", "--out", out, env=bare_env(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "stopped by the timeout before any cell ended" in (out / "gpu-check.md").read_text()


def test_the_ddp_scripts_run_on_two_cpu_processes(tmp_path, monkeypatch):
    """Where the course is not installed too: a script's folder is not the repository (it failed so
    on a lent H100, docs/measurements/2026-11-27-nvidia-h100-80gb-hbm3)."""
    monkeypatch.setattr(gpu_check, "DDP_RUNS", gpu_check.DDP_RUNS[:1])   # the toy script: seconds
    monkeypatch.setenv("PYTHONPATH", bare_env(tmp_path)["PYTHONPATH"])
    with open(tmp_path / "log.txt", "w") as log:
        [(script, nproc, backend, seconds, ok)] = gpu_check.run_ddp(log, gpus=0, timeout=240)
    assert (script, nproc, backend, ok) == ("toy_ddp.py", 2, "gloo", True), (tmp_path / "log.txt").read_text()
