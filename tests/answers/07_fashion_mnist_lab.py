"""Answers for 07_fashion_mnist_lab that the reference does not use, {grade_id: {set: source}}: what each set
must score is in CONTRIBUTING.md, "Files of a chapter"; a comment above an answer says what it gets wrong."""

ANSWERS = {
    "data_questions": {
        # recursion over the Subsets, Python lists of labels and a counting loop (no bincount)
        "alternative": '''
def _labels(dataset):
    """The label of every item, in order, read from the innermost dataset's targets."""
    if isinstance(dataset, Subset):
        outer = _labels(dataset.dataset)
        return [outer[i] for i in dataset.indices]
    return [int(t) for t in dataset.targets]


def class_counts(dataset, num_classes):
    counts = torch.zeros(num_classes, dtype=torch.long)
    for label in _labels(dataset):
        counts[label] += 1
    return counts
''',
        # reads the innermost targets with the OUTERMOST Subset's indices: right for one level of
        # Subset, wrong for a Subset of a Subset (train_set's indices are positions in train_part)
        "wrong": '''
def class_counts(dataset, num_classes):
    base = dataset
    while isinstance(base, Subset):
        base = base.dataset
    labels = base.targets[list(dataset.indices)] if isinstance(dataset, Subset) else base.targets
    return torch.bincount(labels, minlength=num_classes)
''',
        # follows the chain of Subsets right, but bincount without minlength: a class that never
        # occurs at the end gets no entry
        "other_wrong": """
def class_counts(dataset, num_classes):
    positions = list(range(len(dataset)))
    while isinstance(dataset, Subset):
        positions = [dataset.indices[i] for i in positions]
        dataset = dataset.dataset
    return torch.bincount(torch.as_tensor(dataset.targets)[positions])
""",
        # two levels of Subset, the deepest the visible tests go; a third level has no targets
        "overfit": """
def class_counts(dataset, num_classes):
    if isinstance(dataset, Subset) and isinstance(dataset.dataset, Subset):
        inner = dataset.dataset
        labels = torch.as_tensor(inner.dataset.targets)[[inner.indices[i] for i in dataset.indices]]
    elif isinstance(dataset, Subset):
        labels = torch.as_tensor(dataset.dataset.targets)[list(dataset.indices)]
    else:
        labels = torch.as_tensor(dataset.targets)
    return torch.bincount(labels, minlength=num_classes)
""",
    },

    "make_mlp": {
        # the hidden layers in an nn.ModuleList, functional ReLU, a view to flatten
        "alternative": '''
class _MLP(nn.Module):
    def __init__(self, hidden, dropout):
        super().__init__()
        widths = [28 * 28, *hidden]
        self.hidden = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths, widths[1:]))
        self.drops = nn.ModuleList(nn.Dropout(p=dropout) for _ in hidden)
        self.out = nn.Linear(widths[-1], 10)

    def forward(self, x):
        x = x.view(x.shape[0], -1)
        for layer, drop in zip(self.hidden, self.drops):
            x = drop(F.relu(layer(x)))
        return self.out(x)


def make_mlp(hidden=(256, 256), dropout=0.2):
    return _MLP(hidden, dropout)
''',
        # no dropout at all
        "wrong": '''
def make_mlp(hidden=(256, 256), dropout=0.2):
    layers, width = [nn.Flatten()], 784
    for size in hidden:
        layers += [nn.Linear(width, size), nn.ReLU()]
        width = size
    return nn.Sequential(*layers, nn.Linear(width, 10))
''',
        # dropout before each hidden Linear (so on the input pixels too), none after the last hidden layer
        "other_wrong": """
def make_mlp(hidden=(256, 256), dropout=0.2):
    layers, width = [nn.Flatten()], 784
    for size in hidden:
        layers += [nn.Dropout(dropout), nn.Linear(width, size), nn.ReLU()]
        width = size
    return nn.Sequential(*layers, nn.Linear(width, 10))
""",
        # the depths the visible tests build (none, one or two hidden layers), one by one: no loop
        "overfit": """
def make_mlp(hidden=(256, 256), dropout=0.2):
    if len(hidden) == 0:
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 10))
    if len(hidden) == 1:
        return nn.Sequential(nn.Flatten(), nn.Linear(784, hidden[0]), nn.ReLU(), nn.Dropout(dropout),
                             nn.Linear(hidden[0], 10))
    return nn.Sequential(nn.Flatten(), nn.Linear(784, hidden[0]), nn.ReLU(), nn.Dropout(dropout),
                         nn.Linear(hidden[0], hidden[1]), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden[1], 10))
""",
        # a ReLU after every Linear, the last one too: logits that can never be negative
        "more_wrong": '''
def make_mlp(hidden=(256, 256), dropout=0.2):
    layers, width = [nn.Flatten()], 784
    for size in hidden:
        layers += [nn.Linear(width, size), nn.ReLU(), nn.Dropout(dropout)]
        width = size
    return nn.Sequential(*layers, nn.Linear(width, 10), nn.ReLU())
''',
        "course_copy": "from torchcourse.fashion_models import FashionMLP as make_mlp",
    },

    "train_one_epoch": {
        "alternative": '''
def train_one_epoch(model, loader, optimizer):
    model.train(True)
    losses, hits, counts = [], [], []
    for x, y in loader:
        out = model(x)
        batch_loss = nn.CrossEntropyLoss()(out, y)
        optimizer.zero_grad(set_to_none=True)
        batch_loss.backward()
        optimizer.step()
        losses.append(float(batch_loss.detach()) * y.numel())
        hits.append(int((out.detach().argmax(-1) == y).sum()))
        counts.append(y.numel())
    n = sum(counts)
    return sum(losses) / n, sum(hits) / n
''',
        # averages the batch means, so the short last batch counts as much as a full one
        "wrong": '''
def train_one_epoch(model, loader, optimizer):
    model.train()
    losses, correct, seen = [], 0, 0
    for features, labels in loader:
        optimizer.zero_grad()
        logits = model(features)
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        correct += (logits.argmax(dim=1) == labels).sum().item()
        seen += len(labels)
    return sum(losses) / len(losses), correct / seen
''',
        # never calls model.train(): a model that arrives in eval mode trains with dropout off
        "other_wrong": """
def train_one_epoch(model, loader, optimizer):
    loss_sum, hits, count = 0.0, 0, 0
    for features, labels in loader:
        optimizer.zero_grad()
        logits = model(features)
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
        loss_sum += loss.item() * labels.numel()
        hits += (logits.argmax(1) == labels).sum().item()
        count += labels.numel()
    return loss_sum / count, hits / count
""",
        # statistics from a second forward pass under no_grad: the same logits as the training pass
        # only when nothing random runs in the model, as in the visible tests (no dropout)
        "overfit": """
def train_one_epoch(model, loader, optimizer):
    model.train()
    loss_sum, hits, count = 0.0, 0, 0
    for features, labels in loader:
        with torch.no_grad():
            logits = model(features)
            loss_sum += F.cross_entropy(logits, labels, reduction="sum").item()
            hits += (logits.argmax(dim=1) == labels).sum().item()
        optimizer.zero_grad()
        F.cross_entropy(model(features), labels).backward()
        optimizer.step()
        count += len(labels)
    return loss_sum / count, hits / count
""",
        # divides by len(loader.dataset): wrong when the loader drops its last batch or samples a subset
        "more_wrong": '''
def train_one_epoch(model, loader, optimizer):
    model.train()
    total_loss, correct = 0.0, 0
    for features, labels in loader:
        optimizer.zero_grad()
        logits = model(features)
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
        total_loss += loss.item() * len(labels)
        correct += (logits.argmax(dim=1) == labels).sum().item()
    return total_loss / len(loader.dataset), correct / len(loader.dataset)
''',
    },

    "evaluate": {
        "alternative": '''
@torch.inference_mode()
def evaluate(model, loader):
    model.train(False)
    logits, targets = [], []
    for x, y in loader:
        logits.append(model(x))
        targets.append(y)
    logits, targets = torch.cat(logits), torch.cat(targets)
    loss = F.cross_entropy(logits, targets, reduction="sum") / len(targets)
    accuracy = (logits.argmax(1) == targets).float().mean()
    return loss.item(), accuracy.item()
''',
        # forgets model.eval(): dropout stays on while evaluating
        "wrong": '''
def evaluate(model, loader):
    total_loss, correct, seen = 0.0, 0, 0
    with torch.no_grad():
        for features, labels in loader:
            logits = model(features)
            total_loss += F.cross_entropy(logits, labels).item() * len(labels)
            correct += (logits.argmax(dim=1) == labels).sum().item()
            seen += len(labels)
    return total_loss / seen, correct / seen
''',
        # eval mode, but no torch.no_grad(): every forward pass builds a graph
        "other_wrong": """
def evaluate(model, loader):
    model.eval()
    loss_sum, hits, count = 0.0, 0, 0
    for features, labels in loader:
        logits = model(features)
        loss_sum += F.cross_entropy(logits, labels, reduction="sum").item()
        hits += (logits.argmax(dim=1) == labels).sum().item()
        count += len(labels)
    return loss_sum / count, hits / count
""",
        # weights the batches 4, 4, ..., 2: the sizes of the visible loader's batches
        "overfit": """
def evaluate(model, loader):
    model.eval()
    batches = list(loader)
    losses, hits, weights = 0.0, 0, 0
    with torch.no_grad():
        for i, (features, labels) in enumerate(batches):
            weight = 2 if i == len(batches) - 1 else 4
            logits = model(features)
            losses += F.cross_entropy(logits, labels).item() * weight
            hits += (logits.argmax(dim=1) == labels).sum().item()
            weights += weight
    return losses / weights, hits / weights
""",
        # the same mistake in evaluate
        "more_wrong": '''
def evaluate(model, loader):
    model.eval()
    total_loss, correct = 0.0, 0
    with torch.no_grad():
        for features, labels in loader:
            logits = model(features)
            total_loss += F.cross_entropy(logits, labels, reduction="sum").item()
            correct += (logits.argmax(dim=1) == labels).sum().item()
    n = len(loader.dataset)
    return total_loss / n, correct / n
''',
    },

    "confusion_matrix": {
        "alternative": '''
def confusion_matrix(predicted, true, num_classes):
    matrix = torch.zeros((num_classes, num_classes), dtype=torch.long)
    for t, p in zip(true.tolist(), predicted.tolist()):
        matrix[t][p] += 1
    return matrix
''',
        # rows and columns swapped
        "wrong": '''
def confusion_matrix(predicted, true, num_classes):
    flat = torch.bincount(predicted * num_classes + true, minlength=num_classes * num_classes)
    return flat.reshape(num_classes, num_classes)
''',
        # indexed += with repeated (true, predicted) pairs adds 1 once per distinct pair, not per example
        "other_wrong": """
def confusion_matrix(predicted, true, num_classes):
    matrix = torch.zeros(num_classes, num_classes, dtype=torch.int64)
    matrix[true, predicted] += 1
    return matrix
""",
        # the visible tests have three classes: 3, hard-coded
        "overfit": """
def confusion_matrix(predicted, true, num_classes):
    return torch.bincount(true * 3 + predicted, minlength=9).reshape(3, 3)
""",
    },

    "overfit_one_batch": {
        "alternative": '''
def overfit_one_batch(model, features, labels, steps=100, lr=1e-3):
    model.train()
    opt = torch.optim.Adam(params=list(model.parameters()), lr=lr)
    history = []
    step = 0
    while step < steps:
        logits = model(features)
        loss = nn.functional.cross_entropy(logits, labels)
        history.append(float(loss))
        model.zero_grad()
        loss.backward()
        opt.step()
        step += 1
    return history
''',
        # zero_grad between backward and step: the optimizer never sees a gradient
        "wrong": '''
def overfit_one_batch(model, features, labels, steps=100, lr=1e-3):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(features), labels)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        losses.append(loss.item())
    return losses
''',
        # a new Adam optimizer at every step: its running averages start from scratch each time
        "other_wrong": """
def overfit_one_batch(model, features, labels, steps=100, lr=1e-3):
    model.train()
    losses = []
    for _ in range(steps):
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(features), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
        # Adam at the visible learning rate 1e-2, whatever lr says
        "overfit": """
def overfit_one_batch(model, features, labels, steps=100, lr=1e-3):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    history = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(features), labels)
        history.append(loss.item())
        loss.backward()
        optimizer.step()
    return history
""",
    },

    "make_scheduler": {
        "alternative": '''
def make_scheduler(optimizer):
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 0.1 ** (epoch // 5))
''',
        # decays every epoch instead of every five
        "wrong": '''
def make_scheduler(optimizer):
    return torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.1)
''',
        # a smooth decay, a little every epoch, instead of a tenth every five epochs
        "other_wrong": """
def make_scheduler(optimizer):
    return torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.1 ** (1 / 5))
