"""Moving data: between npy tensors, and across the npy/CPU boundary.

npy memory is host memory, so both directions reduce to one host-to-host
copy. Each side is seen as a CPU tensor over its own memory (for npy,
``torch.from_numpy`` of the array: no bytes move) and PyTorch's CPU
``copy_`` does the work. That kernel already implements every rule a copy
must follow (broadcasting the source, dtype conversion, strided and
overlapping destinations, conjugate and negative views), so npy copies
convert exactly as CPU copies do, and always write into fresh memory:
a copy never aliases its source.

A copy between two npy tensors of one dtype is NumPy's own ``np.copyto``
instead. PyTorch's CPU copy splits a large copy across its OpenMP threads,
and NumPy's BLAS has threads of its own; on a machine with few cores, the
threads one pool leaves spinning after its work hold the cores the other
pool's next op needs, and a copy that takes microseconds alone takes
milliseconds between two matmuls. ``np.copyto`` runs on the calling thread,
and already follows what a same-dtype copy must: it broadcasts the source
and writes strided destinations. Where the two sides may share memory, the
CPU copy stays: NumPy reads an overlapping source as it was before the copy,
PyTorch element by element as it writes (``x[2::2].copy_(x[:-2:2])``
spreads ``x[0]``), and npy gives what CPU gives.
"""

import numpy as np
import torch

from ..names import DEVICE_NAME
from ..tensor import has_contiguous_strides, has_foreign_storage, host_view, unwrap
from ._layout import is_non_overlapping_and_dense
from ._results import check_apart
from .factories import check_factory_options, empty, empty_strided, new_allocated_tensor
from .registry import aten, implements


def _npy_array(tensor):
    """``tensor``'s memory as a NumPy array, when it is an npy tensor whose elements are what
    the array holds (no lazy conjugate or negative bit), else None."""
    kept = getattr(tensor, "_npy_array", None)  # an NpyTensor's own view: npy memory, made by npy
    if kept is not None:
        return None if tensor.is_conj() or tensor.is_neg() else kept
    if tensor.device.type != DEVICE_NAME or tensor.is_conj() or tensor.is_neg() or has_foreign_storage(tensor):
        return None
    return unwrap(tensor)


def copy_host(dst, src):
    """``dst.copy_(src)`` on host memory: NumPy's copy between npy tensors of one dtype
    in memory apart (see the module's docstring), PyTorch's CPU copy otherwise."""
    if dst.dtype == src.dtype:
        dst_array, src_array = _npy_array(dst), _npy_array(src)
        if dst_array is not None and src_array is not None and not np.may_share_memory(dst_array, src_array):
            np.copyto(dst_array, src_array)
            return
    host_view(dst).copy_(host_view(src))


@implements(aten._copy_from.default)
def copy_from(self, dst, non_blocking=False):
    copy_host(dst, self)
    return dst


@implements(aten.copy_.default)
def copy_(self, src, non_blocking=False):
    """``copy_`` itself, not only ``_copy_from``: PyTorch's generic ``copy_``
    reaches ``_copy_from`` through the Conjugate fallback, which resolves a
    conjugate source by copying it, with ``copy_``: an endless recursion.

    CPU's copy_ refuses a source that shares part of the destination's memory
    (``x.copy_(x.T)``); its check cannot see that here, where each side is a
    CPU tensor of its own over the same memory, so it is made first."""
    check_apart(self, partial=(src,))
    copy_host(self, src)
    return self


@implements(aten._to_copy.default)
def to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None):
    if device is not None and torch.device(device).type == "cpu":
        return torch.ops.aten._to_copy(
            host_view(self),
            dtype=dtype,
            layout=layout,
            device=device,
            pin_memory=pin_memory,
            memory_format=memory_format,
        )
    check_factory_options("_to_copy", layout, device, pin_memory)
    # empty_like(self) would resolve a conjugate self first, which copies: ask
    # a bit-free meta stand-in for the layout instead.
    # size(), not shape: a lazy module's UninitializedParameter refuses its shape, not its size.
    layout_of = torch.empty_strided(self.size(), self.stride(), dtype=self.dtype, device="meta")
    like = torch.empty_like(layout_of, dtype=dtype, memory_format=memory_format or torch.preserve_format)
    out = empty_strided(like.shape, like.stride(), dtype=like.dtype)
    copy_host(out, self)
    return out


@implements(aten.clone.default)
def clone(self, *, memory_format=None):
    """``self`` copied into new memory laid out as ``memory_format`` asks.

    PyTorch's ``clone`` (aten/src/ATen/native/TensorFactories.cpp) is a composite: ``empty_strided``
    with ``self``'s strides for a tensor that is non-overlapping and dense, otherwise ``empty_like``,
    then ``copy_``: two trips through the dispatcher into Python kernels, for every ``.contiguous()``
    of a view. Here it is one. Only the layouts left (channels last, or preserving the layout of a
    tensor with gaps or overlaps) ask :func:`to_copy`'s meta tensors, which cost more than the rest
    of the copy.
    """
    array = _npy_array(self)
    if array is not None and array.size:
        # The array has the tensor's strides, in bytes: its C-ordered copy, one NumPy call, is the result for
        # a contiguous tensor, and for any tensor asked to be contiguous (``.contiguous()`` of a view).
        if memory_format is torch.contiguous_format or (
            memory_format in (None, torch.preserve_format) and has_contiguous_strides(array)
        ):
            return new_allocated_tensor(array.copy())
    if memory_format is torch.contiguous_format:
        out = empty(self.size(), dtype=self.dtype)
    elif memory_format in (None, torch.preserve_format) and is_non_overlapping_and_dense(self.size(), self.stride()):
        out = empty_strided(self.size(), self.stride(), dtype=self.dtype)
    else:
        return to_copy(self, memory_format=memory_format)
    copy_host(out, self)
    return out


@implements(aten._local_scalar_dense.default)
def local_scalar_dense(self):
    """The value of a one-element tensor as a Python number (``item()``, ``float(t)``)."""
    return unwrap(self).item()
