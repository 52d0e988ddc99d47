"""Answers for 00_setup that the reference does not use: each must be graded as described.

ALTERNATIVE: correct, written differently -> full points.
WRONG: a mistake a student plausibly makes -> no points.
"""

ALTERNATIVE = {
    # the module path split into parts; capitals and a trailing space (the tests forgive both)
    "component": '''
DEEP_LEARNING = [["nn"], ["optim"], ["utils", "data"]]

def component_of(name):
    parts = name.split(".")[1:]
    if parts[:1] == ["autograd"]:
        return "Autograd"
    for prefix in DEEP_LEARNING:
        if parts[:len(prefix)] == prefix:
            return "Deep learning library "
    return "tensor library"
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
    # looks for pieces of text instead of module names: torch.gradient becomes autograd
    "component": '''
def component_of(name):
    if "grad" in name:
        return "autograd"
    if "nn" in name or "optim" in name or "data" in name:
        return "deep learning library"
    return "tensor library"
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
