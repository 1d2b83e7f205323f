"""Keras 3's normalization layers: BatchNormalization (moving statistics, batch renorm,
masked moments, frozen = inference), LayerNormalization and GroupNormalization. Statistics
are computed in float32 at least (float16/bfloat16 inputs are upcast, as Keras does) and the
output is cast to the layer's compute dtype. Also small shape helpers the other layer
modules share."""

from __future__ import annotations

import warnings

from ndflow.core import dtypes, save_context
from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.keras import constraint_functions as constraints
from ndflow.keras import regularizer_functions as regularizers
from ndflow.keras.layers import normalization_docs
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.input_spec import InputSpec
from ndflow.ops import (
    arithmetic,
    array_fill,
    init_ops,
    layer_norm_fused,
    math,
    nn_norm,
    reduction,
)
from ndflow.ops.apply import apply_op
from ndflow.ops.array_core import expand_dims, reshape, shape, squeeze, stop_gradient
from ndflow.ops.array_fill import broadcast_to
from ndflow.ops.cast import cast

_KERAS_EPSILON = 1e-7  # keras.config.epsilon()


# -- shared helpers ---------------------------------------------------------------------------
def shape_str(dims) -> str:
    """A shape as Keras prints it: `(2, None, 3)`."""
    return str(tuple(dims))


def dynamic_dims(x) -> list:
    """The dims of `x`: Python ints where static, scalar tensors where not."""
    dims = x.shape.as_list()
    if all(d is not None for d in dims):
        return dims
    dyn = shape(x)
    return [d if d is not None else dyn[i] for i, d in enumerate(dims)]


def stats_dtype(dtype):
    """Keras' `result_type(dtype, "float32")` for floating inputs: float64 stays, the rest
    computes in float32."""
    return dtypes.float64 if dtypes.as_dtype(dtype) is dtypes.float64 else dtypes.float32


def check_fully_defined(layer, dims, weight: str) -> None:
    if any(d is None for d in dims):
        raise ValueError("Shapes used to initialize variables must be fully-defined (no "
                         f"`None` dimensions). Received: shape={shape_str(dims)} for variable "
                         f"path='{layer.name}/{weight}'")


def int_or_list(axis, error: str):
    """An `axis` argument as an int or a list of ints; a TypeError(`error`) otherwise."""
    if isinstance(axis, (list, tuple)):
        return list(axis)
    if isinstance(axis, int):
        return axis
    raise TypeError(error)


def check_axes_in_bounds(axis, input_shape) -> None:
    for a in axis if isinstance(axis, (list, tuple)) else [axis]:
        if a >= len(input_shape) or a < -len(input_shape):
            raise ValueError(f"Axis {a} is out of bounds for input shape {input_shape}. "
                             f"Received: axis={axis}")


class _AffineNorm(Layer):
    """gamma/beta handling shared by the three layers."""

    def _init_affine(self, center, scale, beta_initializer, gamma_initializer,
                     beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint):
        self.center, self.scale = center, scale
        self.beta_initializer = init_ops.get(beta_initializer)
        self.gamma_initializer = init_ops.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)
        self.gamma = self.beta = None

    def _add_affine(self, shape_, with_gamma, with_beta) -> None:
        if with_gamma:
            self.gamma = self.add_weight(shape_, self.gamma_initializer, trainable=True,
                                         autocast=False, regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint, name="gamma")
        if with_beta:
            self.beta = self.add_weight(shape_, self.beta_initializer, trainable=True,
                                        autocast=False, regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint, name="beta")

    def _affine_config(self) -> dict:
        return {"beta_initializer": init_ops.serialize(self.beta_initializer),
                "gamma_initializer": init_ops.serialize(self.gamma_initializer),
                "beta_regularizer": regularizers.serialize(self.beta_regularizer),
                "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
                "beta_constraint": constraints.serialize(self.beta_constraint),
                "gamma_constraint": constraints.serialize(self.gamma_constraint)}

    def compute_output_shape(self, input_shape):
        check_axes_in_bounds(self.axis, input_shape)
        return input_shape


