"""What every script in ddp_scripts/ does the same way: join the process group, pick the
device, leave cleanly, and write a small per-rank report that the tests read.

Launch any of the scripts with torchrun, which sets RANK, LOCAL_RANK, WORLD_SIZE and the
rendezvous address in the environment of each process it starts:

    torchrun --standalone --nproc_per_node=2 ddp_scripts/toy_ddp.py

Chapter 10 explains each function; the scripts import them from here, and the chapter and
tests/test_ddp.py start the scripts with `launch` (multiprocessing does not work inside a
notebook, so DDP always runs in separate processes).
"""
import gc
import hashlib
import json
import os
import platform
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist


@dataclass
class DistContext:
    """Where this process stands in the job."""
    rank: int            # 0 .. world_size-1, unique over all machines
    local_rank: int      # index of this process on its machine: picks the GPU
    world_size: int      # number of processes (model replicas) in the job
    backend: str         # "nccl" or "gloo"
    device: torch.device

    @property
    def is_main(self) -> bool:
        """Rank 0 alone prints summaries and writes checkpoints."""
        return self.rank == 0


def choose_backend(local_world_size: int = 1) -> str:
    """nccl when every process on this machine can have a GPU of its own, gloo otherwise.

    NCCL refuses two ranks on one GPU, so 2 processes on a 1-GPU machine fall back to gloo
    on the CPU; that keeps `--nproc_per_node=2` working everywhere.
    """
    if torch.cuda.is_available() and torch.cuda.device_count() >= local_world_size:
        return "nccl"
    return "gloo"


def setup(rank=None, world_size=None, local_rank=None) -> DistContext:
    """Join the process group. Under torchrun, read rank and world size from the environment;
    under mp.spawn, pass them in (MASTER_ADDR and MASTER_PORT must already be set)."""
    rank = int(os.environ["RANK"]) if rank is None else rank
    world_size = int(os.environ["WORLD_SIZE"]) if world_size is None else world_size
    if local_rank is None:
        local_rank = int(os.environ.get("LOCAL_RANK", rank))
    local_world_size = int(os.environ.get("LOCAL_WORLD_SIZE", world_size))
    if platform.system() == "Windows":   # PyTorch for Windows may be built without libuv
        os.environ.setdefault("USE_LIBUV", "0")
    backend = choose_backend(local_world_size)
    if backend == "nccl":
        torch.cuda.set_device(local_rank)   # before any collective: one GPU per process
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend=backend, rank=rank, world_size=world_size)
    return DistContext(rank, local_rank, world_size, backend, device)


def teardown(ctx: DistContext) -> None:
    """Leave the process group, in an order that lets the process exit cleanly.

    With gloo on torch 2.14 a rank can abort while Python shuts down, after the script has
    finished ("terminate called without an active exception", SIGABRT): gloo's threads still
    hold tensors that are freed during interpreter finalization. Measured here with
    toy_ddp.py on 2 CPU processes: destroying the group straight after training aborted about
    1 run in 3; with a barrier first, 2 runs in 30; with a garbage collection before the
    barrier as well, 0 in 105. So: collect, wait for everyone, then destroy."""
    if not dist.is_initialized():
        return
    gc.collect()   # free what training left in reference cycles while gloo is still up
    if ctx.backend == "nccl":
        dist.barrier(device_ids=[ctx.local_rank])
    else:
        dist.barrier()
    dist.destroy_process_group()


def ddp_device_ids(ctx: DistContext):
    """`device_ids` for DistributedDataParallel: [local_rank] on a GPU, None on the CPU."""
    return [ctx.local_rank] if ctx.device.type == "cuda" else None


