"""`tf.print` as TF builds it: StringFormat (tensors -> one string scalar, NumPy-like
summaries) feeding the stateful PrintV2 (writes it to a stream)."""

from __future__ import annotations

import pprint
import random
import sys

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import composite_dispatch
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def
from ndflow.ops.sparse_tensor import SparseTensor


def _string_format_shape(ctx):
    template, placeholder = ctx.attrs["template"], ctx.attrs["placeholder"]
    count = template.count(placeholder) if placeholder else 0
    if count != len(ctx.shapes):
        raise ValueError(f"num placeholders in template and num inputs must match: {count} vs. "
                         f"{len(ctx.shapes)}")
    return [TensorShape([])]


StringFormat = op_def("StringFormat", inputs=["inputs: T"], outputs=["output: string"],
                      attrs=["T: list(type)", "template: string = '%s'",
                             "placeholder: string = '%s'", "summarize: int = 3"],
                      shape=_string_format_shape, gradient_undefined=True)


def _print_shape(ctx):
    if ctx.shapes[0].rank not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {ctx.shapes[0].rank}")
    return []


PrintV2 = op_def("PrintV2", inputs=["input: string"], outputs=[],
                 attrs=["output_stream: string = 'stderr'", "end: string = '\\n'"],
                 shape=_print_shape, gradient_undefined=True, stateful=True)

# TF1's Print: `input` passed through, the data summarized to stderr when it runs
Print = op_def("Print", inputs=["input: T", "data: U"], outputs=["output: T"],
               attrs=["T: type", "U: list(type)", "message: string = ''",
                      "first_n: int = -1", "summarize: int = 3"],
               shape=lambda ctx: [ctx.shapes[0]], stateful=True)
Print.def_grad(lambda op, grad: [grad] + [None] * (len(op.inputs) - 1))


@tf_export(v1=["Print"])
def print_v1(input_, data, message=None, first_n=None, summarize=None, name=None):
    """TF1's `tf.Print`: `input_`, and when it is computed `message` then each tensor of
    `data` summarized in brackets (`summarize` elements, default 3; -1: all) on stderr, the
    first `first_n` times (default: every time)."""
    x = convert_to_tensor(input_)
    data = [convert_to_tensor(d) for d in data]
    attrs = {"message": message or "",
             "first_n": -1 if first_n is None else int(first_n),
             "summarize": 3 if summarize is None else int(summarize)}
    return apply_op(Print, [x, data], attrs, name=name).outputs[0]


_TENSORS = (Tensor, CompositeTensor)  # printed by StringFormat (a RaggedTensor as nested lists)
_LOG_STREAMS = ("log(info)", "log(warning)", "log(error)")
_IMPORT_STDOUT, _IMPORT_STDERR = sys.stdout, sys.stderr  # the signature's default objects


def _stream_name(stream) -> str:
    if stream is sys.stdout or stream is sys.__stdout__ or stream is _IMPORT_STDOUT:
        return "stdout"
    if stream is sys.stderr or stream is sys.__stderr__ or stream is _IMPORT_STDERR:
        return "stderr"
    if isinstance(stream, str) and (stream in ("stdout", "stderr") + _LOG_STREAMS
                                    or stream.startswith("file://")):
        return stream
    raise ValueError(f"Unsupported output stream, logging level, or file.{stream}. Supported "
                     "streams are sys.stdout, sys.stderr, tf.logging.info, tf.logging.warning, "
                     "tf.logging.error. File needs to be in the form of 'file://<filepath>'.")


def _placeholder_for(text: str, default: str = "{}") -> str:
    """TF's _generate_placeholder_string: `{}` plus digits until absent from `text`."""
    placeholder = default
    rng = random.Random(5)
    while placeholder in text:
        placeholder = placeholder + str(rng.randint(0, 9))
    return placeholder


