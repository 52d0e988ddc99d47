"""Answers for 03_neural_networks that the reference does not use: each must be graded as described.

ALTERNATIVE: correct, written differently -> full points.
WRONG: a mistake a student plausibly makes -> no points.
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
