"""`tf.keras.optimizers.MultiOptimizer` / `OptimizerMap` (Keras 3): different optimizers for
different variables. An OptimizerMap maps a variable's path (an exact key, else the one
pattern `re.fullmatch`ing it) to an optimizer, else to its default optimizer. The
MultiOptimizer builds each inner optimizer on its variables, splits the gradients among them
and counts its own iterations; its variables are its own (iteration, an unused learning rate)
then each inner optimizer's, in Keras's order, so .keras files hold the same state."""

from __future__ import annotations

import re
from collections.abc import MutableMapping

from ndflow.core.api_export import tf_export
from ndflow.keras.optimizers import serialization
from ndflow.keras.optimizers.base_optimizer import Optimizer


def _path(variable) -> str:
    path = getattr(variable, "path", None)
    return path if path is not None else str(variable.name).split(":")[0]


def _is_loss_scale_optimizer(optimizer) -> bool:
    # by class name: mixed_precision's LossScaleOptimizer imports this package (no cycle)
    return any(c.__name__ == "LossScaleOptimizer" for c in type(optimizer).__mro__)


def _check_inner(optimizer) -> None:
    if _is_loss_scale_optimizer(optimizer):
        raise ValueError("LossScaleOptimizer cannot be used inside an MultiOptimizer.")
    if isinstance(optimizer, MultiOptimizer):
        raise ValueError("MultiOptimizer cannot be used inside an MultiOptimizer.")


@tf_export("keras.optimizers.OptimizerMap", "optimizers.OptimizerMap",
           v1=["keras.optimizers.OptimizerMap"])
class OptimizerMap(MutableMapping):
    """Variable path (or regex) -> optimizer, with a default; called on a variable."""

    def __init__(self, default_optimizer, optimizer_map=None):
        if not isinstance(default_optimizer, Optimizer):
            raise TypeError("default_optimizer must be a Keras Optimizer instance. "
                            f"Received: {default_optimizer}")
        if optimizer_map is not None and not isinstance(optimizer_map, dict):
            raise TypeError(f"optimizer_map must be a dictionary. Received: {optimizer_map}")
        self._default_optimizer = default_optimizer
        self._optimizer_map = dict(optimizer_map or {})

    @property
    def default_optimizer(self):
        return self._default_optimizer

    def __getitem__(self, key):
        if key in self._optimizer_map:
            return self._optimizer_map[key]
        matching = [p for p in self._optimizer_map if re.fullmatch(p, key)]
        if len(matching) > 1:
            raise ValueError(f"Multiple optimizers assigned to variable {key}.")
        return self._optimizer_map[matching[0]] if matching else self._default_optimizer

    def __setitem__(self, key, optimizer):
        if key in self._optimizer_map:
            raise ValueError(f"'{key}' already exists in the OptimizerMap with value "
                             f"{self._optimizer_map[key]}. Please make sure to not use "
                             "duplicated keys.")
        if not isinstance(key, str):
            raise ValueError(f"key must be a string. Received: {key}")
        if not isinstance(optimizer, Optimizer):
            raise ValueError(f"optimizer must be a Keras Optimizer instance. Received: "
                             f"{optimizer}")
        if _is_loss_scale_optimizer(optimizer):
            raise ValueError("optimizer cannot be LossScaleOptimizer.")
        if isinstance(optimizer, MultiOptimizer):
            raise ValueError("optimizer cannot be MultiOptimizer.")
        self._optimizer_map[key] = optimizer

    def __delitem__(self, key):
        del self._optimizer_map[key]

    def __len__(self):
        return len(self._optimizer_map)

    def __iter__(self):
        return iter(self._optimizer_map)

    def __call__(self, variable):
        return self[_path(variable)]

    def get_config(self) -> dict:
        return {"default_optimizer": serialization.serialize(self._default_optimizer),
                "optimizer_map": {k: serialization.serialize(v)
                                  for k, v in self._optimizer_map.items()}}

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        return cls(serialization.deserialize(config["default_optimizer"], custom_objects),
                   {k: serialization.deserialize(v, custom_objects)
                    for k, v in config["optimizer_map"].items()})


def _serialize_map(optimizer_map) -> dict:
    return {"module": "keras.optimizers", "class_name": type(optimizer_map).__name__,
            "config": optimizer_map.get_config(), "registered_name": None}


@tf_export("keras.optimizers.MultiOptimizer", "optimizers.MultiOptimizer",
           v1=["keras.optimizers.MultiOptimizer"])
