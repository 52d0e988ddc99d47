"""Answers for 08_gpu_training that the reference does not use: each must be graded as described.

ALTERNATIVE: correct, written differently -> full points.
WRONG: a mistake a student plausibly makes -> no points.
OTHER_WRONG: a second plausible mistake, of another kind -> no points.
OVERFIT: passes the visible asserts by special-casing their inputs, wrong elsewhere -> no points.
COURSE_COPY: what the course ships (torchcourse), bound to the exercise's name -> no points.
MORE_WRONG: a further plausible mistake of a kind issue 20 listed -> no points.
"""

ALTERNATIVE = {
    "batch_to": '''
def batch_to(batch, device):
    moved = []
    for tensor in batch:
        moved.append(tensor.to(device=device))
    return tuple(moved)
''',
    "predict_on": '''
def predict_on(model, features, device):
    device = torch.device(device)
    model.to(device)
    features = features.to(device)
    return model(features)
''',
    "time_op": '''
def time_op(fn, warmup=2, repeats=5, sync=None):
    wait = sync if sync is not None else (lambda: None)
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        wait()
        t0 = time.perf_counter()
        fn()
        wait()
        samples.append(time.perf_counter() - t0)
    samples.sort()
    middle = len(samples) // 2
    if len(samples) % 2:
        return float(samples[middle]), samples[0]
    return (samples[middle - 1] + samples[middle]) / 2, samples[0]
''',
    "gflops": '''
from torchcourse.timing import matmul_flops

def gflops(n, seconds):
    return float(matmul_flops(n)) / (seconds * 1e9)
''',
    "crossover_size": '''
def crossover_size(sizes, cpu_times, gpu_times):
    faster = [n for n, c, g in zip(sizes, cpu_times, gpu_times) if g < c]
    return faster[0] if faster else None
''',
    # The slope first, then the fixed cost from the larger product.
    "small_size_answer": '''
def fit_call_cost(n1, t1, n2, t2):
    seconds_per_flop = (t2 - t1) / (2 * n2 ** 3 - 2 * n1 ** 3)
    c = t2 - 2 * n2 ** 3 * seconds_per_flop
    return (c, 1.0 / seconds_per_flop)
''',
    # argsort of random keys instead of randperm, index_select, a while loop; the order is
    # moved to the device batch by batch.
    "tensor_batches": '''
def tensor_batches(features, labels, batch_size, generator):
    order = torch.argsort(torch.rand(labels.shape[0], generator=generator))
    start = 0
    while start < order.numel():
        index = order[start:start + batch_size].to(features.device)
        yield features.index_select(0, index), labels.index_select(0, index)
        start += batch_size
''',
}

WRONG = {
    # Only the features are moved: the labels stay behind.
    "batch_to": '''
def batch_to(batch, device):
    features, *rest = batch
    return (features.to(device), *rest)
''',
    # The seeds' bug left in: the model moves, the features do not.
    "predict_on": '''
def predict_on(model, features, device):
    model = model.to(device)
    return model(features)
''',
    # Tuned to the visible tests: the median only for their outlier test's 5 repeats, the mean
    # for any other count.
    "time_op": '''
import statistics


def time_op(fn, warmup=2, repeats=5, sync=None):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        if sync is not None:
            sync()
        times.append(time.perf_counter() - start)
    if repeats == 5:
        return float(statistics.median(times)), float(min(times))
    return sum(times) / repeats, float(min(times))
''',
    # n**3 multiply-adds counted as n**3 operations.
    "gflops": '''
def gflops(n, seconds):
    return n ** 3 / seconds / 1e9
''',
    # The index of the crossing, not its size.
    "crossover_size": '''
def crossover_size(sizes, cpu_times, gpu_times):
    for i, (cpu, gpu) in enumerate(zip(cpu_times, gpu_times)):
        if gpu < cpu:
            return i
    return None
''',
    # The rate from the large product alone, as if its time held no fixed cost.
    "small_size_answer": '''
def fit_call_cost(n1, t1, n2, t2):
    (n_small, t_small), (n_large, t_large) = sorted([(n1, t1), (n2, t2)])
    r = 2 * n_large ** 3 / t_large
    return (t_small - 2 * n_small ** 3 / r, r)
''',
    # Shuffled with the global random state: the generator is ignored.
    "tensor_batches": '''
def tensor_batches(features, labels, batch_size, generator):
    order = torch.randperm(len(features)).to(features.device)
    for start in range(0, len(order), batch_size):
        yield features[order[start:start + batch_size]], labels[order[start:start + batch_size]]
''',
}

