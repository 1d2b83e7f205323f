"""The docstrings of the convolution layers Conv1D/2D/3D, Conv1D/2D/3DTranspose and the
1-/2-D depthwise and separable ones (conv_layers.py, conv_nd_layers.py; attached at their
ends): one template filled in for each kind and rank."""

from __future__ import annotations

from ndflow.keras.docstrings import sections

_CONV = """{title}

    Inputs are {inputs}; {kernels}.

    Args:{filters}
      kernel_size: the window size, {sizes}.
      strides: the step of the window, {sizes}.
      padding: "valid" (no padding) or "same" (zero padding; output size
        ceil(input / stride)){causal}.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      dilation_rate: the spacing between kernel taps, {sizes}.
      {middle}
      activation: the activation applied to the output (a name, callable or None).
      use_bias: whether to add a bias per output channel.
      {weights}
      bias_initializer, bias_regularizer, bias_constraint: the bias' initializer
        (default "zeros"), penalty and projection.
      activity_regularizer: optional penalty on the output.
      **kwargs: Layer arguments (name, dtype, input_shape, ...).{lora}{raises}
    """
_FILTERS = "\n      filters: the number of output channels."


def _weights(role: str) -> str:
    """The Args lines of the initializer, regularizer and constraint of the `role` weights."""
    return f"""{role}_initializer: the {role} weights' initializers (default "glorot_uniform").
      {role}_regularizer: optional penalties on them.
      {role}_constraint: optional projections after each update."""


def _raises(line: str) -> str:
    return f"\n\n    Raises:\n      {line}"


_GROUPS = """groups: split the input channels into this many groups, each convolved with
        `filters / groups` filters (1: an ordinary convolution)."""
_LORA = """
      lora_rank: must be None (LoRA is not built in ndflow).
      lora_alpha: accepted for Keras' signature."""
_CONV_RAISES = """ValueError: non-positive `filters` or `groups`, `filters` not divisible by
        `groups`, or bad window arguments.
      NotImplementedError: `lora_rank` given."""
_OUTPUT_PADDING = """output_padding: optional extra size added to one side of each spatial
        output (an int or one per dim, each below its stride), to pick among the sizes
        that convolve back to the input's."""
_TRANSPOSE_RAISES = """ValueError: non-positive `filters`, an `output_padding` not below the
        strides, or bad window arguments."""
_TRANSPOSE_TITLE = """{rank}-D transposed convolution (the gradient of a convolution with respect
    to its input), used to upsample: with "same" padding each spatial size is multiplied by
    the stride; with "valid" it becomes `(size - 1) * stride + max(kernel, stride)`."""

_DEPTHWISE_TITLE = """{rank}-D depthwise convolution: each input channel is convolved with its own
    `depth_multiplier` filters (no mixing across channels)."""
_SEPARABLE_TITLE = """{rank}-D separable convolution: a depthwise convolution (each input channel
    with its own `depth_multiplier` filters) followed by a pointwise convolution mixing the
    channels into `filters` outputs; far fewer weights than a full convolution."""
_SEPARABLE_WEIGHTS = """depthwise_initializer, pointwise_initializer: the depthwise/pointwise
        weights' initializers (default "glorot_uniform").
      depthwise_regularizer, pointwise_regularizer: optional penalties on them.
      depthwise_constraint, pointwise_constraint: optional projections after each update."""

_RANKS = {  # rank: (the inputs' layouts, the window axes of the kernel, the sizes' forms)
    1: ("(batch, steps, channels) (channels last) or (batch, channels, steps)", "kw", "an int"),
    2: ("(batch, rows, cols, channels) (channels last) or (batch, channels, rows, cols)",
        "kh, kw", "an int or a tuple of 2 ints"),
    3: ("(batch, depth, rows, cols, channels) (channels last) or\n"
        "    (batch, channels, depth, rows, cols)", "kd, kh, kw", "an int or a tuple of 3 ints"),
}
_TITLES = {1: "1-D convolution over the steps of sequences.",
           2: "2-D convolution over images (a cross-correlation, as in every deep-learning\n"
              "    framework).",
           3: "3-D convolution over volumes."}
_CONV2D_EXAMPLE = (">>> tf.keras.layers.Conv2D(8, 3, padding=\"same\")(tf.zeros((1, 5, 5, 3)))"
                   ".shape\n    TensorShape([1, 5, 5, 8])")


def _docs(rank: int) -> dict[str, str]:
    """The docstrings of Conv<rank>D and Conv<rank>DTranspose."""
    inputs, window, sizes = _RANKS[rank]
    conv_window = "kernel_size" if rank == 1 else window
    causal = (', or "causal" (left padding only: step t sees\n        no later steps)'
              if rank == 1 else "")
    conv = _CONV.format(title=_TITLES[rank], inputs=inputs, sizes=sizes, causal=causal,
                        kernels=f"the kernel has shape ({conv_window}, in_channels / groups, "
                                "filters)", filters=_FILTERS, middle=_GROUPS,
                        weights=_weights("kernel"), lora=_LORA, raises=_raises(_CONV_RAISES))
    transpose = _CONV.format(title=_TRANSPOSE_TITLE.format(rank=rank), inputs=inputs,
                             kernels=f"the kernel has shape ({window}, filters, in_channels)",
                             sizes=sizes, causal="", filters=_FILTERS, middle=_OUTPUT_PADDING,
                             weights=_weights("kernel"), lora="",
                             raises=_raises(_TRANSPOSE_RAISES))
    docs = {f"Conv{rank}D": sections(conv, example=_CONV2D_EXAMPLE if rank == 2 else ""),
            f"Conv{rank}DTranspose": transpose}
    if rank < 3:
        ones = ", ".join(["1"] * rank)
        docs[f"DepthwiseConv{rank}D"] = _CONV.format(
            title=_DEPTHWISE_TITLE.format(rank=rank), inputs=inputs, sizes=sizes, causal="",
            kernels=f"the kernel has shape ({window}, in_channels, depth_multiplier); the "
                    "output has\n    `in_channels * depth_multiplier` channels",
            filters="", middle="depth_multiplier: the number of filters per input channel.",
            weights=_weights("depthwise"), lora="", raises="")
        docs[f"SeparableConv{rank}D"] = _CONV.format(
            title=_SEPARABLE_TITLE.format(rank=rank), inputs=inputs, sizes=sizes, causal="",
            kernels=f"the\n    depthwise kernel has shape ({window}, in_channels, "
                    f"depth_multiplier), the pointwise kernel\n    ({ones}, in_channels * "
                    "depth_multiplier, filters)", filters=_FILTERS,
            middle="depth_multiplier: the number of depthwise filters per input channel.",
            weights=_SEPARABLE_WEIGHTS, lora="", raises="")
    return docs


_ALL = _docs(1) | _docs(2) | _docs(3)
DOCS = {name: _ALL[name] for name in ("Conv1D", "Conv2D", "Conv2DTranspose",
                                      "DepthwiseConv2D", "SeparableConv2D")}
ND_DOCS = {name: _ALL[name] for name in ("Conv3D", "Conv1DTranspose", "Conv3DTranspose",
                                         "DepthwiseConv1D", "SeparableConv1D")}
