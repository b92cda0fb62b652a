"""Datasets, samplers and the DataLoader (PyTorch's ``torch.utils.data``, also importable as
``autogradcli.utils.data``), plus bundled, file-based and synthetic datasets."""

from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .files import load_csv, load_digits, load_idx, load_npz, read_idx
from .generator import Generator
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .synthetic import sine_regression, spirals
from .worker import WorkerInfo, get_worker_info

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "Generator",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "WorkerInfo",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "load_csv",
    "load_digits",
    "load_idx",
    "load_npz",
    "random_split",
    "read_idx",
    "sine_regression",
    "spirals",
]
