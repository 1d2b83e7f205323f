"""TF1 queue batching (`tf.compat.v1.train.batch`, `shuffle_batch`, `batch_join`,
`shuffle_batch_join` and their `maybe_` forms), as TensorFlow's training/input.py: the
examples are enqueued by QueueRunner threads (one per `num_threads`, or per tensor list of
the `_join` forms) into a FIFO / padding FIFO / random-shuffle queue, and the returned
tensors dequeue `batch_size` of them (`dequeue_up_to` with allow_smaller_final_batch, so
the last batch of a finite input may be smaller). SparseTensor inputs are not supported."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import maximum
from ndflow.ops.array_core import expand_dims, reshape, shape
from ndflow.ops.array_fill import fill
from ndflow.ops.array_mask import boolean_mask
from ndflow.ops.cast import cast
from ndflow.ops.data_flow_queues import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from ndflow.summary.v1_summary_ops import scalar as summary_scalar
from ndflow.train.input_producers import op_scope
from ndflow.train.queue_runner import QueueRunner, add_queue_runner


def _flatten(tensors) -> list:
    """The tensors of `tensors` (a dict: by sorted key; a nested list/tuple: in order)."""
    if isinstance(tensors, dict):
        return [convert_to_tensor(tensors[k]) for k in sorted(tensors)]
    if isinstance(tensors, (list, tuple)):
        out = []
        for t in tensors:
            out.extend(_flatten(t) if isinstance(t, (list, tuple, dict)) else
                       [convert_to_tensor(t)])
        return out
    return [convert_to_tensor(tensors)]


def _pack(original, flat: list):
    """`flat` in the structure of `original`."""
    if isinstance(original, dict):
        return {k: flat[i] for i, k in enumerate(sorted(original))}
    if isinstance(original, (list, tuple)):
        return _rebuild(original, iter(flat))
    return flat[0]



def _rebuild(s, it):
    if isinstance(s, dict):
        return {k: next(it) for k in sorted(s)}
    if isinstance(s, (list, tuple)):
        return type(s)(_rebuild(x, it) for x in s)
    return next(it)

def _shapes(tensor_lists: list, shapes, enqueue_many: bool, dynamic_pad: bool) -> list:
    if shapes is None:
        n = len(tensor_lists[0])
        shapes = [TensorShape(None)] * n
        for tl in tensor_lists:
            for i, t in enumerate(tl):
                s = t.shape
                if enqueue_many:
                    if s.rank == 0:
                        raise ValueError(f"Tensor {t.name if hasattr(t, 'name') else t} has "
                                         "rank 0 but enqueue_many requires rank >= 1")
                    s = s[1:] if s.rank is not None else s
                shapes[i] = shapes[i].merge_with(s)
    shapes = [TensorShape(s) for s in shapes]
    for s in shapes:
        if dynamic_pad:
            if s.rank is None:
                raise ValueError(f"Shapes must have known rank when dynamic_pad is True: "
                                 f"{shapes}")
        elif not s.is_fully_defined():
            raise ValueError(f"All shapes must be fully defined: {shapes}")
    return shapes


def _dtypes(tensor_lists: list) -> list:
    types = [t.dtype.base_dtype for t in tensor_lists[0]]
    for tl in tensor_lists[1:]:
        if [t.dtype.base_dtype for t in tl] != types:
            raise TypeError(f"Expected types to be {types}, got {[t.dtype for t in tl]}")
    return types


def _kept(tensor_list: list, keep_input, enqueue_many: bool):
    """(tensors, enqueue_many) with the examples `keep_input` drops filtered out: a scalar
    keep_input keeps or drops the example (all of enqueue_many's); a vector one masks each of
    enqueue_many's."""
    if keep_input is None:
        return tensor_list, enqueue_many
    keep = convert_to_tensor(keep_input, dtype=dtypes.bool, name="keep_input")
    if keep.shape.rank is None or keep.shape.rank > 1:
        raise ValueError("`keep_input` must be a scalar or a vector.")
    if keep.shape.rank == 1 and not enqueue_many:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if not enqueue_many:
        mask = reshape(keep, [1])
        return [boolean_mask(expand_dims(t, 0), mask) for t in tensor_list], True
    if keep.shape.rank == 0:
        return [boolean_mask(t, fill(shape(t, out_type=dtypes.int32)[:1], keep))
                for t in tensor_list], True
    return [boolean_mask(t, keep) for t in tensor_list], True


def _enqueue(queue, tensor_lists: list, threads_per_list: int, enqueue_many: bool,
             keep_input) -> None:
    ops = []
    for tl in tensor_lists:
        tl, many = _kept(tl, keep_input, enqueue_many)
        op = queue.enqueue_many(tl) if many else queue.enqueue(tl)
        ops.extend([op] * threads_per_list)
    add_queue_runner(QueueRunner(queue, ops))


def _dequeue(queue, batch_size, allow_smaller_final_batch: bool, name):
    out = queue.dequeue_up_to(batch_size, name=name) if allow_smaller_final_batch else \
        queue.dequeue_many(batch_size, name=name)
    return out if isinstance(out, list) else [out]


def _batch(tensor_lists, original, batch_size, num_threads, capacity, enqueue_many, shapes,
           dynamic_pad, allow_smaller_final_batch, shared_name, name, keep_input,
           default_name, min_after_dequeue=None, seed=None):
    final, scope = op_scope(name, default_name)  # TF: the dequeue op is named `batch`
    with name_scope(scope):
        flat = [_flatten(tl) for tl in tensor_lists]
        types = _dtypes(flat)
        shapes = _shapes(flat, shapes, enqueue_many, dynamic_pad)
        if min_after_dequeue is not None:
            queue = RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue,
                                       seed=seed, dtypes=types, shapes=shapes,
                                       shared_name=shared_name)
        elif dynamic_pad:
            queue = PaddingFIFOQueue(capacity=capacity, dtypes=types, shapes=shapes,
                                     shared_name=shared_name)
        else:
            queue = FIFOQueue(capacity=capacity, dtypes=types, shapes=shapes,
                              shared_name=shared_name)
        _enqueue(queue, flat, num_threads, enqueue_many, keep_input)
        if min_after_dequeue is None:  # TF's queue-fill summaries (in merge_all)
            summary_scalar(f"fraction_of_{capacity}_full",
                           cast(queue.size(), dtypes.float32) * (1.0 / capacity))
        else:
            over = capacity - min_after_dequeue
            summary_scalar(f"fraction_over_{min_after_dequeue}_of_{over}_full",
                           cast(maximum(0, queue.size() - min_after_dequeue), dtypes.float32)
                           * (1.0 / over))
    return _pack(original, _dequeue(queue, batch_size, allow_smaller_final_batch, final))


