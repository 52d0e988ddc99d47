"""Answers for 08_gpu_training that the reference does not use: each must be graded as described.

ALTERNATIVE: correct, written differently -> full points.
WRONG: a mistake a student plausibly makes -> no points.
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
        return float(samples[middle])
    return (samples[middle - 1] + samples[middle]) / 2
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
        return float(statistics.median(times))
    return sum(times) / repeats
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
