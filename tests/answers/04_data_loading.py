"""Answers for 04_data_loading that the reference does not use: each must be graded as described.

ALTERNATIVE: correct, written differently -> full points.
WRONG: a mistake a student plausibly makes -> no points.
"""

ALTERNATIVE = {
    "toy_dataset": '''
class ToyDataset(Dataset):
    def __init__(self, X, y):
        if X.shape[0] != y.shape[0]:
            raise ValueError("features and labels differ in length")
        self.pairs = list(zip(X, y))

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        x, y = self.pairs[i]
        return (x, y)
''',
    "window_dataset": '''
class WindowDataset(Dataset):
    def __init__(self, series, window):
        self.inputs = series.unfold(0, window, 1)[:-1]
        self.targets = series[window:]

    def __len__(self):
        return self.targets.numel()

    def __getitem__(self, i):
        return self.inputs[i], self.targets[i]
''',
    "num_batches": '''
def num_batches(num_examples, batch_size, drop_last):
    if drop_last:
        return num_examples // batch_size
    return -(-num_examples // batch_size)
''',
    "make_loaders": '''
from torch.utils.data import RandomSampler

def make_loaders(train_ds, test_ds, batch_size, seed):
    g = torch.Generator()
    g.manual_seed(seed)
    sampler = RandomSampler(train_ds, generator=g)
    train = DataLoader(train_ds, batch_size=batch_size, sampler=sampler, drop_last=True)
    test = DataLoader(test_ds, batch_size=batch_size)
    return train, test
''',
    "workers_answer": '''
def worker_shard(num_examples, worker_id, num_workers):
    sizes = [num_examples // num_workers + (w < num_examples % num_workers) for w in range(num_workers)]
    start = sum(sizes[:worker_id])
    return range(start, start + sizes[worker_id])
''',
}

WRONG = {
    # counts features (columns) instead of examples, and never checks the lengths
    "toy_dataset": '''
class ToyDataset(Dataset):
    def __init__(self, features, labels):
        self.features = features
        self.labels = labels

    def __getitem__(self, index):
        return self.features[index], self.labels[index]

    def __len__(self):
        return self.features.shape[1]
''',
    # off by one: the last index has no target
    "window_dataset": '''
class WindowDataset(Dataset):
    def __init__(self, series, window):
        self.series = series
        self.window = window

    def __len__(self):
        return len(self.series) - self.window + 1

    def __getitem__(self, i):
        return self.series[i:i + self.window], self.series[i + self.window]
''',
    # float division: right for small counts, rounded beyond 2**53
    "num_batches": '''
import math

def num_batches(num_examples, batch_size, drop_last):
    if drop_last:
        return num_examples // batch_size
    return math.ceil(num_examples / batch_size)
''',
    # seeds the global generator: anything drawing random numbers later changes the order
    "make_loaders": '''
def make_loaders(train_ds, test_ds, batch_size, seed):
    torch.manual_seed(seed)
    train = DataLoader(train_ds, batch_size=batch_size, shuffle=True, drop_last=True)
    test = DataLoader(test_ds, batch_size=batch_size)
    return train, test
''',
    # the split of PyTorch's IterableDataset example: ceil(n / k) each, the last worker short
    "workers_answer": '''
def worker_shard(num_examples, worker_id, num_workers):
    per_worker = -(-num_examples // num_workers)
    start = min(worker_id * per_worker, num_examples)
    return range(start, min(start + per_worker, num_examples))
''',
}
