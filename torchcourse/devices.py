"""Choosing where tensors live: CUDA first, then Apple's MPS, then the CPU."""
import torch


def mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def best_device() -> torch.device:
    """The fastest device this machine offers (chapter 00 has students write `pick_device`, which picks
    from a list of preferences and the devices offered, passed in, and can skip MPS)."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    if mps_available():
        return torch.device("mps")
    return torch.device("cpu")
