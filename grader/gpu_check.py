"""Every chapter run as a student with a GPU runs it, and a table of what happened: `make gpu-check`.

    python3 -m grader.gpu_check                                  # every chapter, then the DDP scripts
    python3 -m grader.gpu_check 00_setup 10_distributed --quick  # some chapters, in quick mode

Needs only torch, torchvision and matplotlib (a lent GPU machine has no Jupyter or nbgrader). For
each chapter, the solution notebook's code cells run in order on the machine's best device, in
full mode unless --quick, through `python -m grader.headless --keep-going` in a process of its own
(a failing cell is recorded and the run goes on; a chapter past --timeout is stopped and says
where). Then every judged test cell's hidden checks run in that namespace, and, when the best
device is not the CPU, the same chapter runs again with CUDA hidden: the exercises whose records
differ between the two are listed, compared by the judge's own rules (grader/judge/compare.py).
The CPU runs go beside the device runs, in quick mode unless --cpu-full (the table says which), each
lane on half of the CPUs (split_cpus).
The DDP scripts run with torchrun on as many processes as there are GPUs (nccl), or on 2 CPU
processes (gloo) without one.

Writes the table to OUT/gpu-check.md and everything the runs printed to OUT/gpu-check-log.txt;
OUT defaults to docs/measurements/<date>-<device>/. Exits 1 when a cell or a script failed.
"""
import argparse
import datetime
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = REPO_ROOT / "solutions"
# script, its arguments: short runs that still cross every collective the script uses
DDP_RUNS = [("toy_ddp.py", ["--epochs", "3"]),
            ("fashion_ddp.py", ["--epochs", "1", "--checkpoint", "checkpoints/gpu_check_fashion_ddp.pt"]),
            ("fsdp_toy.py", ["--bf16", "--compare-ddp", "--out-dir", "checkpoints/gpu_check_fsdp"]),   # and a full checkpoint
            ("ddp_no_sync_bn.py", [])]


@dataclass
class ChapterRun:
    chapter: str
    device: str
    mode: str
    cells: list = field(default_factory=list)      # {"index", "ok", "seconds", "error"}
    seconds: float = 0.0
    timed_out: bool = False                        # stopped by the timeout
    records: dict = field(default_factory=dict)    # grade id -> the probe's display outputs
    output: str = ""                               # what the run printed

    @property
    def failed(self) -> list:
        return [c for c in self.cells if not c["ok"]]


def chapters(solutions: Path = SOLUTIONS) -> list:
    return sorted(p.name for p in solutions.iterdir() if (p / f"{p.name}.ipynb").exists())


def best_device_name() -> tuple:
    """("cuda", "NVIDIA H100 80GB HBM3") or ("cpu", "<the CPU>"): what the device runs use."""
    import torch
    if torch.cuda.is_available():
        return "cuda", torch.cuda.get_device_name(0)
    backend = getattr(torch.backends, "mps", None)
    if backend is not None and backend.is_available():
        return "mps", "Apple MPS"
    return "cpu", platform.processor() or platform.machine()


