"""`tf.keras.mixed_precision.Policy` (`DTypePolicy`) and the global policy.

A policy names a layer's compute dtype and variable dtype: "mixed_float16" computes in
float16 and keeps float32 variables, "mixed_bfloat16" computes in bfloat16, any dtype name
("float32") uses that dtype for both. Names, messages and repr follow Keras 3 (tf.keras in TF
2.21). `set_global_policy` also keeps Keras 2's contract with the TF1 graph rewrite: a mixed
policy cannot be set once `enable_mixed_precision_graph_rewrite` is on, and setting one is
reported to it (which then refuses to enable).
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.keras import global_config
from ndflow.train import mixed_precision as graph_rewrite

_MIXED = {"mixed_float16": ("float16", "float32"), "mixed_bfloat16": ("bfloat16", "float32")}


@keras_export("keras.DTypePolicy", "keras.mixed_precision.DTypePolicy",
              "keras.mixed_precision.Policy")
class DTypePolicy:
    """A layer's dtype policy: the dtype its computations run in (`compute_dtype`) and the
    dtype of its weights (`variable_dtype`).

    "mixed_float16" and "mixed_bfloat16" compute in 16 bits with float32 weights (mixed
    precision); a float dtype name ("float32", "float16", ...) uses it for both.

    Args:
      name: the policy's name (default "float32").

    Raises:
      TypeError: `name` is not a string.
      ValueError: a name that is neither a mixed policy nor a float dtype.

    Example:

    >>> policy = tf.keras.mixed_precision.Policy("mixed_float16")
    >>> policy.compute_dtype, policy.variable_dtype
    ('float16', 'float32')
    """

    def __init__(self, name: str | None = None):
        if name is None:
            name = "float32"
        if not isinstance(name, str):
            raise TypeError("'name' must be a string, such as 'mixed_float16'. Received: "
                            f"name={name} (of type {type(name)})")
        self._name = name
        self._compute_dtype, self._variable_dtype = self._parse_name(name)

    @staticmethod
    def _parse_name(name: str) -> tuple:
        if name in _MIXED:
            return _MIXED[name]
        try:
            dtype = dtypes.as_dtype(name).name
        except (TypeError, ValueError):
            raise ValueError(f"Cannot convert '{name}' to a mixed precision DTypePolicy. Valid "
                             "policies include 'mixed_float16', 'mixed_bfloat16', and the name "
                             "of any float dtype such as 'float32'.") from None
        return dtype, dtype

    @property
    def name(self) -> str:
        return self._name

    @property
    def compute_dtype(self) -> str:
        return self._compute_dtype

    @property
    def variable_dtype(self) -> str:
        return self._variable_dtype

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'

    def __eq__(self, other):
        # a FloatDTypePolicy is a DTypePolicy of another (older) name: they compare equal
        return isinstance(other, DTypePolicy) and other._name == self._name

    def __hash__(self):
        return hash((DTypePolicy, self._name))

    def get_config(self) -> dict:
        return {"name": self._name}

    @classmethod
    def from_config(cls, config: dict) -> DTypePolicy:
        return cls(**config)


@keras_export("keras.FloatDTypePolicy")
class FloatDTypePolicy(DTypePolicy):
    """Keras 3's earlier name for a float `DTypePolicy` (kept as a subclass that compares
    equal to the `DTypePolicy` of the same name).

    Args:
      name: the policy's name (default "float32").
    """


Policy = DTypePolicy
_global_policy: DTypePolicy | None = None


@keras_export("keras.mixed_precision.dtype_policy", "keras.mixed_precision.global_policy",
              "keras.config.dtype_policy")
def global_policy() -> DTypePolicy:
    """The dtype policy layers get when they are given none: the one `set_global_policy`
    chose, else the policy of `keras.config.floatx()` (float32 by default).

    Returns:
      A `DTypePolicy`.
    """
    return _global_policy if _global_policy is not None else DTypePolicy(global_config.floatx())


@keras_export("keras.mixed_precision.set_dtype_policy", "keras.mixed_precision.set_global_policy",
              "keras.config.set_dtype_policy")
def set_global_policy(policy) -> None:
    """Sets the dtype policy layers created afterwards use by default, e.g.
    "mixed_float16" for mixed precision training.

    Args:
      policy: a `DTypePolicy` or a policy name.

    Raises:
      ValueError: another type of value, or a mixed policy after
        `tf.compat.v1.train.enable_mixed_precision_graph_rewrite()` was called.

    Example:

    >>> tf.keras.mixed_precision.set_global_policy("mixed_float16")
    >>> tf.keras.layers.Dense(2).compute_dtype
    'float16'
    >>> tf.keras.mixed_precision.set_global_policy("float32")
    """
    global _global_policy
    if isinstance(policy, str):
        policy = DTypePolicy(policy)
    if not isinstance(policy, DTypePolicy):
        raise ValueError("Invalid `policy` argument. Expected the string name of a policy (such "
                         "as 'mixed_float16') or a `DTypePolicy` instance. Received: "
                         f"policy={policy} (of type {type(policy)})")
    is_mixed = policy.compute_dtype != policy.variable_dtype
    if is_mixed and graph_rewrite.is_mixed_precision_graph_rewrite_enabled():
        raise ValueError(
            f'The global dtype policy cannot be set to "{policy.name}", because the mixed '
            "precision graph rewrite has already been enabled.\n"
            "At most, one of the following can be called:\n\n"
            "  1. tf.compat.v1.train.enable_mixed_precision_graph_rewrite() (You called this "
            "first)\n"
            "  2. tf.keras.mixed_precision.set_global_policy() with a mixed precision policy "
            "(You called this second)\n\n"
            "You called both functions, which is an error, because both functions enable you "
            "to use mixed precision. If in doubt which function to use, use the second, as it "
            "supports Eager execution and is more customizable.")
    _global_policy = policy
    graph_rewrite.set_using_mixed_precision_policy(is_mixed)


dtype_policy = global_policy
set_dtype_policy = set_global_policy

__all__ = ["DTypePolicy", "Policy", "dtype_policy", "global_policy", "set_dtype_policy",
           "set_global_policy"]
