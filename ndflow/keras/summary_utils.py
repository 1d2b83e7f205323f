"""`Model.summary()`: Keras 3's table of layers, output shapes and parameter counts, drawn
with rich as Keras draws it (plain text when printing to a function or a pipe)."""

from __future__ import annotations

import math
import shutil

import rich.console
import rich.markup
import rich.table

from ndflow.core import dtypes
from ndflow.core.nest import flatten


def _count(weights) -> int:
    return int(sum(math.prod(w.shape.as_list()) for w in weights))


def _memory(weights) -> float:
    unique = {id(w): w for w in weights}.values()
    return sum(math.prod(w.shape.as_list()) * dtypes.as_dtype(w.dtype).size for w in unique)


def readable_memory_size(size: float) -> str:
    for unit in ["B", "KB", "MB", "GB", "TB", "PB"]:
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _num(x) -> str:
    return f"[color(45)]{x}[/]" if x is None else f"[color(34)]{x}[/]"


def _bold(x, color=None) -> str:
    return f"[bold][color({color})]{x}[/][/]" if color else f"[bold]{x}[/]"


def _format_shape(shape) -> str:
    return f"({', '.join(_num(d) for d in shape)})"


def format_layer_shape(layer) -> str:
    """The output shape of the layer's (last) recorded call, '?' when it has none."""
    nodes = layer._inbound_nodes
    if nodes:
        shapes = [_format_shape(t.shape) for t in flatten(nodes[-1].outputs)]
    else:   # Keras: the output shape for the shape the layer was built with (a layer a
        # subclassed model calls), else for the `input_shape` it was given
        built_with = getattr(layer, "_build_shapes", None)
        if built_with is None:
            built_with = layer._build_input_shape
        try:
            shape = layer.compute_output_shape(built_with)
        except (NotImplementedError, TypeError, AttributeError, ValueError):
            return "?"
        if shape is None or built_with is None:
            return "?"
        shapes = [_format_shape(shape)]
    return shapes[0] if len(shapes) == 1 else str(shapes).replace("'", "")


def _sequential_like(model, functional_nodes) -> bool:
    if functional_nodes is None:
        return True
    for node in functional_nodes:
        if len(node.input_tensors) > 1:
            return False
    seen = set()
    for node in functional_nodes:
        if id(node.layer) in seen:
            return False  # a shared layer
        seen.add(id(node.layer))
    consumers = {}
    for node in functional_nodes:
        for t in node.input_tensors:
            consumers[id(t)] = consumers.get(id(t), 0) + 1
    return all(c <= 1 for c in consumers.values()) and len(model.outputs) == 1 \
        and len(model.inputs) == 1


def print_summary(model, line_length=None, positions=None, print_fn=None,
                  expand_nested=False, show_trainable=False) -> None:
    nodes = getattr(model, "_nodes", None) if hasattr(model, "_functional_layers") else None
    layers = model._functional_layers if nodes is not None else model.layers
    sequential = _sequential_like(model, nodes)
    if sequential:
        default_length, positions = 88, positions or [0.45, 0.80, 1.0]
        header, align = ["Layer (type)", "Output Shape", "Param #"], ["left", "left", "right"]
    else:
        default_length, positions = 108, positions or [0.3, 0.56, 0.74, 1.0]
        header = ["Layer (type)", "Output Shape", "Param #", "Connected to"]
        align = ["left", "left", "right", "left"]
    if show_trainable:
        default_length += 12
        positions = [p * 0.90 for p in positions] + [1.0]
        header.append("Trainable")
        align.append("center")
    default_length = min(default_length, shutil.get_terminal_size().columns - 4)
    line_length = line_length or default_length
    widths, current = [], 0
    for pos in positions:
        width = int(pos * line_length) - current
        if width < 4:
            raise ValueError("Insufficient console width to print summary.")
        widths.append(width)
        current += width
    columns = [rich.table.Column(name, justify=a, width=w)
               for name, a, w in zip(header, align, widths)]
    table = rich.table.Table(*columns, width=line_length, show_lines=True)

    def connections(layer) -> str:
        out = []
        for node in layer._inbound_nodes:
            if nodes is not None and node not in nodes:
                continue
            for kt in node.input_tensors:
                op, n, t = kt._keras_history
                out.append(f"{op.name}[{_num(n)}][{_num(t)}]")
        return ", ".join(out) or "-"

    def rows(layer, level=0) -> list:
        prefix = "   " * level + "└ " if level else ""
        name = rich.markup.escape(f"{prefix}{layer.name}")
        name += f" ([color(33)]{rich.markup.escape(type(layer).__name__)}[/])"
        params = (f"{_num(0)} (unbuilt)" if not layer.built else
                  _num(f"{layer.count_params():,}"))
        fields = [name, format_layer_shape(layer), params]
        if not sequential:
            fields.append(connections(layer))
        if show_trainable:
            fields.append(_bold("-") if not layer.weights else
                          _bold("Y", 34) if layer.trainable else _bold("N", 9))
        out = [fields]
        if expand_nested and getattr(layer, "layers", None):
            for sub in layer.layers:
                out.extend(rows(sub, level + 1))
        return out

    for layer in layers:
        for row in rows(layer):
            table.add_row(*row)
    trainable, frozen = model.trainable_weights, model.non_trainable_weights
    opt = model.optimizer if getattr(model, "compiled", False) else None
    opt_vars = list(opt.variables) if opt is not None and getattr(opt, "built", False) else None
    total = _count(trainable) + _count(frozen) + (_count(opt_vars) if opt_vars else 0)
    total_mem = _memory(trainable) + _memory(frozen) + (_memory(opt_vars) if opt_vars else 0)
    if print_fn:
        console = rich.console.Console(highlight=False, force_terminal=False,
                                       color_system=None)
        console.begin_capture()
    else:
        console = rich.console.Console(highlight=False)
    console.print(_bold(f'Model: "{rich.markup.escape(model.name)}"'))
    console.print(table)
    console.print(_bold(" Total params: ") + _num(f"{total:,}")
                  + f" ({readable_memory_size(total_mem)})")
    console.print(_bold(" Trainable params: ") + _num(f"{_count(trainable):,}")
                  + f" ({readable_memory_size(_memory(trainable))})")
    console.print(_bold(" Non-trainable params: ") + _num(f"{_count(frozen):,}")
                  + f" ({readable_memory_size(_memory(frozen))})")
    if opt_vars:
        console.print(_bold(" Optimizer params: ") + _num(f"{_count(opt_vars):,}")
                      + f" ({readable_memory_size(_memory(opt_vars))})")
    if print_fn:
        print_fn(console.end_capture())
