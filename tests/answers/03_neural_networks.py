"""Answers for 03_neural_networks that the reference does not use: each must be graded as described.

ALTERNATIVE: correct, written differently -> full points.
WRONG: a mistake a student plausibly makes -> no points.
OTHER_WRONG: a second plausible mistake, of another kind -> no points.
OVERFIT: passes the visible asserts by special-casing their inputs, wrong elsewhere -> no points.
"""

ALTERNATIVE = {
    "mlp": '''
import torch.nn.functional as F

class MLP(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super().__init__()
        self.hidden1 = nn.Linear(num_inputs, 30)
        self.hidden2 = nn.Linear(30, 20)
        self.out = nn.Linear(20, num_outputs)

    def forward(self, x):
        x = F.relu(self.hidden1(x))
        x = torch.relu(self.hidden2(x))
        return self.out(x)
''',
    "params_2_in_2_out": '''
PARAMS_2_IN_2_OUT = sum(p.numel() for p in NeuralNetwork(2, 2).parameters())
''',
    "mlp_param_count": '''
def mlp_param_count(sizes, bias=True):
    sizes = list(sizes)
    if len(sizes) < 2:
        return 0
    weights = sum(a * b for a, b in zip(sizes, sizes[1:]))
    return weights + (sum(sizes[1:]) if bias else 0)
''',
    "count_trainable_params": '''
def count_trainable_params(model):
    total = 0
    for name, param in model.named_parameters():
        if param.requires_grad:
            total += param.nelement()
    return total
''',
    "make_seeded_model": '''
def make_seeded_model(seed, num_inputs, num_outputs):
    generator_state = torch.random.manual_seed(seed)
    model = NeuralNetwork(num_inputs=num_inputs, num_outputs=num_outputs)
    return model
''',
    "predict_proba": '''
@torch.no_grad()
def predict_proba(model, x):
    logits = model(x)
    exp = torch.exp(logits - logits.max(dim=1, keepdim=True).values)
    return exp / exp.sum(dim=1, keepdim=True)
''',
    "predict_labels": '''
def predict_labels(model, x):
    with torch.inference_mode():
        probabilities = torch.softmax(model(x), dim=-1)
    return probabilities.max(dim=1).indices.clone()
''',
}

WRONG = {
    # a ReLU after the output layer: logits can no longer be negative
    "mlp": '''
class MLP(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(num_inputs, 30), nn.ReLU(),
            nn.Linear(30, 20), nn.ReLU(),
            nn.Linear(20, num_outputs), nn.ReLU(),
        )

    def forward(self, x):
        return self.layers(x)
''',
    # weights only, biases forgotten
    "params_2_in_2_out": '''
PARAMS_2_IN_2_OUT = 2 * 30 + 30 * 20 + 20 * 2
''',
    # one bias per input unit instead of per output unit
    "mlp_param_count": '''
def mlp_param_count(sizes, bias=True):
    return sum(a * b + (a if bias else 0) for a, b in zip(sizes[:-1], sizes[1:]))
''',
    # counts frozen parameters too
    "count_trainable_params": '''
def count_trainable_params(model):
    return sum(p.numel() for p in model.parameters())
''',
    # seeds after the weights were drawn
    "make_seeded_model": '''
def make_seeded_model(seed, num_inputs, num_outputs):
    model = NeuralNetwork(num_inputs, num_outputs)
    torch.manual_seed(seed)
    return model
''',
    # softmax over the batch instead of over the classes
    "predict_proba": '''
def predict_proba(model, x):
    with torch.no_grad():
        return torch.softmax(model(x), dim=0)
''',
    # argmax without dim: one index into the flattened tensor
    "predict_labels": '''
def predict_labels(model, x):
    with torch.no_grad():
        return model(x).argmax()
''',
}

