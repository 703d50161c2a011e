"""The edges of a graph that Inductor compiled for npy: npy tensors in, npy tensors out.

Inside, the graph runs Inductor's CPU code (see :mod:`.inductor`) on CPU
tensors; these functions, called by that code, move no bytes. Each call of a
compiled graph pays for them, so each does the least it can:

* an npy tensor keeps the CPU tensor over its memory (its *host view*)
  from one call to the next, as it keeps its NumPy view (see
  :mod:`backend_pkg.tensor`): a parameter, passed to every call, gets its
  host view once;
* buffers are allocated as NumPy arrays seen as CPU tensors, so that an
  output leaves as an npy tensor over the array it was computed in, for the
  cost of a fresh result (``wrap``'s shortcut for an array that owns its memory).
"""

import numpy as np
import torch

from ..dtypes import to_numpy_dtype
from ..ops._layout import allocate_strided
from ..ops.copies import host_view
from ..tensor import NpyTensor, unwrap, wrap


def to_host(*tensors):
    """CPU tensors over the memory of ``tensors`` (npy tensors, or CPU tensors saved for a backward, kept as they are)."""
    return tuple(map(_on_host, tensors))


def _on_host(tensor):
    if type(tensor) is not NpyTensor:  # a CPU tensor, or an npy tensor PyTorch made a plain Tensor object
        return tensor if tensor.is_cpu else host_view(tensor)
    array = unwrap(tensor)
    # The NumPy view is dropped whenever the tensor's metadata changes in place (set_, resize_,
    # .data = ...), so a host view made from the same NumPy view still describes the tensor.
    kept = tensor.__dict__.get("_npy_host_view")
    if kept is not None and kept[0] is array:
        return kept[1]
    view = host_view(tensor) if tensor.is_conj() or tensor.is_neg() else torch.from_numpy(array)
    tensor._npy_host_view = (array, view)
    return view


def empty_host(size, dtype):
    """A contiguous CPU tensor over new NumPy memory, which it remembers for :func:`to_npy`."""
    array = np.empty(size, to_numpy_dtype(dtype))
    tensor = torch.from_numpy(array)
    tensor._npy_host_array = array
    return tensor


def empty_host_strided(size, stride, dtype):
    """:func:`empty_host` with PyTorch strides (in elements), for a layout that is not contiguous."""
    array = allocate_strided(size, stride, dtype)
    tensor = torch.from_numpy(array)
    tensor._npy_host_array = array
    return tensor


def to_npy(tensor, buffer=None):
    """An npy tensor over a CPU tensor's memory, which it keeps alive.

    ``tensor`` may be a view of a ``buffer`` made by :func:`empty_host`; when
    it covers all of it, the npy tensor is made from the buffer's NumPy array,
    as cheaply as a fresh result (an array whose owner NumPy does not know
    costs ten times more to wrap).
    """
    array = getattr(tensor if buffer is None else buffer, "_npy_host_array", None)
    if array is not None and buffer is None:
        result = wrap(array)
        result._npy_host_view = (array, tensor)  # the next graph that reads it (an optimizer's step) needs no other
        return result
    if array is not None and tensor.storage_offset() == 0 and tensor.is_contiguous() and tensor.numel() == array.size:
        return wrap(array.reshape(tensor.shape))  # all of the buffer, reshaped: as cheap as a fresh result
    return wrap(tensor.numpy())


__all__ = ["empty_host", "empty_host_strided", "to_host", "to_npy"]