""",
        # milestones for the 12 visible epochs only: no decay after epoch 10
        "overfit": """
def make_scheduler(optimizer):
    return torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[5, 10], gamma=0.1)
""",
    },

    "make_cnn": {
        # functional ReLU and pooling, padding="same", and the flattened size measured with a blank image
        "alternative": '''
class _CNN(nn.Module):
    def __init__(self, channels, hidden):
        super().__init__()
        counts = [1, *channels]
        self.convs = nn.ModuleList(nn.Conv2d(a, b, 3, padding="same") for a, b in zip(counts, counts[1:]))
        with torch.no_grad():
            flat = self.features(torch.zeros(1, 1, 28, 28)).shape[1]   # measured, not worked out
        self.fc = nn.Linear(flat, hidden)
        self.out = nn.Linear(hidden, 10)

    def features(self, x):
        for conv in self.convs:
            x = F.max_pool2d(F.relu(conv(x)), 2)
        return torch.flatten(x, 1)

    def forward(self, x):
        return self.out(F.relu(self.fc(self.features(x))))


def make_cnn(channels=(16, 32), hidden=64):
    return _CNN(channels, hidden)
''',
        # ends with a softmax: probabilities where the statement asks for logits (F.cross_entropy then
        # applies a second one, and the loss stalls above 1.46); the architecture is otherwise right
        "wrong": '''
def make_cnn(channels=(16, 32), hidden=64):
    layers, in_channels, size = [], 1, 28
    for out_channels in channels:
        layers += [nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
        in_channels, size = out_channels, size // 2
    layers += [nn.Flatten(), nn.Linear(in_channels * size * size, hidden), nn.ReLU(),
               nn.Linear(hidden, 10), nn.Softmax(dim=1)]
    return nn.Sequential(*layers)
''',
        # copied from a CIFAR example: the first convolution expects 3 colour channels
        "other_wrong": """
