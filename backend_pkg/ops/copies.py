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

import ctypes

import numpy as np
import torch

from ..tensor import DEVICE_NAME, NpyTensor, unwrap
from ._results import check_apart
from .factories import check_factory_options, empty_strided
from .registry import aten, implements


def host_view(tensor):
    """A CPU tensor over ``tensor``'s memory: itself for CPU, its array for npy.

    Conjugate and negative views are lazy in PyTorch (a bit on the tensor,
    not a change to the memory); the CPU view carries the same bits, so the
    CPU copy applies them.
    """
    if tensor.device.type == "cpu":
        return tensor
    if tensor.device.type != DEVICE_NAME:
        raise RuntimeError(f"npy device: cannot copy between npy and {tensor.device}")
    view = _view_by_address(tensor) if _has_foreign_storage(tensor) else torch.from_numpy(unwrap(tensor))
    if tensor.is_conj():
        view = view.conj()
    if tensor.is_neg():
        view = view._neg_view()
    return view


def _has_foreign_storage(tensor):
    """Whether ``tensor``'s storage was made by PyTorch's C++ over npy memory rather than by
    npy: pickling a tensor (``Tensor.__reduce_ex__`` pickles its storage with the legacy
    ``torch.save``) copies each storage to the CPU through ``at::from_blob`` over its data
    pointer (``THPStorage_writeFileRaw`` in torch/csrc/serialization.cpp)."""
    return type(tensor) is not NpyTensor and not hasattr(torch.Tensor.untyped_storage(tensor), "_npy_root")


def _view_by_address(tensor):
    """A CPU tensor over the memory ``tensor`` describes, found by its storage's data pointer:
    npy memory is host memory, and the storage it belongs to outlives the copy."""
    storage = torch.Tensor.untyped_storage(tensor)
    memory = np.ctypeslib.as_array((ctypes.c_uint8 * storage.nbytes()).from_address(storage.data_ptr()))
    elements = torch.from_numpy(memory).view(tensor.dtype)
    return elements.as_strided(tensor.shape, tensor.stride(), tensor.storage_offset())


def _npy_array(tensor):
    """``tensor``'s memory as a NumPy array, when it is an npy tensor whose elements are what
    the array holds (no lazy conjugate or negative bit), else None."""
    if tensor.device.type != DEVICE_NAME or tensor.is_conj() or tensor.is_neg() or _has_foreign_storage(tensor):
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
def to_copy(
    self,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=None,
    non_blocking=False,
    memory_format=None,
):
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


@implements(aten._local_scalar_dense.default)
def local_scalar_dense(self):
    """The value of a one-element tensor as a Python number (``item()``, ``float(t)``)."""
    return unwrap(self).item()
