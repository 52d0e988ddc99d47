"""Each claim docs/GRADING.md makes about the wall, tested (the claims cite these test names).

Most tests run a short Python program through grader.wall.sandbox.wall_command, the exact wrapper the
grading kernel is launched with; the last ones run a notebook through the sandboxed kernel.
"""
import os
import socket
import subprocess
import sys
import textwrap
import time

import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from grader.wall import sandbox
from grader.course import REPO_ROOT

# Without bubblewrap (macOS, Windows, a Linux laptop without root) the wall cannot be tested;
# in CI (`make setup` installs it as root) a missing bwrap must fail these tests, not skip them.
pytestmark = pytest.mark.skipif(sandbox.bwrap() is None and os.environ.get("CI") != "true",
                                reason=sandbox.INSTALL_HINT)


def walled(tmp_path, code, limits=None, env=None, timeout=120):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    runtime = tmp_path / "rt"
    runtime.mkdir(exist_ok=True)
    cmd = sandbox.wall_command([sys.executable, "-c", textwrap.dedent(code)], str(work), str(runtime), limits)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))


def test_course_files_do_not_exist_inside(tmp_path):
    """Gradebook, solutions, submissions, autograded copies: not mounted, by absolute path."""
    proc = walled(tmp_path, f"""
        import os
        root = {str(REPO_ROOT)!r}
        print(sorted(os.listdir(root)))
        for p in ["gradebook.db", "solutions", "submitted", "autograded", "notebooks", "tests"]:
            print(p, os.path.exists(os.path.join(root, p)))
    """)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert set(eval(lines[0])) <= {".venv", "data", "ddp_scripts", "grader", "torchcourse"}
    assert all(line.endswith("False") for line in lines[1:])


def test_writes_stay_inside_the_wall_and_the_submission_is_read_only(tmp_path):
    """The kernel can write only its working folder and /tmp, both private memory file systems:
    nothing it writes reaches the real folder (so no junk is copied back into autograded/), and
    the submission's own files are there, read-only."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "data.txt").write_text("shipped")
    proc = walled(tmp_path, f"""
        import os
        print(open("data.txt").read())
        open("mine.txt", "w").write("ok")
        for target in ["data.txt", {str(REPO_ROOT / "grader" / "x.py")!r}, {sys.prefix + "/x"!r}, "/usr/x", "/etc/x"]:
            try:
                open(target, "w")
                print("WROTE", target)
            except OSError as err:
                print("blocked", type(err).__name__)
        open("/tmp/private.txt", "w").write("tmp is private")
        print(sorted(os.listdir(".")))
    """)
    assert proc.returncode == 0, proc.stderr
    assert "WROTE" not in proc.stdout and proc.stdout.count("blocked") == 5, proc.stdout
    assert proc.stdout.splitlines()[0] == "shipped"
    assert "['data.txt', 'mine.txt']" in proc.stdout
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["data.txt"]
    assert not os.path.exists("/tmp/private.txt")


def test_disk_limit_on_every_writable_folder(tmp_path):
    """/tmp, the working folder, /dev/shm and /run each hold at most COURSE_SANDBOX_DISK bytes."""
    proc = walled(tmp_path, """
        import os
        for folder in ["/tmp", ".", "/dev/shm", "/run"]:
            written = 0
            try:
                for i in range(64):
                    with open(os.path.join(folder, f"junk{i}"), "wb") as f:
                        f.write(b"x" * 1024**2)
                    written += 1
            except OSError as err:
                pass
            print(folder, written)
    """, limits=sandbox.Limits(disk_bytes=16 * 1024**2))
    assert proc.returncode == 0, proc.stderr
    written = dict(line.split() for line in proc.stdout.splitlines())
    assert set(written) == {"/tmp", ".", "/dev/shm", "/run"}
    assert all(int(mb) <= 16 for mb in written.values()), written


def test_no_network(tmp_path):
    """Its own network namespace: the grader's loopback services cannot be reached."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        proc = walled(tmp_path, f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=3)
                print("CONNECTED")
            except OSError as err:
                print("refused", type(err).__name__)
            try:
                socket.getaddrinfo("pypi.org", 443)
                print("RESOLVED")
            except OSError as err:
                print("no dns", type(err).__name__)
            print(sorted(name for _, name in socket.if_nameindex()))
        """)
    finally:
        server.close()
    assert "CONNECTED" not in proc.stdout and "RESOLVED" not in proc.stdout, proc.stdout
    assert proc.stdout.splitlines()[-1] == "['lo']"


def test_runs_as_nobody_without_seeing_other_processes(tmp_path):
    proc = walled(tmp_path, """
        import os
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
        print(os.getuid(), len(pids) < 10)
        print(open("/proc/self/status").read().split("CapEff:")[1].split()[0])
    """)
    uid, few = proc.stdout.split()[:2]
    if os.geteuid() == 0:
        assert uid == str(sandbox.NOBODY)
    assert few == "True"
    assert int(proc.stdout.split()[2], 16) == 0, "no capabilities left"


def test_environment_is_cleared(tmp_path, monkeypatch):
    """Only the course's switches (COURSE_*, CI, thread counts) reach student code."""
    monkeypatch.setenv("GRADER_SECRET_TOKEN", "s3cret")
    monkeypatch.setenv("COURSE_QUICK", "1")
    proc = walled(tmp_path, "import os; print(os.environ.get('GRADER_SECRET_TOKEN'), os.environ.get('COURSE_QUICK'))")
    assert proc.stdout.split() == ["None", "1"]


