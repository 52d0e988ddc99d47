"""Answers for 00_setup that the reference does not use, {grade_id: {set: source}}: what each set
must score is in CONTRIBUTING.md, "Files of a chapter"; a comment above an answer says what it gets wrong."""

ANSWERS = {
    "tensor_bytes": {
        # a tensor on the meta device has a shape and a dtype but no data: its nbytes costs nothing
        "alternative": '''
def tensor_bytes(shape, dtype):
    return torch.empty(tuple(shape), dtype=dtype, device="meta").nbytes
''',
        # every number taken for a float32 of 4 bytes
        "wrong": '''
import math

def tensor_bytes(shape, dtype):
    return 4 * math.prod(shape)
''',
        # the bytes from torch.finfo, which knows only floating-point dtypes: bool and integers raise
        "other_wrong": '''
import math

def tensor_bytes(shape, dtype):
    return math.prod(shape) * torch.finfo(dtype).bits // 8
''',
        # the six cases of the visible test looked up, 4 bytes per element for every other one
        "overfit": '''
import math

SIZES_SEEN = {((3, 4), torch.float32): 48, ((3, 4), torch.float64): 96, ((2, 5), torch.int64): 80,
        ((7,), torch.bool): 7, ((), torch.float16): 2, ((4, 0, 3), torch.float32): 0}

def tensor_bytes(shape, dtype):
    return SIZES_SEEN.get((tuple(shape), dtype), 4 * math.prod(shape))
''',
        # creates the tensor to measure it: right for every shape that fits in memory, and a RuntimeError
        # ("can't allocate memory") for one that does not, the very tensor the exercise asks about
        "more_wrong": '''
def tensor_bytes(shape, dtype):
    t = torch.empty(tuple(shape), dtype=dtype)
    return t.element_size() * t.nelement()
''',
    },

    "torch_build": {
        # no regular expressions: digits taken off the front of each part, the tag read by its prefix
        "alternative": '''
def torch_build(version):
    number, tag = (version.split("+", 1) + [""])[:2]
    parts = []
    for piece in number.split(".")[:3]:
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        parts.append(int(digits))
    if tag == "cpu":
        platform = "cpu"
    elif tag.startswith("cu") and tag[2:].isdigit():
        platform = "cuda " + tag[2:-1] + "." + tag[-1]
    elif tag.startswith("rocm") and tag[4:].replace(".", "").isdigit():
        platform = "rocm " + tag[4:]
    else:
        platform = None
    return tuple(parts), platform
''',
        # the first two digits of a CUDA tag taken for the major version: cu92 becomes "92."
        "wrong": '''
import re

def torch_build(version):
    number, _, tag = version.partition("+")
    release = tuple(int(part) for part in re.match(r"(\\d+)\\.(\\d+)\\.(\\d+)", number).groups())
    if tag == "cpu":
        return release, "cpu"
    if tag.startswith("cu"):
        return release, f"cuda {tag[2:4]}.{tag[4:]}"
    if tag.startswith("rocm"):
        return release, "rocm " + tag[4:]
    return release, None
''',
        # each part of the number read with int(): "0rc1" of a pre-release raises ValueError
        "other_wrong": '''
def torch_build(version):
    number, _, tag = version.partition("+")
    release = tuple(int(part) for part in number.split(".")[:3])
    if tag == "cpu":
        return release, "cpu"
    if tag.startswith("cu"):
        return release, f"cuda {int(tag[2:-1])}.{tag[-1]}"
    if tag.startswith("rocm"):
        return release, "rocm " + tag[4:]
    return release, None
''',
        # the eight versions of the visible test looked up; elsewhere the numbers, and no platform
        "overfit": '''
BUILDS_SEEN = {"2.5.1+cu121": ((2, 5, 1), "cuda 12.1"), "2.14.1+cpu": ((2, 14, 1), "cpu"),
        "2.9.0+cu130": ((2, 9, 0), "cuda 13.0"), "1.4.0+cu92": ((1, 4, 0), "cuda 9.2"),
        "2.3.1+rocm6.0": ((2, 3, 1), "rocm 6.0"), "2.5.0rc1": ((2, 5, 0), None),
        "2.6.0.dev20241001+cpu": ((2, 6, 0), "cpu"), "2.5.0a0+git1a2b3c4": ((2, 5, 0), None)}

def torch_build(version):
    if version in BUILDS_SEEN:
        return BUILDS_SEEN[version]
    return tuple(int(part) for part in version.split("+")[0].split(".")[:3]), None
''',
        # the environment check's reading of a version (torchcourse.doctor), which keeps every digit
        # of a part: "2.5.0rc1" becomes (2, 5, 1); the platform read correctly
        "course_copy": '''
from torchcourse.doctor import _as_tuple

def torch_build(version):
    tag = version.partition("+")[2]
    if tag == "cpu":
        platform = "cpu"
    elif tag.startswith("cu") and tag[2:].isdigit():
        platform = f"cuda {int(tag[2:-1])}.{tag[-1]}"
    elif tag.startswith("rocm"):
        platform = "rocm " + tag[4:]
    else:
        platform = None
    return _as_tuple(version)[:3], platform
''',
    },

    "devices_offered": {
        # the list built back to front, from the cpu
        "alternative": '''
def devices_offered(torch_module):
    devices = ["cpu"]
    if hasattr(torch_module.backends, "mps") and torch_module.backends.mps.is_available():
        devices.insert(0, "mps")
    if torch_module.cuda.is_available():
        count = torch_module.cuda.device_count()
        devices[:0] = ["cuda:" + str(i) for i in range(count)]
    return devices
''',
        # one GPU at most: "cuda:0", however many the machine has
        "wrong": '''
def devices_offered(torch_module):
    devices = []
    if torch_module.cuda.is_available():
        devices.append("cuda:0")
    if hasattr(torch_module.backends, "mps") and torch_module.backends.mps.is_available():
        devices.append("mps")
    return devices + ["cpu"]
''',
        # asks the torch it imported, not the module it was given: the stand-ins are never asked
        "other_wrong": '''
def devices_offered(torch_module):
    devices = [f"cuda:{i}" for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    if torch.backends.mps.is_available():
        devices.append("mps")
    return devices + ["cpu"]
''',
        # the visible machine has two GPUs: any machine with CUDA gets those two
        "overfit": '''
def devices_offered(torch_module):
    devices = ["cuda:0", "cuda:1"] if torch_module.cuda.is_available() else []
    if hasattr(torch_module.backends, "mps") and torch_module.backends.mps.is_available():
        devices.append("mps")
    return devices + ["cpu"]
''',
        # asks torch.backends.mps without looking whether it is there: an old PyTorch raises AttributeError
        "more_wrong": '''
def devices_offered(torch_module):
    devices = []
    if torch_module.cuda.is_available():
        devices += [f"cuda:{i}" for i in range(torch_module.cuda.device_count())]
    if torch_module.backends.mps.is_available():
        devices.append("mps")
    return devices + ["cpu"]
''',
        # counts the GPUs without asking whether CUDA works: is_available() asks the CUDA runtime, while
        # device_count() may count through NVML, so with a driver too old for the build it lists GPUs it cannot use
        "found_wrong": '''
def devices_offered(torch_module):
    devices = [f"cuda:{i}" for i in range(torch_module.cuda.device_count())]
    if hasattr(torch_module.backends, "mps") and torch_module.backends.mps.is_available():
        devices.append("mps")
    return devices + ["cpu"]
''',
    },

    "pick_device": {
        # torch.device parses every name; the machine's devices of the wanted type, the first one taken
        "alternative": '''
def pick_device(preferences, offered, float64=False):
    machine = [torch.device(name) for name in offered]
    for name in preferences:
        wanted = torch.device(name)
        if wanted.type == "mps" and float64:
            continue
        matches = [d for d in machine if d.type == wanted.type and wanted.index in (None, d.index)]
        if matches:
            return matches[0]
    raise ValueError("no device asked for is offered")
''',
        # a preference must be offered word for word: "cuda" never matches "cuda:0"
        "wrong": '''
def pick_device(preferences, offered, float64=False):
    for wanted in preferences:
        if float64 and wanted == "mps":
            continue
        if wanted in offered:
            return torch.device(wanted)
    raise ValueError("no device asked for is offered")
''',
        # the machine's order decides (its best device first) instead of the caller's
        "other_wrong": '''
def pick_device(preferences, offered, float64=False):
    for name in offered:
        kind = name.split(":")[0]
        if float64 and kind == "mps":
            continue
        if name in preferences or kind in preferences:
            return torch.device(name)
    raise ValueError("no device asked for is offered")
''',
        # branches on the visible test's wishes and machines
        "overfit": '''
def pick_device(preferences, offered, float64=False):
    if preferences == ["cuda:3"]:
        raise ValueError("cuda:3 is not offered")
    if preferences[0] == "cpu":
        return torch.device("cpu")
    if "cuda:1" in preferences:
        return torch.device("cuda:1")
    if offered[0] == "cuda:0":
        return torch.device("cuda:0")
    return torch.device("cpu" if float64 else offered[0])
''',
        # falls back to the cpu when nothing asked for is offered, instead of raising
        "more_wrong": '''
def pick_device(preferences, offered, float64=False):
    for wanted in preferences:
        kind = wanted.split(":")[0]
        if float64 and kind == "mps":
            continue
        for name in offered:
            if name == wanted or (":" not in wanted and name.split(":")[0] == kind):
                return torch.device(name)
    return torch.device("cpu")
''',
        # takes "mps" out of the caller's list of wishes when float64 is needed: the right device, and the
        # caller's list one wish shorter afterwards
        "found_wrong": '''
def pick_device(preferences, offered, float64=False):
    if float64 and "mps" in preferences:
        preferences.remove("mps")
    for wanted in preferences:
        kind = wanted.split(":")[0]
        for name in offered:
            if name == wanted or (":" not in wanted and name.split(":")[0] == kind):
                return torch.device(name)
    raise ValueError("no device asked for is offered")
''',
        # the course's best_device, which asks this machine and reads neither argument
        "course_copy": '''
from torchcourse.devices import best_device

def pick_device(preferences, offered, float64=False):
    return best_device()
''',
    },

    "to_device": {
        # structural pattern matching instead of isinstance
        "alternative": '''
def to_device(batch, device):
    match batch:
        case torch.Tensor():
            return batch.to(device=device)
        case dict():
            return dict((key, to_device(value, device)) for key, value in batch.items())
        case list():
            return list(map(lambda item: to_device(item, device), batch))
        case tuple():
            return tuple(to_device(item, device) for item in batch)
        case _:
            return batch
''',
        # one level only: the tensors inside a nested list, tuple or dict stay where they were
        "wrong": '''
def to_device(batch, device):
    def move(x):
        return x.to(device) if isinstance(x, torch.Tensor) else x
    if isinstance(batch, dict):
        return {key: move(value) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(move(item) for item in batch)
    return move(batch)
''',
        # refills the dicts and lists it was given: the caller's batch moves too
        "other_wrong": '''
def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        for key in batch:
            batch[key] = to_device(batch[key], device)
        return batch
    if isinstance(batch, list):
        for i, item in enumerate(batch):
            batch[i] = to_device(item, device)
        return batch
    if isinstance(batch, tuple):
        return tuple(to_device(item, device) for item in batch)
    return batch
''',
        # the visible structures only: dicts inside dicts, tuples of tuples, and a list to the cpu
        "overfit": '''
def to_device(batch, device):
    if isinstance(batch, dict):
        return {key: value.to(device) if isinstance(value, torch.Tensor)
                else to_device(value, device) if isinstance(value, dict) else value
                for key, value in batch.items()}
    if isinstance(batch, tuple):
        return tuple(to_device(item, device) if isinstance(item, tuple) else item.to(device) for item in batch)
    if isinstance(batch, list):
        return list(batch)
    return batch
''',
        # every list and tuple comes back as a list
        "more_wrong": '''
def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {key: to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return [to_device(item, device) for item in batch]
    return batch
''',
        # a CUDA device reached by .cuda(), which goes to the current GPU (cuda:0 by default), whatever index was asked for
        "found_wrong": '''
def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.cuda() if str(device).startswith("cuda") else batch.to(device)
    if isinstance(batch, dict):
        return {key: to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, list):
        return [to_device(item, device) for item in batch]
    if isinstance(batch, tuple):
        return tuple(to_device(item, device) for item in batch)
    return batch
''',
    },
}
