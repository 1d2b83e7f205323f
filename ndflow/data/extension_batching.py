"""ExtensionType elements in `tf.data`: the rules element_batching.py applies to an
ExtensionType leaf of an element_spec in `from_tensor_slices`, `batch` and `unbatch`.

A `BatchableExtensionType` (ops/extension_type_batch.py) is batched through its encoder: each
element's value is encoded as a list of batchable values (tensors, ragged and sparse tensors,
nested batchable ExtensionTypes), those are batched or sliced by the ordinary leaf rules
(element_batching's own functions, passed in as `batch_flat` / `row_getter`), and the result
is decoded with the spec the encoder's `batch`/`unbatch` gives. An ExtensionType that is not
batchable cannot be sliced or batched: TensorFlow's AttributeError.
"""

from __future__ import annotations

from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.ops.extension_type import ExtensionType, ExtensionTypeSpec
from ndflow.ops.extension_type_batch import (
    BatchableExtensionTypeSpec,
    ExtensionTypeBatchEncoder,
    batch_spec,
    unbatch_spec,
)


def is_extension(x) -> bool:
    return isinstance(x, (ExtensionType, ExtensionTypeSpec))


def _batchable(spec, missing: str) -> BatchableExtensionTypeSpec:
    if not isinstance(spec, BatchableExtensionTypeSpec):
        raise AttributeError(f"'{type(spec).__name__}' object has no attribute "
                             f"'{missing}'")
    return spec


def batched_spec(spec, batch_size):
    return _batchable(spec, "_batch").__batch_encoder__.batch(spec, batch_size)


def unbatched_spec(spec):
    return _batchable(spec, "_to_batched_tensor_list").__batch_encoder__.unbatch(spec)


def _encoding(spec, flat, minimum_rank=0) -> tuple:
    """(encoding specs, flat encoding) of the value whose flat components are `flat`."""
    encoder = spec.__batch_encoder__
    value = pack_sequence_as(spec, list(flat), expand_composites=True)
    encoded = tuple(encoder.encode(spec, value, minimum_rank))
    return tuple(encoder.encoding_specs(spec)), tuple(flatten(encoded, expand_composites=True))


def _decoded_flat(spec, enc_specs: tuple, flat_encoding) -> tuple:
    encoded = pack_sequence_as(enc_specs, list(flat_encoding), expand_composites=True)
    value = spec.__batch_encoder__.decode(spec, list(encoded))
    return tuple(flatten(value, expand_composites=True))


def _default(spec) -> bool:
    """Whether `spec` batches by the default encoder, whose encoding (the components) flattens
    to the value's own flat components: then the flat form is batched as it is."""
    return type(spec.__batch_encoder__) is ExtensionTypeBatchEncoder


def merge(elements: list, spec, batch_size, batch_flat) -> tuple:
    """One batched value's flat components from the flat components of each element's value
    (`batch_flat(flat_elements, spec)`: element_batching's batching of plain leaves)."""
    spec = _batchable(spec, "_batch")
    if _default(spec):
        return batch_flat(elements, tuple(spec.__batch_encoder__.encoding_specs(spec)))
    encodings = [_encoding(spec, e) for e in elements]
    enc_specs = encodings[0][0]
    batched = batch_flat([flat for _, flat in encodings], enc_specs)
    batched_specs = tuple(batch_spec(s, batch_size) for s in enc_specs)
    return _decoded_flat(batched_spec(spec, batch_size), batched_specs, batched)


def rows(flat, spec, row_getter):
    """(row count, row(i) -> flat components of value i) of one batched value's flat
    components (`row_getter(flat, spec)`: element_batching's slicing of plain leaves)."""
    spec = _batchable(spec, "_to_batched_tensor_list")
    if _default(spec):
        return row_getter(tuple(flat), tuple(spec.__batch_encoder__.encoding_specs(spec)))
    enc_specs, encoding = _encoding(spec, flat, minimum_rank=1)
    n, get = row_getter(encoding, enc_specs)
    row_spec = unbatched_spec(spec)
    row_specs = tuple(unbatch_spec(s) for s in enc_specs)
    return n, lambda i: _decoded_flat(row_spec, row_specs, get(i))


def leading_dim(value, leading) -> int | None:
    """The number of rows of an ExtensionType value: its encoding's common first dimension
    (`leading`: element_batching's rule for plain leaves)."""
    spec = _batchable(value._type_spec, "_to_batched_tensor_list")
    n = None
    for part in spec.__batch_encoder__.encode(spec, value, 1):
        rows_ = leading_dim(part, leading) if isinstance(part, ExtensionType) else \
            leading(part)
        if n is not None and rows_ is not None and rows_ != n:
            raise ValueError(f"Dimensions {n} and {rows_} are not compatible")
        n = rows_ if n is None else n
    return n
