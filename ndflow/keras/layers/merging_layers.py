"""Keras 3's merging layers, called on a list of tensors: Add, Subtract, Multiply, Average,
Maximum, Minimum (broadcasting per sample; inputs of lower rank get axes inserted after the
batch axis), Concatenate, Dot (batched dot products, optionally of L2-normalized inputs), and
their functional forms (`tf.keras.layers.add([a, b])`, ...). Masks merge as Keras' do."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.normalization_layers import dynamic_dims
from ndflow.ops import arithmetic, comparison, linalg, math, reduction
from ndflow.ops.array_core import expand_dims, reshape, shape, squeeze
from ndflow.ops.array_fill import broadcast_to, ones_like, zeros_like
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast

_KERAS_EPSILON = 1e-7


def get_mask(x):
    return getattr(x, "_keras_mask", None)


def set_mask(x, mask) -> None:
    try:
        x._keras_mask = mask
    except AttributeError:  # a tensor type that cannot carry one
        pass


class Merge(Layer):
    """The base of the elementwise merges: shape checks in `build`, rank alignment in
    `call`, OR of the masks."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self._reshape_required = False

    def _merge_function(self, inputs):
        raise NotImplementedError

    def _merge_with_masks(self, op_fn, inputs):
        """Maximum/Minimum: masked positions take the other operand's value; the output's
        mask is the OR of the masks (reduced over the last axis)."""
        output = output_mask = None
        for x in inputs:
            mask = get_mask(x)
            if mask is not None:
                mask = broadcast_to(expand_dims(mask, -1), shape(x))
            if output is None:
                output, output_mask = x, mask
                continue
            if mask is not None:
                x = arithmetic.select_v2(mask, x, output)
            if output_mask is not None:
                output = arithmetic.select_v2(output_mask, output, x)
            if mask is not None and output_mask is not None:
                output_mask = comparison.logical_or(output_mask, mask)
            else:
                output_mask = None
            output = op_fn(output, x)
        if output_mask is not None:
            set_mask(output, reduction.reduce_any(output_mask, axis=-1))
        return output

    @staticmethod
    def _elementwise_shape(shape1, shape2):
        if shape1 is None or shape2 is None:
            return None
        if len(shape1) < len(shape2):
            return Merge._elementwise_shape(shape2, shape1)
        if not shape2:
            return shape1
        out = list(shape1[:-len(shape2)])
        for i, j in zip(shape1[-len(shape2):], shape2):
            if i is None or j is None:
                out.append(None)
            elif i == 1:
                out.append(j)
            elif j == 1:
                out.append(i)
            else:
                if i != j:
                    raise ValueError("Inputs have incompatible shapes. Received shapes "
                                     f"{shape1} and {shape2}")
                out.append(i)
        return tuple(out)

    def _per_sample_shape(self, input_shape):
        out = None if input_shape[0] is None else tuple(input_shape[0][1:])
        for s in input_shape[1:]:
            out = self._elementwise_shape(out, None if s is None else tuple(s[1:]))
        return out

    def build(self, input_shape) -> None:
        if not isinstance(input_shape[0], (tuple, list)):
            raise ValueError("A merge layer should be called on a list of inputs. Received: "
                             f"input_shape={input_shape} (not a list of shapes)")
        batch_sizes = {s[0] for s in input_shape if s} - {None}
        if len(batch_sizes) > 1:
            raise ValueError("Cannot merge tensors with different batch sizes. Received "
                             f"tensors with shapes {input_shape}")
        self._per_sample_shape(input_shape)
        self._reshape_required = not (None not in input_shape
                                      and len(set(map(len, input_shape))) == 1)
        self.built = True

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError("A merge layer should be called on a list of inputs. Received: "
                             f"inputs={inputs} (not a list of tensors)")
        if self._reshape_required:
            max_ndim = max(x.shape.rank for x in inputs)
            aligned = []
            for x in inputs:  # as in Keras, an expanded input no longer carries its mask
                for _ in range(max_ndim - x.shape.rank):
                    x = expand_dims(x, 1)
                aligned.append(x)
            return self._merge_function(aligned)
        return self._merge_function(inputs)

    def compute_output_shape(self, input_shape):
        out = self._per_sample_shape(input_shape)
        batch_sizes = {s[0] for s in input_shape if s is not None} - {None}
        return ((next(iter(batch_sizes)),) if len(batch_sizes) == 1 else (None,)) + out

    def compute_mask(self, inputs, mask=None):
        mask = _check_masks(inputs, mask)
        if mask is None or any(m is None for m in mask):
            return None
        out = mask[0]
        for m in mask[1:]:
            out = comparison.logical_or(out, m)
        return out


