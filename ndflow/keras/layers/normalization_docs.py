"""The docstrings of the normalization layers of normalization_layers.py (attached at its end)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "epsilon": "added to the variance.",
    "center": "whether to add the learned offset `beta`.",
    "scale": "whether to multiply by the learned scale `gamma`.",
    "beta_initializer": "`beta`'s initializer (default zeros).",
    "gamma_initializer": "`gamma`'s initializer (default ones).",
    "beta_regularizer": "optional penalty on `beta`.",
    "gamma_regularizer": "optional penalty on `gamma`.",
    "beta_constraint": "optional projection of `beta` after each update.",
    "gamma_constraint": "optional projection of `gamma` after each update.",
    "**kwargs": "Layer arguments (name, dtype, ...).",
}


DOCS = docs_with_args(_ARGS, {
    "BatchNormalization": (
        "Batch normalization: `gamma * (x - mean) / sqrt(var + epsilon) + beta`, with one\n"
        "    mean and variance per channel of `axis`.\n"
        "\n"
        "    In training the batch's moments are used and the moving statistics updated,\n"
        "    `moving = moving * momentum + batch * (1 - momentum)`; at inference the moving\n"
        "    statistics are used. A frozen layer (`trainable = False`) always runs in inference\n"
        "    mode, as in Keras (fine-tuning keeps the learned statistics).",
        ["axis: the channels axis (default -1; 1 for channels-first images).",
         "momentum: the moving statistics' decay.", "epsilon", "center", "scale",
         "beta_initializer", "gamma_initializer", "beta_regularizer", "gamma_regularizer",
         "beta_constraint", "gamma_constraint",
         "moving_mean_initializer: the moving mean's initializer (default zeros).",
         "moving_variance_initializer: the moving variance's initializer (default ones).",
         "renorm: whether to use batch renormalization (Ioffe 2017).",
         'renorm_clipping: with `renorm`, optional dict of "rmax", "rmin", "dmax" clipping the\n'
         "        correction.",
         "renorm_momentum: with `renorm`, the decay of the renormalization statistics.",
         "synchronized: accepted for Keras' signature (one replica: the local statistics are\n"
         "        the global ones).",
         "**kwargs"],
        """

    Raises:
      ValueError: bad `renorm_clipping` keys or bounds.""", """

    Example:

    >>> layer = tf.keras.layers.BatchNormalization()
    >>> layer(tf.ones((2, 3)), training=False).shape
    TensorShape([2, 3])"""),
    "LayerNormalization": (
        "Layer normalization: each sample is normalized over `axis`,\n"
        "    `(x - mean) / sqrt(var + epsilon) * gamma + beta`, with the same computation in\n"
        "    training and inference.\n"
        "\n"
        "    Inputs are not autocast; the output has the layer's compute dtype. Keras 3's\n"
        "    deprecated `rms_scaling=True` keyword is accepted (with a warning): it divides by\n"
        "    `sqrt(var + epsilon)` without centring and uses no `beta`.",
        ["axis: the axis or list of axes to normalize over (default the last); `gamma` and\n"
         "        `beta` have their shape.",
         "epsilon", "center", "scale", "beta_initializer", "gamma_initializer", "beta_regularizer",
         "gamma_regularizer", "beta_constraint", "gamma_constraint", "**kwargs"],
        "", """

    Example:

    >>> out = tf.keras.layers.LayerNormalization()(tf.constant([[1.0, 3.0]]))
    >>> out.numpy().round(4)
    array([[-0.9995,  0.9995]], dtype=float32)"""),
    "GroupNormalization": (
        "Group normalization: the channels of `axis` are split into `groups`, and each\n"
        "    sample is normalized over each group (its channels and all other axes), then scaled "
        "by\n"
        "    `gamma` and shifted by `beta` per channel.\n"
        "\n"
        "    `groups=1` is layer normalization over all features; `groups=-1` (one channel per\n"
        "    group) is instance normalization.",
        ["groups: the number of groups (dividing the channel count), or -1.",
         "axis: the channels axis (default the last).", "epsilon", "center", "scale",
         "beta_initializer", "gamma_initializer", "beta_regularizer", "gamma_regularizer",
         "beta_constraint", "gamma_constraint", "**kwargs"],
        """

    Raises:
      ValueError: `groups` neither a positive int nor -1; when built, channels not
        divisible by `groups`."""),
})
