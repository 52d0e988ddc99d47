"""Answers for 01_tensors that the reference does not use, {grade_id: {set: source}}: what each set
must score is in CONTRIBUTING.md, "Files of a chapter"; a comment above an answer says what it gets wrong."""

ANSWERS = {
    "ranked_tensors": {
        "alternative": '''
def make_ranked_tensors():
    return (torch.tensor(1), torch.tensor([1.0, 2.0]), torch.eye(3), torch.rand(1, 2, 3))
''',
        # a one-element vector is not a scalar
        "wrong": '''
def make_ranked_tensors():
    return (torch.tensor([1]), torch.tensor([1, 2]), torch.ones(2, 2), torch.ones(2, 2, 2))
''',
        # confuses size with rank: torch.zeros(3) is a vector of three numbers, not a rank-3 tensor
        "other_wrong": '''
def make_ranked_tensors():
    return (torch.tensor(0.0), torch.zeros(1), torch.zeros(2), torch.zeros(3))
''',
        # the visible test only reads .ndim: four empty tensors of the right ranks
        "overfit": '''
def make_ranked_tensors():
    return (torch.tensor(7), torch.tensor([]), torch.zeros(0, 3), torch.zeros(0, 2, 2))
''',
    },

    "as_model_input": {
        "alternative": '''
def as_model_input(t):
    return t.float()
''',
        # float64, not float32
        "wrong": '''
def as_model_input(t):
    return t.double()
''',
        # rescales to [0, 1] as for image pixels: the values change
        "other_wrong": '''
def as_model_input(t):
    return t.float() / t.max()
''',
        # converts only the visible int64 input; other dtypes come back unchanged
        "overfit": '''
def as_model_input(t):
    if t.dtype == torch.int64:
        return t.to(torch.float32)
    return t
''',
    },

    "flatten_samples": {
        "alternative": '''
def flatten_samples(batch):
    return torch.flatten(batch, start_dim=1)
''',
        # view fails on non-contiguous input
        "wrong": '''
def flatten_samples(batch):
    return batch.view(batch.shape[0], -1)
''',
        # flattens the batch dimension too: one long vector
        "other_wrong": '''
def flatten_samples(batch):
    return torch.flatten(batch)
''',
        # unpacks the visible rank-4 batches: no other rank works
        "overfit": '''
def flatten_samples(batch):
    n, c, h, w = batch.shape
    return batch.reshape(n, c * h * w)
''',
    },

    "gram": {
        "alternative": '''
def gram(X):
    return torch.matmul(X, X.transpose(0, 1))
''',
        # compares columns, not rows
        "wrong": '''
def gram(X):
    return X.T @ X
''',
        # right values, but a Python loop over the rows: one multiplication per row
        "other_wrong": '''
def gram(X):
    return torch.stack([X @ row for row in X])
''',
        # the visible matrix's answer hard-coded; columns compared for everything else
        "overfit": '''
def gram(X):
    if X.tolist() == [[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]]:
        return torch.tensor([[5.0, 2.0], [2.0, 2.0]])
    return X.T @ X
''',
        # a loop over plain Python numbers: arithmetic only, no torch operation per row
        "more_wrong": '''
def gram(X):
    rows = X.tolist()
    return torch.tensor([[sum(a * b for a, b in zip(r, s)) for s in rows] for r in rows])
''',
    },

    "center_columns": {
        "alternative": '''
def center_columns(X):
    means = X.sum(dim=0) / X.shape[0]
    return X - means
''',
        # row means broadcast against columns
        "wrong": '''
def center_columns(X):
    return X - X.mean(dim=1)
''',
        # one overall mean instead of one mean per column
        "other_wrong": '''
def center_columns(X):
    return X - X.mean()
''',
        # the mean of the visible matrix's two rows, written out: wrong for any other row count
        "overfit": '''
def center_columns(X):
    return X - (X[0] + X[1]) / 2
''',
        # one subtraction per column, with torch-function handling switched off
        "more_wrong": '''
def center_columns(X):
    with torch._C.DisableTorchFunction():
        return torch.stack([X[:, j] - X[:, j].mean() for j in range(X.shape[1])], dim=1)
''',
    },

    "broadcast_shape": {
        # torch's own rule, its RuntimeError turned into the ValueError asked for
        "alternative": '''
def broadcast_shape(shape_a, shape_b):
    try:
        return tuple(torch.broadcast_shapes(shape_a, shape_b))
    except RuntimeError as err:
        raise ValueError(str(err)) from None
''',
        # lines the shapes up from the left: the shorter shape is padded with 1s at the end
        "wrong": '''
def broadcast_shape(shape_a, shape_b):
    rank = max(len(shape_a), len(shape_b))
    a = tuple(shape_a) + (1,) * (rank - len(shape_a))
    b = tuple(shape_b) + (1,) * (rank - len(shape_b))
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
        raise ValueError("the shapes do not broadcast")
    return tuple(y if x == 1 else x for x, y in zip(a, b))
''',
        # the larger size of each position, never a ValueError (and 0 against 1 gives 1)
        "other_wrong": '''
def broadcast_shape(shape_a, shape_b):
    rank = max(len(shape_a), len(shape_b))
    a = [1] * (rank - len(shape_a)) + list(shape_a)
    b = [1] * (rank - len(shape_b)) + list(shape_b)
    return tuple(max(x, y) for x, y in zip(a, b))
''',
        # the visible pairs looked up (and the one that clashes); the longer shape for any other pair
        "overfit": '''
SEEN = {((3, 1), (1, 4)): (3, 4), ((3, 1), (4, 1, 5)): (4, 3, 5), ((2, 3), ()): (2, 3),
        ((0, 3), (1, 3)): (0, 3), ((5, 1, 4), (3, 1)): (5, 3, 4), ((2, 1, 6), (7, 1)): (2, 7, 6),
        ((1,), (4, 2)): (4, 2), ((10**8, 1, 10**8), (10**8, 10**8, 1)): (10**8, 10**8, 10**8)}

def broadcast_shape(shape_a, shape_b):
    key = (tuple(shape_a), tuple(shape_b))
    if key == ((2, 3), (2,)):
        raise ValueError("(2, 3) and (2,) do not broadcast")
    if key in SEEN:
        return SEEN[key]
    return tuple(shape_a) if len(shape_a) >= len(shape_b) else tuple(shape_b)
''',
    },

    "sq_distances": {
        "alternative": '''
def sq_distances(A, B):
    return torch.cdist(A, B) ** 2
''',
        # element-wise, not every pair
        "wrong": '''
def sq_distances(A, B):
    return ((A - B) ** 2).sum(dim=1)
''',
        # distances, not squared distances
        "other_wrong": '''
def sq_distances(A, B):
    return ((A[:, None] - B[None]) ** 2).sum(-1).sqrt()
''',
        # the two coordinates of the visible points written out: right in 2-D only
        "overfit": '''
def sq_distances(A, B):
    dx = A[:, None, 0] - B[None, :, 0]
    dy = A[:, None, 1] - B[None, :, 1]
    return dx ** 2 + dy ** 2
''',
        # a row at a time, each in a worker thread
        "more_wrong": '''
from concurrent.futures import ThreadPoolExecutor

def sq_distances(A, B):
    with ThreadPoolExecutor(2) as pool:
        return torch.stack(list(pool.map(lambda a: ((a - B) ** 2).sum(dim=1), A)))
''',
    },

    "batch_to_tensor": {
        # NumPy makes the float32 copy, from_numpy wraps that copy
        "alternative": '''
def batch_to_tensor(buffer):
    return torch.from_numpy(np.array(buffer, dtype=np.float32))
''',
        # the copy/alias mix-up: from_numpy shares the buffer, and .float() of a float32 tensor is no copy
        "wrong": '''
def batch_to_tensor(buffer):
    return torch.from_numpy(buffer).float()
''',
        # copies, but keeps NumPy's float64
        "other_wrong": '''
def batch_to_tensor(buffer):
    return torch.tensor(buffer)
''',
        # copies the visible 2-D buffer; any other array keeps sharing float32 memory
        "overfit": '''
def batch_to_tensor(buffer):
    if buffer.ndim == 2:
        return torch.tensor(buffer, dtype=torch.float32)
    return torch.from_numpy(buffer.astype(np.float32, copy=False))
''',
    },
}