def _fused_training(x, gamma, beta, axis: int, epsilon: float):
    """(output, batch mean, biased batch variance) of a float32 training-mode batch norm over
    every axis but the channels (the last, or axis 1 of a 4-D input) as one FusedBatchNormV3
    and its gradient one FusedBatchNormGradV3, instead of Keras' moments and normalization
    as a dozen ops each way (what XLA fuses); None where that does not apply. The same
    numbers as Keras' ops up to float32 rounding: reserve_space_1 and _2 are the batch's
    mean and biased variance."""
    rank = x.shape.rank
    if rank is None or rank < 2 or x.dtype != dtypes.float32:
        return None
    channels = x.shape[axis]
    if channels is None:
        return None
    if axis % rank == rank - 1:
        fmt, x4 = "NHWC", (x if rank == 4 else reshape(x, [-1, 1, 1, channels]))
    elif rank == 4 and axis % rank == 1:
        fmt, x4 = "NCHW", x
    else:
        return None
    scale = gamma if gamma is not None else array_fill.ones([channels], dtypes.float32)
    offset = beta if beta is not None else array_fill.zeros([channels], dtypes.float32)
    empty = array_fill.zeros([0], dtypes.float32)
    op = apply_op(nn_norm.FusedBatchNormV3, [x4, scale, offset, empty, empty],
                  {"epsilon": float(epsilon), "data_format": fmt, "is_training": True},
                  name="FusedBatchNormV3")
    y = op.outputs[0] if x4 is x else reshape(op.outputs[0], shape(x))
    return y, op.outputs[3], op.outputs[4]