class MultiOptimizer(Optimizer):
    """Applies each variable's gradient with the optimizer `optimizer_map(variable)` names."""

    def __init__(self, optimizer_map, loss_scale_factor=None, name: str | None = None):
        super().__init__(learning_rate=0.0, loss_scale_factor=loss_scale_factor, name=name)
        self._optimizer_map = optimizer_map
        self._inner_optimizers: list = []
        candidates = list(optimizer_map.values()) if hasattr(optimizer_map, "values") else []
        default = getattr(optimizer_map, "default_optimizer", None)
        for opt in candidates + ([default] if default is not None else []):
            if not any(opt is o for o in self._inner_optimizers):
                opt.loss_scale_factor = loss_scale_factor
                self._inner_optimizers.append(opt)

    @property
    def optimizers(self) -> list:
        return self._inner_optimizers

    @property
    def variables(self) -> list:
        out = list(self._variables)
        for opt in self._inner_optimizers:
            out.extend(opt.variables)
        return out

    @property
    def learning_rate(self):
        raise AttributeError("Learning rate cannot be accessed on a MultiOptimizer. Access "
                             "the learning rate on the individual sub-optimizers instead.")

    @learning_rate.setter
    def learning_rate(self, value) -> None:
        raise AttributeError("Learning rate cannot be set on a MultiOptimizer. Set the "
                             "learning rate on the individual sub-optimizers instead.")

    def _index_of(self, opt) -> int:
        return next(i for i, o in enumerate(self._inner_optimizers) if o is opt)

    def build(self, var_list) -> None:
        if self.built:
            return
        self._var_to_optimizer: dict = {}
        groups: list = [[] for _ in self._inner_optimizers]
        for var in var_list:
            opt = self._optimizer_map(var)
            if not isinstance(opt, Optimizer):
                raise ValueError(f"Optimizer for variable {var} is not an Optimizer instance.")
            _check_inner(opt)
            if not any(opt is o for o in self._inner_optimizers):
                opt.loss_scale_factor = self.loss_scale_factor
                self._inner_optimizers.append(opt)
                groups.append([])
            idx = self._index_of(opt)
            self._var_to_optimizer[id(var)] = idx
            groups[idx].append(var)
        for opt, group in zip(self._inner_optimizers, groups):
            if group:
                opt.build(group)
        super().build(var_list)

    def apply(self, grads, trainable_variables=None, gradient_scale=None) -> None:
        grads = list(grads)
        if not grads:
            return
        if trainable_variables is None:
            if not self.built:
                raise ValueError("When passing `grads` without `variables`, the optimizer must "
                                 "already be built on a list of variables. Call "
                                 "`optimizer.build(trainable_variables)` first.")
            trainable_variables = self._trainable_variables
        trainable_variables = list(trainable_variables)
        if not self.built:
            self.build(trainable_variables)
        if len(grads) != len(self._var_to_optimizer):
            raise ValueError("Gradients must match trainable variables one-to-one. Received "
                             f"{len(grads)} gradients and {len(self._var_to_optimizer)} "
                             "variables.")
        groups: list = [([], []) for _ in self._inner_optimizers]
        for g, v in zip(grads, trainable_variables):
            if id(v) not in self._var_to_optimizer:
                raise ValueError(f"Unknown variable: {v}. This optimizer can only be called "
                                 "for the variables it was originally built with.")
            gs, vs = groups[self._var_to_optimizer[id(v)]]
            gs.append(g)
            vs.append(v)
        for opt, (gs, vs) in zip(self._inner_optimizers, groups):
            if gs:
                opt.apply(gs, vs, gradient_scale=gradient_scale)
        self._iterations.assign_add(1)

    def finalize_variable_values(self, var_list) -> None:
        """Each inner optimizer finalizes its own variables (use_ema averages)."""
        groups: list = [[] for _ in self._inner_optimizers]
        for v in var_list:
            if id(v) in getattr(self, "_var_to_optimizer", {}):
                groups[self._var_to_optimizer[id(v)]].append(v)
        for opt, group in zip(self._inner_optimizers, groups):
            if group:
                opt.finalize_variable_values(group)

    def get_config(self) -> dict:
        return {"optimizer_map": _serialize_map(self._optimizer_map),
                "loss_scale_factor": self.loss_scale_factor, "name": self.name}

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        config = dict(config)
        spec = config["optimizer_map"]
        map_cls = {"OptimizerMap": OptimizerMap}.get(spec["class_name"]) or \
            (custom_objects or {}).get(spec["class_name"])
        if map_cls is None:
            raise ValueError(f"Could not interpret optimizer map: {spec}")
        config["optimizer_map"] = map_cls.from_config(spec["config"], custom_objects)
        return cls(**config)


# `tf.keras.optimizers.deserialize({"class_name": "MultiOptimizer", ...})`
serialization._CLASSES["MultiOptimizer"] = MultiOptimizer
serialization._BY_NAME["multioptimizer"] = MultiOptimizer
