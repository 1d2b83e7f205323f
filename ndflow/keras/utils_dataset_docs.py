"""The docstrings of the `keras.utils.*_dataset_from_directory` loaders
(utils_image_dataset.py, utils_text_audio_dataset.py): each argument described once, each
loader's Args following its signature."""

from __future__ import annotations

_ARGS = {
    "directory": 'the root directory; with `labels="inferred"`, one subdirectory per\n'
                 "        class.",
    "labels": '"inferred" (from the subdirectories, in alphanumeric order), None (no\n'
              "        labels), or a list/tuple of labels in the sorted file order.",
    "label_mode": '"int" (class indices, the default), "categorical" (one-hot), "binary"\n'
                  "        (0/1 floats, two classes) or None.",
    "class_names": 'with "inferred", the subdirectory names to use, in order.',
    "color_mode": '"rgb" (the default), "rgba" or "grayscale".',
    "batch_size": "the batch size (None: unbatched).",
    "image_size": "the (height, width) every image is resized to.",
    "shuffle": "whether to shuffle the files (default True).",
    "seed": "the shuffling and splitting seed (needed with `validation_split`).",
    "validation_split": "optional fraction of the files reserved for validation.",
    "subset": 'with `validation_split`: "training", "validation" or "both" (a list of\n'
              "        the two datasets).",
    "follow_links": "whether to follow symbolic links to subdirectories.",
    "interpolation": 'the resize method (default "bilinear").',
    "crop_to_aspect_ratio": "whether to crop to the target's aspect ratio before\n"
                            "        resizing (no distortion).",
    "pad_to_aspect_ratio": "whether to pad to it instead.",
    "data_format": '"channels_last" or "channels_first" (default\n'
                   "        `keras.config.image_data_format()`).",
    "format": 'must be "tf".',
    "verbose": "whether to print how many files and classes were found.",
    "max_length": "optional largest text length, in characters (longer texts are cut).",
    "sampling_rate": "optional expected sample rate, in Hz.",
    "output_sequence_length": "optional length every clip is cut or zero-padded to\n"
                              "        (default: padded to the batch's longest).",
    "ragged": "whether to return ragged batches of unpadded clips.",
}


def directory_dataset_doc(fn, title: str, returns: str, raises: str) -> str:
    """The docstring of the loader `fn`: `title`, its arguments in signature order, `returns`
    and `raises` (the sections' text)."""
    code = fn.__code__
    args = "\n".join(f"      {name}: {_ARGS[name]}"
                     for name in code.co_varnames[:code.co_argcount])
    return f"""{title}

    Args:
{args}

    Returns:
      {returns}

    Raises:
      {raises}
    """


# Each loader's title, Returns and Raises text.
PARTS = {
    "image_dataset_from_directory": (
        "A `tf.data.Dataset` of (image, label) batches read from image files in a directory\n"
        "    (jpeg, png, bmp, gif), typically one subdirectory per class.",
        "A dataset of float32 image batches (batch, height, width, channels) with labels\n"
        '      (or a list of two datasets for `subset="both"`); its `class_names` attribute '
        "lists\n"
        "      the classes.",
        "ValueError: inconsistent label arguments, a bad `subset`/`validation_split`, or no\n"
        "        images found."),
    "text_dataset_from_directory": (
        "A `tf.data.Dataset` of (text, label) batches read from `.txt` files in a directory,\n"
        "    typically one subdirectory per class.",
        "A dataset of string batches with labels (or a list of two datasets for\n"
        '      `subset="both"`); its `class_names` attribute lists the classes.',
        'ValueError: `format` other than "tf", inconsistent label arguments, or a bad\n'
        "        `subset`/`validation_split`."),
    "audio_dataset_from_directory": (
        "A `tf.data.Dataset` of (audio, label) batches read from `.wav` files in a\n"
        "    directory, typically one subdirectory per class.",
        "A dataset of float32 audio batches (batch, samples, channels) with labels (or a\n"
        '      list of two datasets for `subset="both"`); its `class_names` attribute lists the\n'
        "      classes.",
        "ValueError: both `ragged` and `output_sequence_length`, inconsistent label\n"
        "        arguments, or a bad `subset`/`validation_split`."),
}


def attach_loaders(namespace: dict, *names: str) -> None:
    """Sets the docstrings of the loaders `names` of a module's `namespace`."""
    for name in names:
        fn = namespace[name]
        fn.__doc__ = directory_dataset_doc(fn, *PARTS[name])
