"""Models and a prediction helper for the FashionMNIST lab (chapter 07), written once for reuse.

- `FashionMLP`: flatten, two hidden layers of 256 units with ReLU and dropout, 10 logits
  (chapters 07 and 08 train it).
- `FashionCNN`: two convolution + max-pool blocks, then a small classifier head with dropout.
- `predictions`: the predicted and true labels over a whole DataLoader.

The epoch loops (`train_one_epoch`, `evaluate`) are chapter 07's exercises, and the lab trains with
the student's own; none of what is here answers an exercise (chapter 07's `make_mlp` and
`make_cnn` build networks of any depth, which these fixed classes cannot).
"""
import torch
from torch import nn

NUM_PIXELS = 28 * 28
NUM_CLASSES = 10


class FashionMLP(nn.Module):
    """(B, 1, 28, 28) images -> (B, 10) logits through two hidden layers."""

    def __init__(self, hidden: int = 256, dropout: float = 0.2, num_classes: int = NUM_CLASSES):
        super().__init__()
        self.net = nn.Sequential(
            nn.Flatten(),                                  # (B, 1, 28, 28) -> (B, 784)
            nn.Linear(NUM_PIXELS, hidden), nn.ReLU(), nn.Dropout(dropout),
            nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(dropout),
            nn.Linear(hidden, num_classes),
        )

    def forward(self, x):
        return self.net(x)


class FashionCNN(nn.Module):
    """(B, 1, 28, 28) -> (B, 10): conv 3x3 + pool twice (28 -> 14 -> 7), then a dense head."""

    def __init__(self, channels=(32, 64), hidden: int = 128, dropout: float = 0.25,
                 num_classes: int = NUM_CLASSES):
        super().__init__()
        c1, c2 = channels
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # -> (c1, 14, 14)
            nn.Conv2d(c1, c2, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # -> (c2, 7, 7)
        )
        self.head = nn.Sequential(
            nn.Flatten(), nn.Dropout(dropout),
            nn.Linear(c2 * 7 * 7, hidden), nn.ReLU(),
            nn.Linear(hidden, num_classes),
        )

    def forward(self, x):
        return self.head(self.features(x))


@torch.no_grad()
def predictions(model, loader, device="cpu"):
    """(predicted labels, true labels) for every example of `loader`, as two 1-d CPU tensors."""
    model.eval()
    predicted, true = [], []
    for features, labels in loader:
        predicted.append(model(features.to(device)).argmax(dim=1).cpu())
        true.append(labels.cpu())
    return torch.cat(predicted), torch.cat(true)