def _check_masks(inputs, mask, sep=": "):
    if mask is None:
        return None
    if not isinstance(mask, (tuple, list)):
        raise ValueError(f"`mask` should be a list. Received{sep}mask={mask}")
    if not isinstance(inputs, (tuple, list)):
        raise ValueError(f"`inputs` should be a list. Received: inputs={inputs}")
    if len(mask) != len(inputs):
        raise ValueError("The lists `inputs` and `mask` should have the same length. "
                         f"Received: inputs={inputs} of length {len(inputs)}, and "
                         f"mask={mask} of length {len(mask)}")
    return mask


_MASKED_TAKE_OTHERS = " (masked positions take the\n    other inputs' values)"


def _merged_by(what: str, note: str = "") -> str:
    """The docstring of a merging layer that folds its inputs elementwise by `what`."""
    return f"""A layer merging its inputs by their elementwise {what}{note}.

    Called on a list of tensors of the same shape (or shapes that broadcast, batch axis
    aside); the output has that shape.

    Args:
      **kwargs: Layer arguments (name, dtype, ...).
    """


def _fold(op, inputs):
    out = inputs[0]
    for x in inputs[1:]:
        out = op(out, x)
    return out


@keras_export("keras.layers.Add")
class Add(Merge):
    """A layer merging its inputs by their elementwise sum.

    Called on a list of tensors of the same shape (or shapes that broadcast, batch axis
    aside); the output has that shape.

    Args:
      **kwargs: Layer arguments (name, dtype, ...).

    Example:

    >>> tf.keras.layers.Add()([tf.ones((2, 3)), tf.ones((2, 3))]).numpy()[0]
    array([2., 2., 2.], dtype=float32)
    """

    def _merge_function(self, inputs):
        return _fold(arithmetic.add, inputs)


@keras_export("keras.layers.Subtract")
class Subtract(Merge):
    """A layer subtracting its second input from its first: `inputs[0] - inputs[1]`.

    Args:
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: called on a number of inputs other than 2.
    """

    def build(self, input_shape) -> None:
        super().build(input_shape)
        if len(input_shape) != 2:
            raise ValueError("A `Subtract` layer should be called on exactly 2 inputs. "
                             f"Received: input_shape={input_shape}")

    def _merge_function(self, inputs):
        if len(inputs) != 2:
            raise ValueError("A `Subtract` layer should be called on exactly 2 inputs. "
                             f"Received: inputs={inputs}")
        return arithmetic.subtract(inputs[0], inputs[1])


@keras_export("keras.layers.Multiply")
class Multiply(Merge):
    """A layer merging its inputs by their elementwise product.

    Called on a list of tensors of the same shape (or shapes that broadcast, batch axis
    aside); the output has that shape. A masked position counts as 1 in the product;
    when every input carries a mask the output is 0 outside the union of the masks.

    Args:
      **kwargs: Layer arguments (name, dtype, ...).
    """

    def _merge_function(self, inputs):
        masks = [get_mask(x) for x in inputs]
        all_masked = all(m is not None for m in masks)
        output = output_mask = None
        for x, mask in zip(inputs, masks):
            if mask is not None:
                mask = broadcast_to(expand_dims(mask, -1), shape(x))
                x = arithmetic.select_v2(mask, x, cast(1, x.dtype))
                if all_masked:
                    output_mask = mask if output_mask is None else \
                        comparison.logical_or(output_mask, mask)
            output = x if output is None else arithmetic.multiply(output, x)
        if all_masked:
            output = arithmetic.select_v2(output_mask, output, cast(0, output.dtype))
            set_mask(output, reduction.reduce_any(output_mask, axis=-1))
        return output