@tf_export(v1=["train.batch"])
def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch([tensors], tensors, batch_size, num_threads, capacity, enqueue_many, shapes,
                  dynamic_pad, allow_smaller_final_batch, shared_name, name, None, "batch")


@tf_export(v1=["train.maybe_batch"])
def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32,
                enqueue_many=False, shapes=None, dynamic_pad=False,
                allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch([tensors], tensors, batch_size, num_threads, capacity, enqueue_many, shapes,
                  dynamic_pad, allow_smaller_final_batch, shared_name, name, keep_input,
                  "batch")


@tf_export(v1=["train.batch_join"])
def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None,
               name=None):
    return _batch(list(tensors_list), tensors_list[0], batch_size, 1, capacity, enqueue_many,
                  shapes, dynamic_pad, allow_smaller_final_batch, shared_name, name, None,
                  "batch_join")


@tf_export(v1=["train.maybe_batch_join"])
def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False,
                     shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                     shared_name=None, name=None):
    return _batch(list(tensors_list), tensors_list[0], batch_size, 1, capacity, enqueue_many,
                  shapes, dynamic_pad, allow_smaller_final_batch, shared_name, name,
                  keep_input, "batch_join")


@tf_export(v1=["train.shuffle_batch"])
def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    return _batch([tensors], tensors, batch_size, num_threads, capacity, enqueue_many, shapes,
                  False, allow_smaller_final_batch, shared_name, name, None, "shuffle_batch",
                  min_after_dequeue, seed)


