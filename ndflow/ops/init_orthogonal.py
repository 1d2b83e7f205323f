"""`tf.keras.initializers.Orthogonal` (also `tf.initializers.Orthogonal`,
`tf.compat.v1.orthogonal_initializer`): a matrix with orthonormal rows or columns — the Q of
the QR decomposition of a normal draw, signs fixed by R's diagonal — times `gain`; shapes of
rank > 2 are flattened to (product of all but the last dim, last dim). Registered with
init_ops so that "orthogonal" resolves like every other Keras initializer."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.ops import init_ops
from ndflow.ops.array_core import reshape
from ndflow.ops.array_transpose import transpose
from ndflow.ops.linalg_decomp import qr
from ndflow.ops.linalg_diag import matrix_diag_part
from ndflow.ops.math import sign


@tf_export("initializers.Orthogonal", "initializers.OrthogonalInitializer",
           "initializers.orthogonal", "keras.initializers.Orthogonal",
           "keras.initializers.OrthogonalInitializer", "keras.initializers.orthogonal",
           v1=["keras.initializers.Orthogonal", "keras.initializers.OrthogonalInitializer",
               "keras.initializers.orthogonal"])
class Orthogonal(init_ops._RandomInitializer):
    """Keras 3's `Orthogonal(gain=1.0, seed=None)` (Keras 3's seeding, init_ops)."""

    def __init__(self, gain=1.0, seed=None):
        super().__init__()
        self.gain = gain
        self._set_seed(seed)

    def __call__(self, shape, dtype=None, **kwargs):
        shape = [int(d) for d in shape]
        if len(shape) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional. "
                             f"Received: shape={tuple(shape)} of rank {len(shape)}.")
        rows = 1
        for d in shape[:-1]:
            rows *= d
        cols = shape[-1]
        dtype = self._dtype(dtype)
        draw = self._normal([max(rows, cols), min(rows, cols)], 0.0, 1.0, dtype)
        q, r = qr(draw)
        q = q * sign(matrix_diag_part(r))
        if rows < cols:
            q = transpose(q)
        return self.gain * reshape(q, shape)

    def get_config(self) -> dict:
        return {"seed": self._config_seed, "gain": self.gain}


@tf_export(v1=["orthogonal_initializer", "initializers.orthogonal"])
class orthogonal_initializer(Orthogonal):  # noqa: N801 - TF1's name
    """TF1's `orthogonal_initializer(gain=1.0, seed=None, dtype=tf.float32)`."""

    _stateful = True

    def __init__(self, gain=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(gain, seed)
        self.dtype = dtypes.as_dtype(dtype)


init_ops.KERAS_INITIALIZERS["Orthogonal"] = Orthogonal
init_ops.KERAS_INITIALIZERS["OrthogonalInitializer"] = Orthogonal
init_ops._SNAKE["orthogonal"] = Orthogonal