@keras_export("keras.layers.Average")
class Average(Merge):
    __doc__ = _merged_by("mean")

    def _merge_function(self, inputs):
        return _fold(arithmetic.add, inputs) / len(inputs)


@keras_export("keras.layers.Maximum")
class Maximum(Merge):
    __doc__ = _merged_by("maximum", _MASKED_TAKE_OTHERS)

    def _merge_function(self, inputs):
        return self._merge_with_masks(arithmetic.maximum, inputs)


@keras_export("keras.layers.Minimum")
class Minimum(Merge):
    __doc__ = _merged_by("minimum", _MASKED_TAKE_OTHERS)

    def _merge_function(self, inputs):
        return self._merge_with_masks(arithmetic.minimum, inputs)


@keras_export("keras.layers.Concatenate")
class Concatenate(Merge):
    """A layer joining its inputs along `axis`.

    Called on a list of tensors equal in every axis but `axis`.

    Args:
      axis: the axis to join along (default the last).
      **kwargs: Layer arguments (name, dtype, ...).

    Example:

    >>> tf.keras.layers.Concatenate()([tf.zeros((2, 3)), tf.ones((2, 4))]).shape
    TensorShape([2, 7])
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def build(self, input_shape) -> None:
        if len(input_shape) < 1 or not isinstance(input_shape[0], (tuple, list)):
            raise ValueError("A `Concatenate` layer should be called on a list of at least 1 "
                             f"input. Received: input_shape={input_shape}")
        if all(s is None for s in input_shape):
            self.built = True
            return
        reduced = set()
        for s in input_shape:
            s = list(s)
            if len(s) > self.axis:
                del s[self.axis]
            reduced.add(tuple(s))
        if len(reduced) != 1:
            msg = ("A `Concatenate` layer requires inputs with matching shapes except for the "
                   f"concatenation axis. Received: input_shape={input_shape}")
            ranks = {len(s) for s in reduced}
            if len(ranks) != 1:
                raise ValueError(msg)
            for axis in range(next(iter(ranks))):
                if len({s[axis] for s in reduced if s[axis] is not None}) > 1:
                    raise ValueError(msg)
        self.built = True

    def _merge_function(self, inputs):
        return concat(list(inputs), axis=self.axis)

    def compute_output_shape(self, input_shape):
        if not isinstance(input_shape, (tuple, list)) or \
                not isinstance(input_shape[0], (tuple, list)):
            raise ValueError("A `Concatenate` layer should be called on a list of inputs. "
                             f"Received: input_shape={input_shape}")
        out = list(input_shape[0])
        for s in input_shape[1:]:
            if out[self.axis] is None or s[self.axis] is None:
                out[self.axis] = None
                break
            out[self.axis] += s[self.axis]
        return tuple(out)

    def compute_mask(self, inputs, mask=None):
        mask = _check_masks(inputs, mask, sep=" ")
        if mask is None or all(m is None for m in mask):
            return None
        masks = []
        for x, m in zip(inputs, mask):
            if m is None:
                masks.append(cast(ones_like(x), dtypes.bool))
            elif m.shape.rank < x.shape.rank:
                masks.append(comparison.logical_or(expand_dims(m, -1),
                                                   cast(zeros_like(x), dtypes.bool)))
            else:
                masks.append(m)
        return reduction.reduce_any(concat(masks, axis=self.axis), axis=-1)

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis}


def _l2_normalize(x, axis):
    """Keras' ops.normalize(order=2): x * min(rsqrt(sum(x**2)), 1 / epsilon)."""
    inv = math.rsqrt(reduction.reduce_sum(math.square(x), axis=axis, keepdims=True))
    return x * arithmetic.minimum(inv, cast(1.0 / _KERAS_EPSILON, x.dtype))


