"""The training step, accuracy, prediction and checkpoints, written once for chapters 05 onwards."""
import random

import numpy as np
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


def _model_device(model: nn.Module) -> torch.device:
    """Where the model's parameters are (the first one's device); the CPU for a model without any."""
    parameter = next(model.parameters(), None)
    return parameter.device if parameter is not None else torch.device("cpu")


@torch.no_grad()
def accuracy(model: nn.Module, loader, device=None) -> float:
    """Fraction of correctly classified examples over a whole DataLoader (eval mode, no grad).

    Each batch is moved to `device`, by default the model's own (where its parameters are).
    """
    device = _model_device(model) if device is None else device
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
def predict(model: nn.Module, features: torch.Tensor, device=None) -> torch.Tensor:
    """Class labels (argmax of the logits) for a batch, in eval mode; the model's mode is restored.

    The batch is moved to `device`, by default the model's own, and the labels are returned there.
    """
    device = _model_device(model) if device is None else device
    was_training = model.training
    model.eval()
    labels = model(features.to(device)).argmax(dim=1)
    model.train(was_training)
    return labels


def _rng_bytes(state: torch.Tensor) -> bytes:
    return state.cpu().numpy().tobytes()


def _rng_tensor(saved) -> torch.Tensor:
    """The CPU ByteTensor that torch's set_rng_state functions take, from `_rng_bytes`."""
    return torch.frombuffer(bytearray(saved), dtype=torch.uint8)


def _numpy_state() -> dict:
    """NumPy's global generator state as plain values (torch.load's weights_only refuses arrays)."""
    kind, keys, position, has_gauss, cached = np.random.get_state()
    return {"kind": kind, "keys": keys.tobytes(), "position": int(position), "has_gauss": int(has_gauss),
            "cached_gaussian": float(cached)}


def _set_numpy_state(saved: dict) -> None:
    np.random.set_state((saved["kind"], np.frombuffer(saved["keys"], dtype=np.uint32), saved["position"],
                         saved["has_gauss"], saved["cached_gaussian"]))


def save_checkpoint(path, model: nn.Module, optimizer: torch.optim.Optimizer, step: int, *,
                    scheduler=None, scaler=None, **extra) -> None:
    """What a resumed run needs to go on as if it had not stopped: weights, optimizer state, step,
    the learning-rate `scheduler`'s and the `GradScaler`'s states when given, and the states of the
    random number generators that dropout, shuffling and augmentation draw from (Python's `random`,
    NumPy's and PyTorch's; the CUDA ones only where this process has used CUDA: asking for them
    would otherwise start a CUDA context, about 500 MB of GPU memory, in a run that never needed one).
    A DataLoader's worker processes seed themselves from PyTorch's generator, so they follow.

    The RNG states are stored as bytes and plain numbers, not tensors or arrays: torch.load's
    `map_location` moves every tensor of the file, a generator's state must come back as a CPU
    ByteTensor, and `weights_only` loading refuses NumPy arrays. `extra` holds any further plain
    values (epoch, best accuracy, ...), stored as given.
    """
    checkpoint = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "step": int(step),
        "torch_rng_state": _rng_bytes(torch.get_rng_state()),
        "python_rng_state": random.getstate(),
        "numpy_rng_state": _numpy_state(),
    }
    if scheduler is not None:
        checkpoint["scheduler"] = scheduler.state_dict()
    if scaler is not None:
        checkpoint["scaler"] = scaler.state_dict()
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        checkpoint["cuda_rng_states"] = [_rng_bytes(state) for state in torch.cuda.get_rng_state_all()]
    torch.save({**checkpoint, **extra}, path)


def load_checkpoint(path, model: nn.Module, optimizer: torch.optim.Optimizer = None,
                    map_location="cpu", restore_rng: bool = True, *, scheduler=None, scaler=None) -> dict:
    """Load a `save_checkpoint` file into an existing model (and optimizer, scheduler, scaler, where
    given and saved); return the whole dict.

    The model and the rest must be built the same way as the saved ones; `map_location` says where
    the file's tensors go (the model's device is the usual choice). With `restore_rng` Python's,
    NumPy's and PyTorch's generators, and the CUDA ones where the file has them and this machine has
    GPUs (as many as both have), continue where they were at save time.
    """
    checkpoint = torch.load(path, map_location=map_location, weights_only=True)
    model.load_state_dict(checkpoint["model"])
    if optimizer is not None:
        optimizer.load_state_dict(checkpoint["optimizer"])
    if scheduler is not None and "scheduler" in checkpoint:
        scheduler.load_state_dict(checkpoint["scheduler"])
    if scaler is not None and "scaler" in checkpoint:
        scaler.load_state_dict(checkpoint["scaler"])
    if restore_rng and "torch_rng_state" in checkpoint:
        torch.set_rng_state(_rng_tensor(checkpoint["torch_rng_state"]))
    if restore_rng and "python_rng_state" in checkpoint:
        version, state, gauss = checkpoint["python_rng_state"]
        random.setstate((version, tuple(state), gauss))
    if restore_rng and "numpy_rng_state" in checkpoint:
        _set_numpy_state(checkpoint["numpy_rng_state"])
    if restore_rng and "cuda_rng_states" in checkpoint and torch.cuda.is_available():
        states = checkpoint["cuda_rng_states"][:torch.cuda.device_count()]
        torch.cuda.set_rng_state_all([_rng_tensor(state) for state in states])
    return checkpoint