@keras_export("keras.layers.BatchNormalization")
class BatchNormalization(_AffineNorm):
    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, synchronized=False, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis)
        self.synchronized = synchronized  # one replica: the local moments are the global ones
        self.momentum, self.epsilon = float(momentum), float(epsilon)
        self._init_affine(center, scale, beta_initializer, gamma_initializer,
                          beta_regularizer, gamma_regularizer, beta_constraint,
                          gamma_constraint)
        self.moving_mean_initializer = init_ops.get(moving_mean_initializer)
        self.moving_variance_initializer = init_ops.get(moving_variance_initializer)
        self.supports_masking = True
        self.renorm = renorm
        if renorm:
            renorm_clipping = renorm_clipping or {}
            keys = ["rmax", "rmin", "dmax"]
            if set(renorm_clipping) - set(keys):
                raise ValueError("Received invalid keys for `renorm_clipping` argument: "
                                 f"{renorm_clipping}. Supported values: {keys}.")
            rmax, rmin = renorm_clipping.get("rmax"), renorm_clipping.get("rmin")
            dmax = renorm_clipping.get("dmax")
            if rmax is not None and rmin is not None and rmax < rmin:
                # Keras' message (its placeholders are not formatted)
                raise ValueError("rmax should be greater than rmin in the `renorm_clipping` "
                                 "argument. Received: rmax={rmax}, rmin={rmin}.")
            if dmax is not None and dmax < 0:
                raise ValueError("dmax should be non-negative in the `renorm_clipping` "
                                 "argument. Received: dmax={dmax}.")
        self.renorm_clipping = renorm_clipping
        self.renorm_momentum = renorm_momentum
        self.moving_mean = self.moving_variance = None
        self._reduction_axes = None

    def build(self, input_shape) -> None:
        dim = input_shape[self.axis]
        shape_ = (dim,)
        check_fully_defined(self, shape_, "gamma" if self.scale else
                            "beta" if self.center else "moving_mean")
        self._add_affine(shape_, self.scale, self.center)
        self.moving_mean = self.add_weight(shape_, self.moving_mean_initializer,
                                           trainable=False, autocast=False,
                                           name="moving_mean")
        self.moving_variance = self.add_weight(shape_, self.moving_variance_initializer,
                                               trainable=False, autocast=False,
                                               name="moving_variance")
        if self.renorm:
            # Batch renorm tracks the moving stddev (initialized as the square root of the
            # variance initializer) and training-time moving mean / stddev.
            def stddev_init(shape, dtype=None):
                return math.sqrt(_clone(self.moving_variance_initializer)(shape, dtype=dtype))
            self.moving_stddev = self.add_weight(shape_, stddev_init, trainable=False,
                                                 autocast=False, name="moving_stddev")
            self.renorm_mean = self.add_weight(shape_, _clone(self.moving_mean_initializer),
                                               trainable=False, autocast=False,
                                               name="renorm_mean")
            self.renorm_stddev = self.add_weight(shape_, stddev_init, trainable=False,
                                                 autocast=False, name="renorm_stddev")
        self.input_spec = InputSpec(ndim=len(input_shape), axes={self.axis: dim})
        axes = list(range(len(input_shape)))
        del axes[self.axis]
        self._reduction_axes = axes
        self.built = True

    def call(self, inputs, training=None, mask=None):
        if mask is not None and mask.shape.rank is not None and inputs.shape.rank is not None \
                and mask.shape.rank != inputs.shape.rank - 1:
            raise ValueError("The mask provided should be one dimension less than the inputs. "
                             f"Received: mask.shape={mask.shape}, inputs.shape={inputs.shape}")
        dtype = stats_dtype(inputs.dtype)
        x = cast(inputs, dtype)
        moving_mean = cast(self.moving_mean, dtype)
        moving_variance = cast(self.moving_variance, dtype)
        gamma = cast(self.gamma, dtype) if self.scale else None
        beta = cast(self.beta, dtype) if self.center else None
        fused = None
        if training and self.trainable and mask is None and not self.renorm \
                and not self.synchronized:
            fused = _fused_training(x, gamma, beta, self.axis, self.epsilon)
        if fused is not None:
            out, mean, variance = fused
            _assign(self.moving_mean, moving_mean * self.momentum + mean * (1.0 - self.momentum))
            _assign(self.moving_variance, moving_variance * self.momentum
                    + variance * (1.0 - self.momentum))
            return cast(out, self.compute_dtype)
        if training and self.trainable:
            mean, variance = self._moments(x, mask)
            if self.renorm:
                r, d = self._renorm_correction(mean, variance)
                gamma, beta = _compose(r, d, gamma, beta, dtype)
                self._update_renorm_statistics(mean, variance)
            else:
                _assign(self.moving_mean, moving_mean * self.momentum
                        + mean * (1.0 - self.momentum))
                _assign(self.moving_variance, moving_variance * self.momentum
                        + variance * (1.0 - self.momentum))
        else:
            mean, variance = moving_mean, moving_variance
        rank = x.shape.rank
        if self.axis % rank != rank - 1:
            bshape = [1] * rank
            bshape[self.axis] = -1
            mean, variance = reshape(mean, bshape), reshape(variance, bshape)
            gamma = None if gamma is None else reshape(gamma, bshape)
            beta = None if beta is None else reshape(beta, bshape)
        out = nn_norm.batch_normalization(x, mean, variance, beta, gamma, self.epsilon)
        return cast(out, self.compute_dtype)

    def _moments(self, x, mask):
        if mask is None:
            return nn_norm.moments(x, self._reduction_axes)
        full = cast(broadcast_to(expand_dims(cast(mask, dtypes.bool), -1), shape(x)),
                    dtypes.bool)
        zero = cast(0.0, x.dtype)
        weights = reduction.reduce_sum(cast(full, x.dtype), self._reduction_axes,
                                       keepdims=True) + _KERAS_EPSILON
        mean = reduction.reduce_sum(arithmetic.select_v2(full, x, zero), self._reduction_axes,
                                    keepdims=True) / weights
        diff = arithmetic.select_v2(full, x - mean, zero)
        variance = reduction.reduce_sum(math.square(diff), self._reduction_axes,
                                        keepdims=True) / weights
        return (squeeze(mean, self._reduction_axes),
                squeeze(variance, self._reduction_axes))

    def _renorm_correction(self, mean, variance):
        stddev = math.sqrt(variance + self.epsilon)
        renorm_mean = cast(self.renorm_mean, mean.dtype)
        renorm_stddev = arithmetic.maximum(cast(self.renorm_stddev, mean.dtype),
                                           math.sqrt(cast(self.epsilon, mean.dtype)))
        r = stddev / renorm_stddev
        d = (mean - renorm_mean) / renorm_stddev
        clip = self.renorm_clipping
        if clip.get("rmin") is not None:
            r = arithmetic.maximum(r, cast(clip["rmin"], r.dtype))
        if clip.get("rmax") is not None:
            r = arithmetic.minimum(r, cast(clip["rmax"], r.dtype))
        if clip.get("dmax") is not None:
            d = math.clip_by_value(d, cast(-clip["dmax"], d.dtype), cast(clip["dmax"], d.dtype))
        return r, d

    def _update_renorm_statistics(self, mean, variance) -> None:
        stddev = math.sqrt(variance + self.epsilon)
        renorm_mean = cast(self.renorm_mean, mean.dtype)
        renorm_stddev = cast(self.renorm_stddev, mean.dtype)
        m = self.renorm_momentum
        _assign(self.renorm_mean, renorm_mean * m + mean * (1.0 - m))
        _assign(self.renorm_stddev, renorm_stddev * m + stddev * (1.0 - m))
        moving_mean = cast(self.moving_mean, mean.dtype)
        moving_stddev = cast(self.moving_stddev, mean.dtype)
        _assign(self.moving_mean, moving_mean * self.momentum + mean * (1.0 - self.momentum))
        new_stddev = moving_stddev * self.momentum + stddev * (1.0 - self.momentum)
        _assign(self.moving_stddev, new_stddev)
        # the variance follows the stddev (ReLU against rounding below zero)
        _assign(self.moving_variance,
                arithmetic.maximum(new_stddev * new_stddev - self.epsilon,
                                   cast(0.0, new_stddev.dtype)))

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis, "momentum": self.momentum,
                "epsilon": self.epsilon, "center": self.center, "scale": self.scale,
                "beta_initializer": init_ops.serialize(self.beta_initializer),
                "gamma_initializer": init_ops.serialize(self.gamma_initializer),
                "moving_mean_initializer": init_ops.serialize(self.moving_mean_initializer),
                "moving_variance_initializer":
                    init_ops.serialize(self.moving_variance_initializer),
                **{k: v for k, v in self._affine_config().items()
                   if not k.endswith("_initializer")},
                "synchronized": self.synchronized, "renorm": self.renorm,
                "renorm_clipping": self.renorm_clipping,
                "renorm_momentum": self.renorm_momentum}


