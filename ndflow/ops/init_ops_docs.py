"""The docstrings of the Keras initializer classes in init_ops.py (attached at its end; see
core/doc_tables.py)."""

from __future__ import annotations

_CALL = """    Calling the instance with `(shape, dtype=None)` returns a tensor of that shape
    (dtype: the call's, else the constructor's, else float32)."""
_SEED = ("      seed: optional int. A seeded initializer gives the same values on every call;\n"
         "        an unseeded one draws a seed when made (`keras.utils.set_random_seed` replays "
         "it).\n")
_DT = "      dtype: optional default dtype of the values.\n"
_AXES = ("      input_axes: optional axes of the shape that count as inputs for the fans "
         "(default: TF's\n        rule, the second-to-last axis times the receptive field).\n"
         "      output_axes: likewise for outputs (default: the last axis).\n")


def _cls(summary: str, args: str, example: str, details: str = "", raises: str = "") -> str:
    raises = f"\n    Raises:\n{raises}" if raises else ""
    return f"""{summary}
{details}
{_CALL}

    Args:
{args}{raises}
    Example:
      {example}
    """


def _scaled(name: str, scale: str, mode: str, dist: str) -> str:
    what = ("uniform in [-limit, limit] with limit = sqrt(3 * {s} / {m})" if dist == "uniform"
            else "truncated normal with variance {s} / {m}").format(s=scale, m=mode)
    return _cls(f"Initializer drawing {what}.",
                _SEED + _DT + _AXES,
                f">>> tf.keras.initializers.{name}(seed=1)([4, 3]).shape\n"
                "      TensorShape([4, 3])",
                f"\n    The same as `VarianceScaling(scale={scale}, mode='{mode}', "
                f"distribution='{dist}')`.\n")


