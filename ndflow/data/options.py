"""`tf.data.Options` / `tf.data.ThreadingOptions` and `Dataset.with_options`.

The options are recorded as TensorFlow's (unset options read None, unknown names are refused)
and travel with the dataset; ndflow's pipeline honours `deterministic` (a parallel map whose
own `deterministic` is None follows it) and sizes its thread pools by CPU count otherwise.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.data.dataset import DatasetV2, register_op


class _OptionsBase:
    _NAMES: tuple = ()

    def __init__(self):
        for name in self._NAMES:
            object.__setattr__(self, name, None)

    def __setattr__(self, name, value):
        if name not in self._NAMES:
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}.")
        object.__setattr__(self, name, value)

    def __eq__(self, other):
        return type(self) is type(other) and all(
            getattr(self, n) == getattr(other, n) for n in self._NAMES)

    def __hash__(self):
        return hash(tuple(repr(getattr(self, n)) for n in self._NAMES))

    def merge(self, options):
        """These options with the ones set in `options` taking precedence."""
        out = type(self)()
        for n in self._NAMES:
            mine, theirs = getattr(self, n), getattr(options, n)
            if isinstance(mine, _OptionsBase):
                object.__setattr__(out, n, mine.merge(theirs))
            else:
                object.__setattr__(out, n, theirs if theirs is not None else mine)
        return out


@tf_export("data.ThreadingOptions", "data.experimental.ThreadingOptions")
class ThreadingOptions(_OptionsBase):
    _NAMES = ("max_intra_op_parallelism", "private_threadpool_size")


@tf_export("data.Options")
class Options(_OptionsBase):
    _NAMES = ("autotune", "dataset_name", "deterministic", "experimental_deterministic",
              "experimental_distribute", "experimental_external_state_policy",
              "experimental_optimization", "experimental_service", "experimental_slack",
              "experimental_symbolic_checkpoint", "experimental_threading",
              "experimental_warm_start", "framework_type", "threading")

    def __init__(self):
        super().__init__()
        object.__setattr__(self, "threading", ThreadingOptions())


class OptionsDataset(DatasetV2):
    def __init__(self, input_dataset: DatasetV2, options: Options):
        if not isinstance(options, Options):
            raise TypeError(f"options must be a tf.data.Options, got {options!r}")
        self._input = input_dataset
        self._options = input_dataset.options().merge(options)
        super().__init__(input_dataset.element_spec)

    def _inputs(self):
        return [self._input]

    def _cardinality(self):
        return self._input._cardinality()

    def _iter_flat(self):
        return self._input._iter_flat()

    def _batches(self, size, drop_remainder):
        return self._input._batches(size, drop_remainder)


register_op("with_options")(OptionsDataset)
register_op("options_class")(Options)
