"""Containers for labelled image datasets split into train, validation and test."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class LabeledImages:
    """`images` (N, H, W) — uint8 0..255 for MNIST-format data — and `labels` (N,) int64."""

    images: np.ndarray
    labels: np.ndarray

    def __post_init__(self) -> None:
        if self.images.ndim < 2:
            raise ValueError(f"images must have a leading example dimension, got shape "
                             f"{self.images.shape}")
        if self.labels.shape != (self.images.shape[0],):
            raise ValueError(f"{self.images.shape[0]} images but labels of shape "
                             f"{self.labels.shape}")

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    @property
    def num_examples(self) -> int:
        return len(self)


@dataclass(frozen=True, eq=False)
class DatasetSplits:
    """A dataset's fixed train/validation/test split; `source` names where it came from."""

    train: LabeledImages
    validation: LabeledImages
    test: LabeledImages
    source: str