def free_port() -> int:
    """A TCP port that is free right now (for mp.spawn, which has no torchrun to pick one)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def params_hash(model: torch.nn.Module) -> str:
    """SHA-256 of every parameter's bytes, in order: equal hashes = bit-identical replicas."""
    digest = hashlib.sha256()
    for name, param in model.named_parameters():
        digest.update(name.encode())
        digest.update(param.detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
    return digest.hexdigest()


def write_rank_report(out_dir, ctx: DistContext, **fields) -> Path:
    """Save `rank<N>.json` in out_dir: who this rank was plus whatever the script adds
    (the sample indices it saw, its final parameter hash, ...). Tests read these files."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = {"rank": ctx.rank, "world_size": ctx.world_size, "backend": ctx.backend,
              "device": str(ctx.device), **fields}
    path = out_dir / f"rank{ctx.rank}.json"
    path.write_text(json.dumps(report, indent=1))
    return path


SCRIPTS_DIR = Path(__file__).resolve().parent.parent / "ddp_scripts"


def script_path(script) -> Path:
    """`script` as given, or else the file of that name in ddp_scripts/."""
    path = Path(script)
    return path if path.is_absolute() or path.exists() else SCRIPTS_DIR / path


def check_script(script) -> None:
    """Fail at once, with the file's own error, for a script that is missing or is not Python:
    torchrun would first start every worker (seconds of imports each) and then report the same
    error once per rank."""
    path = script_path(script)
    try:
        source = path.read_bytes()
    except OSError as err:
        raise FileNotFoundError(f"no script to launch at {path}: {err.strerror}") from None
    compile(source, str(path), "exec")     # SyntaxError (or ValueError for binary files), with where


def launch_command(script, *args, nproc: int = 2, launcher: str = "torchrun") -> list:
    """The command line that starts `script` (a path, or a file name in ddp_scripts/) on
    `nproc` processes: `torchrun --standalone --nproc_per_node=N script ...`, spelled with this
    interpreter, or `python script --nprocs N ...` for a script that spawns its own workers."""
    path = script_path(script)
    args = [str(a) for a in args]
    if launcher == "torchrun":
        return [sys.executable, "-m", "torch.distributed.run", "--standalone",
                f"--nproc_per_node={nproc}", str(path), *args]
    if launcher == "spawn":
        return [sys.executable, str(path), "--nprocs", str(nproc), *args]
    raise ValueError(f"launcher must be 'torchrun' or 'spawn', not {launcher!r}")


def _stop(proc: subprocess.Popen):
    """End a job that hangs: SIGTERM first (torchrun passes it on to its workers, which run in
    sessions of their own), SIGKILL to whatever is left 30 s later. Returns its output."""
    group_signal = getattr(os, "killpg", None)
    for sig, grace in [(signal.SIGTERM, 30), (getattr(signal, "SIGKILL", signal.SIGTERM), None)]:
        try:
            if group_signal is not None:
                group_signal(proc.pid, sig)
            else:
                proc.send_signal(sig)
        except ProcessLookupError:
            pass
        try:
            return proc.communicate(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
    return proc.communicate()


def child_environment(env=None, cpu_only: bool = False) -> dict:
    """The environment launch() gives a DDP job: this one's, env added, one thread per process.

    The repository goes first on PYTHONPATH: a script's own folder (ddp_scripts/) is what Python
    puts on sys.path, so without it `import torchcourse` works only where the course is
    pip-installed (make setup, environment.yml), not on a machine that has just torch (a lent GPU).
    """
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1", **(env or {}))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SCRIPTS_DIR.parent), env.get("PYTHONPATH")) if p)
    if platform.system() == "Windows":   # torchrun's store, too, needs libuv unless told not to
        env.setdefault("USE_LIBUV", "0")
    if cpu_only:
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def launch(script, *args, nproc: int = 2, launcher: str = "torchrun", cpu_only: bool = False,
           timeout: float = 180, cwd=None, env=None) -> subprocess.CompletedProcess:
    """Run a DDP script in child processes and wait for it; raise with its output if it fails.

    One thread per process (OMP_NUM_THREADS=1) so that 2 processes share 2 cores fairly;
    cpu_only hides the GPUs (gloo on the CPU, results that match a CPU run exactly);
    env adds variables to the children's environment.
    """
    check_script(script)
    env = child_environment(env, cpu_only)
    command = launch_command(script, *args, nproc=nproc, launcher=launcher)
    # A session of its own, so that a hung job can be stopped with all its worker processes.
    with subprocess.Popen(command, cwd=cwd or SCRIPTS_DIR.parent, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          start_new_session=True) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            stdout, stderr = _stop(proc)
            raise RuntimeError(f"{Path(script).name} did not finish within {timeout} s "
                               f"(a rank waiting forever for the others?)\n"
                               f"--- stdout (end)\n{stdout[-3000:]}\n"
                               f"--- stderr (end)\n{stderr[-3000:]}") from None
    result = subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)
    if result.returncode != 0:
        raise RuntimeError(f"{Path(script).name} exited with code {result.returncode}\n"
                           f"--- stdout (end)\n{stdout[-3000:]}\n"
                           f"--- stderr (end)\n{stderr[-3000:]}")
    return result
