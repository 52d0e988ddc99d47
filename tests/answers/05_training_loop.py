"""Answers for 05_training_loop that the reference does not use, {grade_id: {set: source}}: what each set
must score is in CONTRIBUTING.md, "Files of a chapter"; a comment above an answer says what it gets wrong."""

ANSWERS = {
    "train_step": {
        "alternative": '''
def train_step(model, optimizer, features, labels):
    model.zero_grad(set_to_none=True)
    logits = model(features)
    loss = nn.CrossEntropyLoss()(logits, labels)
    hits = int(torch.count_nonzero(logits.detach().max(dim=-1).indices.eq(labels)))
    loss.backward()
    optimizer.step()
    return float(loss.detach()), hits
''',
        # forgets zero_grad: the stale gradients are added to the new ones
        "wrong": '''
def train_step(model, optimizer, features, labels):
    logits = model(features)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
    return loss.item(), (logits.argmax(dim=1) == labels).sum().item()
''',
        # zero_grad between backward and step: the step finds no gradients and changes nothing
        "other_wrong": '''
def train_step(model, optimizer, features, labels):
    logits = model(features)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss.item(), int((logits.argmax(dim=1) == labels).sum())
''',
        # the visible test's SGD steps done by hand (lr 0.5, or 10 for its linear model), whatever optimizer it is given
        "overfit": '''
def train_step(model, optimizer, features, labels):
    for p in model.parameters():
        p.grad = None
    logits = model(features)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    lr = 10.0 if isinstance(model, nn.Linear) else 0.5
    with torch.no_grad():
        for p in model.parameters():
            p -= lr * p.grad
    return loss.item(), (logits.argmax(dim=1) == labels).sum().item()
''',
        # counts the correct examples with a second forward pass, after the update
        "more_wrong": '''
def train_step(model, optimizer, features, labels):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(features), labels)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        correct = (model(features).argmax(dim=1) == labels).sum().item()
    return loss.item(), correct
''',
        "course_copy": '''
from torchcourse.training import train_step
''',
    },

    "predict_labels": {
        "alternative": '''
@torch.inference_mode()
def predict_labels(model, features):
    mode = model.training
    model.train(False)
    try:
        logits = model(features)
        labels = torch.argmax(logits, dim=-1)
        log_p = logits.gather(-1, labels.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)
        return labels, log_p.exp()
    finally:
        model.train(mode)
''',
        # no eval(): dropout stays on while predicting
        "wrong": '''
def predict_labels(model, features):
    with torch.no_grad():
        probabilities = torch.softmax(model(features), dim=1)
    return probabilities.argmax(dim=1), probabilities.max(dim=1).values
''',
        # detaches the result instead of not recording: the forward pass still builds a graph
        "other_wrong": '''
def predict_labels(model, features):
    was_training = model.training
    model.eval()
    probabilities = torch.softmax(model(features), dim=1).detach()
    model.train(was_training)
    confidence, labels = probabilities.max(dim=1)
    return labels, confidence
''',
        # assumes every model arrives in training mode, as the visible test's do
        "overfit": '''
def predict_labels(model, features):
    model.eval()
    with torch.no_grad():
        probabilities = torch.softmax(model(features), dim=1)
    model.train()
    return probabilities.argmax(dim=1), probabilities.amax(dim=1)
''',
        # the softmax over the rows (dim=0) instead of the classes
        "more_wrong": '''
def predict_labels(model, features):
    was_training = model.training
    model.eval()
    with torch.no_grad():
        logits = model(features)
    model.train(was_training)
    return logits.argmax(dim=1), torch.softmax(logits, dim=0).max(dim=1).values
''',
        "course_copy": '''
from torchcourse.training import predict as predict_labels
''',
    },

    "accuracy": {
        "alternative": '''
def accuracy(model, loader, k):
    mode = model.training
    model.eval()
    hits = []
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            rank = (logits > logits.gather(1, y[:, None])).sum(dim=1)   # classes ahead of the label
            hits.append(rank < k)
    model.train(mode)
    return torch.cat(hits).double().mean().item()
''',
        # divides by len(loader.dataset), not by the examples counted: wrong as soon as the loader
        # yields fewer (drop_last=True, a sampler over part of the data set)
        "wrong": '''
def accuracy(model, loader, k):
    was_training = model.training
    model.eval()
    correct = 0
    with torch.no_grad():
        for features, labels in loader:
            top = model(features).topk(k, dim=1).indices
            correct += (top == labels[:, None]).any(dim=1).sum().item()
    model.train(was_training)
    return correct / len(loader.dataset)
''',
        # averages the per-batch accuracies: a small last batch weighs as much as a full one
        "other_wrong": '''
def accuracy(model, loader, k):
    was_training = model.training
    model.eval()
    per_batch = []
    with torch.no_grad():
        for features, labels in loader:
            top = model(features).topk(k, dim=1).indices
            per_batch.append((top == labels.unsqueeze(1)).any(dim=1).float().mean().item())
    model.train(was_training)
    return sum(per_batch) / len(per_batch)
''',
        # divides by len(loader.dataset), or by the full batches with drop_last: right for the
        # visible loaders, wrong for a sampler that draws part of the data set
        "overfit": '''
def accuracy(model, loader, k):
    mode = model.training
    model.eval()
    hits = 0
    with torch.no_grad():
        for x, y in loader:
            hits += int((model(x).topk(k, dim=1).indices == y[:, None]).any(dim=1).sum())
    model.train(mode)
    seen = len(loader) * loader.batch_size if loader.drop_last else len(loader.dataset)
    return hits / seen
''',
        # counts the classes whose logit is >= the label's: the label itself is counted, one too many
        "more_wrong": '''
def accuracy(model, loader, k):
    was_training = model.training
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for features, labels in loader:
            logits = model(features)
            ahead = (logits >= logits.gather(1, labels.unsqueeze(1))).sum(dim=1)
            correct += (ahead < k).sum().item()
            total += len(labels)
    model.train(was_training)
    return correct / total
''',
        "course_copy": '''
from torchcourse import training

def accuracy(model, loader, k):
    return training.accuracy(model, loader)
''',
    },

    "fit_linear_regression": {
        "alternative": '''
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
        # the learning rate of the visible test hard-coded: `lr` is ignored
        "wrong": '''
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
        # never zeroes the gradients: each step adds the new gradient to all the old ones
        "other_wrong": '''
def fit_linear_regression(X, y, epochs, lr):
    model = nn.Linear(X.shape[1], y.shape[1])
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        loss = F.mse_loss(model(X), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses
''',
        # trains only on data of the visible test's shape (100, 5); anything else stays untrained
        "overfit": '''
def fit_linear_regression(X, y, epochs, lr):
    model = nn.Linear(X.shape[1], y.shape[1])
    if tuple(X.shape) != (100, 5):
        return model, [0.0] * epochs
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        optimizer.zero_grad()
        loss = F.mse_loss(model(X), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses
''',
    },

    "clipped_train_step": {
        "alternative": '''
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
        # clips after the step: the update already used the unclipped gradients
        "wrong": '''
def clipped_train_step(model, optimizer, features, labels, max_norm):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(features), labels)
    loss.backward()
    optimizer.step()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    return loss.item(), norm.item()
''',
        # reports the norm after clipping (at most max_norm), not the one measured before
        "other_wrong": '''
def clipped_train_step(model, optimizer, features, labels, max_norm):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(features), labels)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))
    optimizer.step()
    return loss.item(), norm.item()
