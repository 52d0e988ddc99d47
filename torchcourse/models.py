"""Models the course builds once and reuses."""
import torch
from torch import nn


class NeuralNetwork(nn.Module):
    """The course's multilayer perceptron: two hidden layers (30 and 20 units) with ReLU.

    Chapter 03 has students build MLPs of any depth; later chapters and the DDP scripts import
    this one from here.
    """

    def __init__(self, num_inputs: int, num_outputs: int, hidden=(30, 20)):
        super().__init__()
        h1, h2 = hidden
        self.layers = nn.Sequential(
            nn.Linear(num_inputs, h1), nn.ReLU(),
            nn.Linear(h1, h2), nn.ReLU(),
            nn.Linear(h2, num_outputs),  # logits: no softmax, the loss applies it
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


def count_trainable(model: nn.Module) -> int:
    """Number of parameters the optimizer will update."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