def cpu_list(cpus: list) -> str:
    """[0, 1, 2, 3] -> "0-3"; CPUs that are not consecutive are listed."""
    if cpus == list(range(cpus[0], cpus[-1] + 1)):
        return f"{cpus[0]}-{cpus[-1]}" if len(cpus) > 1 else str(cpus[0])
    return ",".join(map(str, cpus))


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def split_cpus() -> tuple:
    """(the device runs' CPUs, the CPU runs' CPUs): two halves of this process's CPUs, or (None, None)
    where a process cannot be pinned (not Linux) or has one CPU. On the same 16 cores, the CPU runs
    beside made a device run's own CPU work up to 160 times slower (a small matrix product, 50 us
    alone, 8 ms: docs/measurements/2026-11-27-nvidia-h100-80gb-hbm3/README.md)."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cpus) < 2:
        return None, None
    half = len(cpus) // 2
    return cpus[:len(cpus) - half], cpus[len(cpus) - half:]


def run_chapter(notebook: Path, work: Path, quick: bool, hide_gpu: bool, timeout: float,
                cpus: list = None) -> ChapterRun:
    """One chapter in a process of its own, on `cpus` only when given. With hide_gpu, on the CPU
    (the device runs go on beside it)."""
    chapter = notebook.stem
    records = work / ("cpu" if hide_gpu else "device")
    env = dict(os.environ, COURSE_QUICK="1" if quick else "0", COURSE_OFFLINE="1", PYTHONUNBUFFERED="1",
               MPLBACKEND="Agg", TQDM_DISABLE="1")   # tqdm bars would fill the log a line per update
    command = [sys.executable, "-m", "grader.headless", "--keep-going", "--records", str(records), str(notebook)]
    if hide_gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    if cpus:            # a lane of its own (split_cpus): as many threads as it has CPUs
        env["OMP_NUM_THREADS"] = str(len(cpus))
        command[3:3] = ["--cpus", ",".join(map(str, cpus))]
    elif hide_gpu:      # sharing the cores with the device runs: half of them
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 2) // 2))
    run = ChapterRun(chapter, "cpu" if hide_gpu else best_device_name()[0], "quick" if quick else "full")
    start = time.perf_counter()
    with subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, start_new_session=True) as proc:
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
            run.timed_out = True
    run.seconds = time.perf_counter() - start
    run.output = (f"\n===== {chapter} on {run.device}, {run.mode} mode: {run.seconds:.1f} s, "
                  f"exit {proc.returncode}\n{output}")
    cells_log = records / f"{chapter}.cells.jsonl"
    if cells_log.exists():
        run.cells = [json.loads(line) for line in cells_log.read_text().splitlines() if line.strip()]
    records_file = records / f"{chapter}.records.json"
    if records_file.exists():
        run.records = json.loads(records_file.read_text())
    return run


def differing_records(device_run: ChapterRun, cpu_run: ChapterRun) -> dict:
    """{grade id: why its records differ} between the two runs: the judge's comparison
    (grader/judge/compare.py, failed_checks) with the CPU run's record in the reference's place."""
    from grader.judge.compare import failed_checks
    from grader.judge.probes import ProbeError, read_probe
    differ = {}
    for grade_id in sorted(set(device_run.records) | set(cpu_run.records)):
        try:
            on_device = read_probe(device_run.records.get(grade_id, []), grade_id)
            on_cpu = read_probe(cpu_run.records.get(grade_id, []), grade_id)
        except ProbeError as err:
            differ[grade_id] = [f"no record ({err})"]
            continue
        why = failed_checks(on_device, on_cpu)
        if on_device.error != on_cpu.error:
            why.append(f"stopped by {on_device.error} on the device, by {on_cpu.error} on the CPU")
        if why:
            differ[grade_id] = why
    return differ


def run_ddp(log, gpus: int, timeout: float) -> list:
    """[(script, processes, backend, seconds, ok)] for each DDP_RUNS script, launched by torchrun."""
    from torchcourse.distributed import launch
    nproc = gpus or 2
    results = []
    for script, args in DDP_RUNS:
        if not gpus and script == "fashion_ddp.py":
            args = [*args, "--subset", "4096"]    # the CPU: the same collectives on fewer images
        start = time.perf_counter()
        try:
            done = launch(script, *args, nproc=nproc, timeout=timeout, cwd=REPO_ROOT,
                          env={"COURSE_OFFLINE": "1", "TQDM_DISABLE": "1"})
            output, ok = done.stdout + done.stderr, True
        except RuntimeError as err:
            output, ok = str(err), False
        seconds = time.perf_counter() - start
        backend = re.search(r"backend (\w+)", output)
        results.append((script, nproc, backend.group(1) if backend else "?", seconds, ok))
        log.write(f"\n===== torchrun --nproc_per_node={nproc} {script} {' '.join(args)}: "
                  f"{seconds:.1f} s, {'ok' if ok else 'FAILED'}\n{output}")
        log.flush()
    return results


def table(device_runs: list, cpu_runs: dict, ddp: list, header: str) -> str:
    lines = [header, "",
             "| chapter | cells ok | failed | seconds | device | records that differ from the CPU |",
             "|---|---|---|---|---|---|"]
    for run in device_runs:
        failed = ", ".join(f"{c['index']} ({c['error']})" for c in run.failed) or "0"
        if run.timed_out:
            failed += (f"; stopped by the timeout after cell {run.cells[-1]['index']}" if run.cells
                       else "; stopped by the timeout before any cell ended")
        cpu = cpu_runs.get(run.chapter)
        if cpu is None:
            differ = "n/a (the device is the CPU)"
        else:
            found = differing_records(run, cpu)
            differ = "; ".join(f"{g}: {', '.join(names)}" for g, names in found.items()) or "none"
        ok = sum(c["ok"] for c in run.cells)
        lines.append(f"| {run.chapter} | {ok} | {failed} | {run.seconds:.1f} | {run.device} ({run.mode}) | {differ} |")
    if ddp:
        lines += ["", "| DDP script | processes | backend | seconds | result |", "|---|---|---|---|---|"]
        lines += [f"| {s} | {n} | {b} | {t:.1f} | {'ok' if ok else 'FAILED'} |" for s, n, b, t, ok in ddp]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="chapter names (default: all)")
    parser.add_argument("--quick", action="store_true", help="quick mode (COURSE_QUICK=1) on the device too")
    parser.add_argument("--quick-for", nargs="+", default=[], metavar="CHAPTER",
                        help="these chapters in quick mode on the device (a chapter whose full mode would not fit "
                             "the time there is; the table says which mode each chapter ran in)")
    parser.add_argument("--cpu-full", action="store_true", help="the CPU runs in full mode too (slow)")
    parser.add_argument("--no-ddp", action="store_true", help="skip the DDP scripts")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per chapter run")
    parser.add_argument("--out", type=Path, help="folder for gpu-check.md and its log")
    parser.add_argument("--compare-cpu", action="store_true",
                        help="run the CPU runs and compare records even when the best device is the CPU")
    parser.add_argument("--solutions", type=Path, default=SOLUTIONS, help=argparse.SUPPRESS)  # tests
    args = parser.parse_args(argv)
    names = args.chapters or chapters(args.solutions)
    notebooks = {name: args.solutions / name / f"{name}.ipynb" for name in names}
    unknown = (set(names) | set(args.quick_for)) - set(chapters(args.solutions))
    if unknown:
        parser.error(f"no such chapter: {', '.join(sorted(unknown))}")

    import torch
    device, device_name = best_device_name()
    today = datetime.date.today().isoformat()
    out = args.out or REPO_ROOT / "docs" / "measurements" / f"{today}-{slug(device_name if device != 'cpu' else 'cpu ' + device_name)}"
    compare_cpu = device != "cpu" or args.compare_cpu
    device_cpus, cpu_cpus = split_cpus() if compare_cpu else (None, None)
    out.mkdir(parents=True, exist_ok=True)
    header = (f"# gpu-check, {today}: {device_name} ({device}), torch {torch.__version__}, "
              f"Python {platform.python_version()}\n\n"
              f"Device runs: {'quick' if args.quick else 'full'} mode"
              + (f" (quick for {', '.join(args.quick_for)})" if args.quick_for and not args.quick else "") + ". "
              + ("" if not compare_cpu else
                 f"CPU runs (CUDA hidden) for the records: {'full' if args.cpu_full else 'quick'} mode. ")
              + ("" if not device_cpus else
                 f"Device runs on CPUs {cpu_list(device_cpus)}, CPU runs on CPUs {cpu_list(cpu_cpus)} "
                 f"(OMP_NUM_THREADS each lane's count). ")
              + f"Timeout per chapter run: {args.timeout:.0f} s. Command: "
              f"`python3 -m grader.gpu_check {' '.join(argv if argv is not None else sys.argv[1:])}`")
    print(header, flush=True)
    with open(out / "gpu-check-log.txt", "w") as log, tempfile.TemporaryDirectory() as work, \
            ThreadPoolExecutor(max_workers=1) as cpu_lane:
        work = Path(work)
        cpu_futures = {}
        if compare_cpu:   # beside the device runs, which use the GPU more than the cores
            for chapter in names:
                cpu_futures[chapter] = cpu_lane.submit(run_chapter, notebooks[chapter], work, not args.cpu_full,
                                                       True, args.timeout, cpu_cpus)
        device_runs = []
        for chapter in names:
            run = run_chapter(notebooks[chapter], work, args.quick or chapter in args.quick_for, False, args.timeout,
                              device_cpus)
            device_runs.append(run)
            log.write(run.output)
            log.flush()
            print(f"{chapter}: {sum(c['ok'] for c in run.cells)} cells ok, {len(run.failed)} failed, "
                  f"{run.seconds:.1f} s", flush=True)
        cpu_runs = {chapter: future.result() for chapter, future in cpu_futures.items()}
        for run in cpu_runs.values():
            log.write(run.output)
        ddp = [] if args.no_ddp else run_ddp(log, torch.cuda.device_count() if device == "cuda" else 0,
                                             timeout=args.timeout)
    report = table(device_runs, cpu_runs, ddp, header)
    (out / "gpu-check.md").write_text(report)
    print(report, flush=True)
    print(f"written: {out / 'gpu-check.md'} and {out / 'gpu-check-log.txt'}")
    broken = any(r.failed or r.timed_out for r in device_runs) or not all(d[-1] for d in ddp)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