def _clone(initializer):
    """A fresh initializer from `initializer`'s config (Keras' _clone_initializer)."""
    if hasattr(initializer, "get_config") and hasattr(type(initializer), "from_config"):
        return type(initializer).from_config(initializer.get_config())
    return initializer


def _assign(variable, value) -> None:
    dtype = dtypes.as_dtype(variable.dtype)  # moving statistics never autocast
    variable.assign(cast(value, dtype) if value.dtype is not dtype else value)


def _compose(r, d, gamma, beta, dtype):
    """(x * r + d) * gamma + beta = x * (r * gamma) + (d * gamma + beta), r and d constant."""
    r, d = stop_gradient(r), stop_gradient(d)
    if gamma is not None:
        eff_gamma, eff_beta = r * gamma, d * gamma
    else:
        eff_gamma, eff_beta = cast(r, dtype), cast(d, dtype)
    if beta is not None:
        eff_beta = eff_beta + beta
    return eff_gamma, eff_beta


@keras_export("keras.layers.LayerNormalization")
class LayerNormalization(_AffineNorm):
    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 **kwargs):
        rms_scaling = kwargs.pop("rms_scaling", False)
        if rms_scaling:
            warnings.warn("You passed `rms_scaling=True`, which is deprecated. This argument "
                          "incorrectly scales the input by the variance, not the root mean "
                          "square. To correctly use RMS Normalization, please use "
                          "`keras.layers.RMSNormalization` instead.", stacklevel=2)
        super().__init__(**kwargs)
        self.axis = int_or_list(axis, "Expected an int or a list/tuple of ints for the argument "
                                      f"'axis', but received: {axis!r}")
        self.epsilon = epsilon
        self.rms_scaling = rms_scaling
        self._init_affine(center, scale, beta_initializer, gamma_initializer,
                          beta_regularizer, gamma_regularizer, beta_constraint,
                          gamma_constraint)
        self.supports_masking = True
        self.autocast = False

    def build(self, input_shape) -> None:
        if isinstance(self.axis, (list, tuple)):
            self.axis = sorted(self.axis)
            shape_ = tuple(input_shape[d] for d in self.axis)
        else:
            shape_ = (input_shape[self.axis],)
            self.axis = [self.axis]
        check_fully_defined(self, shape_, "gamma")
        self._add_affine(shape_, self.scale or self.rms_scaling,
                         self.center and not self.rms_scaling)
        self.built = True

    def call(self, inputs):
        dtype = stats_dtype(inputs.dtype)
        x = cast(inputs, dtype)
        ndims = x.shape.rank
        fused = self._fused(x)
        if fused is not None:
            return cast(cast(fused, inputs.dtype), self.compute_dtype)
        axis = sorted(self.axis)
        bshape = [1] * ndims
        params = [v for v in (self.gamma, self.beta) if v is not None]
        for d, size in zip(axis, params[0].shape.as_list() if params else []):
            bshape[d] = size

        def param(v):
            if v is None:
                return None
            v = cast(v, dtype)
            if v.shape.rank != ndims and axis != [ndims - 1]:
                v = reshape(v, bshape)
            return v

        gamma, beta = param(self.gamma), param(self.beta)
        if self.rms_scaling:
            _, variance = nn_norm.moments(x, axis, keepdims=True)
            out = x * math.rsqrt(variance + self.epsilon)
            if gamma is not None:
                out = out * gamma
        else:
            mean, variance = nn_norm.moments(x, axis, keepdims=True)
            inv = math.rsqrt(variance + self.epsilon)
            if gamma is not None:
                inv = inv * gamma
            res = -mean * inv
            if beta is not None:
                res = res + beta
            out = x * inv + res
        return cast(cast(out, inputs.dtype), self.compute_dtype)

    def _fused(self, x):
        """The normalization as one _LayerNorm op (ops/layer_norm_fused.py), its gradient
        one _LayerNormGrad, where the axes are the trailing ones (Keras' ops otherwise, and
        while a SavedModel is written, for TensorFlow to load); None where not."""
        rank = x.shape.rank
        if (self.rms_scaling or rank is None or rank == 0 or save_context.in_save_context()
                or x.dtype not in (dtypes.float32, dtypes.float64)):
            return None
        axes = sorted(a % rank for a in self.axis)
        if axes != list(range(rank - len(axes), rank)):
            return None
        empty = array_fill.zeros([0], x.dtype)
        gamma = cast(self.gamma, x.dtype) if self.gamma is not None else empty
        beta = cast(self.beta, x.dtype) if self.beta is not None else empty
        return apply_op(layer_norm_fused.LayerNorm, [x, gamma, beta],
                        {"epsilon": float(self.epsilon), "begin_norm_axis": axes[0],
                         "scale": self.gamma is not None, "center": self.beta is not None},
                        name="LayerNorm").outputs[0]

    def get_config(self) -> dict:
        affine = self._affine_config()
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale, "rms_scaling": self.rms_scaling,
                **affine}


