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
    "small_size_answer": '''
small_size_answer = " B "
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
    "small_size_answer": '''
small_size_answer = "a"
''',
}
