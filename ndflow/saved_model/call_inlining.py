"""Function-call nodes of a FunctionDef library inlined at the proto level.

TensorFlow's saved functions call each other through `StatefulPartitionedCall` /
`PartitionedCall` nodes (signature wrappers call the traced function, Keras layers call
their own functions). ndflow runs a restored function as one graph, so each call node is
replaced by the callee's body (recursively inlined first): the callee's nodes are renamed
`<call node>/<node>`, its input args become the call's inputs, the call's outputs
`<call>:output:<i>` become the callee's returns, and a NoOp named like the call node
(depending on the callee's control outputs) keeps `^<call>` control edges meaningful.
"""

from __future__ import annotations

from tensorboard.compat.proto import function_pb2

CALL_OPS = frozenset({"StatefulPartitionedCall", "PartitionedCall"})


class Inliner:
    """Inlines the call nodes of the FunctionDefs of `library` (each function once)."""

    def __init__(self, functions: dict):
        self._defs = functions          # name -> FunctionDef
        self._done: dict = {}
        self._active: list = []

    def get(self, name: str) -> function_pb2.FunctionDef:
        if name in self._done:
            return self._done[name]
        if name in self._active:
            raise ValueError(f"Function '{name}' calls itself recursively "
                             f"({' -> '.join(self._active + [name])}), which is not supported")
        fd = self._defs.get(name)
        if fd is None:
            return None
        self._active.append(name)
        try:
            out = self._inline(fd)
        finally:
            self._active.pop()
        self._done[name] = out
        return out

    def _inline(self, fd) -> function_pb2.FunctionDef:
        if not any(n.op in CALL_OPS for n in fd.node_def):
            return fd
        out = function_pb2.FunctionDef()
        out.CopyFrom(fd)
        del out.node_def[:]
        outputs: dict = {}   # "<call>:output:<i>" -> replacement reference
        for node in fd.node_def:
            if node.op not in CALL_OPS:
                out.node_def.append(node)
                continue
            callee_name = node.attr["f"].func.name
            callee = self.get(callee_name)
            if callee is None:
                raise ValueError(f"Node '{node.name}' calls function '{callee_name}', which is "
                                 "not in the SavedModel's function library")
            self._expand(node, callee, out, outputs)
        for n in out.node_def:
            _rewrite_inputs(n, outputs)
        for key in list(out.ret):
            out.ret[key] = _resolve(out.ret[key], outputs)
        return out

    @staticmethod
    def _expand(call, callee, out, outputs: dict) -> None:
        prefix = call.name + "/"
        data = [i for i in call.input if not i.startswith("^")]
        controls = [i for i in call.input if i.startswith("^")]
        args = [a.name for a in callee.signature.input_arg]
        if len(data) != len(args):
            raise ValueError(f"Node '{call.name}' passes {len(data)} inputs to function "
                             f"'{callee.signature.name}', which takes {len(args)}")
        arg_map = dict(zip(args, data))

        def rename(ref: str) -> str:
            if ref.startswith("^"):
                target = ref[1:]
                return "^" + (arg_map[target].lstrip("^").split(":")[0]
                              if target in arg_map else prefix + target)
            head = ref.split(":")[0]
            if head in arg_map and (ref == head or ref == head + ":0"):
                return arg_map[head]
            return prefix + ref

        for n in callee.node_def:
            new = out.node_def.add()
            new.CopyFrom(n)
            new.name = prefix + n.name
            del new.input[:]
            new.input.extend(rename(i) for i in n.input)
            if not any(i for i in n.input if not i.startswith("^")):
                new.input.extend(controls)
        for i, arg in enumerate(callee.signature.output_arg):
            outputs[f"{call.name}:output:{i}"] = rename(callee.ret[arg.name])
        done = out.node_def.add(name=call.name, op="NoOp")
        done.input.extend("^" + prefix + c for c in callee.control_ret.values())
        done.input.extend(controls)


def _resolve(ref: str, outputs: dict) -> str:
    """Follows replacements (a call may return another call's output)."""
    for _ in range(len(outputs) + 1):
        if ref not in outputs:
            return ref
        ref = outputs[ref]
    raise ValueError(f"Cyclic function-call outputs at '{ref}'")


def _rewrite_inputs(node, outputs: dict) -> None:
    if not any(i in outputs for i in node.input):
        return
    new = [_resolve(i, outputs) for i in node.input]
    del node.input[:]
    node.input.extend(new)
