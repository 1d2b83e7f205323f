"""`tf.data.Options` and its sub-options (`tf.data.ThreadingOptions`,
`tf.data.experimental.AutotuneOptions`, `DistributeOptions`, `OptimizationOptions`,
`ServiceOptions`), their enums, and `Dataset.with_options`.

As TensorFlow's: each option is type-checked when set, reads its default (mostly None) while
unset, unknown names are refused, `merge` keeps the later of two set values (warning when
they differ), and the options a dataset returns from `options()` are read-only.

What ndflow's pipeline honours: `deterministic` (a parallel map whose own `deterministic` is
None follows it), `autotune.enabled=False` (a map with num_parallel_calls=AUTOTUNE runs
sequentially: nothing tunes its parallelism up), `experimental_optimization.
map_and_batch_fusion=False` or `apply_default_optimizations=False` (map+batch stay unfused),
`shuffle_and_repeat_fusion` and `noop_elimination` (they decide how many seed pairs a repeat
takes from the shuffles before it, as TF's, ordering.py) and
`threading.max_intra_op_parallelism` (threads per pipeline worker). A map reads them from
the options set anywhere in the pipeline (those downstream as it starts on the pulling
thread). The rest (autotune budgets and algorithm, the other static optimizations, which
ndflow applies by its own rules; the distribute options; the external state policy; service
options) are recorded and travel with the dataset.
"""

from __future__ import annotations

import contextvars
import enum
import logging

from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.data import options_docs
from ndflow.data.dataset import DatasetV2, register_op
from ndflow.data.unary_dataset import UnaryDataset

_log = logging.getLogger("ndflow.data")


@tf_export("data.experimental.AutotuneAlgorithm")
class AutotuneAlgorithm(enum.Enum):
    """Which algorithm the autotuner uses (recorded)."""
    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


@tf_export("data.experimental.AutoShardPolicy")
class AutoShardPolicy(enum.IntEnum):
    """How a distribution strategy shards a dataset among workers."""
    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


@tf_export("data.experimental.ExternalStatePolicy")
class ExternalStatePolicy(enum.Enum):
    """What to do with external state (e.g. a stateful map function) when serializing."""
    WARN = 0
    IGNORE = 1
    FAIL = 2


# `shard(SHARD_HINT, SHARD_HINT)` placeholders that AutoShardPolicy.HINT fills in.
SHARD_HINT = -1
tf_export("data.experimental.SHARD_HINT")(SHARD_HINT)


class _Option:
    """A type-checked option: reads `default()` until set (TF's create_option)."""

    def __init__(self, ty, default=lambda: None):
        self.ty, self.default = ty, default

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        values = obj._values
        if self.name not in values:
            values[self.name] = self.default()
            if isinstance(values[self.name], OptionsBase):
                values[self.name]._mutable = obj._mutable
        return values[self.name]

    def __set__(self, obj, value):
        if not isinstance(value, self.ty):
            raise TypeError(f'Property "{self.name}" must be of type {self.ty}, got: {value} '
                            f"(type: {type(value)})")
        obj._values[self.name] = value


class OptionsBase:
    """A set of options (TF's tf.data OptionsBase)."""

    def __init__(self):
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_mutable", True)

    @classmethod
    def _option_names(cls) -> list:
        return [n for n in dir(cls) if isinstance(getattr(cls, n, None), _Option)
                or isinstance(cls.__dict__.get(n), _Option)]

    def __setattr__(self, name, value):
        if name == "_mutable":
            object.__setattr__(self, name, value)
            for v in self._values.values():
                if isinstance(v, OptionsBase):
                    v._mutable = value
            return
        if not self._mutable:
            raise ValueError("Mutating `tf.data.Options()` returned by "
                             "`tf.data.Dataset.options()` has no effect. Use "
                             "`tf.data.Dataset.with_options(options)` to set or update "
                             "dataset options.")
        if not isinstance(getattr(type(self), name, None), _Option):
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}.")
        object.__setattr__(self, name, value)

    def __eq__(self, other):
        if not isinstance(other, type(self)):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n)
                   for n in set(self._values) | set(other._values))

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # mutable, compared by value (as TF's)

    def __repr__(self):
        default = type(self)()
        set_ = {n: v for n, v in sorted(self._values.items()) if v != getattr(default, n)}
        return f"{type(self).__name__}({set_})"

    def _frozen(self):
        """A read-only copy (what `Dataset.options()` returns)."""
        out = merge_options(self)
        out._mutable = False
        return out

    def merge(self, options):
        """These options with the ones set in `options` taking precedence."""
        return merge_options(self, options)


def merge_options(*options_list):
    """Merge option sets: a value set later wins (warning when two set values differ);
    nested option sets merge recursively; `framework_type` lists concatenate."""
    if not options_list:
        raise ValueError("At least one options should be provided")
    result_type = type(options_list[0])
    for options in options_list:
        if not isinstance(options, result_type):
            raise TypeError(f"Could not merge incompatible options of type {type(options)} "
                            f"and {result_type}.")
    if not isinstance(options_list[0], OptionsBase):
        raise TypeError("All options to be merged should inherit from `OptionsBase` but found "
                        f"option of type {type(options_list[0])} which does not.")
    default, result = result_type(), result_type()
    for options in options_list:
        for name in list(options._values):
            this, that, base = getattr(result, name), getattr(options, name), getattr(default,
                                                                                      name)
            if that == base:
                continue
            if this == base:
                setattr(result, name, merge_options(that) if isinstance(that, OptionsBase)
                        else that)
            elif isinstance(this, OptionsBase):
                setattr(result, name, merge_options(this, that))
            elif name == "framework_type":
                setattr(result, name, this + that)
            elif this != that:
                _log.warning("Changing the value of option %s from %r to %r.", name, this, that)
                setattr(result, name, that)
    return result


