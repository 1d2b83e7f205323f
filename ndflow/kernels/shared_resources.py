"""The creating kernels of resources TF shares by container and name (queues, readers,
conditional accumulators, mutexes): ResourceMgr's LookupOrCreate on the runtime context's
resources, so every plan of a Session reaching the same name gets the same object."""

from __future__ import annotations


def creator_kernel(node, kind: str, anonymous_prefix: str, make, check=None):
    """The kernel function of an op creating a `kind` resource. A shared_name starting with
    `anonymous_prefix` (an eager op's own resource): one `make(the rest of the name)` for
    this kernel. Otherwise the context's resource (kind, container, shared_name or the node's
    name), `make(name)` the first time; `check(resource, name)` then raises if one made under
    that name by another op is of another sort."""
    a = node.attrs
    shared = a["shared_name"]
    if shared.startswith(anonymous_prefix):
        own = make(shared[len(anonymous_prefix):])
        return lambda: own
    name = shared or node.name
    ctx, key = node.ctx, (kind, a["container"], name)

    def run():
        with ctx._lock:
            r = ctx.resources.get(key)
            if r is None:
                r = ctx.resources[key] = make(name)
        if check is not None:
            check(r, name)
        return r
    return run
