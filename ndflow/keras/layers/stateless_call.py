"""`Layer.stateless_call`: a layer's `call` on given values of its variables, leaving the
variables as they are and returning the updated values of the non-trainable ones (Keras 3's
functional form, for JAX-style training loops), through `keras.StatelessScope`."""

from __future__ import annotations

from ndflow.keras.keras_variable import StatelessScope


class StatelessCall:
    """The `stateless_call` method Layer inherits."""

    def stateless_call(self, trainable_variables, non_trainable_variables, *args,
                       return_losses=False, **kwargs):
        """`(outputs, non_trainable_variables[, losses])` of `call(*args, **kwargs)` with the
        layer's trainable and non-trainable variables read as the values given (lists 1:1
        with `trainable_variables` / `non_trainable_variables`)."""
        name = type(self).__name__
        if not self.built:
            raise ValueError(f"To call stateless_call, {name} must be built (i.e. its "
                             "variables must have been already created). You can build it by "
                             "calling it on some data.")
        for arg, given, mine in (("trainable_variables", trainable_variables,
                                  self.trainable_variables),
                                 ("non_trainable_variables", non_trainable_variables,
                                  self.non_trainable_variables)):
            if len(given) != len(mine):
                raise ValueError(f"Argument `{arg}` must be a list of tensors corresponding "
                                 f"1:1 to {name}().{arg}. Received list with length "
                                 f"{len(given)}, but expected {len(mine)} variables.")
        mapping = list(zip(self.trainable_variables, trainable_variables)) + \
            list(zip(self.non_trainable_variables, non_trainable_variables))
        self._clear_losses()
        with StatelessScope(state_mapping=mapping, collect_losses=return_losses) as scope:
            outputs = self.call(*args, **kwargs)   # Keras runs `call` itself
            losses = self.losses if return_losses else None
        self._clear_losses()
        updated = [scope.get_current_value(v) for v in self.non_trainable_variables]
        return (outputs, updated, losses) if return_losses else (outputs, updated)
