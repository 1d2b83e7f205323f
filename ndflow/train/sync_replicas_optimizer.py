"""`tf.compat.v1.train.SyncReplicasOptimizer`: synchronous data-parallel training, TF1's way.

Each replica's train op puts its gradients into one ConditionalAccumulator per variable
(stale gradients, older than the global step, are dropped by the accumulator) and then takes a
token from the sync token queue. The chief's queue runner loops: take the mean of
`replicas_to_aggregate` gradients from every accumulator, apply them with the wrapped
optimizer (incrementing the global step), then put `max(total_num_replicas,
replicas_to_aggregate)` tokens (the new global step) in the queue, releasing the replicas.
`make_session_run_hook(is_chief)` wires this into a MonitoredSession (local init, initial
tokens, the chief's queue runner).

ndflow's sessions are in-process: the replicas are threads or successive steps of one
program sharing the graph's accumulators and queue (shared names), as TF's in-process
between-graph replicas do.
"""

from __future__ import annotations

from ndflow.core import context, scopes, tf_logging
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.core.tensor import Tensor
from ndflow.ops.array_core import group
from ndflow.ops.array_fill import fill
from ndflow.ops.data_flow_accumulators import (
    ConditionalAccumulator,
    SparseConditionalAccumulator,
)
from ndflow.ops.data_flow_queues import FIFOQueue
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.ops.state_assign import assign
from ndflow.ops.variables import Variable, global_variables
from ndflow.ops.variables_v1_util import report_uninitialized_variables
from ndflow.train.optimizer import Optimizer
from ndflow.train.queue_runner import QueueRunner
from ndflow.train.session_manager import check_ready
from ndflow.train.session_run_hook import SessionRunHook


@tf_export(v1=["train.SyncReplicasOptimizer"])
class SyncReplicasOptimizer(Optimizer):
    """Aggregates `replicas_to_aggregate` replicas' gradients before each update."""

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None, use_locking=False,
                 name="sync_replicas"):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        tf_logging.info(f"SyncReplicasV2: replicas_to_aggregate={replicas_to_aggregate}; "
                        f"total_num_replicas={total_num_replicas}")
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._gradients_applied = False
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._accumulator_list = []

    def compute_gradients(self, *args, **kwargs):
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The replica's train op (apply its gradients, wait for a token); builds the chief's
        aggregate-and-update op and queue runner."""
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        if context.executing_eagerly():
            raise RuntimeError("SyncReplicasOptimizer works in graphs (TF1 sessions) only.")
        self._global_step = global_step
        graph = context.get_default_graph()
        train_ops, aggregated, var_list = [], [], []
        self._local_step = Variable(0, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                                    dtype=global_step.dtype.base_dtype,
                                    name="sync_rep_local_step")
        self.local_step_init_op = assign(self._local_step, global_step)
        chief_init_ops = [self.local_step_init_op]
        self.ready_for_local_init_op = report_uninitialized_variables(global_variables())
        with scopes.name_scope(None, self._name):
            for grad, var in grads_and_vars:
                var_list.append(var)
                with graph.device(var.device):
                    if grad is None:
                        aggregated.append(None)
                        continue
                    if isinstance(grad, Tensor):
                        accum = ConditionalAccumulator(grad.dtype, shape=var.get_shape(),
                                                       shared_name=var.name + "/grad_accum")
                        train_ops.append(accum.apply_grad(grad, local_step=self._local_step))
                        aggregated.append(accum.take_grad(self._replicas_to_aggregate))
                    elif isinstance(grad, IndexedSlices):
                        accum = SparseConditionalAccumulator(
                            grad.dtype, shape=(), shared_name=var.name + "/grad_accum")
                        train_ops.append(accum.apply_indexed_slices_grad(
                            grad, local_step=self._local_step))
                        aggregated.append(accum.take_indexed_slices_grad(
                            self._replicas_to_aggregate))
                    else:
                        raise ValueError("Unknown grad type!")
                    self._accumulator_list.append((accum, var.device))
            with graph.device(global_step.device), graph.name_scope(""):
                update_op = self._opt.apply_gradients(list(zip(aggregated, var_list)),
                                                      global_step)
                queue = FIFOQueue(-1, global_step.dtype.base_dtype, shapes=(),
                                  name="sync_token_q", shared_name="sync_token_q")
                self._sync_token_queue = queue
                with graph.control_dependencies(train_ops):
                    token = queue.dequeue()
                train_op = assign(self._local_step, token)
                with graph.control_dependencies([update_op]):
                    tokens = fill([self._tokens_per_step], global_step)
                    sync_op = queue.enqueue_many((tokens,))
                if self._variable_averages is not None:
                    with graph.control_dependencies([sync_op]):
                        sync_op = self._variable_averages.apply(self._variables_to_average)
                self._chief_queue_runner = QueueRunner(queue, [sync_op])
            for accum, device in self._accumulator_list:
                with graph.device(device):
                    chief_init_ops.append(accum.set_global_step(global_step,
                                                                name="SetGlobalStep"))
            self.chief_init_op = group(*chief_init_ops)
            self._gradients_applied = True
            return train_op

    def get_chief_queue_runner(self):
        if self._gradients_applied is False:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def variables(self):
        return self._opt.variables()

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def get_init_tokens_op(self, num_tokens=-1):
        """Puts `num_tokens` (default replicas_to_aggregate) first tokens in the queue."""
        if self._gradients_applied is False:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(f"Too few tokens to finish the first step: {num_tokens} (given) "
                             f"vs {tokens_needed} (needed)")
        graph = context.get_default_graph()
        if num_tokens > 0:
            with graph.device(self._global_step.device), graph.name_scope(""):
                tokens = fill([num_tokens], self._global_step)
                return self._sync_token_queue.enqueue_many((tokens,))
        return group(name="no_init_tokens")

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """The hook a MonitoredSession needs: local init, the chief's tokens and runner."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


class _SyncReplicasOptimizerHook(SessionRunHook):
    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        opt = self._sync_optimizer
        if opt._gradients_applied is False:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before "
                             "using the hook.")
        self._ready_for_local_init_op = opt.ready_for_local_init_op
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._q_runner = opt.get_chief_queue_runner()
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._q_runner = self._init_tokens_op = None

    def after_create_session(self, session, coord):
        ok, msg = check_ready(self._ready_for_local_init_op, session,
                         "Model is not ready for SyncReplicasOptimizer local init.")
        if not ok:
            raise RuntimeError("Init operations did not make model ready for "
                               "SyncReplicasOptimizer local_init. Init op: "
                               f"{self._local_init_op.name}, error: {msg}")
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)
