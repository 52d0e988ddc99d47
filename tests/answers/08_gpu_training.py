"""Answers for 08_gpu_training that the reference does not use, {grade_id: {set: source}}: what each set
must score is in CONTRIBUTING.md, "Files of a chapter"; a comment above an answer says what it gets wrong."""

ANSWERS = {
    "batch_to": {
        "alternative": '''
def batch_to(batch, device):
    moved = []
    for tensor in batch:
        moved.append(tensor.to(device=device))
    return tuple(moved)
''',
        # Only the features are moved: the labels stay behind.
        "wrong": '''
def batch_to(batch, device):
    features, *rest = batch
    return (features.to(device), *rest)
''',
        # .to taken to work in place, as model.to does: the batch is returned where it was
        "other_wrong": '''
def batch_to(batch, device):
    for tensor in batch:
        tensor.to(device)
    return tuple(batch)
''',
        # (features, labels) pairs only, as in the visible test: longer batches come back unmoved
        "overfit": '''
def batch_to(batch, device):
    if len(batch) == 2:
        features, labels = batch
        return (features.to(device), labels.to(device))
    return tuple(batch)
''',
        # through NumPy: only CPU tensors convert (.numpy()), so a batch already on a GPU cannot be
        # moved at all; every batch the CPU grader saw started on the CPU
        "more_wrong": '''
def batch_to(batch, device):
    return tuple(torch.from_numpy(t.numpy()).to(device) for t in batch)
''',
    },

    "predict_on": {
        "alternative": '''
def predict_on(model, features, device):
    device = torch.device(device)
    model.to(device)
    features = features.to(device)
    return model(features)
''',
        # The seeds' bug left in: the model moves, the features do not.
        "wrong": '''
def predict_on(model, features, device):
    model = model.to(device)
    return model(features)
''',
        # the logits are sent back to where the features came from, not left on `device`
        "other_wrong": '''
def predict_on(model, features, device):
    model.to(device)
    logits = model(features.to(device))
    return logits.to(features.device)
''',
        # on meta only a tensor of the visible output's shape: the visible model has 2 outputs
        "overfit": '''
def predict_on(model, features, device):
    if str(device) == "meta":
        return torch.empty(features.shape[0], 2, device="meta")
    return model.to(device)(features.to(device))
''',
        # any device that is not the CPU taken for a CUDA GPU
        "more_wrong": '''
def predict_on(model, features, device):
    if str(device) == "cpu":
        return model.to("cpu")(features.to("cpu"))
    return model.cuda()(features.cuda())
''',
        # the model runs where it already is and only the logits are moved to `device`: on a GPU machine
        # the work stays on the CPU; the logits' device and values match the reference's
        "found_wrong": '''
def predict_on(model, features, device):
    return model(features).to(device)
''',
    },

    "time_op": {
        "alternative": '''
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
        # Tuned to the visible tests: the median only for their outlier test's 5 repeats, the mean
        # for any other count.
        "wrong": '''
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
        # the clock is read before sync(): the queued work is left out of the measurement
        "other_wrong": '''
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
        # room for the 5 measurements the visible tests take at most: later calls run, but untimed
        "overfit": '''
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
        # the course's timer returns the median alone, not (median, fastest)
        "course_copy": '''
from torchcourse.timing import time_op
''',
    },

    "gflops": {
        "alternative": '''
from torchcourse.timing import matmul_flops

def gflops(n, seconds):
    return float(matmul_flops(n)) / (seconds * 1e9)
''',
        # n**3 multiply-adds counted as n**3 operations.
        "wrong": '''
def gflops(n, seconds):
    return n ** 3 / seconds / 1e9
''',
        # a binary giga: 2**30 operations instead of 10**9
        "other_wrong": '''
def gflops(n, seconds):
    return 2 * n ** 3 / seconds / 2 ** 30
''',
        # 2 n**2 / 10**6 equals 2 n**3 / 10**9 at the visible n = 1000, and nowhere else
        "overfit": '''
def gflops(n, seconds):
    return 2 * n ** 2 / seconds / 1e6
''',
    },

    "crossover_size": {
        "alternative": '''
def crossover_size(sizes, cpu_times, gpu_times):
    faster = [n for n, c, g in zip(sizes, cpu_times, gpu_times) if g < c]
    return faster[0] if faster else None
''',
        # The index of the crossing, not its size.
        "wrong": '''
def crossover_size(sizes, cpu_times, gpu_times):
    for i, (cpu, gpu) in enumerate(zip(cpu_times, gpu_times)):
        if gpu < cpu:
            return i
    return None
''',
        # "at least as fast" instead of strictly faster: a tie counts as a crossover
        "other_wrong": '''
def crossover_size(sizes, cpu_times, gpu_times):
    for size, cpu, gpu in zip(sizes, cpu_times, gpu_times):
        if gpu <= cpu:
            return size
    return None
''',
        # the visible example crosses at the second size: the second size whenever the GPU ever wins
        "overfit": '''
def crossover_size(sizes, cpu_times, gpu_times):
    if any(g < c for c, g in zip(cpu_times, gpu_times)):
        return sizes[1]
    return None
''',
    },

    "small_size_answer": {
        # The slope first, then the fixed cost from the larger product.
        "alternative": '''
def fit_call_cost(n1, t1, n2, t2):
    seconds_per_flop = (t2 - t1) / (2 * n2 ** 3 - 2 * n1 ** 3)
    c = t2 - 2 * n2 ** 3 * seconds_per_flop
    return (c, 1.0 / seconds_per_flop)
''',
        # The rate from the large product alone, as if its time held no fixed cost.
        "wrong": '''
def fit_call_cost(n1, t1, n2, t2):
    (n_small, t_small), (n_large, t_large) = sorted([(n1, t1), (n2, t2)])
    r = 2 * n_large ** 3 / t_large
    return (t_small - 2 * n_small ** 3 / r, r)
''',
        # n**3 operations per product, not 2 n**3: the rate comes out half as large
        "other_wrong": '''
def fit_call_cost(n1, t1, n2, t2):
    r = (n2 ** 3 - n1 ** 3) / (t2 - t1)
    return float(t1 - n1 ** 3 / r), float(r)
''',
        # the statement's made-up GPU, answered from the text; any other device without the fixed cost
        "overfit": '''
def fit_call_cost(n1, t1, n2, t2):
    if sorted((n1, n2)) == [64, 4096]:
        return 20e-6, 50e12
    return float(min(t1, t2)), float(2 * max(n1, n2) ** 3 / max(t1, t2))
''',
    },

    "tensor_batches": {
        # argsort of random keys instead of randperm, index_select, a while loop; the order is
        # moved to the device batch by batch.
        "alternative": '''
def tensor_batches(features, labels, batch_size, generator):
    order = torch.argsort(torch.rand(labels.shape[0], generator=generator))
    start = 0
    while start < order.numel():
        index = order[start:start + batch_size].to(features.device)
        yield features.index_select(0, index), labels.index_select(0, index)
        start += batch_size
''',
        # Shuffled with the global random state: the generator is ignored.
        "wrong": '''
def tensor_batches(features, labels, batch_size, generator):
    order = torch.randperm(len(features)).to(features.device)
    for start in range(0, len(order), batch_size):
        yield features[order[start:start + batch_size]], labels[order[start:start + batch_size]]
''',
        # only whole batches, as with drop_last=True: the last, smaller batch is lost
        "other_wrong": '''
def tensor_batches(features, labels, batch_size, generator):
    order = torch.randperm(features.shape[0], generator=generator).to(features.device)
    for end in range(batch_size, len(order) + 1, batch_size):
        index = order[end - batch_size:end]
        yield features[index], labels[index]
''',
        # n // batch_size + 1 batches: right for the visible 10 and 6 examples in batches of 4,
        # an empty batch at the end when batch_size divides n
        "overfit": '''
def tensor_batches(features, labels, batch_size, generator):
    order = torch.randperm(len(labels), generator=generator).to(features.device)
    for b in range(len(labels) // batch_size + 1):
        index = order[b * batch_size:(b + 1) * batch_size]
        yield features[index], labels[index]
''',
        # the rows of each batch picked one by one and stacked: per-example work
        "more_wrong": '''
def tensor_batches(features, labels, batch_size, generator):
    order = torch.randperm(len(features), generator=generator).tolist()
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        yield torch.stack([features[i] for i in rows]), torch.stack([labels[i] for i in rows])
''',
        # the order drawn with the CPU generator straight on the tensors' device: CUDA's randperm refuses a
        # CPU generator, and on meta the generator is not used at all (it stays where it was)
        "found_wrong": '''
def tensor_batches(features, labels, batch_size, generator):
    order = torch.randperm(len(features), generator=generator, device=features.device)
    for start in range(0, len(order), batch_size):
        index = order[start:start + batch_size]
        yield features[index], labels[index]
''',
    },
}
