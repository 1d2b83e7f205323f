"""Complex numbers: Complex, Real, Imag, Angle, ComplexAbs and Conj (TF's math_ops), and the
public `tf.complex`, `tf.math.real` / `imag` / `angle` / `conj`.

Real tensors pass through `real`/`conj` and give zeros for `imag`, as in TensorFlow; `tf.abs`
(math.py) sends complex tensors to ComplexAbs. Gradients are in complex_ops_grad.py.
"""

from __future__ import annotations

import math as _pymath

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.tensor import Tensor
from ndflow.ops import array_fill, complex_ops_docs
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import multiply, select
from ndflow.ops.cast import cast_to
from ndflow.ops.comparison import broadcast_shape, composite_name, less, unchanged_shape
from ndflow.ops.op_def import BROADCASTING, POINTWISE, op_def

_COMPLEX_T = "T: {complex64, complex128} = DT_COMPLEX64"
_REAL_TOUT = "Tout: {float, double} = DT_FLOAT"

Complex = op_def("Complex", inputs=["real: T", "imag: T"], outputs=["out: Tout"],
                 attrs=["T: {float, double} = DT_FLOAT",
                        "Tout: {complex64, complex128} = DT_COMPLEX64"],
                 shape=broadcast_shape, tags=[BROADCASTING])


def _to_real(name):
    return op_def(name, inputs=["input: T"], outputs=["output: Tout"],
                  attrs=[_COMPLEX_T, _REAL_TOUT], shape=unchanged_shape, tags=[POINTWISE])


Real = _to_real("Real")
Imag = _to_real("Imag")
Angle = _to_real("Angle")
ComplexAbs = op_def("ComplexAbs", inputs=["x: T"], outputs=["y: Tout"],
                    attrs=[_COMPLEX_T, _REAL_TOUT], shape=unchanged_shape, tags=[POINTWISE])
Conj = op_def("Conj", inputs=["input: T"], outputs=["output: T"],
              attrs=["T: {complex64, complex128, variant} = DT_COMPLEX64"],
              shape=unchanged_shape, tags=[POINTWISE])

_COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


def _is_numeric(dtype) -> bool:
    return dtype.is_floating or dtype.is_integer or dtype.is_complex


@tf_export("dtypes.complex", "complex")
def complex(real, imag, name=None) -> Tensor:  # noqa: A001 - TF's name
    """`tf.complex`: real + imag * 1j elementwise (float32 -> complex64, float64 ->
    complex128), broadcasting."""
    real = convert_to_tensor(real, name="real")
    imag = convert_to_tensor(imag, name="imag")
    with composite_name(name, "Complex") as final:
        tout = _COMPLEX_OF.get(real.dtype)
        if tout is None or imag.dtype is not real.dtype:
            raise TypeError(f"The `real` and `imag` components have incorrect types: "
                            f"{real.dtype.name} {imag.dtype.name}. They must be consistent, "
                            f"and one of [tf.float32, tf.float64]")
    return apply_op(Complex, [real, imag], {"Tout": tout}, name=final).outputs[0]


def _real_part_op(op, x, name):
    return apply_op(op, [x], {"Tout": x.dtype.real_dtype}, name=name).outputs[0]


@tf_export("math.real", v1=["math.real", "real"])
def real(input, name=None) -> Tensor:  # noqa: A002 - TF's name
    """`tf.math.real`: the real part (a real tensor is its own real part)."""
    with composite_name(name, "Real") as final:
        input = convert_to_tensor(input, name="input")  # noqa: A001
        if not input.dtype.is_complex:
            if not _is_numeric(input.dtype):
                raise TypeError(f"input must be a numeric tensor, but got tensor with dtype "
                                f"{input.dtype}")
            return input
    return _real_part_op(Real, input, final)


@tf_export("math.imag", v1=["math.imag", "imag"])
def imag(input, name=None) -> Tensor:  # noqa: A002 - TF's name
    """`tf.math.imag`: the imaginary part (zeros for a real tensor)."""
    with composite_name(name, "Imag") as final:
        input = convert_to_tensor(input, name="input")  # noqa: A001
        if not input.dtype.is_complex:
            return array_fill.zeros_like(input)
    return _real_part_op(Imag, input, final)


@tf_export("math.angle", v1=["math.angle", "angle"])
def angle(input, name=None) -> Tensor:  # noqa: A002 - TF's name
    """`tf.math.angle`: the argument atan2(imag, real); pi where a real tensor is negative,
    else 0."""
    with composite_name(name, "Angle") as final:
        input = convert_to_tensor(input, name="input")  # noqa: A001
        if not input.dtype.is_complex:
            negative_ = less(input, 0)
            pi = multiply(_pymath.pi, array_fill.ones_like(input), name="mul")
            return select(negative_, pi, array_fill.zeros_like(input))
    return _real_part_op(Angle, input, final)


@tf_export("math.conj", v1=["math.conj", "conj"])
def conj(x, name=None) -> Tensor:
    """`tf.math.conj`: the complex conjugate (a real tensor is its own conjugate)."""
    if isinstance(x, Tensor) and (x.dtype.is_floating or x.dtype.is_integer):
        return x
    with composite_name(name, "Conj") as final:
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_complex:
            if not _is_numeric(x.dtype):
                raise TypeError(f"Expected numeric or variant tensor, got dtype {x.dtype!r}.")
            return x
    return apply_op(Conj, [x], name=final).outputs[0]


def complex_abs(x, name=None) -> Tensor:
    """ComplexAbs: |x| of a complex tensor, as `tf.abs` computes it."""
    return _real_part_op(ComplexAbs, x, name or "ComplexAbs")


to_complex64 = cast_to(dtypes.complex64, "to_complex64", "ToComplex64")
to_complex128 = cast_to(dtypes.complex128, "to_complex128", "ToComplex128")

attach(globals(), complex_ops_docs.DOCS)
