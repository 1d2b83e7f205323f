"""`tf.compat.v1.flags` (also `tf.compat.v1.app.flags`): absl's flags, as TensorFlow has them.

Everything `absl.flags` exports, with TensorFlow's two differences:
- `DEFINE_string/boolean/bool/float/integer` also take TF 1.x's keyword names
  (`flag_name`, `default_value`, `docstring`, with a deprecation warning);
- reading a value from `FLAGS` before the flags were parsed parses `sys.argv` first
  (absl raises `UnparsedFlagAccessError`), so TF1 scripts that read `FLAGS.x` without
  `app.run` work.
`app.run` (ndflow/core/app.py) parses the command line, tolerating unknown flags.
"""

from __future__ import annotations

import functools
import sys

from absl import flags as _absl_flags

from ndflow.core import logging
from ndflow.core.api_export import tf_export

globals().update({name: getattr(_absl_flags, name) for name in _absl_flags.__all__})
_absl_flags.disclaim_key_flags()  # this module does not define the key flags of a program

_RENAMED_ARGUMENTS = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _accepting_tf1_names(define):
    @functools.wraps(define)
    def wrapper(*args, **kwargs):
        old = [k for k in _RENAMED_ARGUMENTS if k in kwargs]
        for key in old:
            kwargs[_RENAMED_ARGUMENTS[key]] = kwargs.pop(key)
        if old:
            logging.warning("Use of the keyword argument names (flag_name, default_value, "
                            "docstring) is deprecated, please use (name, default, help) "
                            "instead.")
        return define(*args, **kwargs)
    return wrapper


DEFINE_string = _accepting_tf1_names(_absl_flags.DEFINE_string)
DEFINE_boolean = _accepting_tf1_names(_absl_flags.DEFINE_boolean)
DEFINE_bool = DEFINE_boolean
DEFINE_float = _accepting_tf1_names(_absl_flags.DEFINE_float)
DEFINE_integer = _accepting_tf1_names(_absl_flags.DEFINE_integer)


class _FlagValuesWrapper:
    """absl's FLAGS, parsing `sys.argv` on the first read of a value before any parse."""

    def __init__(self, flag_values):
        self.__dict__["_wrapped"] = flag_values

    def __getattr__(self, name):
        wrapped = self.__dict__["_wrapped"]
        if not wrapped.is_parsed():
            wrapped(sys.argv)
        return getattr(wrapped, name)

    def __setattr__(self, name, value):
        setattr(self.__dict__["_wrapped"], name, value)

    def __delattr__(self, name):
        delattr(self.__dict__["_wrapped"], name)

    def __dir__(self):
        return dir(self.__dict__["_wrapped"])

    def __getitem__(self, name):
        return self.__dict__["_wrapped"][name]

    def __setitem__(self, name, flag):
        self.__dict__["_wrapped"][name] = flag

    def __contains__(self, name):
        return name in self.__dict__["_wrapped"]

    def __len__(self):
        return len(self.__dict__["_wrapped"])

    def __iter__(self):
        return iter(self.__dict__["_wrapped"])

    def __str__(self):
        return str(self.__dict__["_wrapped"])

    def __call__(self, *args, **kwargs):
        return self.__dict__["_wrapped"](*args, **kwargs)


FLAGS = _FlagValuesWrapper(_absl_flags.FLAGS)

tf_export(v1=["flags", "app.flags"])(sys.modules[__name__])