@tf_export("data.experimental.AutotuneOptions")
class AutotuneOptions(OptionsBase):
    """Autotuning options (recorded: ndflow sizes tf.data.AUTOTUNE parallelism by CPU
    count)."""
    enabled = _Option(bool)
    cpu_budget = _Option(int)
    ram_budget = _Option(int)
    autotune_algorithm = _Option(AutotuneAlgorithm)
    initial_parallelism = _Option(int)
    min_parallelism = _Option(int)


@tf_export("data.experimental.DistributeOptions")
class DistributeOptions(OptionsBase):
    """How a distribution strategy shards the dataset (recorded; read by tf.distribute)."""
    auto_shard_policy = _Option(AutoShardPolicy, lambda: AutoShardPolicy.AUTO)
    num_devices = _Option(int)


@tf_export("data.experimental.OptimizationOptions")
class OptimizationOptions(OptionsBase):
    """TF's static pipeline optimizations (recorded: ndflow fuses map+batch and runs maps
    in parallel by its own rules; shuffle+repeat fusion and repeat(1) elimination change
    later shuffle orders, and are followed)."""
    apply_default_optimizations = _Option(bool)
    filter_fusion = _Option(bool)
    filter_parallelization = _Option(bool)
    inject_prefetch = _Option(bool)
    seq_interleave_prefetch = _Option(bool)
    map_and_batch_fusion = _Option(bool)
    map_and_filter_fusion = _Option(bool)
    map_fusion = _Option(bool)
    map_parallelization = _Option(bool)
    noop_elimination = _Option(bool)
    parallel_batch = _Option(bool)
    shuffle_and_repeat_fusion = _Option(bool)


@tf_export("data.experimental.ServiceOptions")
class ServiceOptions(OptionsBase):
    """tf.data service options (recorded: ndflow has no tf.data service)."""
    pinned = _Option(bool)


@tf_export("data.ThreadingOptions", "data.experimental.ThreadingOptions")
class ThreadingOptions(OptionsBase):
    """Threading: `max_intra_op_parallelism` sets the threads each pipeline worker's ops
    use; `private_threadpool_size` is recorded."""
    max_intra_op_parallelism = _Option(int)
    private_threadpool_size = _Option(int)


@tf_export("data.Options")
class Options(OptionsBase):
    """A dataset's options (see the module docstring for which ndflow honours)."""
    autotune = _Option(AutotuneOptions, AutotuneOptions)
    dataset_name = _Option(str)
    deterministic = _Option(bool)
    experimental_distribute = _Option(DistributeOptions, DistributeOptions)
    experimental_external_state_policy = _Option(ExternalStatePolicy)
    experimental_optimization = _Option(OptimizationOptions, OptimizationOptions)
    experimental_service = _Option(ServiceOptions, ServiceOptions)
    experimental_slack = _Option(bool)
    experimental_symbolic_checkpoint = _Option(bool)
    experimental_warm_start = _Option(bool)
    framework_type = _Option(list)
    threading = _Option(ThreadingOptions, ThreadingOptions)

    # deprecated spellings of deterministic / threading (TF reads and writes them through)
    _ALIASES = {"experimental_deterministic": "deterministic",
                "experimental_threading": "threading"}

    def __getattr__(self, name):
        alias = Options._ALIASES.get(name)
        if alias is None:
            raise AttributeError(f"'Options' object has no attribute '{name}'")
        return getattr(self, alias)

    def __setattr__(self, name, value):
        super().__setattr__(Options._ALIASES.get(name, name), value)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(Options._ALIASES))


def _default_options():
    return Options()._frozen()


# The options of the `with_options` datasets a pull is passing through (set around each pull
# of an OptionsDataset's input), so that transformations upstream of `with_options` see
# them when they start, as TensorFlow applies a pipeline's options to all of it.
_PULL_OPTIONS: contextvars.ContextVar = contextvars.ContextVar("tf_data_pull_options",
                                                              default=None)


def pipeline_options(dataset: DatasetV2) -> Options:
    """`dataset`'s own options merged with those set downstream of it in the pipeline being
    iterated (known on the thread that pulls; worker threads see the dataset's own)."""
    downstream = _PULL_OPTIONS.get()
    own = dataset.options()
    return own if downstream is None else own.merge(downstream)


class OptionsDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, options: Options):
        if not isinstance(options, Options):
            raise TypeError(f"options must be a tf.data.Options, got {options!r}")
        self._input = input_dataset
        self._options = input_dataset.options().merge(options)._frozen()
        super().__init__(input_dataset.element_spec)

    def _iter_flat(self):
        token = _PULL_OPTIONS.set(self._downstream(_PULL_OPTIONS.get()))
        try:  # the input's iterator is made under these options too (a repeat reads them)
            source = self._input._iter_flat()
        finally:
            _PULL_OPTIONS.reset(token)
        while True:
            token = _PULL_OPTIONS.set(self._downstream(_PULL_OPTIONS.get()))
            try:
                flat = next(source)
            except StopIteration:
                return
            finally:
                _PULL_OPTIONS.reset(token)
            yield flat

    def _downstream(self, outer):
        return self._options if outer is None else self._options.merge(outer)

    def _batches(self, size, drop_remainder):
        token = _PULL_OPTIONS.set(self._downstream(_PULL_OPTIONS.get()))
        try:
            return self._input._batches(size, drop_remainder)
        finally:
            _PULL_OPTIONS.reset(token)


register_op("with_options")(OptionsDataset)
register_op("options_class")(_default_options)


attach(globals(), options_docs.DOCS)
