"""Layer 0: dtypes, shapes, graph symbols, errors, devices, configuration."""
