"""Layer 0: dtypes, shapes, graph symbols, errors, devices, configuration."""

from ndflow.core import (  # noqa: F401 - importing a module declares its exports
    app,
    build_info,
    dimension,
    error_codes_v1,
    file_io,
    flags,
    graph_io,
    public_protos,
)