def make_cnn(channels=(16, 32), hidden=64):
    layers, in_channels, size = [], 3, 28
    for out_channels in channels:
        layers += [nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
        in_channels, size = out_channels, size // 2
    layers += [nn.Flatten(), nn.Linear(in_channels * size * size, hidden), nn.ReLU(), nn.Linear(hidden, 10)]
    return nn.Sequential(*layers)
""",
        # the flattened size looked up for the depths the visible tests build (two and three blocks)
        "overfit": """
def make_cnn(channels=(16, 32), hidden=64):
    layers, in_channels = [], 1
    for out_channels in channels:
        layers += [nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
        in_channels = out_channels
    size = {2: 7, 3: 3}[len(channels)]
    layers += [nn.Flatten(), nn.Linear(in_channels * size * size, hidden), nn.ReLU(), nn.Linear(hidden, 10)]
    return nn.Sequential(*layers)
""",
        # a ReLU after the last Linear too: logits that can never be negative
        "more_wrong": '''
def make_cnn(channels=(16, 32), hidden=64):
    layers, in_channels, size = [], 1, 28
    for out_channels in channels:
        layers += [nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
        in_channels, size = out_channels, size // 2
    layers += [nn.Flatten(), nn.Linear(in_channels * size * size, hidden), nn.ReLU(), nn.Linear(hidden, 10), nn.ReLU()]
    return nn.Sequential(*layers)
''',
        "course_copy": "from torchcourse.fashion_models import FashionCNN as make_cnn",
    },

    "clipped_step": {
        "alternative": '''
def clipped_step(model, optimizer, features, labels, max_norm):
    def total_norm():
        return sum(float(p.grad.pow(2).sum()) for p in model.parameters() if p.grad is not None) ** 0.5

    optimizer.zero_grad()
    loss = nn.CrossEntropyLoss()(model(features), labels)
    loss.backward()
    before = total_norm()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_norm)
    after = total_norm()
    optimizer.step()
    return float(loss), before, after
''',
        # measures both norms after clipping
        "wrong": '''
def clipped_step(model, optimizer, features, labels, max_norm):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(features), labels)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
    optimizer.step()
    return loss.item(), norm.item(), norm.item()
''',
        # steps first and clips afterwards: the update uses the unclipped gradients
        "other_wrong": """
def clipped_step(model, optimizer, features, labels, max_norm):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(features), labels)
    loss.backward()
    optimizer.step()
    before = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    after = torch.nn.utils.get_total_norm([p.grad for p in model.parameters() if p.grad is not None])
    return loss.item(), before.item(), after.item()
""",
        # clips, but reports min(norm before, max_norm) as the norm after: nothing measured
        "overfit": """
def clipped_step(model, optimizer, features, labels, max_norm):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(features), labels)
    loss.backward()
    before = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm).item()
    optimizer.step()
    return loss.item(), before, min(before, max_norm)
""",
        # every parameter's .grad in the norm after clipping: a frozen parameter has none (None.norm())
        "more_wrong": '''
def clipped_step(model, optimizer, features, labels, max_norm):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(features), labels)
    loss.backward()
    before = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    after = torch.stack([p.grad.norm() for p in model.parameters()]).norm()
    optimizer.step()
    return loss.item(), before.item(), after.item()
''',
    },
}