@tf_export(v1=["train.maybe_shuffle_batch"])
def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                        num_threads=1, seed=None, enqueue_many=False, shapes=None,
                        allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch([tensors], tensors, batch_size, num_threads, capacity, enqueue_many, shapes,
                  False, allow_smaller_final_batch, shared_name, name, keep_input,
                  "shuffle_batch", min_after_dequeue, seed)


@tf_export(v1=["train.shuffle_batch_join"])
def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    return _batch(list(tensors_list), tensors_list[0], batch_size, 1, capacity, enqueue_many,
                  shapes, False, allow_smaller_final_batch, shared_name, name, None,
                  "shuffle_batch_join", min_after_dequeue, seed)


@tf_export(v1=["train.maybe_shuffle_batch_join"])
def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue,
                             keep_input, seed=None, enqueue_many=False, shapes=None,
                             allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch(list(tensors_list), tensors_list[0], batch_size, 1, capacity, enqueue_many,
                  shapes, False, allow_smaller_final_batch, shared_name, name, keep_input,
                  "shuffle_batch_join", min_after_dequeue, seed)


# -- docstrings: each function's Args follow its signature, from one description per argument

_ARGS = {
    "tensors": "a list or dict of tensors: one example.",
    "tensors_list": "a list of tensor lists (or dicts) of one structure; each gets its own\n"
                    "        enqueuing thread.",
    "keep_input": "a boolean scalar (or, with `enqueue_many`, vector): only examples where it\n"
                  "        is True are enqueued.",
    "batch_size": "the number of examples per batch.",
    "num_threads": "the number of enqueuing threads.",
    "capacity": "the maximum number of examples the queue holds.",
    "min_after_dequeue": "how many examples stay in the queue after a dequeue (the pool\n"
                         "        sampled from).",
    "seed": "optional int seed for the shuffling.",
    "enqueue_many": "if True, each tensor is a batch of examples (its first axis is split).",
    "shapes": "optional shapes of one example, when they cannot be inferred.",
    "dynamic_pad": "if True, variable-size dimensions are padded to the longest in the batch.",
    "allow_smaller_final_batch": "if True, the last batch of a finite input may be smaller.",
    "shared_name": "optional name to share the queue across sessions.",
    "name": "optional name scope.",
}
_TITLES = {
    "batch": "Batches of `batch_size` examples of `tensors` (a list or dict), in order.",
    "maybe_batch": "`batch`, enqueuing only the examples for which `keep_input` is true.",
    "batch_join": "Batches from several tensor lists, each enqueued by its own thread.",
    "maybe_batch_join": "Batches examples from several tensor lists in order, keeping only "
                        "those `keep_input`\n    selects.",
    "shuffle_batch": "Batches of examples drawn at random from a queue holding at least\n"
                     "    `min_after_dequeue` of them (until the input ends).",
    "maybe_shuffle_batch": "Batches examples drawn at random from a queue, keeping only those "
                           "`keep_input`\n    selects.",
    "shuffle_batch_join": "Batches examples drawn at random from a queue fed by several tensor "
                          "lists.",
    "maybe_shuffle_batch_join": "Batches random examples from several tensor lists, keeping "
                                "those `keep_input`\n    selects.",
}


def _batching_doc(fn, title: str) -> str:
    """The docstring of a batching function: `title`, then its arguments in signature order."""
    code = fn.__code__
    names = code.co_varnames[:code.co_argcount]
    args = "\n".join(f"      {n}: {_ARGS[n]}" for n in names)
    structure = "`tensors`" if "tensors" in names else "one input list"
    return f"""{title}

    Args:
{args}

    Returns:
      Tensors with the structure of {structure}, each with a leading batch axis; running
      them requires the queue runners (`tf.compat.v1.train.start_queue_runners`).
    """


for _name, _title in _TITLES.items():
    globals()[_name].__doc__ = _batching_doc(globals()[_name], _title)
