"""`OnnxEngineOp`: one converted segment of an inference graph, run by an inference engine.

    OnnxEngineOp(in_tensor: Tin) -> out_tensor: Tout
        serialized_segment  the segment as a serialized ONNX ModelProto
        segment_name        OnnxEngineOp_000, ... (TF-TRT names its TRTEngineOp nodes so)
        output_shapes       the segment outputs' static shapes
        precision_mode      FP32 / FP16 / INT8, as converted

The role of TF-TRT's TRTEngineOp: the converter (converter.py) replaces each supported
segment with one of these; it is an ordinary op in the GraphDef, so the converted function
saves into a SavedModel and `tf.saved_model.load` runs it. The kernel runs the segment with
ONNX Runtime: TensorRT's execution provider when onnxruntime has it (a GPU build with
TensorRT installed), else CUDA's, else the CPU. One InferenceSession per distinct segment
(keyed by the model bytes' digest) is built on first use and shared by every plan and call.
"""

from __future__ import annotations

import hashlib
import threading

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import TensorShape
from ndflow.inference.onnx_export import backend
from ndflow.kernels import registry
from ndflow.ops.op_def import op_def

PREFERRED_PROVIDERS = ("TensorrtExecutionProvider", "CUDAExecutionProvider",
                       "CPUExecutionProvider")


def _engine_shapes(ctx) -> list:
    shapes = ctx.attrs.get("output_shapes")
    n = len(ctx.attrs.get("Tout", []))
    if not shapes or len(shapes) != n:
        return [TensorShape(None)] * n
    return [TensorShape(s) if not isinstance(s, TensorShape) else s for s in shapes]


OnnxEngineOp = op_def(
    "OnnxEngineOp", inputs=["in_tensor: Tin"], outputs=["out_tensor: Tout"],
    attrs=["Tin: list(type)", "Tout: list(type)", "serialized_segment: string",
           "segment_name: string = ''", "output_shapes: list(shape) = []",
           "precision_mode: string = 'FP32'"],
    shape=_engine_shapes, gradient_undefined=True,
    doc="out_tensor = the ONNX segment run by ONNX Runtime (TF-TRT's TRTEngineOp role)")


def available_providers() -> list:
    """The execution providers the engine uses, best first."""
    have = set(backend.onnxruntime().get_available_providers())
    return [p for p in PREFERRED_PROVIDERS if p in have]


_SESSIONS: dict = {}
_SESSIONS_LOCK = threading.Lock()


def engine_session(model_bytes: bytes):
    """The shared InferenceSession for a serialized segment (built once per process)."""
    key = hashlib.sha1(model_bytes).hexdigest()
    with _SESSIONS_LOCK:
        session = _SESSIONS.get(key)
        if session is None:
            ort = backend.onnxruntime()
            options = ort.SessionOptions()
            options.log_severity_level = 3  # ORT's own warnings are not the user's concern
            # The same intra-op thread budget as ndflow's kernels (tf.config.threading).
            options.intra_op_num_threads = torch.get_num_threads()
            session = ort.InferenceSession(model_bytes, sess_options=options,
                                           providers=available_providers())
            _SESSIONS[key] = session
    return session


def _as_bytes(value) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode("latin-1")


@registry.kernel(OnnxEngineOp)
def _onnx_engine_kernel(node):
    model_bytes = _as_bytes(node.attrs["serialized_segment"])
    name = node.attrs.get("segment_name") or node.name
    n_out = len(node.output_dtypes)
    state = {}

    def run(*args):
        session = state.get("session")
        if session is None:
            session = state["session"] = engine_session(model_bytes)
            state["inputs"] = [i.name for i in session.get_inputs()]
        if len(args) != len(state["inputs"]):
            raise InvalidArgumentError(None, None, f"{name}: the engine takes "
                                       f"{len(state['inputs'])} inputs, got {len(args)}")
        feed = {n: np.ascontiguousarray(a.detach().cpu().numpy())
                for n, a in zip(state["inputs"], args)}
        try:
            outs = session.run(None, feed)
        except Exception as e:  # ORT's exceptions are not TF's: name the op and the cause
            raise InvalidArgumentError(None, None, f"{name} (OnnxEngineOp) failed in ONNX "
                                       f"Runtime: {e}") from None
        tensors = [torch.from_numpy(np.asarray(o)).to(node.device) for o in outs]
        return tensors[0] if n_out == 1 else tuple(tensors)
    return run
