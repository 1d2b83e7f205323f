"""Gradients of the space <-> depth/batch ops (TF's array_grad.py): each op's gradient is
its inverse with the same block attrs."""

from __future__ import annotations

from ndflow.ops import array_space


@array_space.DepthToSpace.def_grad
def _depth_to_space_grad(op, grad):
    return [array_space.space_to_depth(grad, op.attrs["block_size"], op.attrs["data_format"])]


@array_space.SpaceToDepth.def_grad
def _space_to_depth_grad(op, grad):
    return [array_space.depth_to_space(grad, op.attrs["block_size"], op.attrs["data_format"])]


@array_space.SpaceToBatchND.def_grad
def _space_to_batch_nd_grad(op, grad):
    return [array_space.batch_to_space_nd(grad, op.inputs[1], op.inputs[2]), None, None]


@array_space.BatchToSpaceND.def_grad
def _batch_to_space_nd_grad(op, grad):
    return [array_space.space_to_batch_nd(grad, op.inputs[1], op.inputs[2]), None, None]
