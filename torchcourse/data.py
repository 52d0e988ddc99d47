"""The toy classification data used from chapter 04 on, its Dataset and seeded loaders."""
import torch
from torch.utils.data import DataLoader, Dataset


class ToyDataset(Dataset):
    """Pairs (features[i], labels[i]) from two tensors with the same first dimension."""

    def __init__(self, features: torch.Tensor, labels: torch.Tensor):
        if len(features) != len(labels):
            raise ValueError(f"{len(features)} feature rows but {len(labels)} labels")
        self.features = features
        self.labels = labels

    def __getitem__(self, index):
        return self.features[index], self.labels[index]

    def __len__(self) -> int:
        return self.labels.shape[0]


def toy_data():
    """Five training and two test points in 2-D, two classes: ((X_train, y_train), (X_test, y_test))."""
    X_train = torch.tensor([[-1.2, 3.1], [-0.9, 2.9], [-0.5, 2.6], [2.3, -1.1], [2.7, -1.5]])
    y_train = torch.tensor([0, 0, 0, 1, 1])
    X_test = torch.tensor([[-0.8, 2.8], [2.6, -1.6]])
    y_test = torch.tensor([0, 1])
    return (X_train, y_train), (X_test, y_test)


def seeded_loader(dataset, batch_size: int, seed: int | None, drop_last: bool = True) -> DataLoader:
    """A shuffling training loader whose order depends only on `seed` (its own generator);
    `seed=None` shuffles with PyTorch's global generator instead (the book appendix's way).

    num_workers=0: the examples are tiny tensors and worker processes only add start-up time
    (and, in notebooks on macOS/Windows, a crash; chapter 04 explains why).
    """
    generator = None if seed is None else torch.Generator().manual_seed(seed)
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, drop_last=drop_last,
                      num_workers=0, generator=generator)


def toy_loaders(batch_size: int = 2, seed: int | None = 123):
    """Chapter 04's loaders over `toy_data()`: (shuffled train with drop_last, ordered test).

    With `seed=None` the training loader shuffles with PyTorch's global generator, as the book
    appendix's listings do: `torch.manual_seed(123)` before building the model then fixes the
    batch order as well, and chapters 05 and 08 print the book's losses. The price is chapter
    04's warning: any other random call between the seed and the loop changes the order.
    """
    (X_train, y_train), (X_test, y_test) = toy_data()
    train_loader = seeded_loader(ToyDataset(X_train, y_train), batch_size, seed, drop_last=True)
    test_loader = DataLoader(ToyDataset(X_test, y_test), batch_size=batch_size, shuffle=False)
    return train_loader, test_loader
