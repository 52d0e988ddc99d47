"""Answers for 02_autograd that the reference does not use: each must be graded as described.

ALTERNATIVE: correct, written differently -> full points.
WRONG: a mistake a student plausibly makes -> no points.
"""

ALTERNATIVE = {
    "logistic_gradients": '''
def logistic_gradients(x, w, b, y):
    w_copy = w.clone().detach().requires_grad_()
    b_copy = torch.tensor(b.tolist(), requires_grad=True)
    probs = 1 / (1 + torch.exp(-(w_copy * x + b_copy)))
    loss = -(y * torch.log(probs) + (1 - y) * torch.log(1 - probs)).mean()
    loss.backward()
    return w_copy.grad, b_copy.grad
''',
    "backward_twice": '''
BACKWARD_TWICE = "Raises an error "
''',
    "grad_after_three": '''
GRAD_AFTER_THREE = -0.26948
''',
    "predict_probability": '''
def predict_probability(x, w, b):
    return torch.sigmoid(x * w.detach() + b.detach())
''',
    "chain_rule_grads": '''
def chain_rule_grads(x, y, z):
    inner = 1 + 2 * x * z / torch.sin(y)
    outer = 1 / torch.cosh(torch.log(inner)) ** 2 / inner    # tanh' * ln'
    return (outer * 2 * z / torch.sin(y),
            outer * (-2 * x * z * torch.cos(y) / torch.sin(y) ** 2),
            outer * 2 * x / torch.sin(y))
''',
    "linear_backward": '''
def linear_backward(x, W, b, grad_out):
    grad_x = np.einsum("no,oi->ni", grad_out, W)
    grad_W = np.einsum("no,ni->oi", grad_out, x)
    grad_b = np.einsum("no->o", grad_out)
    return grad_x, grad_W, grad_b
''',
}

WRONG = {
    # sums the per-example losses instead of averaging them
    "logistic_gradients": '''
def logistic_gradients(x, w, b, y):
    w = w.detach().clone().requires_grad_(True)
    b = b.detach().clone().requires_grad_(True)
    loss = F.binary_cross_entropy(torch.sigmoid(x * w + b), y, reduction="sum")
    return torch.autograd.grad(loss, (w, b))
''',
    # forgets that the saved tensors are freed
    "backward_twice": '''
BACKWARD_TWICE = "doubles the gradients"
''',
    # the value of a single pass
    "grad_after_three": '''
GRAD_AFTER_THREE = -0.0898
''',
    # still records the graph
    "predict_probability": '''
def predict_probability(x, w, b):
    return torch.sigmoid(x * w + b)
''',
    # drops the cos(y) factor of the sin node
    "chain_rule_grads": '''
def chain_rule_grads(x, y, z):
    a, b = 2 * x, torch.sin(y)
    c = a / b
    d = z * c
    f = torch.tanh(torch.log(1 + d))
    df_dd = (1 - f**2) / (1 + d)
    return df_dd * z * 2 / b, df_dd * z * (-a / b**2), df_dd * c
''',
    # averages the bias gradient over the batch
    "linear_backward": '''
def linear_backward(x, W, b, grad_out):
    return grad_out @ W, grad_out.T @ x, grad_out.mean(axis=0)
''',
}
