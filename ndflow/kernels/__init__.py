"""Layer 2: ATen kernels, registered per (OpDef, device type), one module per op family.

`import ndflow` imports only the kernel modules the base itself uses; every other module is
imported at the first run of an op it registers a kernel for (kernels/registry.py asks
ndflow/core/lazy_api.py, which reads the op -> modules index that
`python -m ndflow.tools.gen_api_index` generates).
"""
