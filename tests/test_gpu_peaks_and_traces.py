"""torchcourse.gpu_peaks (the datasheet peaks MFU divides by) and torchcourse.traces (what a GPU
did, from a Chrome trace): the names torch reports for the GPUs students use, and traces made up
so that every overlap is known."""
import json

import pytest

from torchcourse.gpu_peaks import peak_flops
from torchcourse.traces import Span, busy_share, covered, trace_spans


@pytest.mark.parametrize("name, kind, tflops", [
    ("NVIDIA H100 80GB HBM3", "bfloat16", 989.5),
    ("NVIDIA H100 80GB HBM3", "tf32", 494.5),
    ("NVIDIA H100 PCIe", "bfloat16", 756.0),
    ("NVIDIA H200", "float32", 67.0),
    ("NVIDIA A100-SXM4-80GB", "bfloat16", 312.0),
    ("NVIDIA A100-PCIE-40GB", "tf32", 156.0),
    ("NVIDIA L4", "bfloat16", 121.0),
    ("Tesla T4", "float16", 65.0),
    ("Tesla V100-SXM2-16GB", "float16", 125.0),
    ("Tesla V100-PCIE-16GB", "float16", 112.0),
    ("Tesla P100-PCIE-16GB", "float32", 9.3),
])
def test_the_datasheet_peak_of_each_gpu_students_get(name, kind, tflops):
    assert peak_flops(name, kind) == pytest.approx(tflops * 1e12)


@pytest.mark.parametrize("name, kind", [
    ("Tesla T4", "bfloat16"),             # no bfloat16 tensor cores: autocast uses float16 there
    ("Tesla T4", "tf32"),
    ("NVIDIA L40S", "bfloat16"),          # not the L4
    ("NVIDIA H100 NVL", "bfloat16"),      # other rates than the SXM's: not listed
    ("NVIDIA GeForce RTX 4090", "bfloat16"),
])
def test_a_gpu_or_kind_not_listed_has_no_peak(name, kind):
    assert peak_flops(name, kind) is None


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind"):
        peak_flops("NVIDIA H100 80GB HBM3", "fp8")


def write_trace(path, events):
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def event(cat, name, ts, dur, stream=7):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "args": {"stream": stream}}


def test_spans_of_one_category_only(tmp_path):
    trace = write_trace(tmp_path / "t.json", [
        event("kernel", "gemm", 0, 10), event("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 5, 4, stream=9),
        event("gpu_user_annotation", "Optimizer.step", 0, 30), event("gpu_memset", "Memset (Device)", 12, 1),
        {"ph": "i", "cat": "kernel", "name": "an instant", "ts": 3}, event("cpu_op", "aten::mm", 0, 11)])
    assert trace_spans(trace, "kernel") == [Span("gemm", 7, 0.0, 10.0)]
    assert trace_spans(trace, "gpu_memcpy") == [Span("Memcpy HtoD (Pinned -> Device)", 9, 5.0, 9.0)]


def test_covered_counts_overlapping_kernels_once():
    kernels = [Span("a", 1, 0, 10), Span("b", 2, 5, 15), Span("c", 1, 20, 30)]
    assert covered(0, 40, kernels) == 25          # 0-15 and 20-30
    assert covered(8, 22, kernels) == 9           # 8-15 and 20-22
    assert covered(15, 20, kernels) == 0          # a gap between kernels
    assert covered(0, 40, []) == 0


def test_busy_share_counts_kernels_not_annotations(tmp_path):
    """An annotation on the GPU's row spans its kernels and the gaps between them: counted as
    busy, the gaps would vanish."""
    trace = write_trace(tmp_path / "t.json", [
        event("kernel", "k1", 0, 10), event("kernel", "k2", 30, 10),
        event("gpu_user_annotation", "## Call CompiledFxGraph", 0, 40)])
    kernels = trace_spans(trace, "kernel")
    assert busy_share(kernels, 0, 40) == pytest.approx(0.5)
    assert busy_share(kernels, 0, 0) == 0.0
