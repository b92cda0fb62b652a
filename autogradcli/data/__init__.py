"""Datasets, samplers and the DataLoader, plus bundled, file-based and synthetic datasets."""

from .dataloader import DataLoader, default_collate
from .dataset import ConcatDataset, Dataset, Subset, TensorDataset, random_split
from .distributed import DistributedSampler
from .files import load_csv, load_digits, load_idx, load_npz, read_idx
from .generator import Generator
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
)
from .synthetic import sine_regression, spirals

__all__ = [
    "BatchSampler",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "Generator",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "default_collate",
    "load_csv",
    "load_digits",
    "load_idx",
    "load_npz",
    "random_split",
    "read_idx",
    "sine_regression",
    "spirals",
]
