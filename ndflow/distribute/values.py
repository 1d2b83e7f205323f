"""Values that have one component per replica: `PerReplica` (each replica's own result),
`Mirrored` (the same value on every device) and `MirroredVariable` (a variable with one copy
per device, kept equal by writing every copy).

A `MirroredVariable` is a `tf.Variable` whose handle is the component of the replica that
uses it: replica r's reads and gradients see component r; in cross-replica context the
first (primary) component is read and writes go to every component; inside
`strategy.extended.update(var, fn)` the component being updated. A write in a replica
context aggregates the replicas' values first (`aggregation` SUM, MEAN or
ONLY_FIRST_REPLICA) through `merge_call`, as TensorFlow does. Checkpoints see one variable:
the primary's value is saved, and a restore (a cross-replica assign) writes every copy.
"""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.distribute import distribution_context as dc
from ndflow.distribute.reduce_util import ReduceOp
from ndflow.ops.arithmetic import add_n, truediv
from ndflow.ops.array_core import group
from ndflow.ops.array_fill import zeros_like
from ndflow.ops.cast import cast
from ndflow.ops.variable_enums import VariableAggregation, VariableAggregationV2
from ndflow.ops.variables import Variable


def current_replica_id() -> int:
    """The component the current code uses: the replica's, the update's, else the primary."""
    update = dc.update_replica_id()
    if update is not None:
        return update
    ctx = dc.get_replica_context()
    return 0 if ctx is None else getattr(ctx, "_replica_id", 0)


@tf_export("distribute.DistributedValues", v1=[])
class DistributedValues:
    """One value per replica (`.values`, in replica order)."""

    _kind = "DistributedValues"

    def __init__(self, values):
        self._values = tuple(values)

    @property
    def values(self) -> tuple:
        return self._values

    def _get(self):
        return self._values[min(current_replica_id(), len(self._values) - 1)]

    @property
    def _primary(self):
        return self._values[0]

    def _tf_function_parts(self) -> tuple:
        """A `tf.function` argument: each replica's part is traced as its own input."""
        return self._values

    def __repr__(self):
        body = ",\n".join(f"  {i}: {v!r}" for i, v in enumerate(self._values))
        return f"{self._kind}:{{\n{body}\n}}"

    def __str__(self):      # TF: the values' str (print shows tf.Tensor(...), as TF's)
        body = ",\n".join(f"  {i}: {v!s}" for i, v in enumerate(self._values))
        return f"{self._kind}:{{\n{body}\n}}"


class PerReplica(DistributedValues):
    """Each replica's own value (what `strategy.run` returns)."""

    _kind = "PerReplica"


class PerReplicaSpec:
    """The spec of a PerReplica value: one component spec per replica (what a distributed
    dataset's `element_spec` holds at each leaf)."""

    def __init__(self, *value_specs):
        self._value_specs = tuple(value_specs)

    @property
    def value_type(self):
        return PerReplica

    def _tf_function_parts(self) -> tuple:
        """In a tf.function's input_signature: one spec per replica's part."""
        return self._value_specs

    def __eq__(self, other):
        return type(other) is PerReplicaSpec and self._value_specs == other._value_specs

    def __hash__(self):
        return hash(self._value_specs)

    def __repr__(self):
        return f"PerReplicaSpec({', '.join(repr(s) for s in self._value_specs)})"


class Mirrored(DistributedValues):
    """The same value on every replica's device."""

    _kind = "Mirrored"


def _aggregation_name(aggregation) -> str:
    if aggregation is None:
        return "NONE"
    if isinstance(aggregation, (VariableAggregation, VariableAggregationV2)):
        return aggregation.name
    raise ValueError(f"Invalid variable aggregation mode: {aggregation} for variable")


