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
