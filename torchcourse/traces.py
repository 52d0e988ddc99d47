"""What a GPU did, read from a profiler's Chrome trace (chapters 08 and 09).

`torch.profiler`'s `export_chrome_trace` writes one event per operator, kernel and copy, each with
a category: "kernel" for a GPU kernel, "gpu_memcpy" and "gpu_memset" for copies and fills, and
"gpu_user_annotation" for the ranges that `record_function` marks on the GPU's row. Only kernels
compute: a share of time "busy" counts kernel events alone (copies and annotations are not work of
the GPU's cores, and an annotation spans the kernels inside it).
"""
import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    name: str
    stream: object
    start: float      # microseconds
    end: float


def trace_spans(trace_file, category: str) -> list:
    """The complete events of `category` ("kernel", "gpu_memcpy", ...) in a Chrome trace, as Spans."""
    with open(trace_file) as f:
        events = json.load(f)["traceEvents"]
    return [Span(e["name"], e.get("args", {}).get("stream", e.get("tid")), float(e["ts"]),
                 float(e["ts"]) + float(e["dur"]))
            for e in events if e.get("ph") == "X" and e.get("cat") == category]


def covered(start: float, end: float, spans) -> float:
    """Microseconds of [start, end] during which at least one of `spans` ran (overlaps counted once)."""
    pieces = sorted((max(s.start, start), min(s.end, end)) for s in spans if s.start < end and s.end > start)
    total, reached = 0.0, start
    for a, b in pieces:
        if b > reached:
            total += b - max(a, reached)
            reached = b
    return total


def busy_share(kernels: list, start: float, end: float) -> float:
    """The share of [start, end] during which a kernel ran."""
    return covered(start, end, kernels) / (end - start) if end > start else 0.0