OTHER_WRONG = {
    # .to taken to work in place, as model.to does: the batch is returned where it was
    "batch_to": '''
def batch_to(batch, device):
    for tensor in batch:
        tensor.to(device)
    return tuple(batch)
''',
    # the logits are sent back to where the features came from, not left on `device`
    "predict_on": '''
def predict_on(model, features, device):
    model.to(device)
    logits = model(features.to(device))
    return logits.to(features.device)
''',
    # the clock is read before sync(): the queued work is left out of the measurement
    "time_op": '''
import statistics


def time_op(fn, warmup=2, repeats=5, sync=None):
    for _ in range(warmup):
        fn()
    measured = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - t0
        if sync:
            sync()
        measured.append(elapsed)
    return float(statistics.median(measured)), float(min(measured))
''',
    # a binary giga: 2**30 operations instead of 10**9
    "gflops": '''
def gflops(n, seconds):
    return 2 * n ** 3 / seconds / 2 ** 30
''',
    # "at least as fast" instead of strictly faster: a tie counts as a crossover
    "crossover_size": '''
def crossover_size(sizes, cpu_times, gpu_times):
    for size, cpu, gpu in zip(sizes, cpu_times, gpu_times):
        if gpu <= cpu:
            return size
    return None
''',
    # n**3 operations per product, not 2 n**3: the rate comes out half as large
    "small_size_answer": '''
def fit_call_cost(n1, t1, n2, t2):
    r = (n2 ** 3 - n1 ** 3) / (t2 - t1)
    return float(t1 - n1 ** 3 / r), float(r)
''',
    # only whole batches, as with drop_last=True: the last, smaller batch is lost
    "tensor_batches": '''
def tensor_batches(features, labels, batch_size, generator):
    order = torch.randperm(features.shape[0], generator=generator).to(features.device)
    for end in range(batch_size, len(order) + 1, batch_size):
        index = order[end - batch_size:end]
        yield features[index], labels[index]
''',
}

OVERFIT = {
    # (features, labels) pairs only, as in the visible test: longer batches come back unmoved
    "batch_to": '''
def batch_to(batch, device):
    if len(batch) == 2:
        features, labels = batch
        return (features.to(device), labels.to(device))
    return tuple(batch)
''',
    # on meta only a tensor of the visible output's shape: the visible model has 2 outputs
    "predict_on": '''
def predict_on(model, features, device):
    if str(device) == "meta":
        return torch.empty(features.shape[0], 2, device="meta")
    return model.to(device)(features.to(device))
''',
    # room for the 5 measurements the visible tests take at most: later calls run, but untimed
    "time_op": '''
import statistics


def time_op(fn, warmup=2, repeats=5, sync=None):
    for _ in range(warmup):
        fn()
    slots = [None] * 5
    for i in range(repeats):
        start = time.perf_counter()
        fn()
        if sync is not None:
            sync()
        if i < 5:
            slots[i] = time.perf_counter() - start
    kept = [s for s in slots if s is not None]
    return float(statistics.median(kept)), float(min(kept))
''',
    # 2 n**2 / 10**6 equals 2 n**3 / 10**9 at the visible n = 1000, and nowhere else
    "gflops": '''
def gflops(n, seconds):
    return 2 * n ** 2 / seconds / 1e6
''',
    # the visible example crosses at the second size: the second size whenever the GPU ever wins
    "crossover_size": '''
def crossover_size(sizes, cpu_times, gpu_times):
    if any(g < c for c, g in zip(cpu_times, gpu_times)):
        return sizes[1]
    return None
''',
    # the statement's made-up GPU, answered from the text; any other device without the fixed cost
    "small_size_answer": '''
def fit_call_cost(n1, t1, n2, t2):
    if sorted((n1, n2)) == [64, 4096]:
        return 20e-6, 50e12
    return float(min(t1, t2)), float(2 * max(n1, n2) ** 3 / max(t1, t2))
''',
    # n // batch_size + 1 batches: right for the visible 10 and 6 examples in batches of 4,
    # an empty batch at the end when batch_size divides n
    "tensor_batches": '''
def tensor_batches(features, labels, batch_size, generator):
    order = torch.randperm(len(labels), generator=generator).to(features.device)
    for b in range(len(labels) // batch_size + 1):
        index = order[b * batch_size:(b + 1) * batch_size]
        yield features[index], labels[index]
''',
}

COURSE_COPY = {
    # the course's timer returns the median alone, not (median, fastest)
    "time_op": '''
from torchcourse.timing import time_op
''',
}

MORE_WRONG = {
    # any device that is not the CPU taken for a CUDA GPU
    "predict_on": '''
def predict_on(model, features, device):
    if str(device) == "cpu":
        return model.to("cpu")(features.to("cpu"))
    return model.cuda()(features.cuda())
''',
    # the rows of each batch picked one by one and stacked: per-example work
    "tensor_batches": '''
def tensor_batches(features, labels, batch_size, generator):
    order = torch.randperm(len(features), generator=generator).tolist()
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        yield torch.stack([features[i] for i in rows]), torch.stack([labels[i] for i in rows])
''',
}
