"""The training step, accuracy, prediction and checkpoints, written once for chapters 05 onwards."""
import torch
from torch import nn


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, features, labels,
               loss_fn=nn.functional.cross_entropy) -> float:
    """One optimisation step in the loop's rhythm: zero_grad, forward, loss, backward, step."""
    optimizer.zero_grad()
    loss = loss_fn(model(features), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


@torch.no_grad()
def accuracy(model: nn.Module, loader, device="cpu") -> float:
    """Fraction of correctly classified examples over a whole DataLoader (eval mode, no grad)."""
    was_training = model.training
    model.eval()
    correct = total = 0
    for features, labels in loader:
        features, labels = features.to(device), labels.to(device)
        predictions = model(features).argmax(dim=1)
        correct += (predictions == labels).sum().item()
        total += labels.numel()
    model.train(was_training)
    return correct / total if total else 0.0


@torch.no_grad()
def predict(model: nn.Module, features: torch.Tensor) -> torch.Tensor:
    """Class labels (argmax of the logits) for a batch, in eval mode; the model's mode is restored."""
    was_training = model.training
    model.eval()
    labels = model(features).argmax(dim=1)
    model.train(was_training)
    return labels


def save_checkpoint(path, model: nn.Module, optimizer: torch.optim.Optimizer, step: int, **extra) -> None:
    """Everything needed to resume training exactly: weights, optimizer state, step, RNG state.

    `extra` holds any further plain values (epoch, best accuracy, ...), stored as given.
    """
    torch.save({
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "step": int(step),
        "torch_rng_state": torch.get_rng_state(),
        **extra,
    }, path)


def load_checkpoint(path, model: nn.Module, optimizer: torch.optim.Optimizer = None,
                    map_location="cpu", restore_rng: bool = True) -> dict:
    """Load a `save_checkpoint` file into an existing model (and optimizer); return the whole dict.

    The model and optimizer must be built the same way as the saved ones. With `restore_rng`
    the global torch RNG continues where it was at save time (dropout, shuffling).
    """
    checkpoint = torch.load(path, map_location=map_location, weights_only=True)
    model.load_state_dict(checkpoint["model"])
    if optimizer is not None:
        optimizer.load_state_dict(checkpoint["optimizer"])
    if restore_rng and "torch_rng_state" in checkpoint:
        torch.set_rng_state(checkpoint["torch_rng_state"])
    return checkpoint
