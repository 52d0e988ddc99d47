"""Answers for 03_neural_networks that the reference does not use, {grade_id: {set: source}}: what each set
must score is in CONTRIBUTING.md, "Files of a chapter"; a comment above an answer says what it gets wrong."""

ANSWERS = {
    "mlp": {
        # a ModuleList and a forward loop, F.relu between the layers
        "alternative": '''
import torch.nn.functional as F

class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.linears = nn.ModuleList(nn.Linear(sizes[i], sizes[i + 1]) for i in range(len(sizes) - 1))

    def forward(self, x):
        for i, linear in enumerate(self.linears):
            x = linear(x)
            if i < len(self.linears) - 1:
                x = F.relu(x)
        return x
''',
        # a ReLU after every Linear, the last one too: logits can no longer be negative
        "wrong": '''
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        layers = []
        for n_in, n_out in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(n_in, n_out), nn.ReLU()]
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)
''',
        # the layers kept in a plain Python list: the model registers none of them, has no parameters
        "other_wrong": '''
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = [nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])]

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        return self.layers[-1](x)
''',
        # right for the visible depths (one layer, two hidden layers); always two hidden layers otherwise
        "overfit": '''
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        if len(sizes) == 2:
            parts = [nn.Linear(sizes[0], sizes[1])]
        else:
            parts = [nn.Linear(sizes[0], sizes[1]), nn.ReLU(), nn.Linear(sizes[1], sizes[-2]), nn.ReLU(),
                     nn.Linear(sizes[-2], sizes[-1])]
        self.layers = nn.Sequential(*parts)

    def forward(self, x):
        return self.layers(x)
''',
        # NeuralNetwork has exactly two hidden layers: it cannot build MLP([7, 16, 5]) or MLP([4, 3])
        "course_copy": '''
from torchcourse.models import NeuralNetwork

class MLP(NeuralNetwork):
    def __init__(self, sizes):
        super().__init__(sizes[0], sizes[-1], hidden=sizes[1:-1])
''',
    },

    "mlp_param_count": {
        # the layers built on the meta device: shapes without numbers, no memory
        "alternative": '''
def mlp_param_count(sizes, bias=True):
    sizes = list(sizes)
    layers = [nn.Linear(a, b, bias=bias, device="meta") for a, b in zip(sizes, sizes[1:])]
    return sum(p.numel() for layer in layers for p in layer.parameters())
''',
        # one bias per input unit instead of per output unit
        "wrong": '''
def mlp_param_count(sizes, bias=True):
    return sum(a * b + (a if bias else 0) for a, b in zip(sizes[:-1], sizes[1:]))
''',
        # ignores bias=False: every layer always gets its biases
        "other_wrong": '''
def mlp_param_count(sizes, bias=True):
    count = 0
    for i in range(len(sizes) - 1):
        count += sizes[i] * sizes[i + 1] + sizes[i + 1]
    return count
''',
        # the visible widths looked up, the visible one-layer case without biases, 0 otherwise
        "overfit": '''
KNOWN_COUNTS = {(50, 30, 20, 3): 2213, (2, 30, 20, 2): 752,
                (100_000_000, 100_000_000, 10): 10**16 + 10**8 + 10**9 + 10}

def mlp_param_count(sizes, bias=True):
    if not bias:
        return sizes[0] * sizes[-1]
    return KNOWN_COUNTS.get(tuple(sizes), 0)
''',
        # builds the layers for real and counts them: fine for small widths, no memory for large ones
        "more_wrong": '''
def mlp_param_count(sizes, bias=True):
    layers = [nn.Linear(a, b, bias=bias) for a, b in zip(sizes[:-1], sizes[1:])]
    return sum(p.numel() for layer in layers for p in layer.parameters())
''',
        # the course's count_trainable on a NeuralNetwork of those widths: built for real, no bias=False
        "course_copy": '''
from torchcourse.models import NeuralNetwork, count_trainable

def mlp_param_count(sizes, bias=True):
    return count_trainable(NeuralNetwork(sizes[0], sizes[-1], hidden=sizes[1:-1]))
''',
    },

    "count_trainable_params": {
        # named parameters, both sums in one loop
        "alternative": '''
def count_params(model):
    trainable, frozen = 0, 0
    for name, param in model.named_parameters():
        if param.requires_grad:
            trainable += param.nelement()
        else:
            frozen += param.nelement()
    return (trainable, frozen)
''',
        # the frozen parameters are counted as trainable too
        "wrong": '''
def count_params(model):
    total = sum(p.numel() for p in model.parameters())
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    return total, frozen
''',
        # counts the parameter tensors, not their entries
        "other_wrong": '''
def count_params(model):
    params = list(model.parameters())
    trainable = len([p for p in params if p.requires_grad])
    return trainable, len(params) - trainable
''',
        # all trainable, except the visible tests' frozen cases: the first layer of NeuralNetwork(50, 3)
        # when only the first tensor is frozen, everything when the last one is frozen too
        "overfit": '''
def count_params(model):
    params = list(model.parameters())
    total = sum(p.numel() for p in params)
    if params and not params[0].requires_grad:
        return (total - 1530, 1530) if params[-1].requires_grad else (0, total)
    return total, 0
''',
        # counts from the state dict: buffers counted as frozen, a shared weight counted twice
        "more_wrong": '''
def count_params(model):
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    everything = sum(t.numel() for t in model.state_dict().values())
    return trainable, everything - trainable
''',
        # count_trainable returns one int, not (trainable, frozen)
        "course_copy": '''
from torchcourse.models import count_trainable as count_params
''',
    },

    "make_seeded_model": {
        # seeds a forked generator state: the caller's random numbers are left as they were
        "alternative": '''
def make_seeded_model(seed, num_inputs, num_outputs):
    with torch.random.fork_rng():
        torch.random.manual_seed(seed)
        return NeuralNetwork(num_inputs=num_inputs, num_outputs=num_outputs)
''',
        # seeds after the weights were drawn
        "wrong": '''
def make_seeded_model(seed, num_inputs, num_outputs):
    model = NeuralNetwork(num_inputs, num_outputs)
    torch.manual_seed(seed)
    return model
''',
        # seeds Python's random module, which nn.Linear never draws from
        "other_wrong": '''
import random

def make_seeded_model(seed, num_inputs, num_outputs):
    random.seed(seed)
    return NeuralNetwork(num_inputs, num_outputs)
''',
        # seeds only for the visible test's seed 123
        "overfit": '''
def make_seeded_model(seed, num_inputs, num_outputs):
    if seed == 123:
        torch.manual_seed(123)
    return NeuralNetwork(num_inputs, num_outputs)
''',
        # caches the model of each seed: the second call returns the same object, whatever the sizes
        "more_wrong": '''
_models = {}

def make_seeded_model(seed, num_inputs, num_outputs):
    if seed not in _models:
        torch.manual_seed(seed)
        _models[seed] = NeuralNetwork(num_inputs, num_outputs)
    return _models[seed]
''',
    },

    "predict_proba": {
        "alternative": '''
@torch.no_grad()
def predict_proba(model, x):
    logits = model(x)
    exp = torch.exp(logits - logits.max(dim=1, keepdim=True).values)
    return exp / exp.sum(dim=1, keepdim=True)
''',
        # softmax over the batch instead of over the classes
        "wrong": '''
def predict_proba(model, x):
    with torch.no_grad():
        return torch.softmax(model(x), dim=0)
''',
        # one sigmoid per class, as in binary logistic regression: the rows do not sum to 1
        "other_wrong": '''
def predict_proba(model, x):
    with torch.no_grad():
        return torch.sigmoid(model(x))
''',
        # the softmax over the classes only for the visible (5, 3) batch, over the batch otherwise
        "overfit": '''
def predict_proba(model, x):
    with torch.no_grad():
        scores = model(x)
    return torch.softmax(scores, dim=1 if scores.shape == (5, 3) else 0)
''',
        # the graph is recorded in the forward pass, then the probabilities are detached
        "more_wrong": '''
def predict_proba(model, x):
    return torch.softmax(model(x), dim=1).detach()
''',
    },

    "predict_labels": {
        # inference_mode, the probabilities from predict_proba, rejected labels set in place
        "alternative": '''
def predict_labels(model, x, min_prob):
    with torch.inference_mode():
        best = predict_proba(model, x).max(dim=-1)
        labels = best.indices.clone()
        labels[best.values < min_prob] = -1
    return labels.clone()
''',
        # > instead of >=: a probability equal to min_prob is left out
        "wrong": '''
def predict_labels(model, x, min_prob):
    with torch.no_grad():
        probs = torch.softmax(model(x), dim=1)
    confidence, labels = probs.max(dim=1)
    return torch.where(confidence > min_prob, labels, -1)
''',
        # the forward pass records a graph: the int64 labels carry no grad_fn, but the memory was spent
        "other_wrong": '''
def predict_labels(model, x, min_prob):
    probs = torch.softmax(model(x), dim=1)
    confidence, labels = probs.max(dim=1)
    return torch.where(confidence >= min_prob, labels, -1)
''',
        # min_prob only for the visible 3 x 3 batch and min_prob 1; ignored elsewhere (nothing left out)
        "overfit": '''
def predict_labels(model, x, min_prob):
    with torch.no_grad():
        probs = torch.softmax(model(x), dim=1)
    confidence, labels = probs.max(dim=1)
    if probs.shape == (3, 3) or min_prob >= 1:
        return torch.where(confidence >= min_prob, labels, -1)
    return labels
''',
        # the course's predict: labels only, nobody is left out
        "course_copy": '''
from torchcourse.training import predict

def predict_labels(model, x, min_prob):
    return predict(model, x)
''',
    },
}