def _map(x, fn):
    """Rebuilds lists/tuples/dicts with `fn` applied to the leaves (dicts in sorted order)."""
    if isinstance(x, dict):
        return {k: _map(x[k], fn) for k in sorted(x)}
    if isinstance(x, (list, tuple)) and not isinstance(x, SparseTensor):
        return type(x)(_map(v, fn) for v in x)
    return fn(x)


def string_format(inputs: list, template: str, placeholder: str = "{}", summarize: int = 3,
                  name: str | None = None) -> Tensor:
    """`tf.strings.format`'s op: `template` with each placeholder replaced by a tensor (a
    RaggedTensor: by its nested-list text, ragged_string_ops.py)."""
    if any(isinstance(x, CompositeTensor) for x in inputs):
        return composite_dispatch.call("string_format", list(inputs), template, placeholder,
                                       summarize, string_format)
    return apply_op(StringFormat, [list(inputs)],
                    {"template": template, "placeholder": placeholder,
                     "summarize": int(summarize)}, name=name).outputs[0]


@tf_export("strings.format", v1=["strings.format"])
def format_(template, inputs, placeholder="{}", summarize=3, name=None):
    """`tf.strings.format`: `template` with each `placeholder` replaced by the summary of one
    tensor of `inputs` (a tensor or a list of them), as tf.print formats them."""
    if isinstance(inputs, (list, tuple)):
        values = list(inputs)
    else:
        values = [inputs]
    values = [v if isinstance(v, CompositeTensor) else convert_to_tensor(v) for v in values]
    if template.count(placeholder) != len(values):
        raise ValueError(f"The template expects {template.count(placeholder)} tensors, but "
                         f"the inputs only has {len(values)}. Please ensure the number of "
                         "placeholders in template matches inputs length.")
    return string_format(values, template, placeholder, summarize, name)


@tf_export("print")
def print_v2(*inputs, output_stream=sys.stderr, sep: str = " ", end: str = "\n",
             summarize: int = 3, name: str | None = None):
    """`tf.print`: prints tensors (summarized NumPy-style) and Python values. Runs now when
    eager; in a graph returns the PrintV2 op (run on every `tf.function` call, as stateful)."""
    stream = _stream_name(output_stream)
    if (len(inputs) == 1 and isinstance(inputs[0], Tensor) and inputs[0].shape.rank == 0
            and inputs[0].dtype is dtypes.string):
        formatted = inputs[0]
    else:
        free = _map(list(inputs),
                    lambda x: "" if isinstance(x, (*_TENSORS, SparseTensor)) else x)
        placeholder = _placeholder_for(" ".join(pprint.pformat(x) for x in free))
        tensors, templates = [], []

        def leaf(x):
            if isinstance(x, SparseTensor):   # TF's template, which pformat then quotes
                tensors.extend(x)
                return (f"SparseTensor(indices={placeholder}, values={placeholder}, "
                        f"shape={placeholder})")
            if isinstance(x, _TENSORS):
                tensors.append(x)
                return placeholder
            return x
        for item in inputs:
            packed = _map(item, leaf)
            templates.append(item if isinstance(item, str) else pprint.pformat(packed))
        template = sep.join(templates).replace(f"'{placeholder}'", placeholder)
        formatted = string_format(tensors, template, placeholder, summarize)
    op = apply_op(PrintV2, [formatted], {"output_stream": stream, "end": end}, name=name)
    return None if context.executing_eagerly() else op


__all__ = ["StringFormat", "PrintV2", "string_format", "format_", "print_v2"]


Timestamp = op_def("Timestamp", outputs=["ts: double"], shape=lambda ctx: [TensorShape([])],
                   stateful=True, not_differentiable=True)


@tf_export("timestamp", v1=["timestamp"])
def timestamp(name=None) -> Tensor:
    """float64 seconds since the Unix epoch when the op runs (stateful: every run reads the
    clock again, in graphs too)."""
    return apply_op(Timestamp, [], name=name).outputs[0]
