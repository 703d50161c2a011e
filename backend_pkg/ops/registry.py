"""One table of kernels, one decorator to fill it, one function to install it.

Lookup order, for any aten op called on an npy tensor:

1. the dispatcher's own layers above the backend (autograd, ADInplaceOrView,
   ...) run first, as for every device;
2. at the PrivateUse1 key, a kernel from :data:`KERNELS` runs if the op has one;
3. otherwise PyTorch's own default for the op runs, if it has one: a
   composite (``empty_like`` becomes ``empty_strided``, ``_to_copy`` becomes
   ``empty`` + ``copy_``) or, for a functional op, an allocation followed by
   its ``out=`` variant (``add.Tensor`` becomes ``add.out``); the pieces come
   back to step 2;
4. otherwise the backend fallback that :func:`backend_pkg.backend.install_kernels`
   registers for every op at the PrivateUse1 key runs:
   :func:`backend_pkg.fallback.run_on_cpu`, PyTorch's CPU kernel on the npy
   memory;
5. only without that fallback (``BACKEND_PKG_NO_SETUP=1``, as the tutorial's
   experiments do) does the dispatcher raise ``NotImplementedError`` naming
   the op and the ``PrivateUse1`` key.

A nested tensor whose buffer is npy memory dispatches at its own key,
``NestedTensorPrivateUse1``; its kernels are in :data:`NESTED_KERNELS`
(``@implements(..., nested=True)``), and it has no fallback.
"""

import torch

from ..runtime import untraced

aten = torch.ops.aten

KERNELS = {}
NESTED_KERNELS = {}


def implements(*ops, nested=False):
    """Register the decorated function as the npy kernel of each aten overload in ``ops``
    (with ``nested=True``, its kernel for nested tensors over npy memory)."""
    table = NESTED_KERNELS if nested else KERNELS

    def decorator(kernel):
        for op in ops:
            if op in table:
                raise ValueError(f"npy device: {op} already has a kernel, {table[op].__name__}")
            table[op] = kernel
        return kernel

    return decorator


def install(library):
    """Register every kernel of :data:`KERNELS` with ``library`` for the PrivateUse1 key
    (and of :data:`NESTED_KERNELS` for NestedTensorPrivateUse1).

    The key keeps its C++ name, ``PrivateUse1``, whatever the backend is
    renamed to: renaming changes the device string, not the dispatch key.
    Each kernel is marked :func:`~backend_pkg.runtime.untraced`: C++ calls it
    during eager code inside a compiled function too, and Dynamo must run it,
    not compile it.
    """
    for op, kernel in KERNELS.items():
        library.impl(op, untraced(kernel), "PrivateUse1")
    for op, kernel in NESTED_KERNELS.items():
        library.impl(op, untraced(kernel), "NestedTensorPrivateUse1")


def registered_ops():
    """The qualified names (``aten::add.Tensor``) of the ops with an npy kernel."""
    return sorted(op.name() for op in KERNELS)