class MirroredVariable(Variable):
    """A variable with one component per device of its strategy (see the module doc)."""

    def __init__(self, strategy, components, aggregation=None):  # noqa: D107 - no super init
        self._strategy = strategy
        self._components = tuple(components)
        primary = self._components[0]
        self._aggregation_mode = _aggregation_name(aggregation)
        self._aggregation = VariableAggregationV2[self._aggregation_mode]
        for attr in ("_dtype", "_shape", "_name", "_shared_name", "_trainable", "_constraint",
                     "_synchronization", "_unique_id", "_initial_value", "_initializer_op"):
            setattr(self, attr, getattr(primary, attr, None))

    # one component per replica -----------------------------------------------------------
    @property
    def values(self) -> tuple:
        return self._components

    @property
    def _primary(self):
        return self._components[0]

    @property
    def distribute_strategy(self):
        return self._strategy

    def _get(self):
        return self._components[min(current_replica_id(), len(self._components) - 1)]

    def _get_on_device_or_primary(self):
        return self._get()

    @property
    def _handle(self):
        return self._get()._handle

    @property
    def _graph_element(self):
        return self._get()._graph_element

    @property
    def _is_initialized_op(self):
        return self._get()._is_initialized_op

    @property
    def device(self) -> str:
        return self._get().device

    @property
    def initializer(self):
        if context.executing_eagerly():
            return None
        return group(*[c.initializer for c in self._components])

    # writes ------------------------------------------------------------------------------
    def _write(self, method: str, value, read_value: bool, **kwargs):
        if dc.update_replica_id() is not None:
            return getattr(self._get(), method)(value, read_value=read_value, **kwargs)
        replica = dc.get_replica_context()
        if replica is None or replica.strategy is not self._strategy:
            # cross-replica context (or no strategy at all): every copy
            return self._write_all(method, value, read_value, **kwargs)
        if self._aggregation_mode == "NONE":
            # TF 2.21 writes each replica's own copy (the values are expected to agree)
            return getattr(self._get(), method)(value, read_value=read_value, **kwargs)
        replica.merge_call(self._merge_write, args=(method, value), kwargs=kwargs)
        return self if read_value and context.executing_eagerly() else \
            (self._get().read_value() if read_value else None)

    def _merge_write(self, strategy, method, value, **kwargs):
        if self._aggregation_mode == "ONLY_FIRST_REPLICA":
            value = value.values[0] if isinstance(value, DistributedValues) else value
        else:
            value = strategy.extended.reduce_to(
                ReduceOp.from_variable_aggregation(self._aggregation), value, self)
        return strategy.extended.update(
            self, lambda var, v: getattr(var, method)(v, read_value=False, **kwargs),
            args=(value,))

    def _write_all(self, method: str, value, read_value: bool, **kwargs):
        ops = []
        for i, component in enumerate(self._components):
            v = value.values[i] if isinstance(value, DistributedValues) else value
            ops.append(getattr(component, method)(v, read_value=False, **kwargs))
        if context.executing_eagerly():
            return self if read_value else None
        if read_value:
            return self._components[0].read_value()
        return group(*ops)

    def assign(self, value, use_locking=None, name=None, read_value: bool = True):
        return self._write("assign", value, read_value, name=name)

    def assign_add(self, delta, use_locking=None, name=None, read_value: bool = True):
        return self._write("assign_add", delta, read_value, name=name)

    def assign_sub(self, delta, use_locking=None, name=None, read_value: bool = True):
        return self._write("assign_sub", delta, read_value, name=name)

    def __repr__(self):
        body = ",\n".join(f"  {i}: {c!r}" for i, c in enumerate(self._components))
        return f"MirroredVariable:{{\n{body}\n}}"

    __str__ = __repr__

    def __hash__(self):
        return id(self)


class SyncOnReadVariable(MirroredVariable):
    """A variable created with `synchronization=ON_READ` (Keras metrics' state): each replica
    writes its own component, and a read in cross-replica context aggregates the components
    (SUM, MEAN or the first replica's), as TF's SyncOnReadVariable."""

    def _cross_replica(self) -> bool:
        replica = dc.get_replica_context()
        return dc.update_replica_id() is None and (
            replica is None or replica.strategy is not self._strategy)

    def _read_variable_op(self):
        if not self._cross_replica() or self._aggregation_mode not in ("SUM", "MEAN"):
            return super()._read_variable_op()
        reads = [c._read_variable_op() for c in self._components]
        total = add_n(reads)
        if self._aggregation_mode == "MEAN":
            total = truediv(total, cast(len(reads), self._dtype))
        return total

    def _write(self, method: str, value, read_value: bool, **kwargs):
        if not self._cross_replica():
            return getattr(self._get(), method)(value, read_value=read_value, **kwargs)
        if self._aggregation_mode != "SUM":
            return self._write_all(method, value, read_value, **kwargs)
        # a cross-replica write of a SUM variable keeps the components' sum equal to what
        # was written: `assign` puts the value on the primary and zeros elsewhere, an
        # `assign_add` (Keras fit's towers update metrics here) adds to the primary only
        ops = [getattr(self._primary, method)(value, read_value=False, **kwargs)]
        if method == "assign":
            ops += [c.assign(zeros_like(c._raw_read()), read_value=False)
                    for c in self._components[1:]]
        if context.executing_eagerly():
            return self if read_value else None
        return self.read_value() if read_value else group(*ops)

    def __repr__(self):
        body = ",\n".join(f"  {i}: {c!r}" for i, c in enumerate(self._components))
        return f"SyncOnReadVariable:{{\n{body}\n}}"

    __str__ = __repr__


# -- nested structures of per-replica values ---------------------------------------------------

def regroup(per_replica: list, wrap=PerReplica):
    """Per-replica structures -> one structure whose leaves are `wrap`ped per-replica values
    (a leaf that is the same object on every replica, such as a variable, stays itself)."""
    if len(per_replica) == 1:
        return per_replica[0]
    flats = [flatten(s) for s in per_replica]
    if any(len(f) != len(flats[0]) for f in flats):
        raise ValueError("The replicas returned structures that do not match: "
                         f"{per_replica!r}")
    leaves = []
    for items in zip(*flats):
        if all(x is items[0] for x in items):
            leaves.append(items[0])
        else:
            leaves.append(wrap(items))
    return pack_sequence_as(per_replica[0], leaves)


def select_replica(replica_id: int, structured):
    """Replica `replica_id`'s part of a structure holding distributed values."""
    def pick(x):
        if isinstance(x, DistributedValues):
            return x.values[replica_id]
        return x
    return pack_sequence_as(structured, [pick(x) for x in flatten(structured)])


def is_distributed(x) -> bool:
    return isinstance(x, (DistributedValues, MirroredVariable))


def local_results(value) -> tuple:
    if isinstance(value, DistributedValues):
        return value.values
    if isinstance(value, MirroredVariable):
        return value.values
    return (value,)