def batch_dot(x, y, axes):
    """Keras' batch_dot: per sample, the dot product of `x` and `y` over `axes` (ints,
    counted with the batch axis)."""
    x_ndim, y_ndim = x.shape.rank, y.shape.rank
    x_shape, y_shape = tuple(x.shape.as_list()), tuple(y.shape.as_list())
    if x_ndim < 2 or y_ndim < 2:
        raise ValueError("Cannot do batch_dot on inputs with rank < 2. Received inputs with "
                         f"shapes {x_shape} and {y_shape}.")
    if None not in (x_shape[0], y_shape[0]) and x_shape[0] != y_shape[0]:
        raise ValueError("Cannot do batch_dot on inputs with different batch sizes. Received "
                         f"inputs with shapes {x_shape} and {y_shape}.")
    a0, a1 = axes
    a0, a1 = a0 + x_ndim if a0 < 0 else a0, a1 + y_ndim if a1 < 0 else a1
    if 0 in (a0, a1):
        raise ValueError("Cannot perform batch_dot over axis 0. If your inputs are not "
                         "batched, add a dummy batch dimension to your inputs using "
                         "keras.ops.expand_dims(x, 0)")
    d1, d2 = x_shape[a0], y_shape[a1]
    if d1 is not None and d2 is not None and d1 != d2:
        raise ValueError(f"Cannot do batch_dot on inputs with shapes {x_shape} and {y_shape} "
                         f"with axes={[a0, a1]}. x.shape[{a0}] != y.shape[{a1}] "
                         f"({d1} != {d2}).")
    orig_x_ndim, orig_y_ndim = x_ndim, y_ndim
    if x_ndim == 2:
        x, a0, x_ndim = expand_dims(x, 1), a0 + 1, 3
    if y_ndim == 2:
        y, y_ndim = expand_dims(y, 2), 3
    if a0 != x_ndim - 1:  # the reduced axis of x last
        x = transpose(x, [i for i in range(x_ndim) if i != a0] + [a0])
    if a1 != 1:  # the reduced axis of y second
        y = transpose(y, [0, a1] + [i for i in range(1, y_ndim) if i != a1])
    xd, yd = dynamic_dims(x), dynamic_dims(y)
    if x_ndim > 3:
        x = reshape(x, [xd[0], -1, xd[-1]])
    if y_ndim > 3:
        y = reshape(y, [yd[0], yd[1], -1])
    result = linalg.matmul(x, y)
    if x_ndim > 3 or y_ndim > 3:
        rd = dynamic_dims(result)
        out = rd[:1] + (xd[1:-1] if x_ndim > 3 else rd[1:2])
        out += yd[2:] if y_ndim > 3 else rd[2:]
        result = reshape(result, out)
    if orig_x_ndim == 2:
        result = squeeze(result, [1])
    elif orig_y_ndim == 2:
        result = squeeze(result, [-1])
    return result


def _dot_axes(axes, ndims):
    if isinstance(axes, int):
        return [axes % n for n in ndims] if axes < 0 else [axes, axes]
    return [a % n if a < 0 else a for a, n in zip(axes, ndims)]


