"""Answers for 06_debugging that the reference does not use: each must be graded as described.

ALTERNATIVE: correct, written differently -> full points.
WRONG: a mistake a student plausibly makes -> no points.
"""

ALTERNATIVE = {
    "grad_stats": '''
def grad_stats(model):
    return {
        name: dict(mean=float(p.grad.mean()), std=float(torch.std(p.grad)),
                   norm=float(torch.linalg.vector_norm(p.grad)))
        for name, p in model.named_parameters()
        if p.grad is not None
    }
''',
    "record_output_shapes": '''
import functools

def record_output_shapes(model, x):
    seen = []

    def hook(name, module, args, output):
        seen.append((name, tuple(int(d) for d in output.shape)))

    leaves = [(n, m) for n, m in model.named_modules() if not any(True for _ in m.children())]
    handles = []
    for n, m in leaves:
        handles.append(m.register_forward_hook(functools.partial(hook, n)))
    model(x)
    for h in handles:
        h.remove()
    return seen
''',
    "classify_images": '''
def classify_images(model, images):
    n = images.shape[0]
    return model(images.reshape(n, -1))
''',
    "stable_lr": '''
STABLE_LR = 2e-3
''',
    "accumulation_factor": '''
def accumulate_gradients(model, micro_batches):
    for p in model.parameters():
        p.grad = None
    n = sum(y.numel() for _, y in micro_batches)
    total = 0.0
    for x, y in micro_batches:
        loss_sum = F.cross_entropy(model(x), y, reduction="sum")
        (loss_sum / n).backward()
        total += loss_sum.item()
    return total / n
''',
    "predict_on_model_device": '''
def predict_on_model_device(model, x):
    devices = {p.device for p in model.parameters()}
    (device,) = devices
    return model(x.to(device=device))
''',
    "validation_loss": '''
@torch.no_grad()
def validation_loss(model, loader):
    previous = model.training
    model.eval()
    losses, sizes = [], []
    for x, y in loader:
        losses.append(F.cross_entropy(model(x), y))
        sizes.append(len(y))
    model.train(previous)
    sizes = torch.tensor(sizes, dtype=torch.float32)
    return float((torch.stack(losses) * sizes).sum() / sizes.sum())
''',
    "overfit_one_batch": '''
def overfit_one_batch(model, features, labels, steps, lr):
    opt = torch.optim.Adam(params=model.parameters(), lr=lr)
    history = []
    for step in range(steps):
        logits = model(features)
        loss = nn.functional.cross_entropy(logits, labels)
        history.append(loss.item())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return history
''',
    "silent_bug_report": '''
def silent_bug_report(model, loss, inputs):
    found = []
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    if any(g.abs().sum().item() > 0 for g in grads):
        found.append("stale_grads")
    if model.training is False:
        found.append("eval_mode")
    if {p.device for p in model.parameters()} != {inputs.device}:
        found.append("mixed_devices")
    if loss.grad_fn is None and not loss.requires_grad:
        found.append("detached_loss")
    return set(found)
''',
}

WRONG = {
    # statistics of the weights, not of their gradients
    "grad_stats": '''
def grad_stats(model):
    stats = {}
    for name, param in model.named_parameters():
        if param.grad is not None:
            stats[name] = {"mean": param.data.mean().item(), "std": param.data.std().item(),
                           "norm": param.data.norm().item()}
    return stats
''',
    # one entry per module name, listed in definition order: a module called twice keeps only
    # its last shape, and modules that run in another order are listed in the wrong one
    "record_output_shapes": '''
def record_output_shapes(model, x):
    shapes = {}
    handles = []
    for name, module in model.named_modules():
        if len(list(module.children())) == 0:
            def hook(module, inputs, output, name=name):
                shapes[name] = tuple(output.shape)
            handles.append(module.register_forward_hook(hook))
    model(x)
    for handle in handles:
        handle.remove()
    return [(name, shapes[name]) for name, module in model.named_modules() if name in shapes]
''',
    # squeeze removes the channel dimension but keeps 28 x 28
    "classify_images": '''
def classify_images(model, images):
    return model(images.squeeze())
''',
    # the rate that diverged
    "stable_lr": '''
STABLE_LR = 0.05
''',
    # divides by the number of micro-batches: right only when they all have the same size
    "accumulation_factor": '''
def accumulate_gradients(model, micro_batches):
    model.zero_grad()
    total = 0.0
    for features, labels in micro_batches:
        loss = F.cross_entropy(model(features), labels) / len(micro_batches)
        loss.backward()
        total += loss.item()
    return total
''',
    # moves the data to the default device instead of the model's
    "predict_on_model_device": '''
def predict_on_model_device(model, x):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return model(x.to(device))
''',
    # no eval() and no no_grad(): dropout stays on, graphs get built
    "validation_loss": '''
def validation_loss(model, loader):
    total, count = 0.0, 0
    for features, labels in loader:
        total += F.cross_entropy(model(features), labels, reduction="sum").item()
        count += len(labels)
    return total / count
''',
    # zero_grad between backward and step: the step never sees a gradient
    "overfit_one_batch": '''
def overfit_one_batch(model, features, labels, steps, lr):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(features), labels)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        losses.append(loss.item())
    return losses
''',
    # treats any gradient tensor as stale, even one full of zeros
    "silent_bug_report": '''
def silent_bug_report(model, loss, inputs):
    problems = set()
    if any(p.grad is not None for p in model.parameters()):
        problems.add("stale_grads")
    if not model.training:
        problems.add("eval_mode")
    if any(p.device != inputs.device for p in model.parameters()):
        problems.add("mixed_devices")
    if not loss.requires_grad:
        problems.add("detached_loss")
    return problems
''',
}