''',
        # clips to the visible test's max_norm of 1.0, whatever max_norm is given
        "overfit": '''
def clipped_train_step(model, optimizer, features, labels, max_norm):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(features), labels)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return float(loss), float(norm)
''',
        # clips every parameter's gradient on its own, not all of them together
        "more_wrong": '''
def clipped_train_step(model, optimizer, features, labels, max_norm):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(features), labels)
    loss.backward()
    norms = [torch.nn.utils.clip_grad_norm_(p, max_norm) for p in model.parameters() if p.grad is not None]
    optimizer.step()
    return loss.item(), torch.linalg.vector_norm(torch.stack(norms)).item()
''',
    },

    "checkpoint": {
        "alternative": '''
def save_checkpoint(path, model, optimizer, scheduler, step):
    states = [copy.deepcopy(part.state_dict()) for part in (model, optimizer, scheduler)]
    torch.save(states + [int(step)], path)


def load_checkpoint(path, model, optimizer, scheduler):
    *states, step = torch.load(path)
    for part, state in zip((scheduler, optimizer, model), reversed(states)):
        part.load_state_dict(state)
    return step
''',
        # saves the weights only: the resumed optimizer starts from scratch
        "wrong": '''
def save_checkpoint(path, model, optimizer, scheduler, step):
    torch.save({"model": model.state_dict(), "step": step}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    checkpoint = torch.load(path, weights_only=True)
    model.load_state_dict(checkpoint["model"])
    return checkpoint["step"]
''',
        # keeps only the optimizer's running averages: the loaded optimizer keeps its own learning rate
        "other_wrong": '''
def save_checkpoint(path, model, optimizer, scheduler, step):
    torch.save({"weights": model.state_dict(), "moments": optimizer.state_dict()["state"],
                "schedule": scheduler.state_dict(), "step": step}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    saved = torch.load(path, weights_only=True)
    model.load_state_dict(saved["weights"])
    state = optimizer.state_dict()
    state["state"] = saved["moments"]
    optimizer.load_state_dict(state)
    scheduler.load_state_dict(saved["schedule"])
    return saved["step"]
''',
        # no step saved: reads it back from the scheduler's counter, which the visible test steps once per step
        "overfit": '''
def save_checkpoint(path, model, optimizer, scheduler, step):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    checkpoint = torch.load(path, weights_only=True)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    return scheduler.last_epoch
''',
        "course_copy": '''
from torchcourse import training

def save_checkpoint(path, model, optimizer, scheduler, step):
    training.save_checkpoint(path, model, optimizer, step)


def load_checkpoint(path, model, optimizer, scheduler):
    return training.load_checkpoint(path, model, optimizer)["step"]
''',
    },

    "seed_everything": {
        "alternative": '''
import random as py_random
import numpy

def seed_everything(seed):
    for seed_generator in (py_random.seed, numpy.random.seed, torch.random.manual_seed):
        seed_generator(seed)
''',
        # seeds PyTorch only: Python's random and NumPy go on as before
        "wrong": '''
def seed_everything(seed):
    torch.manual_seed(seed)
''',
        # np.random.default_rng(seed) builds a new generator and leaves NumPy's global one alone
        "other_wrong": '''
import random

import numpy as np

def seed_everything(seed):
    random.seed(seed)
    np.random.default_rng(seed)
    torch.manual_seed(seed)
''',
        # seeds random and NumPy with the visible test's 2024, whatever the seed
        "overfit": '''
import random

import numpy as np

def seed_everything(seed):
    random.seed(2024)
    np.random.seed(2024)
    torch.manual_seed(seed)
''',
    },
}
