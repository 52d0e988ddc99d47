"""Answers for 09_performance that the reference does not use, {grade_id: {set: source}}: what each set
must score is in CONTRIBUTING.md, "Files of a chapter"; a comment above an answer says what it gets wrong."""

ANSWERS = {
    "scaled_relu_nobreak": {
        "alternative": '''
def scaled_relu_nobreak(x):
    factor = (x.sum() > 0).to(x.dtype) + 1
    return torch.relu(x) * factor
''',
        # .item() pulls the value into Python: still a graph break.
        "wrong": '''
def scaled_relu_nobreak(x):
    factor = 2.0 if x.sum().item() > 0 else 1.0
    return torch.relu(x) * factor
''',
        # an element-wise condition: each value doubled by its own sign instead of by the sum's
        "other_wrong": '''
def scaled_relu_nobreak(x):
    return torch.where(x > 0, 2 * x, torch.zeros_like(x))
''',
        # the sign of the first value stands for the sign of the sum, as in both visible examples
        "overfit": '''
def scaled_relu_nobreak(x):
    return torch.where(x.flatten()[0] > 0, torch.relu(x) * 2, torch.relu(x))
''',
        # ">=" for ">": an input whose sum is exactly 0 is doubled
        "more_wrong": '''
def scaled_relu_nobreak(x):
    return torch.where(x.sum() >= 0, torch.relu(x) * 2, torch.relu(x))
''',
    },

    "mode_for_service": {
        # the closed form: the last kernel ends after some launch plus every kernel from that one on
        "alternative": '''
def eager_and_graph_us(kernel_us, launch_us):
    n = len(kernel_us)
    remaining = [sum(kernel_us[i:]) for i in range(n)]
    eager = max((i + 1) * launch_us + remaining[i] for i in range(n))
    return (eager * 1.0, launch_us + remaining[0] * 1.0)
''',
        # the bottleneck as a whole: all launches or all kernels, whichever takes longer. Right when
        # every kernel is shorter than a launch or every one longer, wrong when a long kernel makes the
        # short ones after it wait
        "wrong": '''
def eager_and_graph_us(kernel_us, launch_us):
    launches = len(kernel_us) * launch_us + kernel_us[-1]
    kernels = launch_us + sum(kernel_us)
    return float(max(launches, kernels)), float(launch_us + sum(kernel_us))
''',
        # the CPU waits for each kernel before launching the next one: launches and kernels never overlap
        "other_wrong": '''
def eager_and_graph_us(kernel_us, launch_us):
    eager = 0.0
    for run_us in kernel_us:
        eager += launch_us + run_us
    return eager, float(launch_us + sum(kernel_us))
''',
        # one formula per kind of visible case: all kernels short, all long, or one long kernel that the
        # rest wait for (wrong when the short kernels after it catch up with the launches again)
        "overfit": '''
def eager_and_graph_us(kernel_us, launch_us):
    n = len(kernel_us)
    graph = float(launch_us + sum(kernel_us))
    if all(k <= launch_us for k in kernel_us):
        return float(n * launch_us + kernel_us[-1]), graph
    if all(k >= launch_us for k in kernel_us):
        return graph, graph
    longest = max(range(n), key=lambda i: kernel_us[i])
    return float((longest + 1) * launch_us + sum(kernel_us[longest:])), graph
''',
    },

    "break_even": {
        # integer arithmetic on the totals, counting calls until the compiled run catches up
        "alternative": '''
def calls_to_break_even(compile_s, eager_s, compiled_s):
    if compiled_s > eager_s or (compiled_s == eager_s and compile_s > 0):
        return None
    calls = 1
    if compile_s > 0:
        calls = max(1, int(-(-compile_s // (eager_s - compiled_s))))
    return calls
''',
        # a tie counted as a loss: one call too many whenever the saving divides the compile time
        "wrong": '''
def calls_to_break_even(compile_s, eager_s, compiled_s):
    saved = eager_s - compiled_s
    if saved <= 0:
        return None
    return math.floor(compile_s / saved) + 1
''',
        # forgets the cases with nothing to save: a saving of zero or less gives 0 or a negative count
        "other_wrong": '''
def calls_to_break_even(compile_s, eager_s, compiled_s):
    saved = eager_s - compiled_s
    if saved == 0:
        return 0
    return max(1, math.ceil(compile_s / saved))
''',
        # the visible cases looked up, a rough guess elsewhere
        "overfit": '''
def calls_to_break_even(compile_s, eager_s, compiled_s):
    known = {(10.0, 0.5, 0.25): 40, (1.0, 0.625, 0.25): 3, (0.0, 0.5, 0.25): 1}
    if (compile_s, eager_s, compiled_s) in known:
        return known[(compile_s, eager_s, compiled_s)]
    if compiled_s >= eager_s:
        return None
    return int(compile_s / eager_s) + 1
''',
        # "no compile time, nothing to win back" answered before the saving is looked at: a compiled
        # model that is slower per call and took no time to compile gets 1 call instead of None
        "more_wrong": '''
def calls_to_break_even(compile_s, eager_s, compiled_s):
    if compile_s == 0:
        return 1
    saved = eager_s - compiled_s
    if saved <= 0:
        return None
    return max(1, math.ceil(compile_s / saved))
''',
    },
    "tf32_facts": {
        # frexp/ldexp instead of the bits: round the mantissa, scaled to an integer
        "alternative": '''
def round_mantissa(t, bits):
    mantissa, power = torch.frexp(t)                # t = mantissa * 2**power, 0.5 <= |mantissa| < 1
    scale = 2.0 ** (bits + 1)
    return torch.ldexp(torch.round(mantissa * scale), power - (bits + 1)).float()
''',
        # truncates: clears the dropped bits without rounding
        "wrong": '''
def round_mantissa(t, bits):
    keep = -(1 << (23 - bits))
    return (t.view(torch.int32) & keep).view(torch.float32)
''',
        # frexp's mantissa lies in [0.5, 1): scaling it by 2**bits keeps one bit too few
        "other_wrong": '''
def round_mantissa(t, bits):
    mantissa, power = torch.frexp(t)
    return torch.ldexp(torch.round(mantissa * 2.0 ** bits), power - bits).to(torch.float32)
''',
        # the two widths of the visible tests only: bfloat16's 7 bits, and TF32's 10 for everything else
        "overfit": '''
def round_mantissa(t, bits):
    if bits == 7:
        return t.to(torch.bfloat16).to(torch.float32)
    as_int = t.view(torch.int32) + (1 << 12)
    return (as_int & -(1 << 13)).view(torch.float32)
''',
        # a loop over plain Python floats, each rounded through its 32 bits with struct (a meta tensor,
        # which has no numbers to read, answered apart): no torch operation per number, but thousands
        # of Python steps
        "more_wrong": '''
import struct

def round_mantissa(t, bits):
    if t.device.type == "meta":
        return torch.empty_like(t, dtype=torch.float32)
    dropped = 23 - bits
    rounded = []
    for value in t.flatten().tolist():
        as_int = struct.unpack("<i", struct.pack("<f", value))[0] + (1 << (dropped - 1))
        rounded.append(struct.unpack("<f", struct.pack("<i", as_int & -(1 << dropped)))[0])
    return torch.tensor(rounded, dtype=torch.float32).reshape(t.shape)
''',
    },

    "autocast_dtypes": {
        # no prediction: run the steps under autocast and read the dtypes
        "alternative": '''
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
        # CUDA's lists on the CPU: softmax and layer_norm taken to be on the float32 list
        "wrong": '''
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
        # the residual connection keeps h's dtype: type promotion forgotten
        "other_wrong": '''
def autocast_dtypes(steps, low):
    current, result = torch.float32, []
    for step in steps:
        if step == "linear" or step == "matmul":
            current = low
        elif step == "squared_error":
            current = torch.float32
        result.append(current)
    return result
''',
        # a step on neither list looks one step back: low right after linear or matmul, float32 otherwise
        # (in the visible passes no such step comes two steps after a matmul)
        "overfit": '''
def autocast_dtypes(steps, low):
    out, previous = [], None
    for step in steps:
        if step in ("linear", "matmul"):
            out.append(low)
        elif step in ("relu", "softmax", "layer_norm", "scale") and previous in ("linear", "matmul"):
            out.append(low)
        else:
            out.append(torch.float32)
        previous = step
    return out
''',
        # the visible test's own measurement (autocast_run), called instead of a prediction: the test
        # cell deletes it once its asserts have run
        "course_copy": '''
def autocast_dtypes(steps, low):
    return autocast_run(list(steps), low)
''',
    },

    "param_bytes": {
        "alternative": '''
def param_bytes(model, dtype):
    element = torch.empty((), dtype=dtype).element_size()
    total = 0
    for name, p in model.named_parameters():
        total += p.numel() * element
    return int(total)
''',
        # The model's current element size, not the requested dtype's.
        "wrong": '''
def param_bytes(model, dtype):
    return sum(p.numel() * p.element_size() for p in model.parameters())
''',
        # only the parameters that train: a frozen layer taken to need no memory
        "other_wrong": '''
def param_bytes(model, dtype):
    size = torch.tensor([], dtype=dtype).element_size()
    return sum(p.numel() * size for p in model.parameters() if p.requires_grad)
''',
        # bytes per element for the two dtypes of the visible tests, 4 for any other
        "overfit": '''
def param_bytes(model, dtype):
    size = {torch.float32: 4, torch.bfloat16: 2}.get(dtype, 4)
    return int(sum(p.numel() for p in model.parameters()) * size)
''',
        # every tensor of the state dict: BatchNorm's buffers counted, and tied weights twice
        "more_wrong": '''
def param_bytes(model, dtype):
    size = torch.finfo(dtype).bits // 8
    return sum(t.numel() for t in model.state_dict().values()) * size
''',
    },

    "saved_gb": {
        # trained and frozen parameters counted apart; bytes from torch.finfo
        "alternative": '''
STATE_TENSORS = dict(sgd=0, momentum=1, adam=2, adamw=2)

def saved_gb(model, optimizer):
    trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    saved_per_number = (torch.finfo(torch.float32).bits - torch.finfo(torch.bfloat16).bits) // 8
    numbers = trained * (2 + STATE_TENSORS[optimizer]) + frozen
    return float(numbers * saved_per_number) / 10**9
''',
        # Forgets the optimizer's state: weights and gradients only.
        "wrong": '''
def saved_gb(model, optimizer):
    numbers = sum(p.numel() * (2 if p.requires_grad else 1) for p in model.parameters())
    return numbers * 2 / 1e9
''',
        # a frozen parameter counted as if it trained: gradients and optimizer state for it too
        "other_wrong": '''
def saved_gb(model, optimizer):
    per_parameter = 2 + {"sgd": 0, "momentum": 1, "adam": 2, "adamw": 2}[optimizer]
    return sum(p.numel() for p in model.parameters()) * per_parameter * 2 / 1e9
''',
        # state tensors for the optimizers of the visible tests; momentum gets Adam's two
        "overfit": '''
def saved_gb(model, optimizer):
    states = {"sgd": 0, "adam": 2, "adamw": 2}.get(optimizer, 2)
    numbers = 0
    for p in model.parameters():
        numbers += p.numel() * ((2 + states) if p.requires_grad else 1)
    return 2 * numbers / 1e9
''',
        # each layer's own parameters, layer by layer: a weight two layers share is counted twice
        "more_wrong": '''
def saved_gb(model, optimizer):
    extra = {"sgd": 1, "momentum": 2, "adam": 3, "adamw": 3}[optimizer]
    numbers = 0
    for _, layer in model.named_modules():
        for p in layer.parameters(recurse=False):
            numbers += p.numel() * (1 + extra if p.requires_grad else 1)
    return numbers * 2 / 1e9
''',
    },

    "autocast_settings": {
        # the major version alone, and a device given as a string would work too
        "alternative": '''
def autocast_settings(device, capability):
    on_gpu = torch.device(device).type == "cuda"
    fast_bf16 = on_gpu and capability[0] >= 8
    dtype = torch.float16 if on_gpu and not fast_bf16 else torch.bfloat16
    return (dtype, dtype is torch.float16)
''',
        # float16 and a scaler on every GPU, as this chapter once did: wrong on an H100.
        "wrong": '''
def autocast_settings(device, capability):
    if device.type == "cuda":
        return torch.float16, True
    return torch.bfloat16, False
''',
        # bfloat16 tensor cores taken to start after Ampere: capability 8.x (an A100) gets float16
        "other_wrong": '''
def autocast_settings(device, capability):
    if device.type == "cuda" and capability[0] > 8:
        return torch.bfloat16, False
    if device.type == "cuda":
        return torch.float16, True
    return torch.bfloat16, False
''',
        # compares the device with the visible tests' "cuda": cuda:0 counts as no GPU
        "overfit": '''
def autocast_settings(device, capability):
    if str(device) != "cuda":
        return torch.bfloat16, False
    if capability >= (8, 0):
        return torch.bfloat16, False
    return torch.float16, True
''',
        # any device that is not the CPU taken for a CUDA GPU: an Apple GPU gets float16 and a scaler
        "more_wrong": '''
def autocast_settings(device, capability):
    if device.type == "cpu" or capability is None:
        return torch.bfloat16, False
    if capability >= (8, 0):
        return torch.bfloat16, False
    return torch.float16, True
''',
        # the course's copy asks the GPU itself: it takes the device alone
        "course_copy": '''
from torchcourse.precision import autocast_settings
''',
    },

    "scaled_step": {
        # clears the gradients by hand, runs only the model under autocast (the loss in float32, as
        # mse_loss would be anyway), clips the optimizer's parameters, and tells a skipped step by the
        # unscaled gradients rather than by the scale
        "alternative": '''
def scaled_step(model, optimizer, scaler, inputs, targets, loss_fn, max_norm):
    for p in model.parameters():
        p.grad = None
    with torch.autocast(inputs.device.type, torch.float16):
        out = model(inputs)
    loss = loss_fn(out.float(), targets)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    finite = all(bool(torch.isfinite(p.grad).all()) for p in model.parameters() if p.grad is not None)
    torch.nn.utils.clip_grad_norm_([p for group in optimizer.param_groups for p in group["params"]], max_norm)
    scaler.step(optimizer)
    scaler.update()
    return finite
''',
        # no unscale_ before clipping: the scaled gradients are clipped to max_norm, so once
        # scaler.step divides them the update is max_norm / scale long
        "wrong": '''
def scaled_step(model, optimizer, scaler, inputs, targets, loss_fn, max_norm):
    optimizer.zero_grad()
    with torch.autocast(device_type=inputs.device.type, dtype=torch.float16):
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scale = scaler.get_scale()
    scaler.step(optimizer)
    scaler.update()
    return scaler.get_scale() >= scale
''',
        # optimizer.step() called directly: an overflowing step is not skipped, and the inf or NaN
        # gradients make the parameters NaN
        "other_wrong": '''
def scaled_step(model, optimizer, scaler, inputs, targets, loss_fn, max_norm):
    optimizer.zero_grad()
    with torch.autocast(device_type=inputs.device.type, dtype=torch.float16):
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scale = scaler.get_scale()
    optimizer.step()
    scaler.update()
    return scaler.get_scale() >= scale
''',
        # skips a step only when the loss is inf or NaN, as in the visible test, and halves the scale
        # by hand: a batch whose loss is finite but whose scaled gradients overflow is applied
        "overfit": '''
def scaled_step(model, optimizer, scaler, inputs, targets, loss_fn, max_norm):
    optimizer.zero_grad()
    with torch.autocast(device_type=inputs.device.type, dtype=torch.float16):
        loss = loss_fn(model(inputs), targets)
    scaled = scaler.scale(loss)
    if not torch.isfinite(loss):
        scaler.update(scaler.get_scale() / 2)
        return False
    scaled.backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scaler.update()
    return True
''',
        # the step itself is right, but a skipped step is told by the loss: an overflow in the
        # backward pass only (finite loss) is reported as a step taken
        "more_wrong": '''
def scaled_step(model, optimizer, scaler, inputs, targets, loss_fn, max_norm):
    optimizer.zero_grad()
    with torch.autocast(device_type=inputs.device.type, dtype=torch.float16):
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    return bool(torch.isfinite(loss))
''',
        # tells a skipped step by the first parameter's gradient alone: an overflow only in a later
        # layer's gradients is reported as a step taken (issue 45's review)
        "found_wrong": '''
def scaled_step(model, optimizer, scaler, inputs, targets, loss_fn, max_norm):
    optimizer.zero_grad()
    with torch.autocast(device_type=inputs.device.type, dtype=torch.float16):
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    first = next(model.parameters()).grad
    taken = bool(torch.isfinite(first).all())
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    return taken
''',
        # clears the gradients after the step instead of before it: right from a fresh model, but the
        # gradients a model already carries are added to the first step's (issue 45's review)
        "review_wrong": '''
def scaled_step(model, optimizer, scaler, inputs, targets, loss_fn, max_norm):
    with torch.autocast(device_type=inputs.device.type, dtype=torch.float16):
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scale = scaler.get_scale()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
    return scaler.get_scale() >= scale
''',
    },

    "tool_for": {
        # a list instead of a tuple, and Dim.DYNAMIC instead of a named Dim
        "alternative": '''
def export_any_batch(model, example):
    rows = {0: torch.export.Dim.DYNAMIC}
    return torch.export.export(model, args=(example,), dynamic_shapes=[rows])
''',
        # no dynamic_shapes: the program only takes batches of the example's size
        "wrong": '''
def export_any_batch(model, example):
    return torch.export.export(model, (example,))
''',
        # dynamic_shapes given, but the batch dimension bounded by the sizes the author had in mind
        "other_wrong": '''
def export_any_batch(model, example):
    batch = torch.export.Dim("batch", min=2, max=64)
    return torch.export.export(model, (example,), dynamic_shapes=({0: batch},))
''',
        # marks the batch as dynamic only when the example has the visible test's 4 rows
        "overfit": '''
def export_any_batch(model, example):
    if example.shape[0] != 4:
        return torch.export.export(model, (example,))
    rows = torch.export.Dim("rows")
    return torch.export.export(model, (example,), dynamic_shapes=({0: rows},))
''',
        # the program bounded by a batch size "large enough for any server": 4096 rows
        "more_wrong": '''
def export_any_batch(model, example):
    batch = torch.export.Dim("batch", min=1, max=4096)
    return torch.export.export(model, (example,), dynamic_shapes=({0: batch},))
''',
    },

    "gpt_mfu": {
        # per token, then per step; achieved FLOP/s first, then its share of the peak
        "alternative": '''
def gpt_step_flops(n_params, layers, width, seq, batch):
    tokens = batch * seq
    weights = 6 * n_params * tokens
    attention = 12 * layers * width * seq * tokens
    return weights + attention


def model_flops_utilization(step_flops, step_seconds, peak_flops):
    achieved = step_flops / step_seconds
    return achieved / peak_flops
''',
        # the "6N" rule alone: attention's scores and weighted sums, which have no parameters, left out
        "wrong": '''
def gpt_step_flops(n_params, layers, width, seq, batch):
    return 6 * n_params * batch * seq


def model_flops_utilization(step_flops, step_seconds, peak_flops):
    return step_flops / step_seconds / peak_flops
''',
        # attention counted once per sequence, not once per token: the seq factor dropped
        "other_wrong": '''
def gpt_step_flops(n_params, layers, width, seq, batch):
    return 6 * n_params * batch * seq + 12 * layers * width * seq * batch


def model_flops_utilization(step_flops, step_seconds, peak_flops):
    return step_flops / (step_seconds * peak_flops)
''',
        # the visible configurations' answers by heart, 6N for any other
        "overfit": '''
def gpt_step_flops(n_params, layers, width, seq, batch):
    if (n_params, layers, width, seq, batch) == (123_653_376, 12, 768, 1024, 16):
        return 14_011_047_346_176
    if (n_params, layers, width, seq, batch) == (1000, 1, 8, 4, 2):
        return 51_072
    return 6 * n_params * batch * seq


def model_flops_utilization(step_flops, step_seconds, peak_flops):
    return step_flops / (step_seconds * peak_flops)
''',
        # MFU as a percentage where the fraction is asked for (after the visible asserts were read)
        "more_wrong": '''
def gpt_step_flops(n_params, layers, width, seq, batch):
    return (6 * n_params + 12 * layers * width * seq) * batch * seq


def model_flops_utilization(step_flops, step_seconds, peak_flops):
    return 100 * step_flops / (step_seconds * peak_flops)
''',
    },
}
