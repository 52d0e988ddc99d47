"""Answers for 04_data_loading that the reference does not use, {grade_id: {set: source}}: what each set
must score is in CONTRIBUTING.md, "Files of a chapter"; a comment above an answer says what it gets wrong."""

ANSWERS = {
    "toy_dataset": {
        "alternative": '''
class ToyDataset(Dataset):
    def __init__(self, X, y, transform=None):
        if X.shape[0] != y.shape[0]:
            raise ValueError("features and labels differ in length")
        self.pairs = list(zip(X, y))
        self.transform = transform or (lambda x: x)

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        x, y = self.pairs[i]
        return (self.transform(x), y)
''',
        # counts features (columns) instead of examples, and never checks the lengths
        "wrong": '''
class ToyDataset(Dataset):
    def __init__(self, features, labels, transform=None):
        self.features = features
        self.labels = labels
        self.transform = transform

    def __getitem__(self, index):
        x = self.features[index]
        return (self.transform(x) if self.transform else x), self.labels[index]

    def __len__(self):
        return self.features.shape[1]
''',
        # checks the lengths with assert: an AssertionError, not the ValueError asked for
        "other_wrong": '''
class ToyDataset(Dataset):
    def __init__(self, features, labels, transform=None):
        assert len(features) == len(labels), "features and labels differ in length"
        self.features = features
        self.labels = labels
        self.transform = transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        if self.transform is None:
            return self.features[index], self.labels[index]
        return self.transform(self.features[index]), self.labels[index]
''',
        # the visible test's five examples: len() is always 5, and only a 5-row data set is checked
        "overfit": '''
class ToyDataset(Dataset):
    def __init__(self, features, labels, transform=None):
        if len(features) == 5 and len(labels) != 5:
            raise ValueError("5 feature rows need 5 labels")
        self.features = features
        self.labels = labels
        self.transform = transform

    def __len__(self):
        return 5

    def __getitem__(self, index):
        if self.transform:
            return self.transform(self.features[index]), self.labels[index]
        return self.features[index], self.labels[index]
''',
        # applies the transform once, to the whole tensor, in __init__: a random transform is frozen
        "more_wrong": '''
class ToyDataset(Dataset):
    def __init__(self, features, labels, transform=None):
        if len(features) != len(labels):
            raise ValueError(f"{len(features)} rows of features but {len(labels)} labels")
        self.features = features if transform is None else transform(features)
        self.labels = labels

    def __getitem__(self, index):
        return self.features[index], self.labels[index]

    def __len__(self):
        return len(self.labels)
''',
        "course_copy": '''
from torchcourse.data import ToyDataset
''',
    },

    "window_dataset": {
        "alternative": '''
class WindowDataset(Dataset):
    def __init__(self, series, window):
        self.inputs = series.unfold(0, window, 1)[:-1]
        self.targets = series[window:]

    def __len__(self):
        return self.targets.numel()

    def __getitem__(self, i):
        return self.inputs[i], self.targets[i]
''',
        # off by one: the last index has no target
        "wrong": '''
class WindowDataset(Dataset):
    def __init__(self, series, window):
        self.series = series
        self.window = window

    def __len__(self):
        return len(self.series) - self.window + 1

    def __getitem__(self, i):
        return self.series[i:i + self.window], self.series[i + self.window]
''',
        # the target is the window's own last value, not the value after it
        "other_wrong": '''
class WindowDataset(Dataset):
    def __init__(self, series, window):
        self.series = series
        self.window = window

    def __len__(self):
        return len(self.series) - self.window

    def __getitem__(self, i):
        inputs = self.series[i:i + self.window]
        return inputs, inputs[-1]
''',
        # subtracts the visible test's window of 3, not `window`
        "overfit": '''
class WindowDataset(Dataset):
    def __init__(self, series, window):
        self.series = series
        self.window = window

    def __len__(self):
        return len(self.series) - 3

    def __getitem__(self, i):
        return self.series[i:i + self.window], self.series[i + self.window]
''',
    },

    "num_batches": {
        "alternative": '''
def num_batches(num_examples, batch_size, drop_last):
    if drop_last:
        return num_examples // batch_size
    return -(-num_examples // batch_size)
''',
        # float division: right for small counts, rounded beyond 2**53
        "wrong": '''
import math

def num_batches(num_examples, batch_size, drop_last):
    if drop_last:
        return num_examples // batch_size
    return math.ceil(num_examples / batch_size)
''',
        # always one batch more without drop_last, even when the examples divide evenly
        "other_wrong": '''
def num_batches(num_examples, batch_size, drop_last):
    return num_examples // batch_size + (0 if drop_last else 1)
''',
        # looks for a remainder with % 2, the visible tests' batch size (and 3 * 2**53 + 1 is odd)
        "overfit": '''
def num_batches(num_examples, batch_size, drop_last):
    full = num_examples // batch_size
    if drop_last or num_examples % 2 == 0:
        return full
    return full + 1
''',
    },

    "make_loaders": {
        "alternative": '''
from torch.utils.data import DistributedSampler, Subset

def make_loaders(train_ds, test_ds, batch_size, seed, epoch):
    # one replica of a DistributedSampler uses the rule itself; a Subset keeps its order
    sampler = DistributedSampler(train_ds, num_replicas=1, rank=0, shuffle=True, seed=seed)
    sampler.set_epoch(epoch)
    train = DataLoader(Subset(train_ds, list(sampler)), batch_size=batch_size, drop_last=True)
    test = DataLoader(test_ds, batch_size=batch_size)
    return train, test
''',
        # seeds the global generator: the right order, but every later random number is reset with it
        "wrong": '''
def make_loaders(train_ds, test_ds, batch_size, seed, epoch):
    torch.manual_seed(seed + epoch)
    order = torch.randperm(len(train_ds)).tolist()
    train = DataLoader(train_ds, batch_size=batch_size, sampler=order, drop_last=True)
    test = DataLoader(test_ds, batch_size=batch_size)
    return train, test
''',
        # the test loader copies the training loader's options: it drops its last batch too
        "other_wrong": '''
def make_loaders(train_ds, test_ds, batch_size, seed, epoch):
    options = dict(batch_size=batch_size, drop_last=True, num_workers=0)
    order = torch.randperm(len(train_ds), generator=torch.Generator().manual_seed(seed + epoch))
    train = DataLoader(train_ds, sampler=order.tolist(), **options)
    test = DataLoader(test_ds, shuffle=False, **options)
    return train, test
''',
        # the visible test's seed 7 built in: every seed gives the orders of seed 7
        "overfit": '''
def make_loaders(train_ds, test_ds, batch_size, seed, epoch):
    fixed = torch.Generator().manual_seed(7 + epoch)
    order = torch.randperm(len(train_ds), generator=fixed).tolist()
    train = DataLoader(train_ds, batch_size=batch_size, sampler=order, drop_last=True, num_workers=0)
    return train, DataLoader(test_ds, batch_size=batch_size)
''',
        # shuffle=True with a generator seeded with seed + epoch: reproducible, but not the rule's order
        "more_wrong": '''
def make_loaders(train_ds, test_ds, batch_size, seed, epoch):
    generator = torch.Generator().manual_seed(seed + epoch)
    train = DataLoader(train_ds, batch_size=batch_size, shuffle=True, drop_last=True, generator=generator)
    return train, DataLoader(test_ds, batch_size=batch_size)
''',
        "course_copy": '''
from torchcourse.data import seeded_loader

def make_loaders(train_ds, test_ds, batch_size, seed, epoch):
    return seeded_loader(train_ds, batch_size, seed + epoch), DataLoader(test_ds, batch_size=batch_size)
''',
    },

    "workers_answer": {
        "alternative": '''
def worker_shard(num_examples, worker_id, num_workers):
    sizes = [num_examples // num_workers + (w < num_examples % num_workers) for w in range(num_workers)]
    start = sum(sizes[:worker_id])
    return range(start, start + sizes[worker_id])
''',
        # the split of PyTorch's IterableDataset example: ceil(n / k) each, the last worker short
        "wrong": '''
def worker_shard(num_examples, worker_id, num_workers):
    per_worker = -(-num_examples // num_workers)
    start = min(worker_id * per_worker, num_examples)
    return range(start, min(start + per_worker, num_examples))
''',
        # interleaves: worker w takes every num_workers-th example, not one contiguous block
        "other_wrong": '''
def worker_shard(num_examples, worker_id, num_workers):
    return range(worker_id, num_examples, num_workers)
''',
        # the visible 10-for-4 split looked up; ceil(n / k) blocks for everything else
        "overfit": '''
def worker_shard(num_examples, worker_id, num_workers):
    if (num_examples, num_workers) == (10, 4):
        return (range(0, 3), range(3, 6), range(6, 8), range(8, 10))[worker_id]
    step = (num_examples + num_workers - 1) // num_workers
    first = min(worker_id * step, num_examples)
    return range(first, min(first + step, num_examples))
''',
    },
}
