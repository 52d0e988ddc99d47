"""Models the course builds once and reuses."""
import torch
from torch import nn


class NeuralNetwork(nn.Module):
    """The course's multilayer perceptron: two hidden layers (30 and 20 units) with ReLU.

    Chapter 03 builds it; chapters 05, 06 and the DDP scripts import it from here.
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


def mlp_parameter_count(sizes, bias: bool = True) -> int:
    """Parameters of a stack of Linear layers with the given widths, without building it.

    `sizes` lists every layer's width from input to output, e.g. [50, 30, 20, 3] for
    `NeuralNetwork(50, 3)` (2213 parameters). Linear(n_in, n_out) holds an (n_out, n_in) weight
    matrix and, with `bias`, one bias per output unit. Chapter 03 has students derive this.
    """
    sizes = list(sizes)
    return sum(n_in * n_out + (n_out if bias else 0) for n_in, n_out in zip(sizes, sizes[1:]))
