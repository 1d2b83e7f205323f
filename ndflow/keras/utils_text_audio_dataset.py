"""`tf.keras.utils.text_dataset_from_directory` and `audio_dataset_from_directory`, as Keras
3's "tf" format: the shared directory index (file order, labels, printed lines), then a
tf.data pipeline reading each `.txt` file (cut to `max_length` bytes) or decoding each
16-bit PCM `.wav` file as tf.audio.decode_wav does (float32 in [-1, 1), (samples, channels),
zero-padded or cut to `output_sequence_length`; without it, batches padded to the longest)."""

from __future__ import annotations

import io
import wave

import numpy as np

from ndflow.core import dtypes, errors
from ndflow.core.api_export import keras_export
from ndflow.data.dataset import DatasetV2
from ndflow.keras import utils_dataset_docs
from ndflow.keras.utils_directory_index import (
    check_label_args,
    check_validation_split_arg,
    index_directory,
    labels_to_dataset,
    training_or_validation_split,
)
from ndflow.ops.ragged_tensor import RaggedTensor
from ndflow.ops.script_ops import numpy_function
from ndflow.ops.string_io_ops import read_file
from ndflow.ops.string_ops import substr


def _build(paths, labels, label_mode, num_classes, load, shuffle, buffer, seed):
    ds = DatasetV2.from_tensor_slices(paths)
    if label_mode:
        ds = DatasetV2.zip((ds, labels_to_dataset(labels, label_mode, num_classes)))
    if shuffle:
        ds = ds.shuffle(buffer_size=buffer or 1024, seed=seed)
    return ds.map((lambda x, y: (load(x), y)) if label_mode else load,
                  num_parallel_calls=-1)  # AUTOTUNE, as Keras


def _index(directory, labels, label_mode, class_names, shuffle, seed, validation_split,
           subset, follow_links, verbose, formats, kind):
    check_label_args(labels, label_mode, class_names, kind)
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    check_validation_split_arg(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, class_names = index_directory(directory, labels, formats, class_names,
                                                 shuffle, seed, follow_links, verbose)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError('When passing `label_mode="binary"`, there must be exactly 2 '
                         f"class_names. Received: class_names={class_names}")
    return paths, labels, label_mode, class_names, seed


def _subsets(paths, labels, validation_split, subset, directory, what):
    """[(paths, labels, is_training)] for `subset` (two for "both"), Keras' empty errors."""
    names = ("training", "validation") if subset == "both" else (subset,)
    parts = []
    for name in names:
        part = training_or_validation_split(paths, labels, validation_split, name)
        if not part[0]:
            label = f"{name} " if subset == "both" else ""
            raise ValueError(f"No {label}{what} found in directory {directory}.")
        parts.append((*part, name != "validation"))
    return parts


@keras_export("keras.utils.text_dataset_from_directory",
              "keras.preprocessing.text_dataset_from_directory")
def text_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                class_names=None, batch_size=32, max_length=None, shuffle=True,
                                seed=None, validation_split=None, subset=None,
                                follow_links=False, format="tf", verbose=True):  # noqa: A002
    if format != "tf":
        raise ValueError('Only format="tf" is available in ndflow (grain is not used). '
                         f"Received: format={format}")
    paths, labels, label_mode, class_names, seed = _index(
        directory, labels, label_mode, class_names, shuffle, seed, validation_split, subset,
        follow_links, verbose, (".txt",), "text")

    def load(path):
        text = read_file(path)
        return text if max_length is None else substr(text, 0, max_length)

    datasets = []
    for part_paths, part_labels, training in _subsets(
            paths, labels, validation_split, subset, directory, "text files"):
        ds = _build(part_paths, part_labels, label_mode, len(class_names or ()), load,
                    shuffle and training, batch_size * 8 if batch_size else 1024, seed)
        ds = (ds.batch(batch_size) if batch_size is not None else ds).prefetch(-1)
        ds.class_names = class_names
        datasets.append(ds)
    return datasets if subset == "both" else datasets[0]


def decode_wav(contents, desired_samples: int) -> np.ndarray:
    """16-bit PCM WAV bytes as float32 samples/32768, shape (samples, channels)."""
    try:
        with wave.open(io.BytesIO(np.asarray(contents).item())) as w:
            if w.getsampwidth() != 2:
                raise errors.InvalidArgumentError(
                    None, None, "Can only read 16-bit WAV files, but received "
                                f"{8 * w.getsampwidth()}")
            pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2")
            audio = pcm.reshape(-1, w.getnchannels()).astype(np.float32) / 32768.0
    except (wave.Error, EOFError) as e:
        raise errors.InvalidArgumentError(None, None, f"Bad WAV file: {e}") from None
    if desired_samples >= 0:
        out = np.zeros((desired_samples, audio.shape[1]), np.float32)
        out[:min(desired_samples, len(audio))] = audio[:desired_samples]
        audio = out
    return audio


@keras_export("keras.utils.audio_dataset_from_directory")
def audio_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                 class_names=None, batch_size=32, sampling_rate=None,
                                 output_sequence_length=None, ragged=False, shuffle=True,
                                 seed=None, validation_split=None, subset=None,
                                 follow_links=False, verbose=True):
    if ragged and output_sequence_length is not None:
        raise ValueError("Cannot set both `ragged` and `output_sequence_length`")
    if sampling_rate is not None:
        if not isinstance(sampling_rate, int):
            raise ValueError("`sampling_rate` should have an integer value. "
                             f"Received: sampling_rate={sampling_rate}")
        if sampling_rate <= 0:
            raise ValueError("`sampling_rate` should be higher than 0. "
                             f"Received: sampling_rate={sampling_rate}")
        raise ImportError("To use the argument `sampling_rate`, you should install "
                          "tensorflow_io, which ndflow does not use: resample the files "
                          "beforehand.")
    paths, labels, label_mode, class_names, seed = _index(
        directory, labels, label_mode, class_names, shuffle, seed, validation_split, subset,
        follow_links, verbose, (".wav",), "audio")
    desired = -1 if output_sequence_length is None else int(output_sequence_length)

    def load(path):
        audio = numpy_function(lambda c: decode_wav(c, desired), [read_file(path)],
                               dtypes.float32, stateful=False)
        audio.set_shape((None if desired < 0 else desired, None))
        return RaggedTensor.from_tensor(audio) if ragged else audio

    datasets = []
    for part_paths, part_labels, training in _subsets(
            paths, labels, validation_split, subset, directory, "audio files"):
        ds = _build(part_paths, part_labels, label_mode, len(class_names or ()), load,
                    shuffle and training, batch_size * 8 if batch_size else 1024, seed)
        ds = ds.prefetch(-1)
        if batch_size is not None:
            padded = output_sequence_length is None and not ragged
            ds = ds.padded_batch(batch_size) if padded else ds.batch(batch_size)
        ds.class_names = class_names
        datasets.append(ds)
    return tuple(datasets) if subset == "both" else datasets[0]


utils_dataset_docs.attach_loaders(globals(), "text_dataset_from_directory",
                                  "audio_dataset_from_directory")
