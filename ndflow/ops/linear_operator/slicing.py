"""Batch slicing of operators, `operator[1:, ..., 0]` (TF's `linalg/slicing.py`): the
operator rebuilt from its parameters, each sliced in its batch dimensions.

A parameter's trailing `ndims` dimensions belong to the matrix (`_experimental_parameter_
ndims_to_matrix_ndims`: 2 for a full matrix, 1 for a diagonal, 0 for a scalar multiplier or
a sub-operator, which is sliced itself); its batch dimensions may broadcast against the
operator's, so where a parameter has size 1 and the operator more, that dimension is sliced
as 0:1 (or indexed at 0)."""

from __future__ import annotations

import collections.abc

import numpy as np

from ndflow.core.errors import InvalidArgumentError
from ndflow.ops.apply import constant_value
from ndflow.ops.array_core import reshape, shape
from ndflow.ops.array_fill import ones
from ndflow.ops.linear_operator import base, util

_NEWAXIS = None


def _static_dims(x) -> list | None:
    dims = x.shape
    if dims.rank is None:
        return None
    return [d for d in dims.as_list()]


def _broadcast_rank(param, ndims: int, batch_rank: int):
    """`param` with leading size-1 dimensions up to `batch_rank` batch dimensions."""
    if isinstance(param, base.LinearOperator):
        overrides = {}
        for name, sub_ndims in param._experimental_parameter_ndims_to_matrix_ndims.items():
            sub = getattr(param, name)
            if sub is not None:
                overrides[name] = _map(sub, sub_ndims,
                                       lambda p, n: _broadcast_rank(p, n, batch_rank))
        return type(param)(**dict(param.parameters, **overrides))
    rank = param.shape.rank
    missing = batch_rank + ndims - rank
    if missing <= 0:
        return param
    return reshape(util.as_tensor(param), [1] * missing + _shape_list(param))


def _shape_list(x):
    dims = _static_dims(x)
    if dims is not None and all(d is not None for d in dims):
        return dims
    return shape(util.as_tensor(x))


def _map(structure, ndims, fn):
    if isinstance(structure, (list, tuple)):
        return type(structure)(_map(s, n, fn) for s, n in zip(structure, ndims))
    return fn(structure, ndims)


def _sanitize(slices, intended, deficient):
    """The slices with broadcast dimensions (deficient 1 where intended is larger) taken at
    0 (or 0:1)."""
    out, idx = [], 0
    for slc in slices:
        if slc is Ellipsis:
            if idx < 0:
                raise ValueError(f"Found multiple `...` in slices {slices}")
            rest = slices[slices.index(Ellipsis) + 1:]
            idx = -sum(s is not _NEWAXIS for s in rest)
        elif slc is _NEWAXIS:
            pass
        else:
            if not -len(intended) <= idx < len(intended):   # TF's strided slice of the shape
                raise InvalidArgumentError(None, None, f"slice index {idx} of dimension 0 out "
                                                       f"of bounds.")
            broadcast = intended[idx] is not None and deficient[idx] is not None and \
                intended[idx] > deficient[idx]
            if isinstance(slc, slice):
                if broadcast:
                    slc = slice(None if slc.start is None else 0,
                                None if slc.stop is None else 1,
                                None if slc.step is None else 1)
            elif broadcast:
                slc = 0
            idx += 1
        out.append(slc)
    return out


def _slice_param(param, ndims: int, slices, batch_shape: list):
    param = _broadcast_rank(param, ndims, len(batch_shape))
    if isinstance(param, base.LinearOperator):
        param_batch = param.batch_shape.as_list() if param.batch_shape.rank is not None \
            else None
    else:
        dims = _static_dims(param)
        param_batch = None if dims is None else dims[:len(dims) - ndims]
    if param_batch is None:
        raise NotImplementedError("Batch slicing needs operator parameters of known rank.")
    if batch_shape and not param_batch:
        return param
    param_slices = _sanitize(slices, batch_shape, param_batch)
    if ndims > 0:
        if Ellipsis not in [s for s in slices if not hasattr(s, "dtype")]:
            param_slices.append(Ellipsis)
        param_slices += [slice(None)] * ndims
    return param[tuple(param_slices)]


def batch_slice(linop, params_overrides: dict, slices):
    """`linop` sliced in its batch dimensions by `slices`."""
    if not isinstance(slices, collections.abc.Sequence) or isinstance(slices, str):
        slices = (slices,)
    slices = tuple(slices)
    overrides = {}
    if not (len(slices) == 1 and slices[0] is Ellipsis):
        batch = linop.batch_shape
        if batch.rank is None:
            raise NotImplementedError("Batch slicing needs an operator of known batch rank.")
        batch_shape = batch.as_list()
        if not batch.is_fully_defined():
            static = constant_value(linop.batch_shape_tensor())
            if static is not None:
                batch_shape = [int(d) for d in np.asarray(static)]
        for name, ndims in linop._experimental_parameter_ndims_to_matrix_ndims.items():
            param = getattr(linop, name)
            if param is not None:
                overrides[name] = _map(
                    param, ndims, lambda p, n: _slice_param(p, n, slices, batch_shape))
    overrides.update(params_overrides)
    return type(linop)(**dict(linop.parameters, **overrides))


def sliced_batch_shape(batch_shape_arg, slices):
    """The batch shape of an operator given by its batch shape alone (Identity, Zeros)
    after `slices`."""
    if batch_shape_arg is None:   # as TF's `ones(None)`
        raise ValueError(f"Attempt to convert a value (None) with an unsupported type "
                         f"({type(None)}) to a Tensor.")
    return shape(ones(batch_shape_arg)[slices])


base.CLASSES["batch_slice"] = batch_slice
