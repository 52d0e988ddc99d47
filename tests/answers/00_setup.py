"""Answers for 00_setup that the reference does not use: each must be graded as described.

ANSWERS maps every solution cell's grade_id, in the notebook's order, to its answers, one per set:
alternative: correct, written differently -> full points.
wrong: a mistake a student plausibly makes -> no points.
other_wrong: a second plausible mistake, of another kind -> no points.
overfit: passes the visible asserts by special-casing their inputs, wrong elsewhere -> no points.

and, for some exercises only (the reference answers the others in that notebook):
course_copy: what the course ships (torchcourse), bound to the exercise's name -> no points,
  by design.
"""

ANSWERS = {
    "component": {
        # the module path split into parts; capitals and a trailing space (the tests forgive both)
        "alternative": '''
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
        # looks for pieces of text instead of module names: torch.gradient becomes autograd
        "wrong": '''
def component_of(name):
    if "grad" in name:
        return "autograd"
    if "nn" in name or "optim" in name or "data" in name:
        return "deep learning library"
    return "tensor library"
''',
        # only the first part of the module path: torch.utils.data is "utils", not data loading
        "other_wrong": '''
def component_of(name):
    part = name.split(".")[1]
    if part == "autograd":
        return "autograd"
    if part in ("nn", "optim", "data"):
        return "deep learning library"
    return "tensor library"
''',
        # the six names the visible tests ask about, and a guess for the rest
        "overfit": '''
KNOWN = {"torch.matmul": "tensor library", "torch.autograd.grad": "autograd",
         "torch.nn.Linear": "deep learning library", "torch.optim.SGD": "deep learning library",
         "torch.utils.data.DataLoader": "deep learning library", "torch.gradient": "tensor library"}

def component_of(name):
    return KNOWN.get(name, "deep learning library")
''',
    },

    "is_subfield": {
        "alternative": '''
def is_subfield(inner, outer):
    contains = {"ai": {"ai", "ml", "dl"}, "ml": {"ml", "dl"}, "dl": {"dl"}}
    return inner in contains[outer]
''',
        # the nesting upside down
        "wrong": '''
def is_subfield(inner, outer):
    depth = {"ai": 0, "ml": 1, "dl": 2}
    return depth[inner] <= depth[outer]
''',
        # a field is not a subfield of itself
        "other_wrong": '''
def is_subfield(inner, outer):
    inside = {"ai": {"ml", "dl"}, "ml": {"dl"}, "dl": set()}
    return inner in inside[outer]
''',
        # the three visible pairs, and "no" for everything else
        "overfit": '''
def is_subfield(inner, outer):
    return (inner, outer) in {("dl", "ml"), ("ml", "ml")}
''',
    },

    "version_at_least": {
        "alternative": '''
from packaging.version import Version

def version_at_least(version, minimum):
    return Version(version.split("+")[0]) >= Version(minimum)
''',
        # compares the strings, so "2.14" < "2.4"
        "wrong": '''
def version_at_least(version, minimum):
    return version.split("+")[0] >= minimum
''',
        # reads major.minor as a decimal number: 2.14 becomes 2.14 < 2.4
        "other_wrong": '''
def version_at_least(version, minimum):
    as_float = lambda v: float(".".join(v.split("+")[0].split(".")[:2]))
    return as_float(version) >= as_float(minimum)
''',
        # the six pairs of the visible tests looked up, "yes" for every other pair
        "overfit": '''
SEEN = {("2.4.0", "2.4"): True, ("2.3.1+cu121", "2.4"): False, ("2.14.1+cpu", "2.4.0"): True,
        ("2.5.0rc1", "2.5"): False, ("2.5.0rc1", "2.4.1"): True, ("2.6.0.dev20241001+cpu", "2.6.0"): False}

def version_at_least(version, minimum):
    return SEEN.get((version, minimum), True)
''',
        # the environment check's comparison (torchcourse.doctor), which reads "2.5.0rc1" as 2.5.1
        # and "2.5.0a0" as 2.5.0: a pre-release passes for its own release
        "course_copy": '''
from torchcourse.doctor import check_package

def version_at_least(version, minimum):
    return check_package("torch", minimum, None, version).ok
''',
    },

    "best_device": {
        # the candidates in order of preference, MPS struck off the list when float64 is needed
        "alternative": '''
def best_device(float64=False):
    candidates = [("cuda", torch.cuda.is_available)]
    if not float64:
        candidates.append(("mps", torch.backends.mps.is_available))
    for name, check in candidates:
        if check():
            return torch.device(name)
    return torch.device("cpu")
''',
        # a string instead of a torch.device
        "wrong": '''
def best_device(float64=False):
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available() and not float64:
        return "mps"
    return "cpu"
''',
        # float64 accepted but never looked at: an Apple-silicon Mac still gets mps for float64 work
        "other_wrong": '''
def best_device(float64=False):
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")
''',
        # the visible tests never make both available: mps wins over cuda
        "overfit": '''
def best_device(float64=False):
    if torch.backends.mps.is_available() and not float64:
        return torch.device("mps")
    if torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")
''',
        # the course's copy, which has no float64 option
        "course_copy": '''
from torchcourse.devices import best_device
''',
    },

    "move_batch": {
        "alternative": '''
def move_batch(batch, device):
    return tuple(t.to(device=device) for t in batch)
''',
        # forgets the labels
        "wrong": '''
def move_batch(batch, device):
    features, labels = batch
    return features.to(device), labels
''',
        # moves the batch but turns the labels into floats, as some losses want
        "other_wrong": '''
def move_batch(batch, device):
    features, labels = batch
    return features.to(device), labels.to(device).float()
''',
        # the visible batch has two examples: it only moves batches of that size
        "overfit": '''
def move_batch(batch, device):
    features, labels = batch
    if len(features) != 2:
        return features, labels
    return features.to(device), labels.to(device)
''',
    },
}
