"""`tf.keras.utils.Config` (Keras 3's attribute dict), `standardize_dtype` (Keras 3's dtype
names, TF backend: Python `int` is int64) and the interactive logging switch
(`enable/disable/is_interactive_logging_enabled`, also under keras.config): when off, the
directory loaders' messages go to the `logging` module instead of stdout, as Keras'
print_msg sends them to absl logging."""

from __future__ import annotations

import copy
import difflib
import json
import logging

from ndflow.core.api_export import keras_export
from ndflow.keras.backend_functions import floatx

ALLOWED_DTYPES = ("float16", "float32", "float64", "uint8", "uint16", "uint32", "uint64",
                  "int8", "int16", "int32", "int64", "bfloat16", "bool", "string",
                  "float8_e4m3fn", "float8_e5m2", "complex64", "complex128")
_PYTHON_DTYPES = {bool: "bool", int: "int64", float: "float32", str: "string",
                  "int": "int64", complex: "complex128"}


@keras_export("keras.utils.standardize_dtype", "keras.backend.standardize_dtype")
def standardize_dtype(dtype):
    """Keras' standard name of a dtype.

    Args:
      dtype: a dtype name, a Python type (int is "int64", float "float32", bool
        "bool", str "string"), a NumPy dtype or type, or a `tf.DType`; None means
        `keras.config.floatx()`.

    Returns:
      A dtype name such as "float32".

    Raises:
      ValueError: a value that names no dtype Keras knows.

    Example:

    >>> tf.keras.utils.standardize_dtype(np.float16), tf.keras.utils.standardize_dtype(None)
    ('float16', 'float32')
    """
    if dtype is None:
        return floatx()
    try:
        dtype = _PYTHON_DTYPES.get(dtype, dtype)
    except TypeError:  # unhashable
        pass
    if hasattr(dtype, "name"):
        dtype = dtype.name
    elif hasattr(dtype, "__name__"):
        dtype = dtype.__name__
    elif "torch" in str(dtype):
        dtype = str(dtype).split(".")[-1]
    if dtype not in ALLOWED_DTYPES:
        raise ValueError(f"Invalid dtype: {dtype}")
    return dtype


_INTERACTIVE = {"value": True}


@keras_export("keras.utils.enable_interactive_logging",
              "keras.config.enable_interactive_logging")
def enable_interactive_logging():
    """Sends Keras' messages (progress bars, `print_msg`) to stdout, the default (see
    `disable_interactive_logging`).
    """
    _INTERACTIVE["value"] = True


@keras_export("keras.utils.disable_interactive_logging",
              "keras.config.disable_interactive_logging")
def disable_interactive_logging():
    """Sends Keras' messages (progress bars, `print_msg`) to the `logging` module at INFO
    level instead of stdout, e.g. for jobs whose logs are collected.
    """
    _INTERACTIVE["value"] = False


@keras_export("keras.utils.is_interactive_logging_enabled",
              "keras.config.is_interactive_logging_enabled")
def is_interactive_logging_enabled():
    """Whether Keras' messages (progress bars, `print_msg`) go to stdout (True, the
    default) or to the `logging` module.

    Returns:
      A bool.
    """
    return _INTERACTIVE["value"]


def print_msg(message: str) -> None:
    """Keras' print_msg: stdout when interactive logging is on, else logging.info."""
    if _INTERACTIVE["value"]:
        print(message, flush=True)
    else:
        logging.getLogger("ndflow.keras").info(message)


@keras_export("keras.utils.Config")
class Config:
    """A dict of settings also readable and writable as attributes (`config.x = 1`,
    `config["x"]`), with `as_dict()`, `to_json()`, and `freeze()` to make it read-only
    (every later mutation raises).

    Args:
      **kwargs: the initial settings.

    Example:

    >>> config = tf.keras.utils.Config(learning_rate=0.1)
    >>> config.epochs = 3
    >>> config.as_dict()
    {'learning_rate': 0.1, 'epochs': 3}
    """

    def __init__(self, **kwargs):
        object.__setattr__(self, "_config", kwargs)
        object.__setattr__(self, "_frozen", False)

    @property
    def frozen(self):
        """Whether mutations are refused."""
        return self._frozen

    def freeze(self):
        object.__setattr__(self, "_frozen", True)

    def unfreeze(self):
        object.__setattr__(self, "_frozen", False)

    def _raise_if_frozen(self):
        if self._frozen:
            raise ValueError("Cannot mutate attribute(s) because the config is frozen.")

    def as_dict(self):
        return copy.copy(self._config)

    def to_json(self):
        return json.dumps(self._config)

    def keys(self):
        return self._config.keys()

    def values(self):
        return self._config.values()

    def items(self):
        return self._config.items()

    def pop(self, *args):
        self._raise_if_frozen()
        return self._config.pop(*args)

    def update(self, *args, **kwargs):
        self._raise_if_frozen()
        return self._config.update(*args, **kwargs)

    def get(self, keyname, value=None):
        return self._config.get(keyname, value)

    def __setattr__(self, name, value):
        if hasattr(type(self), name):  # the class's own attributes and properties
            return object.__setattr__(self, name, value)
        self._raise_if_frozen()
        self._config[name] = value
        return None

    def __getattr__(self, name):  # only reached for names that are not real attributes
        if name.startswith("__") or name in ("_config", "_frozen"):
            raise AttributeError(name)
        if name in self._config:
            return self._config[name]
        msg = f"Unknown attribute: '{name}'."
        close = difflib.get_close_matches(name, self._config.keys(), n=1, cutoff=0.7)
        if close:
            msg += f" Did you mean '{close[0]}'?"
        raise AttributeError(msg)

    def __setitem__(self, key, item):
        self._raise_if_frozen()
        self._config[key] = item

    def __getitem__(self, key):
        return self._config[key]

    def __delitem__(self, key):
        self._raise_if_frozen()
        del self._config[key]

    def __contains__(self, item):
        return item in self._config

    def __iter__(self):
        yield from sorted(self._config.keys())

    def __len__(self):
        return len(self._config)

    def __repr__(self):
        return f"<Config {self._config}>"
