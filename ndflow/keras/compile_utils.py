"""What `compile(loss=..., loss_weights=..., metrics=...)` turns into: one loss per model
output (a name, a function, a Loss, or lists/dicts of them keyed like the outputs), weighted
and summed as Keras 3 does, and the compiled metrics per output with "accuracy" resolved
from the loss and the shapes."""

from __future__ import annotations

from ndflow.core.nest import flatten
from ndflow.keras import loss_functions
from ndflow.keras.metrics import reduction_metrics
from ndflow.keras.metrics.metric_lookup import get_compile_metric
from ndflow.ops import array_core, reduction
from ndflow.ops.cast import cast


def _per_output(value, output_names: list, what: str) -> list:
    """`value` spread over the outputs: one object for all, a list in order, a dict by name."""
    n = len(output_names)
    if isinstance(value, dict):
        unknown = set(value) - set(output_names)
        if unknown:
            raise ValueError(f"In the dict argument `{what}`, key '{sorted(unknown)[0]}' does "
                             "not correspond to any model output. Received:\n"
                             f"{what}={value}")
        return [value.get(name) for name in output_names]
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"For a model with multiple outputs, when providing the `{what}` "
                             f"argument as a list, it should have as many entries as the model "
                             f"has outputs. Received:\n{what}={value}\nof length {len(value)} "
                             f"whereas the model has {n} outputs.")
        return list(value)
    return [value] * n if n else [value]


def by_output(value, output_names: list, n: int) -> list:
    """Targets (or sample weights) one per model output, in the outputs' order: a dict keyed
    by the output names is read name by name (flattening it would order it by key, pairing
    `{"priority": ..., "department": ...}` with the wrong outputs), anything else flattened."""
    if isinstance(value, dict) and output_names and all(name in value
                                                        for name in output_names):
        return [value[name] for name in output_names]
    return flatten(value) if n > 1 else [value]


def output_names_of(known: list, y_pred) -> tuple:
    """(names, named): the outputs' names as Keras 3 resolves them — the model's, or a dict
    output's keys in flattened (sorted) order — and whether there are any. A model that
    does not know its outputs' names (a subclassed one returning a list or tuple) gets
    `output_<i>` here for aligning dicts, but Keras 3 then names each loss's tracker after
    the loss (`mean_squared_error_loss`) and leaves its metrics unprefixed (`accuracy`)."""
    if known:
        return list(known), True
    if isinstance(y_pred, dict):
        return sorted(y_pred), True
    return [f"output_{i}" for i in range(len(flatten(y_pred)))], False


def _loss_object(identifier):
    if identifier is None:
        return None
    if isinstance(identifier, str):
        try:
            fn = loss_functions.get(identifier)
        except ValueError:
            raise ValueError(f"Could not interpret loss identifier: {identifier}") from None
        return fn if isinstance(fn, loss_functions.Loss) else \
            loss_functions.LossFunctionWrapper(fn, name=identifier)
    if isinstance(identifier, loss_functions.Loss):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, loss_functions.Loss):
        return identifier()
    if callable(identifier):
        return loss_functions.LossFunctionWrapper(
            identifier, name=getattr(identifier, "__name__", "loss"))
    raise ValueError(f"Could not interpret loss identifier: {identifier}")


class CompileLoss:
    """The total training loss of `compile(loss=..., loss_weights=...)`."""

    def __init__(self, loss, loss_weights=None, output_names=None):
        self._spec, self._weights_spec = loss, loss_weights
        self.output_names = list(output_names or [])
        self.losses: list = []
        self.weights: list = []
        # With several losses, Keras 3 tracks each one's unweighted value as a Mean named
        # `<output>_loss` (`history.history["priority_loss"]`); None per loss otherwise.
        self.trackers: list = []
        self.built = False

    @property
    def metrics(self) -> list:
        return [t for t in self.trackers if t is not None]

    def build(self, y_true, y_pred) -> None:
        names, named = output_names_of(self.output_names, y_pred)
        if len(flatten(y_pred)) == 1 and not isinstance(self._spec, (dict, list, tuple)):
            names = names[:1]
        self.losses = [_loss_object(x) for x in _per_output(self._spec, names, "loss")]
        weights = self._weights_spec
        self.weights = ([1.0] * len(self.losses) if weights is None else
                        [1.0 if w is None else float(w)
                         for w in _per_output(weights, names, "loss_weights")])
        self.output_names = names
        several = sum(loss is not None for loss in self.losses) > 1
        self.trackers = [reduction_metrics.Mean(name=f"{name if named else loss.name}_loss")
                         if several and loss is not None else None
                         for name, loss in zip(names, self.losses)]
        self.built = True

    def __call__(self, y_true, y_pred, sample_weight=None):
        if not self.built:
            self.build(y_true, y_pred)
        preds = flatten(y_pred)
        trues = self._align(y_true, len(preds))
        weights = (by_output(sample_weight, self.output_names, len(preds))
                   if isinstance(sample_weight, (list, tuple, dict))
                   else [sample_weight] * len(preds))
        total = None
        for loss, w, tracker, yt, yp, sw in zip(self.losses, self.weights, self.trackers, trues,
                                                preds, weights):
            if loss is None:
                continue
            value = loss(yt, yp, sample_weight=sw)
            value = cast(value, "float32") if value.dtype.name != "float32" else value
            if tracker is not None:   # the unweighted loss, weighted by the batch size
                tracker.update_state(value, sample_weight=array_core.shape(yp)[0])
            value = value * w if w != 1.0 else value
            total = value if total is None else total + value
        if total is None:
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        return total

    def _align(self, y_true, n: int) -> list:
        if isinstance(y_true, dict):
            missing = [name for name in self.output_names if name not in y_true]
            if missing:
                raise ValueError(f"Missing targets for outputs {missing}; the model's outputs "
                                 f"are {self.output_names}.")
        trues = by_output(y_true, self.output_names, n)
        if len(trues) != n:
            raise ValueError(f"The model has {n} outputs, but the targets (`y`) hold "
                             f"{len(trues)} arrays.")
        return trues


