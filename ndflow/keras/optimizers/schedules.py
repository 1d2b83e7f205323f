"""`tf.keras.optimizers.schedules`: the learning-rate schedules (defined in ndflow.train)."""

from ndflow.train.learning_rate_schedule import (
    ExponentialDecay,
    InverseTimeDecay,
    LearningRateSchedule,
    PiecewiseConstantDecay,
    PolynomialDecay,
    deserialize,
    serialize,
)

__all__ = ["ExponentialDecay", "InverseTimeDecay", "LearningRateSchedule",
           "PiecewiseConstantDecay", "PolynomialDecay", "deserialize", "serialize"]
