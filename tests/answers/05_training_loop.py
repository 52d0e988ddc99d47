"""Answers for 05_training_loop that the reference does not use: each must be graded as described.

ALTERNATIVE: correct, written differently -> full points.
WRONG: a mistake a student plausibly makes -> no points.
"""

ALTERNATIVE = {
    "train_step": '''
def train_step(model, optimizer, features, labels):
    model.zero_grad(set_to_none=True)
    loss = nn.CrossEntropyLoss()(model(features), labels)
    loss.backward()
    optimizer.step()
    return float(loss.detach())
''',
    "predict_labels": '''
@torch.inference_mode()
def predict_labels(model, features):
    mode = model.training
    model.train(False)
    try:
        probabilities = torch.softmax(model(features), dim=-1)
        return torch.argmax(probabilities, dim=-1)
    finally:
        model.train(mode)
''',
    "accuracy": '''
def accuracy(model, loader):
    mode = model.training
    model.eval()
    hits = []
    with torch.no_grad():
        for x, y in loader:
            hits.append(model(x).argmax(1) == y)
    model.train(mode)
    return torch.cat(hits).float().mean().item()
''',
    "fit_linear_regression": '''
def fit_linear_regression(X, y, epochs, lr):
    model = nn.Linear(in_features=X.shape[-1], out_features=y.shape[-1])
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    criterion = nn.MSELoss()
    history = []
    for epoch in range(epochs):
        prediction = model(X)
        loss = criterion(prediction, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append(float(loss))
    return model, history
''',
    "clipped_train_step": '''
def clipped_train_step(model, optimizer, features, labels, max_norm):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(features), labels)
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
    scale = min(1.0, max_norm / (norm.item() + 1e-6))
    for g in grads:
        g.mul_(scale)
    optimizer.step()
    return float(loss), float(norm)
''',
    "checkpoint": '''
def save_checkpoint(path, model, optimizer, step):
    torch.save([copy.deepcopy(model.state_dict()), copy.deepcopy(optimizer.state_dict()), int(step)], path)


def load_checkpoint(path, model, optimizer):
    model_state, optimizer_state, step = torch.load(path)
    model.load_state_dict(model_state)
    optimizer.load_state_dict(optimizer_state)
    return step
''',
}

WRONG = {
    # forgets zero_grad: the stale gradients are added to the new ones
    "train_step": '''
def train_step(model, optimizer, features, labels):
    loss = F.cross_entropy(model(features), labels)
    loss.backward()
    optimizer.step()
    return loss.item()
''',
    # no eval(): dropout stays on while predicting
    "predict_labels": '''
def predict_labels(model, features):
    with torch.no_grad():
        return model(features).argmax(dim=1)
''',
    # divides by len(loader.dataset), not by the examples counted: wrong as soon as the loader
    # yields fewer (drop_last=True, a sampler over part of the data set)
    "accuracy": '''
def accuracy(model, loader):
    was_training = model.training
    model.eval()
    correct = 0
    with torch.no_grad():
        for features, labels in loader:
            correct += (model(features).argmax(dim=1) == labels).sum().item()
    model.train(was_training)
    return correct / len(loader.dataset)
''',
    # the learning rate of the visible test hard-coded: `lr` is ignored
    "fit_linear_regression": '''
def fit_linear_regression(X, y, epochs, lr):
    model = nn.Linear(X.shape[1], y.shape[1])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(epochs):
        optimizer.zero_grad()
        loss = F.mse_loss(model(X), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses
''',
    # clips after the step: the update already used the unclipped gradients
    "clipped_train_step": '''
def clipped_train_step(model, optimizer, features, labels, max_norm):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(features), labels)
    loss.backward()
    optimizer.step()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    return loss.item(), norm.item()
''',
    # saves the weights only: the resumed optimizer starts from scratch
    "checkpoint": '''
def save_checkpoint(path, model, optimizer, step):
    torch.save({"model": model.state_dict(), "step": step}, path)


def load_checkpoint(path, model, optimizer):
    checkpoint = torch.load(path, weights_only=True)
    model.load_state_dict(checkpoint["model"])
    return checkpoint["step"]
''',
}
