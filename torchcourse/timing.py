"""Timing code that tells the truth: synchronise, warm up, repeat, report the median.

Chapter 08 has students write `time_op`; its own sweep, chapter 09 and later import this
reference version.

- GPU work is asynchronous: a CUDA call returns before the kernel has finished, so the clock
  must stop only after `torch.cuda.synchronize()` (see `sync_for`).
- The first calls pay one-off costs (memory allocation, cuDNN/kernel selection, compilation),
  so a few warm-up calls run untimed.
- One measurement is noise; the median of several ignores the odd slow outlier.
- `torch.utils.benchmark.Timer` does all of this too, but runs on ONE thread unless told
  otherwise: `benchmark_median` passes `num_threads=torch.get_num_threads()`.
"""
import statistics
import time

import torch


def sync_for(device):
    """The function that waits for `device` to finish its queued work, or None for the CPU."""
    kind = torch.device(device).type
    if kind == "cuda":
        return torch.cuda.synchronize
    if kind == "mps":
        return torch.mps.synchronize
    return None


def measure(fn, *args, warmup: int = 2, repeat: int = 5, sync=None, clock=time.perf_counter) -> list:
    """Seconds taken by each of `repeat` timed calls of `fn(*args)`, after `warmup` untimed ones.

    `sync`, when given, is called before the clock starts and before it stops, so queued
    asynchronous work (a GPU kernel) is inside the measurement and nothing earlier is.
    """
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    for _ in range(warmup):
        fn(*args)
    if sync is not None:
        sync()
    times = []
    for _ in range(repeat):
        start = clock()
        fn(*args)
        if sync is not None:
            sync()
        times.append(clock() - start)
    return times


def median_time(fn, *args, warmup: int = 2, repeat: int = 5, sync=None) -> float:
    """Median of `measure(...)`, in seconds."""
    return statistics.median(measure(fn, *args, warmup=warmup, repeat=repeat, sync=sync))


def time_op(fn, warmup: int = 2, repeats: int = 5, sync=None) -> float:
    """Median seconds of `repeats` timed calls of `fn()` after `warmup` untimed ones (chapter 08).

    `sync` (for example `torch.cuda.synchronize`, see `sync_for`) is called after every timed
    call, inside the measurement.
    """
    return median_time(fn, warmup=warmup, repeat=repeats, sync=sync)


def benchmark_median(fn, *args, num_threads=None, min_run_time: float = 0.2, label: str = "") -> float:
    """Median seconds per call of `fn(*args)` measured by `torch.utils.benchmark` (CUDA-synchronised).

    `num_threads` defaults to all the threads torch uses, not benchmark's single thread.
    """
    import torch.utils.benchmark as benchmark  # imported here: importing it can log to stderr
    timer = benchmark.Timer(stmt="fn(*args)", globals={"fn": fn, "args": args}, label=label,
                            num_threads=num_threads or torch.get_num_threads())
    return timer.blocked_autorange(min_run_time=min_run_time).median


def matmul_flops(n: int) -> int:
    """Floating-point operations of an (n, n) @ (n, n) product: n*n outputs, n multiply-adds each."""
    return 2 * n ** 3


def matmul_rate(n: int, device, dtype=torch.float32, precision: str = "highest") -> float:
    """FLOP/s of an (n, n) @ (n, n) product on `device` in `dtype`, measured by `benchmark_median`, with
    the float32 matmul precision set to `precision` ("high": TF32 on NVIDIA GPUs) during the measurement
    only (chapter 09)."""
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision(precision)
    try:
        p, q = (torch.randn(n, n, device=device, dtype=dtype) for _ in range(2))
        return matmul_flops(n) / benchmark_median(torch.mm, p, q)
    finally:
        torch.set_float32_matmul_precision(before)
