"""Answers for 06_debugging that the reference does not use, {grade_id: {set: source}}: what each set
must score is in CONTRIBUTING.md, "Files of a chapter"; a comment above an answer says what it gets wrong."""

ANSWERS = {
    "grad_stats": {
        "alternative": '''
def grad_stats(model):
    return {
        name: dict(mean=float(p.grad.mean()), std=float(torch.std(p.grad)),
                   norm=float(torch.linalg.vector_norm(p.grad)))
        for name, p in model.named_parameters()
        if p.grad is not None
    }
''',
        # statistics of the weights, not of their gradients
        "wrong": '''
def grad_stats(model):
    stats = {}
    for name, param in model.named_parameters():
        if param.grad is not None:
            stats[name] = {"mean": param.data.mean().item(), "std": param.data.std().item(),
                           "norm": param.data.norm().item()}
    return stats
''',
        # numpy's habit: the population standard deviation (correction=0), not torch's default
        "other_wrong": """
def grad_stats(model):
    out = {}
    for name, param in model.named_parameters():
        if param.grad is not None:
            g = param.grad
            out[name] = {"mean": g.mean().item(), "std": g.std(correction=0).item(), "norm": g.norm().item()}
    return out
""",
        # the visible model has a gradient for every parameter: no check for None (a frozen layer crashes it)
        "overfit": """
def grad_stats(model):
    return {name: {"mean": p.grad.mean().item(), "std": p.grad.std().item(), "norm": p.grad.norm().item()}
            for name, p in model.named_parameters()}
""",
        # walks state_dict(keep_vars=True): a weight shared by two layers appears under both names
        "more_wrong": '''
def grad_stats(model):
    stats = {}
    for name, tensor in model.state_dict(keep_vars=True).items():
        if tensor.grad is not None:
            g = tensor.grad
            stats[name] = {"mean": g.mean().item(), "std": g.std().item(), "norm": g.norm().item()}
    return stats
''',
    },

    "record_output_shapes": {
        "alternative": '''
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
        # one entry per module name, listed in definition order: a module called twice keeps only
        # its last shape, and modules that run in another order are listed in the wrong one
        "wrong": '''
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
        # right records, but the hooks are never removed: they fire on every later forward pass
        "other_wrong": """
def record_output_shapes(model, x):
    records = []
    for name, module in model.named_modules():
        if not list(module.children()):
            module.register_forward_hook(lambda m, i, o, name=name: records.append((name, tuple(o.shape))))
    model(x)
    return records
""",
        # one level of children, with a special case for the course MLP's `layers`: right for the two
        # visible models, wrong for nested containers
        "overfit": """
def record_output_shapes(model, x):
    prefix, parent = ("layers.", model.layers) if hasattr(model, "layers") else ("", model)
    records = []
    handles = [child.register_forward_hook(lambda m, i, o, name=prefix + name: records.append((name, tuple(o.shape))))
               for name, child in parent.named_children()]
    model(x)
    for handle in handles:
        handle.remove()
    return records
""",
        # one record per call, then sorted by name: right only where the names sort in run order
        "more_wrong": '''
def record_output_shapes(model, x):
    records = []
    handles = [m.register_forward_hook(lambda m, i, o, name=name: records.append((name, tuple(o.shape))))
               for name, m in model.named_modules() if not list(m.children())]
    model(x)
    for handle in handles:
        handle.remove()
    return sorted(records, key=lambda record: record[0])
''',
    },

    "linear_grad_norms": {
        # a forward hook on each Linear puts a tensor hook on its output: the gradient w.r.t. the output
        "alternative": '''
def linear_grad_norms(model, x, y):
    fired = []

    def watch(name):
        def forward_hook(module, args, output):
            output.register_hook(lambda grad: fired.append((name, float(torch.linalg.vector_norm(grad)))))
        return forward_hook

    handles = [m.register_forward_hook(watch(n)) for n, m in model.named_modules() if type(m) is nn.Linear]
    try:
        loss = F.cross_entropy(model(x), y)
    finally:
        for h in handles:
            h.remove()
    loss.backward()
    return dict(fired)
''',
        # a forward hook: the norms of the layers' outputs (activations), in forward order
        "wrong": '''
def linear_grad_norms(model, x, y):
    norms = {}
    handles = []
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear):
            def hook(module, inputs, output, name=name):
                norms[name] = output.norm().item()
            handles.append(module.register_forward_hook(hook))
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    for handle in handles:
        handle.remove()
    return norms
''',
        # the right hooks and norms, but the handles are never removed: the hooks keep firing
        "other_wrong": """
def linear_grad_norms(model, x, y):
    norms = {}
    for name, layer in model.named_modules():
        if isinstance(layer, nn.Linear):
            layer.register_full_backward_hook(
                lambda module, grad_input, grad_output, name=name: norms.__setitem__(name, grad_output[0].norm().item()))
    F.cross_entropy(model(x), y).backward()
    return norms
""",
        # the three Linear layers of the visible model, by their index in the course MLP's `layers`
        "overfit": """
def linear_grad_norms(model, x, y):
    norms = {}
    handles = []
    for index in (4, 2, 0):
        hook = lambda module, gin, gout, name=f"layers.{index}": norms.update({name: gout[0].norm().item()})
        handles.append(model.layers[index].register_full_backward_hook(hook))
    F.cross_entropy(model(x), y).backward()
    for handle in handles:
        handle.remove()
    return norms
""",
        # "the last layer first" by sorting the names backwards: right for layers.4, layers.2, layers.0,
        # wrong wherever the names do not sort in the order of the backward pass
        "more_wrong": '''
def linear_grad_norms(model, x, y):
    norms = {}
    handles = [m.register_full_backward_hook(
                   lambda m, gin, gout, name=name: norms.update({name: gout[0].norm().item()}))
               for name, m in model.named_modules() if isinstance(m, nn.Linear)]
    F.cross_entropy(model(x), y).backward()
    for handle in handles:
        handle.remove()
    return {name: norms[name] for name in sorted(norms, reverse=True)}
''',
    },

    "region_summary": {
        # the union of each thread's intervals, per name: the same time as skipping the nested calls
        "alternative": """
import json
from collections import Counter, defaultdict


def region_summary(path):
    with open(path) as file:
        trace = json.load(file)
    intervals = defaultdict(list)                        # (name, pid, tid) -> [(start, end)]
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "user_annotation":
            intervals[e["name"], e["pid"], e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
    counts, covered = Counter(), Counter()
    for (name, _, _), spans in intervals.items():
        counts[name] += len(spans)
        start = end = None
        for a, b in sorted(spans):
            if end is not None and a <= end:
                end = max(end, b)
                continue
            if end is not None:
                covered[name] += end - start
            start, end = a, b
        covered[name] += end - start
    return dict(counts), (covered.most_common(1)[0][0] if covered else None)
""",
        # the region with the longest single call, not the largest total
        "wrong": """
import json


def region_summary(path):
    with open(path) as file:
        events = json.load(file)["traceEvents"]
    counts, longest = {}, {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "user_annotation":
            counts[e["name"]] = counts.get(e["name"], 0) + 1
            longest[e["name"]] = max(longest.get(e["name"], 0), e["dur"])
    return counts, (max(longest, key=longest.get) if longest else None)
""",
        # filters on the category only: instants and B/E pairs named like a region count as calls
        "other_wrong": """
import json


def region_summary(path):
    with open(path) as file:
        events = json.load(file)["traceEvents"]
    regions = [e for e in events if e.get("cat") == "user_annotation"]
    counts, totals, outer_end = {}, {}, {}
    for e in sorted(regions, key=lambda e: (e["ts"], -e.get("dur", 0))):
        name, end = e["name"], e["ts"] + e.get("dur", 0)
        counts[name] = counts.get(name, 0) + 1
        thread = (name, e["pid"], e["tid"])
        if thread in outer_end and end <= outer_end[thread]:
            continue
        outer_end[thread] = end
        totals[name] = totals.get(name, 0) + e.get("dur", 0)
    return counts, (max(totals, key=totals.get) if totals else None)
""",
        # "data loading is always the slowest": right counts, the visible trace's answer for the slowest
        "overfit": """
import json


def region_summary(path):
    with open(path) as file:
        events = json.load(file)["traceEvents"]
    counts = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "user_annotation":
            counts[e["name"]] = counts.get(e["name"], 0) + 1
    return counts, ("data" if counts else None)
""",
        # adds up every call: a region nested in itself counts its time once per level
        "more_wrong": """
import json
from collections import Counter


def region_summary(path):
    with open(path) as file:
        events = json.load(file)["traceEvents"]
    counts, totals = Counter(), Counter()
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "user_annotation":
            counts[e["name"]] += 1
            totals[e["name"]] += e["dur"]
    return dict(counts), (totals.most_common(1)[0][0] if totals else None)
""",
        # keeps the thread of the first complete event only: the loader's and the autograd engine's regions are lost
        "found_wrong": """
import json


def region_summary(path):
    with open(path) as file:
        events = json.load(file)["traceEvents"]
    main = next((e["tid"] for e in events if e.get("ph") == "X"), None)
    regions = [e for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e["tid"] == main]
    counts, totals, outer_end = {}, {}, {}
    for e in sorted(regions, key=lambda e: (e["ts"], -e["dur"])):
        name, end = e["name"], e["ts"] + e["dur"]
        counts[name] = counts.get(name, 0) + 1
        if name in outer_end and end <= outer_end[name]:
            continue
        outer_end[name] = end
        totals[name] = totals.get(name, 0) + e["dur"]
    return counts, (max(totals, key=totals.get) if totals else None)
""",
        # strict containment: a call of the same name that ends exactly with its outer call is
        # counted again (issue 45's review)
        "review_wrong": """
import json


def region_summary(path):
    with open(path) as file:
        events = json.load(file)["traceEvents"]
    regions = [e for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
    counts, totals, outer_end = {}, {}, {}
    for e in sorted(regions, key=lambda e: (e["ts"], -e["dur"])):
        name, end = e["name"], e["ts"] + e["dur"]
        counts[name] = counts.get(name, 0) + 1
        thread = (name, e["pid"], e["tid"])
        if thread in outer_end and end < outer_end[thread]:
            continue
        outer_end[thread] = end
        totals[name] = totals.get(name, 0) + e["dur"]
    return counts, (max(totals, key=totals.get) if totals else None)
""",
        # a call inside any other region's call adds no time: a region nested in another one is
        # counted too little (issue 45's review)
        "review_more_wrong": """
import json


def region_summary(path):
    with open(path) as file:
        events = json.load(file)["traceEvents"]
    regions = [e for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
    counts, totals, outer_end = {}, {}, {}
    for e in sorted(regions, key=lambda e: (e["ts"], -e["dur"])):
        name, end = e["name"], e["ts"] + e["dur"]
        counts[name] = counts.get(name, 0) + 1
        thread = (e["pid"], e["tid"])
        if thread in outer_end and end <= outer_end[thread]:
            continue
        outer_end[thread] = end
        totals[name] = totals.get(name, 0) + e["dur"]
    return counts, (max(totals, key=totals.get) if totals else None)
""",
    },
    "classify_images": {
        "alternative": '''
def classify_images(model, images):
    n = images.shape[0]
    return model(images.reshape(n, -1))
''',
        # squeeze removes the channel dimension but keeps 28 x 28
        "wrong": '''
def classify_images(model, images):
    return model(images.squeeze())
''',
        # view() instead of reshape(): fails on a batch that is not contiguous (channels-last)
        "other_wrong": """
def classify_images(model, images):
    return model(images.view(images.size(0), -1))
""",
        # the visible images are 28 x 28 with one channel: 784 features, hard-coded
        "overfit": """
def classify_images(model, images):
    return model(images.reshape(-1, 28 * 28))
""",
    },

    "stable_lr": {
        # the rates from the largest down, the first stable one returned; the loss written out
        "alternative": '''
import math

def largest_stable_lr(make_model, features, targets, rates, steps=100):
    for lr in sorted(rates, reverse=True):
        model = make_model()
        sgd = torch.optim.SGD(model.parameters(), lr=lr)
        history = []
        for _ in range(steps):
            loss = ((model(features) - targets) ** 2).mean()
            history.append(float(loss))
            sgd.zero_grad()
            loss.backward()
            sgd.step()
        if all(math.isfinite(v) for v in history) and history[-1] < history[0]:
            return lr
    return None
''',
        # stable = finite only: a rate whose loss grows without reaching inf counts as stable
        "wrong": '''
def largest_stable_lr(make_model, features, targets, rates, steps=100):
    stable = []
    for lr in rates:
        model = make_model()
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        finite = True
        for _ in range(steps):
            optimizer.zero_grad()
            loss = F.mse_loss(model(features), targets)
            if not torch.isfinite(loss):
                finite = False
                break
            loss.backward()
            optimizer.step()
        if finite:
            stable.append(lr)
    return max(stable) if stable else None
''',
        # one model trained at every rate in turn: each rate starts where the previous one left it
        "other_wrong": '''
def largest_stable_lr(make_model, features, targets, rates, steps=100):
    model = make_model()
    best = None
    for lr in rates:
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        losses = []
        for _ in range(steps):
            optimizer.zero_grad()
            loss = F.mse_loss(model(features), targets)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        if losses[-1] == losses[-1] and abs(losses[-1]) != float("inf") and losses[-1] < losses[0]:
            best = lr if best is None else max(best, lr)
    return best
''',
        # the visible rate lists looked up; the largest rate for any other list
        "overfit": '''
def largest_stable_lr(make_model, features, targets, rates, steps=100):
    if sorted(rates) == [0.001, 0.005, 0.01, 0.05]:
        return 0.005
    if sorted(rates) == [0.01, 0.05]:
        return None
    return max(rates)
''',
        # takes the rates to be sorted from small to large: stops at the first that blows up
        "more_wrong": '''
def largest_stable_lr(make_model, features, targets, rates, steps=100):
    best = None
    for lr in rates:
        model = make_model()
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        losses = []
        for _ in range(steps):
            optimizer.zero_grad()
            loss = F.mse_loss(model(features), targets)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        if not (torch.tensor(losses).isfinite().all() and losses[-1] < losses[0]):
            break
        best = lr
    return best
''',
        # stable = finite and the loss went below the first at some step: a loss that dips, then ends above
        # where it started, passes
        "found_wrong": '''
import math

def largest_stable_lr(make_model, features, targets, rates, steps=100):
    best = None
    for lr in rates:
        model = make_model()
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        losses = []
        for _ in range(steps):
            optimizer.zero_grad()
            loss = F.mse_loss(model(features), targets)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        if all(math.isfinite(v) for v in losses) and min(losses) < losses[0] and (best is None or lr > best):
            best = lr
    return best
''',
    },

    "accumulation_factor": {
        "alternative": '''
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
        # divides by the number of micro-batches: right only when they all have the same size
        "wrong": '''
def accumulate_gradients(model, micro_batches):
    model.zero_grad()
    total = 0.0
    for features, labels in micro_batches:
        loss = F.cross_entropy(model(features), labels) / len(micro_batches)
        loss.backward()
        total += loss.item()
    return total
''',
        # scales each micro-batch right, but never clears the gradients left from an earlier step
        "other_wrong": """
def accumulate_gradients(model, micro_batches):
    n = sum(len(y) for _, y in micro_batches)
    mean = 0.0
    for x, y in micro_batches:
        part = F.cross_entropy(model(x), y, reduction="sum") / n
        part.backward()
        mean += part.item()
    return mean
""",
        # the visible micro-batches always add up to 10 examples
        "overfit": """
def accumulate_gradients(model, micro_batches):
    model.zero_grad(set_to_none=True)
    total = 0.0
    for features, labels in micro_batches:
        loss = F.cross_entropy(model(features), labels) * len(labels) / 10
        loss.backward()
        total += loss.item()
    return total
""",
    },

    "predict_on_model_device": {
        "alternative": '''
def predict_on_model_device(model, x):
    devices = {p.device for p in model.parameters()}
    (device,) = devices
    return model(x.to(device=device))
''',
        # moves the data to the default device instead of the model's
        "wrong": '''
def predict_on_model_device(model, x):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return model(x.to(device))
''',
        # moves the model to the data instead of the data to the model
        "other_wrong": """
def predict_on_model_device(model, x):
    return model.to(x.device)(x)
""",
        # finds the device through the course MLP's first layer, which only the visible models have
        "overfit": """
def predict_on_model_device(model, x):
    return model(x.to(model.layers[0].weight.device))
""",
        # knows two devices only: anything that is not CUDA is taken for the CPU
        "more_wrong": '''
def predict_on_model_device(model, x):
    device = "cuda" if next(model.parameters()).is_cuda else "cpu"
    return model(x.to(device))
''',
        # class labels of a batch, not the logits, and computed where the batch is
        "course_copy": "from torchcourse.training import predict as predict_on_model_device",
        # runs the model on the batch where the batch is, and moves only the result to the model's device
        "found_wrong": """
def predict_on_model_device(model, x):
    return model(x).to(next(model.parameters()).device)
""",
    },

    "validation_loss": {
        "alternative": '''
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
        # no eval() and no no_grad(): dropout stays on, graphs get built
        "wrong": '''
def validation_loss(model, loader):
    total, count = 0.0, 0
    for features, labels in loader:
        total += F.cross_entropy(model(features), labels, reduction="sum").item()
        count += len(labels)
    return total / count
''',
        # averages the batch means: the short last batch counts as much as a full one
        "other_wrong": """
def validation_loss(model, loader):
    was_training = model.training
    model.eval()
    batch_means = []
    with torch.no_grad():
        for features, labels in loader:
            batch_means.append(F.cross_entropy(model(features), labels).item())
    model.train(was_training)
    return sum(batch_means) / len(batch_means)
""",
        # the visible model arrives in training mode: always puts it back in training mode
        "overfit": """
def validation_loss(model, loader):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for features, labels in loader:
            total += F.cross_entropy(model(features), labels, reduction="sum").item()
            count += len(labels)
    model.train()
    return total / count
""",
        # divides by len(loader.dataset): wrong when the loader drops its last batch or samples a subset
        "more_wrong": '''
def validation_loss(model, loader):
    was_training = model.training
    model.eval()
    total = 0.0
    with torch.no_grad():
        for features, labels in loader:
            total += F.cross_entropy(model(features), labels, reduction="sum").item()
    model.train(was_training)
    return total / len(loader.dataset)
''',
        # the fraction of correct predictions over a loader, not the mean loss
        "course_copy": "from torchcourse.training import accuracy as validation_loss",
    },

    "overfit_one_batch": {
        "alternative": '''
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
        # zero_grad between backward and step: the step never sees a gradient
        "wrong": '''
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
        # records the loss measured after each update instead of before it
        "other_wrong": """
def overfit_one_batch(model, features, labels, steps, lr):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        F.cross_entropy(model(features), labels).backward()
        optimizer.step()
        with torch.no_grad():
            losses.append(F.cross_entropy(model(features), labels).item())
    return losses
""",
        # Adam at the visible learning rate 0.01, whatever lr says
        "overfit": """
def overfit_one_batch(model, features, labels, steps, lr):
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model.train()
    return [course.train_step(model, optimizer, features, labels) for _ in range(steps)]
""",
    },

    "silent_bug_report": {
        "alternative": '''
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
        # treats any gradient tensor as stale, even one full of zeros
        "wrong": '''
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
        # stale when the gradient SUMS to something nonzero: misses entries that cancel out
        "other_wrong": """
def silent_bug_report(model, loss, inputs):
    problems = set()
    if any(p.grad is not None and p.grad.sum().item() != 0 for p in model.parameters()):
        problems.add("stale_grads")
    if not model.training:
        problems.add("eval_mode")
    if any(p.device != inputs.device for p in model.parameters()):
        problems.add("mixed_devices")
    if not loss.requires_grad:
        problems.add("detached_loss")
    return problems
""",
        # the visible tests never mix devices: no device check at all
        "overfit": """
def silent_bug_report(model, loss, inputs):
    problems = set()
    if any(p.grad is not None and bool((p.grad != 0).any()) for p in model.parameters()):
        problems.add("stale_grads")
    if not model.training:
        problems.add("eval_mode")
    if not loss.requires_grad:
        problems.add("detached_loss")
    return problems
""",
        # compares the device of the first parameter only: a model moved to a device in part passes
        "more_wrong": """
def silent_bug_report(model, loss, inputs):
    problems = set()
    if any(p.grad is not None and bool(p.grad.ne(0).any()) for p in model.parameters()):
        problems.add("stale_grads")
    if not model.training:
        problems.add("eval_mode")
    if next(model.parameters()).device != inputs.device:
        problems.add("mixed_devices")
    if not loss.requires_grad:
        problems.add("detached_loss")
    return problems
""",
    },
}
