"""`tf.data.experimental.make_saveable_from_iterator`: a TF1 graph iterator's position saved
and restored by `tf.compat.v1.train.Saver`.

The SaveableObject saves one tensor, `<iterator resource name>_STATE` (TensorFlow's key,
e.g. "IteratorV2:0_STATE"), holding what `tf.train.Checkpoint` saves for an eager iterator
(ndflow/data/dataset.py): int64 [elements handed out since the pass began, the seed pairs
each shuffle of the pipeline had drawn when it began]. Restoring restarts the pass from those
shuffle states and replays it to that position, so the same elements follow for a
deterministic pipeline. TensorFlow saves a variant of the whole pipeline state instead;
neither library reads the other's entry. Unlike TensorFlow, ndflow needs the iterator's
dataset to replay, so an initializable iterator must have been initialized before a restore.
"""

from __future__ import annotations

import sys

import numpy as np

from ndflow.core import context, strict_mode
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError
from ndflow.data.dataset import _stateful_nodes, pass_states
from ndflow.data.options import ExternalStatePolicy
from ndflow.ops import dataset_ops
from ndflow.ops.apply import apply_op

_warned = False


def restore_iterator_state(resource, state) -> None:
    """Restarts `resource`'s pass at the checkpointed shuffle states and replays it to the
    checkpointed position."""
    dataset = resource.dataset
    nodes = _stateful_nodes(dataset)
    state = np.asarray(state)
    if state.dtype != np.int64 or state.shape != (1 + len(nodes),):
        raise InvalidArgumentError(
            None, None, "The checkpointed iterator state does not fit this iterator: expected "
            f"int64 [{1 + len(nodes)}] (a position, and the seed pairs each of the pipeline's "
            f"{len(nodes)} shuffle(s) had drawn), got {state.dtype} {list(state.shape)}")
    states = [int(s) for s in state[1:]]
    for node, s in zip(nodes, states):
        node._set_pass_state(s)
    resource.start_states = states
    resource.reset(dataset)
    for _ in range(int(state[0])):  # the replay moves the passes on as the run did
        if resource.get_next() is None:
            break


dataset_ops.iterator_state.start = pass_states
dataset_ops.iterator_state.restore = restore_iterator_state


def _policy(external_state_policy) -> ExternalStatePolicy:
    if isinstance(external_state_policy, ExternalStatePolicy):
        return external_state_policy
    policies = {"warn": ExternalStatePolicy.WARN, "ignore": ExternalStatePolicy.IGNORE,
                "fail": ExternalStatePolicy.FAIL}
    if external_state_policy in policies:
        return policies[external_state_policy]
    raise ValueError("Invalid `ExternalStatePolicy.` Supported values include 'warn', "
                     f"'ignore', and 'fail.' Received {external_state_policy}.")


class IteratorSaveable:
    """TensorFlow's `_IteratorSaveable`: `op` (the iterator's resource handle), `name`, and the
    one tensor a Saver saves under `name + "_STATE"`."""

    _checkpoint_suffixes = ("_STATE",)

    def __init__(self, iterator_resource, name: str, external_state_policy):
        self.op = iterator_resource
        self.name = self._name = name
        self.device = iterator_resource.device
        # ndflow's state is a position, never the pipeline's external state: the policy is
        # validated and kept, as TensorFlow's, but nothing is left out or refused
        self.external_state_policy = external_state_policy
        self._state = apply_op(dataset_ops.SerializeIteratorState, [iterator_resource], {},
                               name="SerializeIterator").outputs[0]

    def _serialize_to_tensors(self):
        return {"_STATE": self._state}

    def _restore_from_tensors(self, restored_tensors):
        return apply_op(dataset_ops.RestoreIteratorState,
                        [self.op, restored_tensors["_STATE"]], {}, name="DeserializeIterator")


@tf_export("data.experimental.make_saveable_from_iterator")
def make_saveable_from_iterator(iterator, external_state_policy=None):
    """A SaveableObject for a `tf.compat.v1.train.Saver` to save and restore `iterator`'s
    position (add it to the SAVEABLE_OBJECTS collection, or pass it in `var_list`)."""
    global _warned
    if not _warned:
        _warned = True
        caller = sys._getframe(1)
        strict_mode.log_deprecation(
            "From %s:%d: make_saveable_from_iterator (from tensorflow.python.data.experimental."
            "ops.iterator_ops) is deprecated and will be removed in a future version.\n"
            "Instructions for updating:\n`make_saveable_from_iterator` is intended for use in "
            "TF1 with `tf.compat.v1.Saver`. In TF2, use `tf.train.Checkpoint` instead.",
            caller.f_code.co_filename, caller.f_lineno)
    policy = _policy("fail" if external_state_policy is None else external_state_policy)
    if context.executing_eagerly():  # TensorFlow fails naming the eager resource tensor
        raise AttributeError("Tensor.name is undefined when eager execution is enabled.")
    handle = iterator._handle
    return IteratorSaveable(handle, handle.name, policy)
