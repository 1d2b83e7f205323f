"""The docstrings of tf.data's option classes and enums in options.py (attached at its end;
see core/doc_tables.py)."""

from __future__ import annotations

_SET = """Each option is type-checked when set (TypeError) and reads None (or its default) while
    unset; setting an unknown name is an AttributeError."""

DOCS = {
    "Options": f"""Options of a `tf.data.Dataset`, applied with `Dataset.with_options`.

    {_SET} Options merge down a pipeline: a later `with_options` wins
    for the options it sets.

    ndflow's pipeline honours `deterministic`, `autotune.enabled`,
    `experimental_optimization.map_and_batch_fusion` / `apply_default_optimizations`,
    `shuffle_and_repeat_fusion`, `noop_elimination` and `threading.max_intra_op_parallelism`;
    the others are recorded and travel with the dataset.

    Attributes:
      deterministic: whether parallel transformations keep the input order (default True).
      autotune: a `tf.data.experimental.AutotuneOptions`.
      experimental_optimization: a `tf.data.experimental.OptimizationOptions`.
      threading: a `tf.data.ThreadingOptions`.
      experimental_distribute: a `tf.data.experimental.DistributeOptions`.
      experimental_external_state_policy: a `tf.data.experimental.ExternalStatePolicy`.
      experimental_service: a `tf.data.experimental.ServiceOptions`.
      dataset_name: an optional name for the dataset.
      experimental_slack, experimental_symbolic_checkpoint, experimental_warm_start,
        framework_type: recorded for compatibility.

    Example:
      >>> options = tf.data.Options()
      >>> options.deterministic = False
      >>> ds = tf.data.Dataset.range(3).with_options(options)
      >>> ds.options().deterministic
      False
    """,
    "ThreadingOptions": f"""Threading options of a dataset (`tf.data.Options().threading`).

    {_SET}

    Attributes:
      max_intra_op_parallelism: how many threads the ops of each pipeline worker may use.
      private_threadpool_size: the size of a private thread pool (recorded).

    Example:
      >>> options = tf.data.Options()
      >>> options.threading.max_intra_op_parallelism = 1
      >>> options.threading.max_intra_op_parallelism
      1
    """,
    "AutotuneOptions": f"""Autotuning options of a dataset (`tf.data.Options().autotune`).

    {_SET} Setting `enabled = False` makes maps with
    num_parallel_calls=AUTOTUNE run sequentially; the other options are recorded (ndflow sizes
    AUTOTUNE parallelism by the CPU count).

    Attributes:
      enabled: whether autotuning is on.
      cpu_budget: the CPU budget (recorded).
      ram_budget: the memory budget in bytes (recorded).
      autotune_algorithm: a `tf.data.experimental.AutotuneAlgorithm` (recorded).
      initial_parallelism: the starting parallelism (recorded).
      min_parallelism: the minimum parallelism (recorded).

    Example:
      >>> options = tf.data.Options()
      >>> options.autotune.enabled = False
      >>> options.autotune.enabled
      False
    """,
    "OptimizationOptions": f"""TensorFlow's static pipeline optimizations of a dataset.

    The `experimental_optimization` of `tf.data.Options`. {_SET}
    ndflow follows `map_and_batch_fusion`, `apply_default_optimizations`,
    `shuffle_and_repeat_fusion` and `noop_elimination` (the last two change later shuffle
    orders, as in TensorFlow); the others are recorded.

    Attributes:
      apply_default_optimizations, filter_fusion, filter_parallelization, inject_prefetch,
        seq_interleave_prefetch, map_and_batch_fusion, map_and_filter_fusion, map_fusion,
        map_parallelization, noop_elimination, parallel_batch, shuffle_and_repeat_fusion:
        bools turning each optimization on or off.

    Example:
      >>> options = tf.data.Options()
      >>> options.experimental_optimization.map_and_batch_fusion = False
      >>> options.experimental_optimization.map_and_batch_fusion
      False
    """,
    "DistributeOptions": f"""How a distribution strategy shards a dataset.

    The `experimental_distribute` of `tf.data.Options`. {_SET}

    Attributes:
      auto_shard_policy: a `tf.data.experimental.AutoShardPolicy` (AUTO by default).
      num_devices: the number of devices the dataset feeds (recorded).

    Example:
      >>> options = tf.data.Options()
      >>> options.experimental_distribute.auto_shard_policy = (
      ...     tf.data.experimental.AutoShardPolicy.DATA)
      >>> options.experimental_distribute.auto_shard_policy.name
      'DATA'
    """,
    "ServiceOptions": f"""tf.data service options (`Options().experimental_service`).

    {_SET} ndflow has no tf.data service; the options are recorded.

    Attributes:
      pinned: whether to use pinned (zero-copy) reads from the service.
    """,
    "AutotuneAlgorithm": """The algorithm the tf.data autotuner uses (recorded by ndflow).

    Members:
      DEFAULT, HILL_CLIMB, GRADIENT_DESCENT, MAX_PARALLELISM, STAGE_BASED.

    Example:
      >>> tf.data.experimental.AutotuneAlgorithm.HILL_CLIMB.value
      1
    """,
    "AutoShardPolicy": """How a distribution strategy shards a dataset among its workers.

    Members:
      OFF: no sharding; every worker sees all the data.
      AUTO: shard by files when possible, else by data.
      FILE: each worker reads a subset of the input files.
      DATA: each worker keeps every n-th element.
      HINT: shard where `shard(SHARD_HINT, SHARD_HINT)` placeholders say.

    Example:
      >>> int(tf.data.experimental.AutoShardPolicy.DATA)
      2
    """,
    "ExternalStatePolicy": """What serializing a dataset does with external state.

    External state is, for example, a stateful map function.

    Members:
      WARN: serialize, logging a warning.
      IGNORE: serialize silently.
      FAIL: raise an error.

    Example:
      >>> tf.data.experimental.ExternalStatePolicy.FAIL.name
      'FAIL'
    """,
}
