"""Pinned host memory for the npy device: ``Tensor.pin_memory()`` and ``Tensor.is_pinned()``.

Pinned (page-locked) memory is host memory a GPU copies from without the
CPU's help; ``DataLoader(pin_memory=True)`` pins every batch in a thread of
its own so that ``.to(device, non_blocking=True)`` can overlap the copy.

PyTorch's kernels for ``aten::_pin_memory`` and ``aten::is_pinned``
(CompositeExplicitAutograd, aten/src/ATen/native/Memory.cpp) ask the
current accelerator's hooks for a pinned allocator
(``getPinnedMemoryAllocator``) and for ``isPinnedPtr``. Hooks written in
Python answer neither (torch/csrc/acc/Module.cpp forwards only
``is_built``, ``is_available`` and ``has_primary_context``), and the ops
dispatch on the CPU tensor being pinned, so an npy kernel alone is never
reached.

The route that remains is the one older PyTorch releases took, and C++
out-of-tree backends still register: a kernel at the ``BackendSelect`` key
(which these two ops leave empty) sends the call to the backend of the
accelerator it is meant for, the ``device`` argument or else the current
accelerator. For npy that is the ``PrivateUse1`` kernels below; any other
case goes on to PyTorch's own kernel.

npy memory is host memory, so any host memory is as good as pinned for a
copy to npy. What programs rely on is the bookkeeping: ``pin_memory()``
returns a copy, ``is_pinned()`` is true of it and of its views and false of
other host tensors, and pinning a pinned tensor returns it unchanged. The
copy's storage carries the mark, so views and the storage object see it.
"""

import torch

from .dtypes import SCALAR_TYPE_NAMES
from .names import DEVICE_NAME
from .runtime import untraced

_BackendSelect = torch._C.DispatchKey.BackendSelect
_AFTER_BACKEND_SELECT = torch._C._dispatch_keyset_full_after(_BackendSelect)
_NPY_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.PrivateUse1)


def _keys_after_selecting(keyset, tensor, device):
    """Where ``tensor``'s pinning for ``device`` goes next: npy's kernels, or PyTorch's."""
    target = torch.device(device) if device is not None else torch.accelerator.current_accelerator()
    if target is not None and target.type == DEVICE_NAME and tensor.device.type == "cpu" and not tensor.is_nested:
        return _NPY_KEYS
    return keyset & _AFTER_BACKEND_SELECT


def select_is_pinned(keyset, tensor, device=None):
    return torch.ops.aten.is_pinned.default.redispatch(_keys_after_selecting(keyset, tensor, device), tensor, device)


def select_pin_memory(keyset, tensor, device=None):
    return torch.ops.aten._pin_memory.default.redispatch(_keys_after_selecting(keyset, tensor, device), tensor, device)


def is_pinned(tensor, device=None):
    """Whether ``tensor`` lives in a storage :func:`pin_memory` made (never true of an npy tensor)."""
    return getattr(tensor.untyped_storage(), "_npy_pinned", False)


def pin_memory(tensor, device=None):
    """A copy of the host ``tensor`` in memory marked pinned, with the same strides.

    An npy tensor reaches this kernel by its own dispatch key, and is refused
    as PyTorch's kernel refuses any device tensor.
    """
    if tensor.device.type != "cpu":
        type_name = f"{DEVICE_NAME}{SCALAR_TYPE_NAMES[tensor.dtype]}Type"
        raise RuntimeError(f"cannot pin '{type_name}' only dense CPU tensors can be pinned")
    pinned = torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype)
    pinned.copy_(tensor)
    pinned.untyped_storage()._npy_pinned = True
    return pinned


def install(library):
    """Register the routing and the npy kernels with ``library`` (an ``aten`` IMPL library)."""
    library.impl("is_pinned", untraced(select_is_pinned), "BackendSelect", with_keyset=True)
    library.impl("_pin_memory", untraced(select_pin_memory), "BackendSelect", with_keyset=True)
    library.impl("is_pinned", untraced(is_pinned), "PrivateUse1")
    library.impl("_pin_memory", untraced(pin_memory), "PrivateUse1")