@keras_export("keras.layers.GroupNormalization")
class GroupNormalization(_AffineNorm):
    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 **kwargs):
        if not isinstance(groups, int) or (groups <= 0 and groups != -1):
            raise ValueError("Received an invalid value for argument `groups`, expected a "
                             "positive integer (or `-1` for instance normalization). "
                             f"Received: groups={groups}")
        super().__init__(**kwargs)
        self.supports_masking = True
        self.autocast = False
        self.groups, self.axis, self.epsilon = groups, axis, epsilon
        self._init_affine(center, scale, beta_initializer, gamma_initializer,
                          beta_regularizer, gamma_regularizer, beta_constraint,
                          gamma_constraint)

    def build(self, input_shape) -> None:
        dim = input_shape[self.axis]
        if dim is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined "
                             "dimension but the layer received an input with shape "
                             f"{input_shape}.")
        if self.groups == -1:
            self.groups = dim
        if dim < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the "
                             f"number of channels ({dim}).")
        if dim % self.groups != 0:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the "
                             f"number of channels ({dim}).")
        self.input_spec = InputSpec(ndim=len(input_shape), axes={self.axis: dim})
        self._add_affine((dim,), self.scale, self.center)
        self.built = True

    def call(self, inputs):
        dims = dynamic_dims(inputs)
        ndim = len(dims)
        group_shape = [-1] + dims[1:]
        group_shape[self.axis] = dims[self.axis] // self.groups
        group_shape.insert(self.axis, self.groups)
        grouped = reshape(inputs, group_shape)
        dtype = stats_dtype(inputs.dtype)
        grouped = cast(grouped, dtype)
        axes = list(range(1, ndim + 1))
        axes.pop(-2 if self.axis == -1 else self.axis - 1)
        bshape = [1] * ndim
        bshape[self.axis] = inputs.shape.as_list()[self.axis] // self.groups
        bshape.insert(self.axis, self.groups)
        mean, variance = nn_norm.moments(grouped, axes, keepdims=True)
        inv = math.rsqrt(variance + self.epsilon)
        if self.scale:
            inv = inv * cast(reshape(self.gamma, bshape), dtype)
        res = -mean * inv
        if self.center:
            res = res + cast(reshape(self.beta, bshape), dtype)
        out = cast(grouped * inv + res, inputs.dtype)
        return cast(reshape(out, shape(inputs)), self.compute_dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "groups": self.groups, "axis": self.axis,
                "epsilon": self.epsilon, "center": self.center, "scale": self.scale,
                **self._affine_config()}


attach(globals(), normalization_docs.DOCS)
