"""Answers for 09_performance that the reference does not use: each must be graded as described.

ALTERNATIVE: correct, written differently -> full points.
WRONG: a mistake a student plausibly makes -> no points.
"""

ALTERNATIVE = {
    "scaled_relu_nobreak": '''
def scaled_relu_nobreak(x):
    factor = (x.sum() > 0).to(x.dtype) + 1
    return torch.relu(x) * factor
''',
    # the closed form: the last kernel ends after some launch plus every kernel from that one on
    "mode_for_service": '''
def eager_and_graph_us(kernel_us, launch_us):
    n = len(kernel_us)
    remaining = [sum(kernel_us[i:]) for i in range(n)]
    eager = max((i + 1) * launch_us + remaining[i] for i in range(n))
    return (eager * 1.0, launch_us + remaining[0] * 1.0)
''',
    # frexp/ldexp instead of the bits: round the mantissa, scaled to an integer
    "tf32_facts": '''
def round_mantissa(t, bits):
    mantissa, power = torch.frexp(t)                # t = mantissa * 2**power, 0.5 <= |mantissa| < 1
    scale = 2.0 ** (bits + 1)
    return torch.ldexp(torch.round(mantissa * scale), power - (bits + 1)).float()
''',
    "autocast_settings": '''
def autocast_settings(device):
    on_gpu = torch.device(device).type == "cuda"
    fast_bf16 = on_gpu and torch.cuda.is_bf16_supported(False)
    dtype = torch.float16 if on_gpu and not fast_bf16 else torch.bfloat16
    return (dtype, dtype is torch.float16)
''',
    # no prediction: run the steps under autocast and read the dtypes
    "autocast_dtypes": '''
def autocast_dtypes(steps, low):
    x = torch.ones(8, 8)
    weight = torch.full((8, 8), 0.1)
    layer = torch.nn.Linear(8, 8)
    h, seen = x, []
    with torch.autocast("cpu", dtype=low):
        for step in steps:
            if step == "linear":
                h = layer(h)
            elif step == "matmul":
                h = torch.matmul(h, weight)
            elif step == "relu":
                h = h.relu()
            elif step == "softmax":
                h = h.softmax(-1)
            elif step == "layer_norm":
                h = torch.nn.functional.layer_norm(h, [8])
            elif step == "scale":
                h = 0.5 * h
            elif step == "add_input":
                h = x + h
            elif step == "squared_error":
                h = (torch.nn.functional.mse_loss(h, x, reduction="none"))
            seen.append(h.dtype)
    return seen
''',
    "param_bytes": '''
def param_bytes(model, dtype):
    element = torch.empty((), dtype=dtype).element_size()
    total = 0
    for name, p in model.named_parameters():
        total += p.numel() * element
    return int(total)
''',
    "saved_gb": '''
params = 7_000_000_000
saved_gb = params * 4 / 1e9 - params * 2 / 1e9
''',
    # a list instead of a tuple, and Dim.DYNAMIC instead of a named Dim
    "tool_for": '''
def export_any_batch(model, example):
    rows = {0: torch.export.Dim.DYNAMIC}
    return torch.export.export(model, args=(example,), dynamic_shapes=[rows])
''',
}

WRONG = {
    # .item() pulls the value into Python: still a graph break.
    "scaled_relu_nobreak": '''
def scaled_relu_nobreak(x):
    factor = 2.0 if x.sum().item() > 0 else 1.0
    return torch.relu(x) * factor
''',
    # the bottleneck as a whole: all launches or all kernels, whichever takes longer. Right when
    # every kernel is shorter than a launch or every one longer, wrong when a long kernel makes the
    # short ones after it wait
    "mode_for_service": '''
def eager_and_graph_us(kernel_us, launch_us):
    launches = len(kernel_us) * launch_us + kernel_us[-1]
    kernels = launch_us + sum(kernel_us)
    return float(max(launches, kernels)), float(launch_us + sum(kernel_us))
''',
    # truncates: clears the dropped bits without rounding
    "tf32_facts": '''
def round_mantissa(t, bits):
    keep = -(1 << (23 - bits))
    return (t.view(torch.int32) & keep).view(torch.float32)
''',
    # float16 and a scaler on every GPU, as this chapter once did: wrong on an H100.
    "autocast_settings": '''
def autocast_settings(device):
    if device.type == "cuda":
        return torch.float16, True
    return torch.bfloat16, False
''',
    # CUDA's lists on the CPU: softmax and layer_norm taken to be on the float32 list
    "autocast_dtypes": '''
def autocast_dtypes(steps, low):
    dtypes, dtype = [], torch.float32
    for step in steps:
        if step in ("linear", "matmul"):
            dtype = low
        elif step in ("softmax", "layer_norm", "squared_error", "add_input"):
            dtype = torch.float32
        dtypes.append(dtype)
    return dtypes
''',
    # The model's current element size, not the requested dtype's.
    "param_bytes": '''
def param_bytes(model, dtype):
    return sum(p.numel() * p.element_size() for p in model.parameters())
''',
    # The size of the float32 model, not the saving.
    "saved_gb": '''
saved_gb = 7e9 * 4 / 1e9
''',
    # no dynamic_shapes: the program only takes batches of the example's size
    "tool_for": '''
def export_any_batch(model, example):
    return torch.export.export(model, (example,))
''',
}