def test_cpu_limit_kills_a_loop_that_ignores_signals(tmp_path):
    proc = walled(tmp_path, """
        import signal
        signal.signal(signal.SIGXCPU, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        while True:
            pass
    """, limits=sandbox.Limits(cpu_seconds=2), timeout=60)
    assert proc.returncode != 0   # killed (SIGKILL at the hard limit), not hanging


def test_memory_limit(tmp_path):
    proc = walled(tmp_path, """
        import resource, torch
        print(resource.getrlimit(resource.RLIMIT_AS)[0])
        try:
            x = torch.ones(2**31)   # 8 GiB
            print("ALLOCATED")
        except (RuntimeError, MemoryError) as err:
            print("refused")
    """)
    assert proc.stdout.split() == [str(sandbox.Limits().memory_bytes), "refused"], proc.stderr


def test_file_size_limit(tmp_path):
    proc = walled(tmp_path, """
        import signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        try:
            with open("big.bin", "wb") as f:
                f.write(b"x" * (2 * 1024**2))
            print("WROTE")
        except OSError as err:
            print("refused", type(err).__name__)
    """, limits=sandbox.Limits(file_bytes=1024**2))
    assert "refused" in proc.stdout, proc.stdout + proc.stderr


def _run_notebook(tmp_path, sources, timeout=20):
    work = tmp_path / "nbwork"
    work.mkdir()
    nb = new_notebook(cells=[new_code_cell(s) for s in sources])
    nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    client = NotebookClient(nb, timeout=timeout, interrupt_on_timeout=True, allow_errors=True,
                            kernel_manager_class=sandbox.SandboxKernelManager,
                            resources={"metadata": {"path": str(work)}})
    client.execute()
    return ["".join(o.get("text", "") or o.get("ename", "") for o in c.outputs) for c in nb.cells]


def test_kernel_runs_behind_the_wall_over_ipc_and_can_be_interrupted(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "2")   # the grader's own setting does not reach the kernel
    out = _run_notebook(tmp_path, [
        "import os, torch; print(os.path.exists(%r), os.getcwd() == %r, torch.get_num_threads())" % (
            str(REPO_ROOT / "gradebook.db"), str(tmp_path / "nbwork")),
        "import time; time.sleep(60)",
        "print('still alive')",
    ], timeout=5)
    assert out[0].split() == ["False", "True", "1"], "no course files; one torch thread (GRADING_THREADS)"
    assert out[1] == "KeyboardInterrupt"
    assert out[2].strip() == "still alive"


def test_a_kernel_sees_every_cell_it_runs(tmp_path):
    """Why the judge sits outside the kernel (docs/GRADING.md): student code can watch every cell
    the kernel runs after it, so a hidden test run there would be read, and could be forged."""
    out = _run_notebook(tmp_path, [
        "seen = []\nget_ipython().events.register('pre_run_cell', lambda info: seen.append(info.raw_cell))",
        "# a hidden test\nassert 1 + 1 == 2",
        "print(seen[-2].splitlines()[0])",
    ])
    assert out[2].strip() == "# a hidden test"


