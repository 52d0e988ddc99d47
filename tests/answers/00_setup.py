"""Answers for 00_setup that the reference does not use: each must be graded as described.

ALTERNATIVE: correct, written differently -> full points.
WRONG: a mistake a student plausibly makes -> no points.
"""

ALTERNATIVE = {
    "component": '''
COMPONENT = dict(layers_and_losses="Deep learning library ",
                 gradient_of_loss="Autograd",
                 matmul_on_gpu="tensor library")
''',
    "is_subfield": '''
def is_subfield(inner, outer):
    contains = {"ai": {"ai", "ml", "dl"}, "ml": {"ml", "dl"}, "dl": {"dl"}}
    return inner in contains[outer]
''',
    "version_at_least": '''
from packaging.version import Version

def version_at_least(version, minimum):
    return Version(version.split("+")[0]) >= Version(minimum)
''',
    "best_device": '''
def best_device():
    for name, check in (("cuda", torch.cuda.is_available), ("mps", torch.backends.mps.is_available)):
        if check():
            return torch.device(name)
    return torch.device("cpu")
''',
    "move_batch": '''
def move_batch(batch, device):
    return tuple(t.to(device=device) for t in batch)
''',
}

WRONG = {
    # autograd and the tensor library swapped
    "component": '''
COMPONENT = {"matmul_on_gpu": "autograd", "gradient_of_loss": "tensor library",
             "layers_and_losses": "deep learning library"}
''',
    # the nesting upside down
    "is_subfield": '''
def is_subfield(inner, outer):
    depth = {"ai": 0, "ml": 1, "dl": 2}
    return depth[inner] <= depth[outer]
''',
    # compares the strings, so "2.14" < "2.4"
    "version_at_least": '''
def version_at_least(version, minimum):
    return version.split("+")[0] >= minimum
''',
    # a string instead of a torch.device
    "best_device": '''
def best_device():
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"
''',
    # forgets the labels
    "move_batch": '''
def move_batch(batch, device):
    features, labels = batch
    return features.to(device), labels
''',
}
