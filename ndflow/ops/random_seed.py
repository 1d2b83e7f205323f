"""TensorFlow's seeding semantics (`random_seed.get_seed`, `tf.random.set_seed`).

A random op carries two attrs, `seed` and `seed2`, derived from the graph-level seed (graph
mode: `graph.seed`; eager: the global seed in `ndflow.core.context.state().seed`) and the
op-level seed, exactly as TF's `random_seed.get_seed`:

- neither set: (None, None) -> attrs (0, 0), a randomly seeded generator;
- only the global seed: op seed taken from a counter (per graph); in eager TF's
  `context.internal_operation_seed()`: the next `random.Random(global_seed).randint(0, 2**31-1)`,
  so repeated calls differ and `set_seed` replays them;
- only the op seed: the global seed defaults to `DEFAULT_GRAPH_SEED`;
- both: used as given (truncated to 31 bits).

With the CPU kernels' Philox streams (kernels/random.py) the seeded stateful ops give TF's
exact numbers. Eager kernels keep their generator across calls (TF's kernel cache), and
`set_seed` starts a new *generation* of eager generators so the sequence replays (TF clears
its kernel cache).
"""

from __future__ import annotations

import random
import weakref

from ndflow.core import context, determinism
from ndflow.core.api_export import tf_export

DEFAULT_GRAPH_SEED = 87654321
GLOBAL_STREAM_ATTR = "_global_stream"
# A vectorized tf.data map's random op (data/vectorized_map.py): its output's leading dimension
# is the elements, each drawing from the kernel's stream as its own execution would.
ELEMENT_DRAWS_ATTR = "_element_draws"
_MAXINT32 = 2**31 - 1

_graph_to_seed_dict: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_generation = 0


def _truncate_seed(seed: int) -> int:
    return int(seed) % _MAXINT32


def generation() -> int:
    """Incremented by every eager `set_seed`: eager random kernels restart their streams."""
    return _generation


def _internal_operation_seed() -> int:
    """TF's eager op seed: draw number `seed_counter` of `random.Random(global seed)` (the
    counter travels to replica threads; the Random object is kept while it is in step)."""
    st = context.state()
    n = st.seed_counter
    st.seed_counter = n + 1
    cached = getattr(st, "seed_rng", None)
    if cached is not None and cached[0] == st.seed and cached[1] == n:
        rng = cached[2]
    else:
        rng = random.Random(st.seed)
        for _ in range(n):
            rng.randint(0, _MAXINT32)
    value = rng.randint(0, _MAXINT32)
    st.seed_rng = (st.seed, n + 1, rng)
    return value


def eager_op_seeds(seed: int) -> tuple[int, int]:
    """(seed, seed2) of one execution of an eager op seeded by the global seed `seed` alone:
    TF draws a fresh op seed per call (a new kernel, its generator at the start)."""
    s2 = _truncate_seed(_internal_operation_seed())
    return (seed, _MAXINT32) if (seed, s2) == (0, 0) else (seed, s2)


@tf_export(v1=["get_seed", "random.get_seed"])
def get_seed(op_seed: int | None) -> tuple:
    """The (seed, seed2) pair a random op should use, given its op-level seed (TF rules)."""
    eager = context.executing_eagerly()
    if eager:
        global_seed = context.state().seed
    else:
        graph = context.get_default_graph()
        global_seed = graph.seed
    if global_seed is not None:
        if op_seed is None:
            if eager:
                op_seed = _internal_operation_seed()
            else:
                op_seed = _graph_to_seed_dict.setdefault(graph, 0)
                _graph_to_seed_dict[graph] += 1
        seeds = _truncate_seed(global_seed), _truncate_seed(op_seed)
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, _truncate_seed(op_seed)
    else:
        if determinism.enabled():  # tf.config.experimental.enable_op_determinism
            raise RuntimeError(determinism.SEED_REQUIRED)
        seeds = None, None
    if seeds == (0, 0):
        return (0, _MAXINT32)
    return seeds


def op_seed_attrs(op_seed: int | None) -> dict:
    """`{"seed": s1, "seed2": s2}` for a random op (None becomes 0, as TF's wrappers do).

    An eager op without an op seed under a global seed gets a fresh op seed per call in TF,
    i.e. a new kernel and generator per call. Here such ops keep one kernel (hidden attr
    `_global_stream`) that draws TF's op seed when it runs (`eager_op_seeds`) and starts a
    fresh stream at it: TF's numbers with memory bounded in long eager loops. (Should two
    calls draw the same op seed, TF's cached kernel would continue its stream; here it
    restarts.)
    """
    if op_seed is None and context.executing_eagerly():
        global_seed = context.state().seed
        if global_seed is not None:
            return {"seed": _truncate_seed(global_seed), "seed2": 0, GLOBAL_STREAM_ATTR: True}
    s1, s2 = get_seed(op_seed)
    return {"seed": s1 or 0, "seed2": s2 or 0}


@tf_export(v1=["random.set_random_seed", "set_random_seed"])
def set_random_seed(seed: int | None) -> None:
    """`tf.compat.v1.set_random_seed`: the default graph's seed, or the eager global seed."""
    global _generation
    if context.executing_eagerly():
        st = context.state()
        if seed is not None:
            seed = int(seed)
        st.seed = seed
        st.seed_counter = 0
        _generation += 1
    else:
        context.get_default_graph().seed = seed


@tf_export("random.set_seed", v1=[])
def set_seed(seed: int | None) -> None:
    """`tf.random.set_seed`: sets the global (eager) or graph-level random seed."""
    set_random_seed(seed)
