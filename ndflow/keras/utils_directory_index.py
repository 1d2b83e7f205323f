"""What the `*_dataset_from_directory` loaders share, as Keras 3's dataset_utils: listing
the files of a class-per-subdirectory tree (with the "Found N files belonging to C
classes." line), the seeded NumPy shuffle of the file list (so a `seed` gives Keras' file
order), the training/validation split and the label datasets."""

from __future__ import annotations

import os

import numpy as np

from ndflow.core import dtypes
from ndflow.data.dataset import DatasetV2
from ndflow.keras.utils_config import print_msg
from ndflow.ops.array_core import expand_dims
from ndflow.ops.array_gather import one_hot
from ndflow.ops.cast import cast


def check_validation_split_arg(validation_split, subset, shuffle, seed) -> None:
    if validation_split and not 0 < validation_split < 1:
        raise ValueError("`validation_split` must be between 0 and 1, "
                         f"received: {validation_split}")
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError("If `subset` is set, `validation_split` must be set, and inversely.")
    if subset not in ("training", "validation", "both", None):
        raise ValueError('`subset` must be either "training", '
                         f'"validation" or "both", received: {subset}')
    if validation_split and shuffle and seed is None:
        raise ValueError("If using `validation_split` and shuffling the data, you must "
                         "provide a `seed` argument, to make sure that there is no "
                         "overlap between the training and validation subset.")


def _valid_files(directory, follow_links, formats):
    walk = os.walk(directory, followlinks=bool(follow_links))
    for root, _, files in sorted(walk, key=lambda entry: entry[0]):
        for fname in sorted(files):
            if fname.lower().endswith(formats):
                yield root, fname


def _index_subdirectory(directory, label, follow_links, formats):
    dirname = os.path.basename(directory)
    names = []
    for root, fname in _valid_files(directory, follow_links, formats):
        names.append(os.path.join(dirname, os.path.relpath(os.path.join(root, fname),
                                                           directory)))
    return names, [label] * len(names)


def index_directory(directory, labels, formats, class_names=None, shuffle=True, seed=None,
                    follow_links=False, verbose=True):
    """(file_paths, labels, class_names) as Keras: classes are the sorted visible
    subdirectories (or `class_names`, in its order); files sorted per directory walk; with
    `shuffle`, both lists permuted by `np.random.RandomState(seed)`."""
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"[Errno 2] No such file or directory: {directory!r}")
    if labels == "inferred":
        subdirs = [d.rstrip("/") for d in sorted(os.listdir(directory))
                   if os.path.isdir(os.path.join(directory, d)) and not d.startswith(".")]
        if class_names is not None:
            if not set(class_names).issubset(set(subdirs)):
                raise ValueError("The `class_names` passed did not match the names of the "
                                 "subdirectories of the target directory. "
                                 f"Expected: {subdirs} (or a subset of it), "
                                 f"but received: class_names={class_names}")
            subdirs = list(class_names)
    else:
        subdirs = [""]
        if class_names is not None:
            if labels is None:
                raise ValueError("When `labels=None` (no labels), argument `class_names` "
                                 "cannot be specified.")
            raise ValueError("When argument `labels` is specified, argument `class_names` "
                             "cannot be specified (the `class_names` will be the sorted "
                             "list of labels).")
    filenames, label_lists = [], []
    for index, subdir in enumerate(subdirs):
        names, sub_labels = _index_subdirectory(os.path.join(directory, subdir), index,
                                                follow_links, formats)
        filenames += names
        label_lists += sub_labels
    if labels == "inferred":
        labels = np.asarray(label_lists, dtype="int32")
        class_names = subdirs
    elif labels is None:
        class_names = None
    else:
        if len(labels) != len(filenames):
            raise ValueError("Expected the lengths of `labels` to match the number of files "
                             f"in the target directory. len(labels) is {len(labels)} while we "
                             f"found {len(filenames)} files in directory {directory}.")
        class_names = [str(label) for label in sorted(set(labels))]
    if verbose:
        if labels is None:
            print_msg(f"Found {len(filenames)} files.")
        else:
            print_msg(f"Found {len(filenames)} files belonging to {len(class_names)} classes.")
    file_paths = [os.path.join(directory, name) for name in filenames]
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(file_paths)
        if labels is not None:
            np.random.RandomState(seed).shuffle(labels)
    return file_paths, labels, class_names


def training_or_validation_split(samples, labels, validation_split, subset):
    """The first (training) or last (validation) `int(validation_split * n)` samples."""
    if not validation_split:
        return samples, labels
    num_val = int(validation_split * len(samples))
    if subset == "training":
        print_msg(f"Using {len(samples) - num_val} files for training.")
        return samples[:-num_val], None if labels is None else labels[:-num_val]
    if subset == "validation":
        print_msg(f"Using {num_val} files for validation.")
        return samples[-num_val:], None if labels is None else labels[-num_val:]
    raise ValueError('`subset` must be either "training" '
                     f'or "validation", received: {subset}')


def labels_to_dataset(labels, label_mode, num_classes) -> DatasetV2:
    """int32 labels; "binary": float32 of shape (1,); "categorical": one-hot float32."""
    ds = DatasetV2.from_tensor_slices(np.asarray(labels, dtype="int32"))
    if label_mode == "binary":
        return ds.map(lambda x: expand_dims(cast(x, dtypes.float32), axis=-1))
    if label_mode == "categorical":
        return ds.map(lambda x: one_hot(x, num_classes))
    return ds


def check_label_args(labels, label_mode, class_names, kind: str) -> None:
    """Keras' checks of `labels` / `label_mode` / `class_names`."""
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)):
            raise ValueError("`labels` argument should be a list/tuple of integer labels, of "
                             f"the same size as the number of {kind} files in the target "
                             "directory. "
                             "If you wish to infer the labels from the subdirectory names in "
                             'the target directory, pass `labels="inferred"`. If you wish to '
                             f"get a dataset that only contains {kind}s (no labels), pass "
                             f"`labels=None`. Received: labels={labels}")
        if class_names:
            raise ValueError('You can only pass `class_names` if `labels="inferred"`. '
                             f"Received: labels={labels}, and class_names={class_names}")
    if label_mode not in {"int", "categorical", "binary", None}:
        raise ValueError('`label_mode` argument must be one of "int", "categorical", '
                         f'"binary", or None. Received: label_mode={label_mode}')
