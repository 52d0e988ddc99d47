"""torchcourse.timing: warm-up, repeat, median, synchronisation, and the benchmark wrapper."""
import time

import pytest
import torch

from torchcourse import timing


class FakeClock:
    """A clock that only moves when the fake workload says so: exact, machine-independent timings."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds


def test_warmup_and_repeat_counts():
    calls = []
    timing.measure(lambda: calls.append(1), warmup=3, repeat=4)
    assert len(calls) == 7


def test_median_ignores_an_outlier_and_warmup_is_untimed():
    clock = FakeClock()
    durations = iter([5.0, 5.0, 0.1, 0.1, 9.0, 0.1, 0.1])   # two slow warm-ups, one outlier
    times = timing.measure(lambda: clock.advance(next(durations)), warmup=2, repeat=5, clock=clock)
    assert times == pytest.approx([0.1, 0.1, 9.0, 0.1, 0.1])
    assert timing.statistics.median(times) == pytest.approx(0.1)


def test_sync_is_inside_the_measurement():
    """An asynchronous workload returns at once; only waiting for it (sync) takes time."""
    clock = FakeClock()
    pending = []
    syncs = []

    def launch():
        pending.append(0.25)

    def sync():
        syncs.append(1)
        while pending:
            clock.advance(pending.pop())

    times = timing.measure(launch, warmup=1, repeat=3, sync=sync, clock=clock)
    assert times == pytest.approx([0.25] * 3)
    assert len(syncs) >= 3


def test_median_time_of_a_real_sleep():
    elapsed = timing.median_time(time.sleep, 0.01, warmup=1, repeat=3)
    assert 0.009 <= elapsed < 0.2


def test_time_op_is_the_median_of_the_timed_calls():
    durations = iter([0.08, 0.08, 0.001, 0.001, 0.08, 0.001, 0.001])   # slow warm-ups, one outlier
    calls = []

    def workload():
        calls.append(1)
        time.sleep(next(durations))
    elapsed = timing.time_op(workload, warmup=2, repeats=5)
    assert len(calls) == 7
    assert 0.0009 <= elapsed < 0.04


def test_time_op_calls_sync_after_each_timed_call():
    log = []
    timing.time_op(lambda: log.append("fn"), warmup=1, repeats=3, sync=lambda: log.append("sync"))
    assert log.count("fn") == 4
    timed = [i for i, entry in enumerate(log) if entry == "fn"][1:]
    assert all(log[i + 1] == "sync" for i in timed)


def test_sync_for_devices():
    assert timing.sync_for("cpu") is None
    assert timing.sync_for(torch.device("cuda")) is torch.cuda.synchronize


def test_benchmark_median_uses_all_threads(monkeypatch):
    seen = {}
    import torch.utils.benchmark as benchmark
    real_timer = benchmark.Timer

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real_timer(*args, **kwargs)
    monkeypatch.setattr(benchmark, "Timer", spy)
    a = torch.randn(32, 32)
    seconds = timing.benchmark_median(torch.mm, a, a, min_run_time=0.01)
    assert seen["num_threads"] == torch.get_num_threads()
    assert 0 < seconds < 0.1


def test_matmul_flops():
    assert timing.matmul_flops(1) == 2 and timing.matmul_flops(1000) == 2e9


def test_matmul_rate_measures_in_the_precision_asked_and_puts_the_old_one_back(monkeypatch):
    seen = []

    def fake_median(fn, p, q, **kwargs):
        seen.append((torch.get_float32_matmul_precision(), p.shape, p.dtype))
        return 0.5
    monkeypatch.setattr(timing, "benchmark_median", fake_median)
    before = torch.get_float32_matmul_precision()
    assert timing.matmul_rate(8, "cpu", torch.bfloat16, "high") == timing.matmul_flops(8) / 0.5
    assert seen == [("high", (8, 8), torch.bfloat16)]
    assert torch.get_float32_matmul_precision() == before

    def broken(*args, **kwargs):
        raise RuntimeError("out of memory")
    monkeypatch.setattr(timing, "benchmark_median", broken)
    with pytest.raises(RuntimeError):
        timing.matmul_rate(8, "cpu", precision="medium")
    assert torch.get_float32_matmul_precision() == before, "an error must not leave the precision changed"