DOCS = {
    "Initializer": """The base class of initializers: callables `init(shape, dtype=None)`.

    Subclasses implement `__call__(shape, dtype=None, **kwargs)` returning a tensor, and
    `get_config()` returning the constructor arguments, so that `from_config(config)`
    (and `tf.keras.initializers.deserialize`) can rebuild them.

    Args:
      dtype: optional default dtype of the values.

    Example:
      >>> class Twos(tf.keras.initializers.Initializer):
      ...     def __call__(self, shape, dtype=None, **kwargs):
      ...         return tf.fill(shape, tf.constant(2, dtype or tf.float32))
      >>> Twos()([2]).numpy()
      array([2., 2.], dtype=float32)
    """,
    "Zeros": _cls("Initializer that gives zeros.", _DT,
                  ">>> tf.keras.initializers.Zeros()([2]).numpy()\n"
                  "      array([0., 0.], dtype=float32)"),
    "Ones": _cls("Initializer that gives ones.", _DT,
                 ">>> tf.keras.initializers.Ones()([2], tf.int32).numpy()\n"
                 "      array([1, 1], dtype=int32)"),
    "Constant": _cls("Initializer that gives `value`.",
                     "      value: a scalar (fills the shape) or a list/array with as many "
                     "elements as the shape.\n" + _DT +
                     "      verify_shape: accepted for compatibility; ignored.\n"
                     "      support_partition: accepted for compatibility; ignored.\n",
                     ">>> tf.keras.initializers.Constant(2.0)([2]).numpy()\n"
                     "      array([2., 2.], dtype=float32)"),
    "RandomNormal": _cls("Initializer drawing from a normal distribution N(mean, stddev**2).",
                         "      mean: the mean.\n      stddev: the standard deviation.\n"
                         + _SEED + _DT,
                         ">>> tf.keras.initializers.RandomNormal(seed=1)([2, 3]).shape\n"
                         "      TensorShape([2, 3])"),
    "RandomUniform": _cls("Initializer drawing uniformly from [minval, maxval).",
                          "      minval: the lower bound.\n      maxval: the upper bound "
                          "(integer dtypes are allowed).\n" + _SEED + _DT,
                          ">>> v = tf.keras.initializers.RandomUniform(-1.0, 1.0, seed=1)"
                          "([100])\n      >>> bool(tf.reduce_all(tf.abs(v) <= 1.0))\n"
                          "      True"),
    "TruncatedNormal": _cls("Initializer drawing from a normal distribution cut at two "
                            "standard deviations.",
                            "      mean: the mean.\n      stddev: the standard deviation "
                            "before truncation.\n" + _SEED + _DT,
                            ">>> v = tf.keras.initializers.TruncatedNormal(stddev=1.0, "
                            "seed=1)([100])\n      >>> bool(tf.reduce_all(tf.abs(v) <= 2.0))"
                            "\n      True",
                            "\n    Values further than 2 * stddev from the mean are drawn "
                            "again.\n"),
    "VarianceScaling": _cls("Initializer whose variance is `scale` divided by a fan of the "
                            "shape.",
                            "      scale: the scale factor (> 0).\n"
                            "      mode: 'fan_in', 'fan_out' or 'fan_avg': the fan that divides "
                            "`scale`.\n"
                            "      distribution: 'truncated_normal', 'untruncated_normal' or "
                            "'uniform'.\n" + _SEED + _DT + _AXES,
                            ">>> tf.keras.initializers.VarianceScaling(2.0, seed=1)([4, 3])"
                            ".shape\n      TensorShape([4, 3])",
                            "\n    For a kernel of shape (h, w, in, out) the fans are h * w * in "
                            "and h * w * out.\n",
                            "      ValueError: if `scale` is not positive or `mode` or "
                            "`distribution` is unknown.\n"),
    "GlorotNormal": _scaled("GlorotNormal", "1", "fan_avg", "truncated_normal"),
    "GlorotUniform": _scaled("GlorotUniform", "1", "fan_avg", "uniform"),
    "HeNormal": _scaled("HeNormal", "2", "fan_in", "truncated_normal"),
    "HeUniform": _scaled("HeUniform", "2", "fan_in", "uniform"),
    "LecunNormal": _scaled("LecunNormal", "1", "fan_in", "truncated_normal"),
    "LecunUniform": _scaled("LecunUniform", "1", "fan_in", "uniform"),
    "Identity": _cls("Initializer that gives `gain` times the identity matrix (2-D shapes only).",
                     "      gain: the factor on the diagonal.\n" + _DT,
                     ">>> tf.keras.initializers.Identity(2.0)([2, 2]).numpy()\n"
                     "      array([[2., 0.],\n             [0., 2.]], dtype=float32)",
                     raises="      ValueError: when called with a shape that is not 2-D.\n"),
    "RandomNormalInitializerV2": _cls(
        "TF2's `tf.random_normal_initializer`: normal values N(mean, stddev**2).",
        "      mean: the mean.\n      stddev: the standard deviation.\n"
        "      seed: optional int op seed (combined with the global seed).\n",
        ">>> tf.random_normal_initializer(stddev=1.0, seed=1)([2, 3]).shape\n"
        "      TensorShape([2, 3])",
        "\n    Unlike the Keras initializers each call draws new values.\n"),
    "RandomUniformInitializerV2": _cls(
        "TF2's `tf.random_uniform_initializer`: uniform values in [minval, maxval).",
        "      minval: the lower bound.\n      maxval: the upper bound.\n"
        "      seed: optional int op seed (combined with the global seed).\n",
        ">>> v = tf.random_uniform_initializer(0.0, 1.0, seed=1)([100])\n"
        "      >>> bool(tf.reduce_all(v < 1.0))\n      True",
        "\n    Unlike the Keras initializers each call draws new values.\n"),
    "get": """An initializer from a name, a config dict, an instance or a callable.

    Args:
      identifier: None, a class name ("GlorotUniform") or snake_case name ("glorot_uniform"),
        a config dict as `serialize` gives, an `Initializer` instance or class, or a callable.

    Returns:
      An initializer (None for None; an instance and a callable are returned as they are).

    Raises:
      ValueError: if the identifier cannot be interpreted.

    Example:
      >>> tf.keras.initializers.get("ones")
      <Ones {}>
    """,
}
