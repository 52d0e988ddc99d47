"""Answers for 00_setup that the reference does not use: each must be graded as described.

ALTERNATIVE: correct, written differently -> full points.
WRONG: a mistake a student plausibly makes -> no points.
OTHER_WRONG: a second plausible mistake, of another kind -> no points.
OVERFIT: passes the visible asserts by special-casing their inputs, wrong elsewhere -> no points.
COURSE_COPY: what the course ships (torchcourse), bound to the exercise's name -> no points.
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
    # the candidates in order of preference, MPS struck off the list when float64 is needed
    "best_device": '''
def best_device(float64=False):
    candidates = [("cuda", torch.cuda.is_available)]
    if not float64:
        candidates.append(("mps", torch.backends.mps.is_available))
    for name, check in candidates:
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
def best_device(float64=False):
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available() and not float64:
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

OTHER_WRONG = {
    # only the first part of the module path: torch.utils.data is "utils", not data loading
    "component": '''
def component_of(name):
    part = name.split(".")[1]
    if part == "autograd":
        return "autograd"
    if part in ("nn", "optim", "data"):
        return "deep learning library"
    return "tensor library"
''',
    # a field is not a subfield of itself
    "is_subfield": '''
def is_subfield(inner, outer):
    inside = {"ai": {"ml", "dl"}, "ml": {"dl"}, "dl": set()}
    return inner in inside[outer]
''',
    # reads major.minor as a decimal number: 2.14 becomes 2.14 < 2.4
    "version_at_least": '''
def version_at_least(version, minimum):
    as_float = lambda v: float(".".join(v.split("+")[0].split(".")[:2]))
    return as_float(version) >= as_float(minimum)
''',
    # float64 accepted but never looked at: an Apple-silicon Mac still gets mps for float64 work
    "best_device": '''
def best_device(float64=False):
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")
''',
    # moves the batch but turns the labels into floats, as some losses want
    "move_batch": '''
def move_batch(batch, device):
    features, labels = batch
    return features.to(device), labels.to(device).float()
''',
}

OVERFIT = {
    # the six names the visible tests ask about, and a guess for the rest
    "component": '''
KNOWN = {"torch.matmul": "tensor library", "torch.autograd.grad": "autograd",
         "torch.nn.Linear": "deep learning library", "torch.optim.SGD": "deep learning library",
         "torch.utils.data.DataLoader": "deep learning library", "torch.gradient": "tensor library"}

def component_of(name):
    return KNOWN.get(name, "deep learning library")
''',
    # the three visible pairs, and "no" for everything else
    "is_subfield": '''
def is_subfield(inner, outer):
    return (inner, outer) in {("dl", "ml"), ("ml", "ml")}
''',
    # the six pairs of the visible tests looked up, "yes" for every other pair
    "version_at_least": '''
SEEN = {("2.4.0", "2.4"): True, ("2.3.1+cu121", "2.4"): False, ("2.14.1+cpu", "2.4.0"): True,
        ("2.5.0rc1", "2.5"): False, ("2.5.0rc1", "2.4.1"): True, ("2.6.0.dev20241001+cpu", "2.6.0"): False}

def version_at_least(version, minimum):
    return SEEN.get((version, minimum), True)
''',
    # the visible tests never make both available: mps wins over cuda
    "best_device": '''
def best_device(float64=False):
    if torch.backends.mps.is_available() and not float64:
        return torch.device("mps")
    if torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")
''',
    # the visible batch has two examples: it only moves batches of that size
    "move_batch": '''
def move_batch(batch, device):
    features, labels = batch
    if len(features) != 2:
        return features, labels
    return features.to(device), labels.to(device)
''',
}

# What the course ships, bound to the exercise's name: each must score 0 by design.
COURSE_COPY = {
    # the environment check's comparison (torchcourse.doctor), which reads "2.5.0rc1" as 2.5.1
    # and "2.5.0a0" as 2.5.0: a pre-release passes for its own release
    "version_at_least": '''
from torchcourse.doctor import check_package

def version_at_least(version, minimum):
    return check_package("torch", minimum, None, version).ok
''',
    # the course's copy, which has no float64 option
    "best_device": '''
from torchcourse.devices import best_device
''',
}
