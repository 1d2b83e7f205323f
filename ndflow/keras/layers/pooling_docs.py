"""The docstrings of the pooling layers (pooling_layers.py, pooling3d_layers.py; attached at
their ends): one template for the windowed poolings and one for the global ones, filled in
for each rank and kind."""

from __future__ import annotations

from ndflow.keras.docstrings import sections

_DATA_FORMAT = """data_format: "channels_last" (steps/rows last before the channels) or
        "channels_first" (default `keras.config.image_data_format()`)."""

_WINDOWED = """{kind} pooling over windows of `pool_size` {window}, for {rank}-D data
    ({shape}).{note}

    Args:
      pool_size: the window size, {size}.
      strides: the step between windows (default `pool_size`).
      padding: "valid" (windows inside the input only) or "same" (output size
        ceil(input / stride)).
      {data_format}
      name: the layer's name.
      **kwargs: other Layer arguments.

    Output shape:
      {output}.
    """

_GLOBAL = """Global {kind} pooling: the {kind} over {axes} of ({shape}) inputs.
{note}
    Args:
      {data_format}
      keepdims: whether the pooled axes stay, with size 1.
      **kwargs: Layer arguments (name, dtype, ...).

    Output shape:
      (batch, channels), or with size-1 pooled axes for `keepdims`.
    """

_RANKS = {  # rank: (the window's axes, the input's shape, pool_size's forms, the pooled shape)
    1: ("steps", "batch, steps, channels", "an int (default 2)",
        "(batch, pooled_steps, channels)"),
    2: ("rows and columns", "batch, rows, cols, channels", "an int or a pair (default (2, 2))",
        "(batch, pooled_rows, pooled_cols, channels)"),
    3: ("(depth, rows, cols)", "batch, depth, rows, cols, channels",
        "an int or a tuple of 3 (default (2, 2, 2))",
        "(batch, pooled_depth, pooled_rows, pooled_cols, channels)"),
}
_GLOBAL_AXES = {1: "the steps", 2: "rows and columns", 3: "depth, rows and columns"}
_MEANS = " Padded positions ('same') are not counted in the means."
_MASKED = ("\n    With a (batch, steps) mask, the mean of the unmasked steps (the output carries\n"
           "    no mask).\n")
_EXAMPLES = {
    "MaxPooling2D": ">>> tf.keras.layers.MaxPooling2D()(tf.zeros((1, 4, 6, 3))).shape\n"
                    "    TensorShape([1, 2, 3, 3])",
    "GlobalAveragePooling2D": ">>> tf.keras.layers.GlobalAveragePooling2D()(tf.ones((2, 4, 4, "
                              "3))).shape\n    TensorShape([2, 3])",
}


def _docs(rank: int) -> dict[str, str]:
    """The docstrings of the max and average poolings, windowed and global, of `rank`."""
    window, shape, size, output = _RANKS[rank]
    docs = {}
    for kind, name in (("Max", "Max"), ("Average", "Average")):
        docs[f"{name}Pooling{rank}D"] = _WINDOWED.format(
            kind=kind, window=window, rank=rank, shape=shape, size=size, output=output,
            note=_MEANS if kind == "Average" else "", data_format=_DATA_FORMAT)
        docs[f"Global{name}Pooling{rank}D"] = _GLOBAL.format(
            kind="max" if kind == "Max" else "mean", axes=_GLOBAL_AXES[rank], shape=shape,
            note=_MASKED if (kind, rank) == ("Average", 1) else "", data_format=_DATA_FORMAT)
    return {name: sections(doc, example=_EXAMPLES.get(name, "")) for name, doc in docs.items()}


DOCS = _docs(1) | _docs(2)
DOCS_3D = _docs(3)