@pytest.mark.parametrize("warm", ["1", "0"])
def test_warm_and_cold_kernels_stand_behind_the_same_wall(tmp_path, monkeypatch, warm):
    """A warm kernel (forked from the zygote that imported torch, grader/wall/warm_kernels.py) and a cold
    one (bwrap runs the kernel itself) see the same sandbox: user, capabilities, limits, files,
    processes, network and environment."""
    monkeypatch.setenv("COURSE_WARM_KERNELS", warm)
    monkeypatch.setenv("GRADER_SECRET_TOKEN", "s3cret")
    monkeypatch.setenv("COURSE_SANDBOX_CPU", "77")
    out = _run_notebook(tmp_path, ["""
import os, resource, socket
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
try:
    socket.create_connection(("1.1.1.1", 80), timeout=2)
    net = "reached"
except OSError:
    net = "none"
print(os.getuid(), int(status["CapEff"], 16), int(status["CapBnd"], 16), status["NoNewPrivs"].strip(),
      resource.getrlimit(resource.RLIMIT_CPU)[0], resource.getrlimit(resource.RLIMIT_CORE)[0],
      os.path.exists(%r), net, os.environ.get("GRADER_SECRET_TOKEN"), os.getcwd() == %r,
      max(int(p) for p in os.listdir("/proc") if p.isdigit()) < 100)
""" % (str(REPO_ROOT / "solutions"), str(tmp_path / "nbwork"))])
    if os.geteuid() == 0:   # (a grader that is not root starts every kernel cold)
        assert out[0].split() == ["65534", "0", "0", "1", "77", "0", "False", "none", "None", "True", "True"], out[0]


# Run in a graded kernel: what it is told about GPUs, what torch says, and whether torch asked the CUDA
# driver (cudaGetDeviceCount, through torch._C._cuda_getDeviceCount) to find out.
GPU_VIEW = """
import os, torch
asked = []
torch._C._cuda_getDeviceCount = lambda: asked.append(1) or 0
print(repr(os.environ.get("CUDA_VISIBLE_DEVICES")), repr(os.environ.get("HIP_VISIBLE_DEVICES")),
      torch.cuda.is_available(), torch.cuda.device_count(), torch.accelerator.is_available(), len(asked),
      sorted(p for p in os.listdir("/dev") if p.startswith(("nvidia", "kfd", "dri"))))
"""
NO_GPU_VIEW = ["''", "''", "False", "0", "False", "0", "[]"]


def test_graded_code_sees_no_gpu(tmp_path):
    """CUDA (and ROCm) are hidden in the wall's environment, whatever the grader's own setting, so
    torch answers "no GPU" without calling the driver (which, with no device node in the wall's /dev,
    warned "CUDA initialization: ... Error 304" on stderr on a grading host with a GPU)."""
    proc = walled(tmp_path, GPU_VIEW, env={"CUDA_VISIBLE_DEVICES": "0", "HIP_VISIBLE_DEVICES": "0"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == NO_GPU_VIEW, proc.stdout
    assert proc.stderr == ""


@pytest.mark.parametrize("warm", ["1", "0"])
def test_warm_and_cold_kernels_see_no_gpu(tmp_path, monkeypatch, warm):
    """The same in a graded kernel, warm (forked from the zygote, which imported torch) and cold."""
    monkeypatch.setenv("COURSE_WARM_KERNELS", warm)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    out = _run_notebook(tmp_path, [GPU_VIEW])
    assert out[0].split() == NO_GPU_VIEW, out[0]


def test_the_zygote_hides_gpus_before_it_imports_torch():
    """The zygote's environment from its first instruction on (what its kernels inherit with torch)."""
    zygote = sandbox.start_zygote()
    proc = f"/proc/{zygote.process.pid}"
    try:
        deadline = time.monotonic() + 30
        while "warm_kernels" not in open(f"{proc}/cmdline").read() and time.monotonic() < deadline:
            time.sleep(0.01)   # until the exec: before it, the environment is still ours
        environ = dict(item.split("=", 1) for item in open(f"{proc}/environ").read().split("\0") if "=" in item)
    finally:
        zygote.stop()
    assert environ["CUDA_VISIBLE_DEVICES"] == "" and environ["HIP_VISIBLE_DEVICES"] == ""