OTHER_WRONG = {
    # the hidden widths swapped: 20 units first, then 30
    "mlp": '''
class MLP(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(num_inputs, 20), nn.ReLU(),
            nn.Linear(20, 30), nn.ReLU(),
            nn.Linear(30, num_outputs),
        )

    def forward(self, x):
        return self.net(x)
''',
    # changed the outputs to 2 but kept the 50 inputs of the earlier example
    "params_2_in_2_out": '''
PARAMS_2_IN_2_OUT = (50 * 30 + 30) + (30 * 20 + 20) + (20 * 2 + 2)
''',
    # ignores bias=False: every layer always gets its biases
    "mlp_param_count": '''
def mlp_param_count(sizes, bias=True):
    count = 0
    for i in range(len(sizes) - 1):
        count += sizes[i] * sizes[i + 1] + sizes[i + 1]
    return count
''',
    # counts the trainable parameter tensors, not their entries
    "count_trainable_params": '''
def count_trainable_params(model):
    return len([p for p in model.parameters() if p.requires_grad])
''',
    # seeds Python's random module, which nn.Linear never draws from
    "make_seeded_model": '''
import random

def make_seeded_model(seed, num_inputs, num_outputs):
    random.seed(seed)
    return NeuralNetwork(num_inputs, num_outputs)
''',
    # one sigmoid per class, as in binary logistic regression: the rows do not sum to 1
    "predict_proba": '''
def predict_proba(model, x):
    with torch.no_grad():
        return torch.sigmoid(model(x))
''',
    # max instead of argmax: the largest score of each row, not its class
    "predict_labels": '''
def predict_labels(model, x):
    with torch.no_grad():
        return model(x).max(dim=1).values
''',
}

OVERFIT = {
    # the real network only for the visible test's 50 inputs and 3 outputs; no ReLUs otherwise
    "mlp": '''
class MLP(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super().__init__()
        if (num_inputs, num_outputs) == (50, 3):
            parts = [nn.Linear(50, 30), nn.ReLU(), nn.Linear(30, 20), nn.ReLU(), nn.Linear(20, 3)]
        else:
            parts = [nn.Linear(num_inputs, 30), nn.Linear(30, 20), nn.Linear(20, num_outputs)]
        self.layers = nn.Sequential(*parts)

    def forward(self, x):
        return self.layers(x)
''',
    # a number the visible asserts accept: an int below 2213 that is not 700
    "params_2_in_2_out": '''
PARAMS_2_IN_2_OUT = 2213 - 1
''',
    # the two visible widths looked up, the visible one-layer case without biases, 0 otherwise
    "mlp_param_count": '''
KNOWN_COUNTS = {(50, 30, 20, 3): 2213, (2, 30, 20, 2): 752}

def mlp_param_count(sizes, bias=True):
    if not bias:
        return sizes[0] * sizes[-1]
    return KNOWN_COUNTS.get(tuple(sizes), 0)
''',
    # all parameters, minus the visible test's frozen first layer when the first tensor is frozen
    "count_trainable_params": '''
def count_trainable_params(model):
    total = sum(p.numel() for p in model.parameters())
    params = list(model.parameters())
    if params and not params[0].requires_grad:
        total -= 30 * 50 + 30
    return total
''',
    # seeds only for the visible test's seed 123
    "make_seeded_model": '''
def make_seeded_model(seed, num_inputs, num_outputs):
    if seed == 123:
        torch.manual_seed(123)
    return NeuralNetwork(num_inputs, num_outputs)
''',
    # the softmax over the classes only for the visible (5, 3) batch, over the batch otherwise
    "predict_proba": '''
def predict_proba(model, x):
    with torch.no_grad():
        scores = model(x)
    return torch.softmax(scores, dim=1 if scores.shape == (5, 3) else 0)
''',
    # the visible answer for a 3 x 3 batch, class 0 for everything else
    "predict_labels": '''
def predict_labels(model, x):
    with torch.no_grad():
        scores = model(x)
    if scores.shape == (3, 3):
        return torch.tensor([1, 0, 2])
    return torch.zeros(len(scores), dtype=torch.int64)
''',
}