@keras_export("keras.layers.Dot")
class Dot(Merge):
    """A layer computing the per-sample dot product of its two inputs.

    Args:
      axes: the axis to contract: an int for both inputs, or a pair (one per input); the
        batch axis 0 cannot be contracted.
      normalize: whether to L2-normalize both inputs along `axes` first, giving the
        cosine similarity.
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      TypeError: `axes` is neither an int nor a list/tuple.
      ValueError: a list/tuple of `axes` not of length 2; in a call, inputs other than
        two, or contracted dimensions that differ.

    Example:

    >>> tf.keras.layers.Dot(axes=1)([tf.ones((2, 3)), tf.ones((2, 3))]).numpy()
    array([[3.],
           [3.]], dtype=float32)
    """

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)):
                raise TypeError("Invalid type for argument `axes`: it should be a list or an "
                                f"int. Received: axes={axes}")
            if len(axes) != 2:
                raise ValueError("Invalid format for argument `axes`: it should contain two "
                                 f"elements. Received: axes={axes}")
            if not isinstance(axes[0], int) or not isinstance(axes[1], int):
                raise ValueError("Invalid format for argument `axes`: list elements should be "
                                 f"integers. Received: axes={axes}")
        self.axes, self.normalize = axes, normalize

    def build(self, input_shape) -> None:
        if not isinstance(input_shape[0], (tuple, list)) or len(input_shape) != 2:
            raise ValueError("A `Dot` layer should be called on a list of 2 inputs. "
                             f"Received: input_shape={input_shape}")
        s1, s2 = input_shape
        if isinstance(self.axes, int) and self.axes < 0:
            axes = [self.axes % len(s1), self.axes % len(s2)]
        else:
            axes = [self.axes] * 2 if isinstance(self.axes, int) else self.axes
        if s1[axes[0]] != s2[axes[1]]:
            raise ValueError(f"Incompatible input shapes: axis values {s1[axes[0]]} (at axis "
                             f"{axes[0]}) != {s2[axes[1]]} (at axis {axes[1]}). Full input "
                             f"shapes: {s1}, {s2}")
        self.built = True

    def _merge_function(self, inputs):
        if len(inputs) != 2:
            raise ValueError("A `Dot` layer should be called on exactly 2 inputs. Received: "
                             f"inputs={inputs}")
        x1, x2 = inputs
        axes = _dot_axes(self.axes, [x1.shape.rank, x2.shape.rank])
        if self.normalize:
            x1, x2 = _l2_normalize(x1, axes[0]), _l2_normalize(x2, axes[1])
        return batch_dot(x1, x2, axes)

    def compute_output_shape(self, input_shape):
        if not isinstance(input_shape, (tuple, list)) or len(input_shape) != 2:
            raise ValueError("A `Dot` layer should be called on a list of 2 inputs. "
                             f"Received: input_shape={input_shape}")
        s1, s2 = list(input_shape[0]), list(input_shape[1])
        if isinstance(self.axes, int) and self.axes < 0:
            axes = [self.axes % len(s1), self.axes % len(s2)]
        else:
            axes = [self.axes] * 2 if isinstance(self.axes, int) else self.axes
        s1.pop(axes[0])
        s2.pop(axes[1])
        s2.pop(0)
        out = s1 + s2
        return tuple(out + [1] if len(out) == 1 else out)

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self) -> dict:
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


def _functional(cls, name):
    def merge(inputs, **kwargs):
        return cls(**kwargs)(inputs)
    merge.__name__ = merge.__qualname__ = name
    merge.__doc__ = f"""The functional form of `keras.layers.{cls.__name__}`:
    `{cls.__name__}(**kwargs)(inputs)`.

    Args:
      inputs: a list of tensors (or KerasTensors) to merge.
      **kwargs: the layer's arguments (name, ...).

    Returns:
      The merged tensor.
    """
    return keras_export(f"keras.layers.{name}")(merge)


add = _functional(Add, "add")
subtract = _functional(Subtract, "subtract")
multiply = _functional(Multiply, "multiply")
average = _functional(Average, "average")
maximum = _functional(Maximum, "maximum")
minimum = _functional(Minimum, "minimum")


@keras_export("keras.layers.concatenate")
def concatenate(inputs, axis=-1, **kwargs):
    """The functional form of `keras.layers.Concatenate`:
    `Concatenate(axis=axis, **kwargs)(inputs)`.

    Args:
      inputs: a list of tensors equal in every axis but `axis`.
      axis: the axis to join along (default the last).
      **kwargs: the layer's other arguments (name, ...).

    Returns:
      The joined tensor.
    """
    return Concatenate(axis=axis, **kwargs)(inputs)


@keras_export("keras.layers.dot")
def dot(inputs, axes=-1, **kwargs):
    """The functional form of `keras.layers.Dot`: `Dot(axes=axes, **kwargs)(inputs)`.

    Args:
      inputs: a list of two tensors.
      axes: the axis to contract (an int, or one per input).
      **kwargs: the layer's other arguments (normalize, name, ...).

    Returns:
      The per-sample dot products.
    """
    return Dot(axes=axes, **kwargs)(inputs)
