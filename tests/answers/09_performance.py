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
    "mode_for_service": '''
mode_for_service = "reduce-overhead "
''',
    "tf32_facts": '''
tf32_facts = dict(conv_by_default=True, dtype_after_high=torch.float, matmul_by_default=not True)
''',
    "autocast_settings": '''
def autocast_settings(device):
    on_gpu = torch.device(device).type == "cuda"
    fast_bf16 = on_gpu and torch.cuda.is_bf16_supported(False)
    dtype = torch.float16 if on_gpu and not fast_bf16 else torch.bfloat16
    return (dtype, dtype is torch.float16)
''',
    "autocast_dtypes": '''
autocast_dtypes = dict(matmul=torch.bfloat16, relu_of_matmul=torch.bfloat16,
                       sum_of_x=torch.float, cross_entropy=torch.float32)
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
    "tool_for": '''
tool_for = dict(faster_training_loop="compile", phone_app="export", cpp_server="export")
''',
}

WRONG = {
    # .item() pulls the value into Python: still a graph break.
    "scaled_relu_nobreak": '''
def scaled_relu_nobreak(x):
    factor = 2.0 if x.sum().item() > 0 else 1.0
    return torch.relu(x) * factor
''',
    "mode_for_service": '''
mode_for_service = "max-autotune"
''',
    # TF32 taken to be off everywhere by default, convolutions included.
    "tf32_facts": '''
tf32_facts = {"matmul_by_default": False, "conv_by_default": False, "dtype_after_high": torch.float32}
''',
    # float16 and a scaler on every GPU, as this chapter once did: wrong on an H100.
    "autocast_settings": '''
def autocast_settings(device):
    if device.type == "cuda":
        return torch.float16, True
    return torch.bfloat16, False
''',
    # Everything inside autocast taken to be bfloat16.
    "autocast_dtypes": '''
autocast_dtypes = {"matmul": torch.bfloat16, "relu_of_matmul": torch.bfloat16,
                   "sum_of_x": torch.bfloat16, "cross_entropy": torch.bfloat16}
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
    "tool_for": '''
tool_for = {"faster_training_loop": "compile", "phone_app": "compile", "cpp_server": "export"}
''',
}
