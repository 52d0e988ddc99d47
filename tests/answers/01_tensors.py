"""Answers for 01_tensors that the reference does not use: each must be graded as described.

ALTERNATIVE: correct, written differently -> full points.
WRONG: a mistake a student plausibly makes -> no points.
"""

ALTERNATIVE = {
    "ranked_tensors": '''
def make_ranked_tensors():
    return (torch.tensor(1), torch.tensor([1.0, 2.0]), torch.eye(3), torch.rand(1, 2, 3))
''',
    "as_model_input": '''
def as_model_input(t):
    return t.float()
''',
    "flatten_samples": '''
def flatten_samples(batch):
    return torch.flatten(batch, start_dim=1)
''',
    "gram": '''
def gram(X):
    return torch.matmul(X, X.transpose(0, 1))
''',
    "center_columns": '''
def center_columns(X):
    means = X.sum(dim=0) / X.shape[0]
    return X - means
''',
    "broadcast_shape": '''
BROADCAST_SHAPE = torch.Size([4, 3, 5])
''',
    "sq_distances": '''
def sq_distances(A, B):
    return torch.cdist(A, B) ** 2
''',
}

WRONG = {
    # a one-element vector is not a scalar
    "ranked_tensors": '''
def make_ranked_tensors():
    return (torch.tensor([1]), torch.tensor([1, 2]), torch.ones(2, 2), torch.ones(2, 2, 2))
''',
    # float64, not float32
    "as_model_input": '''
def as_model_input(t):
    return t.double()
''',
    # view fails on non-contiguous input
    "flatten_samples": '''
def flatten_samples(batch):
    return batch.view(batch.shape[0], -1)
''',
    # compares columns, not rows
    "gram": '''
def gram(X):
    return X.T @ X
''',
    # row means broadcast against columns
    "center_columns": '''
def center_columns(X):
    return X - X.mean(dim=1)
''',
    # aligned from the left instead of the right
    "broadcast_shape": '''
BROADCAST_SHAPE = (3, 4, 5)
''',
    # element-wise, not every pair
    "sq_distances": '''
def sq_distances(A, B):
    return ((A - B) ** 2).sum(dim=1)
''',
}