def sum_losses(losses: list):
    """The sum of `add_loss`/regularization losses as one float32 scalar."""
    total = None
    for value in losses:
        value = reduction.reduce_sum(cast(value, "float32") if value.dtype.name != "float32"
                                     else value)
        total = value if total is None else total + value
    return total


class CompileMetrics:
    """The metrics of `compile(metrics=..., weighted_metrics=...)`, built on the first batch
    (when the shapes that resolve "accuracy" are known); one result dict for all. With
    several outputs each result is keyed `<output>_<metric>` (the metric keeps its own name,
    as in Keras 3, which orders `evaluate`'s list by it); a repeated key gets `_1`, `_2`."""

    name = "compile_metrics"

    def __init__(self, metrics=None, weighted_metrics=None, output_names=None):
        self._specs = (metrics, weighted_metrics)
        self.output_names = list(output_names or [])
        self._metrics: list = []     # (output index, metric, weighted, result key)
        self.built = False

    def _spread(self, spec, n: int, what: str, names: list) -> list:
        if spec is None:
            return [[] for _ in range(n)]
        if n == 1:
            if isinstance(spec, dict):
                spec = flatten(list(spec.values()))
            return [list(spec) if isinstance(spec, (list, tuple)) else [spec]]
        if isinstance(spec, dict):
            out = []
            for name in names:
                value = spec.get(name, [])
                out.append(list(value) if isinstance(value, (list, tuple)) else [value])
            return out
        if isinstance(spec, (list, tuple)) and len(spec) == n and all(
                isinstance(s, (list, tuple)) or s is None for s in spec):
            return [list(s or []) for s in spec]
        if isinstance(spec, (list, tuple)):
            return [list(spec) for _ in range(n)]
        raise ValueError(f"Invalid `{what}`: expected a list, or a dict keyed by the model's "
                         f"outputs {names}. Received: {what}={spec}")

    def build(self, y_true, y_pred) -> None:
        preds = flatten(y_pred)
        trues = by_output(y_true, self.output_names, len(preds))
        names, named = output_names_of(self.output_names, y_pred)
        for weighted, spec in ((False, self._specs[0]), (True, self._specs[1])):
            what = "weighted_metrics" if weighted else "metrics"
            for i, idents in enumerate(self._spread(spec, len(preds), what, names)):
                for ident in idents:
                    metric = get_compile_metric(ident, trues[i], preds[i])
                    key = (f"{names[i]}_{metric.name}" if len(preds) > 1 and named
                           else metric.name)
                    self._metrics.append((i, metric, weighted, key))
        seen: dict = {}
        for j, (i, metric, weighted, key) in enumerate(self._metrics):
            if key in seen:
                seen[key] += 1
                self._metrics[j] = (i, metric, weighted, f"{key}_{seen[key] - 1}")
            else:
                seen[key] = 1
        self.built = True

    @property
    def metrics(self) -> list:
        return [m for _, m, _, _ in self._metrics]

    @property
    def variables(self) -> list:
        return [v for m in self.metrics for v in m.variables]

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        if not self.built:
            self.build(y_true, y_pred)
        preds = flatten(y_pred)
        trues = by_output(y_true, self.output_names, len(preds))
        weights = (by_output(sample_weight, self.output_names, len(preds))
                   if isinstance(sample_weight, (list, tuple, dict))
                   else [sample_weight] * len(preds))
        for i, metric, weighted, _ in self._metrics:
            metric.update_state(trues[i], preds[i],
                                sample_weight=weights[i] if weighted else None)

    def result(self) -> dict:
        return {key: m.result() for _, m, _, key in self._metrics}

    def reset_state(self) -> None:
        for m in self.metrics:
            m.reset_state()
