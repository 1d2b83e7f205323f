"""`tf.linalg`: matrix products, transposes and norms."""

from ndflow.ops.einsum import einsum  # noqa: F401
from ndflow.ops.linalg_extra import matrix_transpose, matvec, tensordot  # noqa: F401
from ndflow.ops.linalg_extra import matrix_transpose as transpose  # noqa: F401
from ndflow.ops.norms import l2_normalize, norm  # noqa: F401
from ndflow.ops.linalg import matmul
