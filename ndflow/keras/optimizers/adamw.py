"""`tf.keras.optimizers.AdamW`: Adam with decoupled weight decay (Keras 3): the base
optimizer first shrinks each variable, `var -= var * weight_decay * lr`, then Adam's update
runs on the gradient. Same slots as Adam, so Adam's and AdamW's states are interchangeable.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.keras.optimizers.adam import Adam


@tf_export("keras.optimizers.AdamW", "optimizers.AdamW", v1=["keras.optimizers.AdamW"])
class AdamW(Adam):
    """Adam whose `weight_decay` (default 0.004) is required."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, amsgrad: bool = False, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema: bool = False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name: str | None = None, **kwargs):
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2,
                         epsilon=epsilon, amsgrad=amsgrad, name=name,
                         weight_decay=weight_decay, clipnorm=clipnorm, clipvalue=clipvalue,
                         global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum,
                         ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        if self.weight_decay is None:
            raise ValueError("Argument `weight_decay` must be a float. Received: "
                             "weight_decay=None")
