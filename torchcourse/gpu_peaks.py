"""The peak matrix-product rates NVIDIA publishes for common GPUs, for MFU (chapter 09).

MFU (model FLOPs utilisation) divides the FLOP/s a training step needs by the device's peak for the
dtype its products run in. These are the datasheet's dense tensor-core rates (not the "with
sparsity" figures, which are twice as large), in TFLOP/s. A GPU not listed gets None: chapter 09
then measures its own matrix-product rate and uses that instead, as it does on a CPU.

| GPU (name as torch.cuda.get_device_name says it) | float32 | TF32 | bfloat16 | float16 |
|---|---|---|---|---|
| H100 SXM / H200 (SXM) | 67 | 494.5 | 989.5 | 989.5 |
| H100 PCIe | 51 | 378 | 756 | 756 |
| A100 (SXM and PCIe) | 19.5 | 156 | 312 | 312 |
| L4 | 30.3 | 60 | 121 | 121 |
| V100 SXM2 / PCIe | 15.7 / 14 | - | - | 125 / 112 |
| T4 | 8.1 | - | - | 65 |
| P100 PCIe | 9.3 | - | - | 18.7 |

Not listed on purpose: the H100 NVL and the P100 SXM2 (their names would match a row above with
other rates).
"""
import re

# (a pattern of the device name, {kind: TFLOP/s}); the first match wins, so PCIe comes before SXM
PEAK_TFLOPS = [
    (r"H100 NVL|P100-SXM", {}),
    (r"H100.*PCIe", {"float32": 51.0, "tf32": 378.0, "bfloat16": 756.0, "float16": 756.0}),
    (r"H100|H200|GH200", {"float32": 67.0, "tf32": 494.5, "bfloat16": 989.5, "float16": 989.5}),
    (r"A100", {"float32": 19.5, "tf32": 156.0, "bfloat16": 312.0, "float16": 312.0}),
    (r"\bL4\b", {"float32": 30.3, "tf32": 60.0, "bfloat16": 121.0, "float16": 121.0}),
    (r"V100.*PCIE", {"float32": 14.0, "float16": 112.0}),
    (r"V100", {"float32": 15.7, "float16": 125.0}),
    (r"\bT4\b", {"float32": 8.1, "float16": 65.0}),
    (r"P100-PCIE", {"float32": 9.3, "float16": 18.7}),
]
KINDS = ("float32", "tf32", "bfloat16", "float16")


def peak_flops(device_name: str, kind: str):
    """The datasheet's dense peak in FLOP/s of `kind` (one of KINDS) on the GPU called
    `device_name`, or None when the GPU is not listed or has no such tensor cores."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    for pattern, peaks in PEAK_TFLOPS:
        if re.search(pattern, device_name, re.IGNORECASE):
            rate = peaks.get(kind)
            return None if rate is None else rate * 1e12
    return None
