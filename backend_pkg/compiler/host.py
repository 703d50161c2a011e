"""The edges of a graph that Inductor compiled for npy: npy tensors in, npy tensors out.

Inside, the graph runs Inductor's CPU code (see :mod:`.inductor`) on CPU
tensors; these functions, called by that code, move no bytes. Buffers are
allocated as NumPy arrays seen as CPU tensors, so that an output leaves as
an npy tensor over the array it was computed in, for the cost of a fresh
result (``wrap``'s shortcut for an array that owns its memory).
"""

import numpy as np
import torch

from ..dtypes import to_numpy_dtype
from ..ops._layout import allocate_strided
from ..ops.copies import host_view
from ..tensor import unwrap, wrap


def to_host(tensor):
    """A CPU tensor over an npy tensor's memory (a CPU tensor, saved for a backward, as it is)."""
    if tensor.is_cpu:
        return tensor
    if tensor.is_conj() or tensor.is_neg():  # lazy bits, which host_view carries over
        return host_view(tensor)
    return torch.from_numpy(unwrap(tensor))


def empty_host(size, stride, dtype):
    """A CPU tensor over new NumPy memory, which it remembers for :func:`to_npy`."""
    if tuple(stride) == _contiguous_strides(size):
        array = np.empty(size, to_numpy_dtype(dtype))
    else:
        array = allocate_strided(size, stride, dtype)
    tensor = torch.from_numpy(array)
    tensor._npy_host_array = array
    return tensor


def _contiguous_strides(size):
    strides, step = [], 1
    for length in reversed(size):
        strides.append(step)
        step *= max(length, 1)
    return tuple(reversed(strides))


def to_npy(tensor, buffer=None):
    """An npy tensor over a CPU tensor's memory, which it keeps alive.

    ``tensor`` may be a view of a ``buffer`` made by :func:`empty_host`; when
    it covers all of it, the npy tensor is made from the buffer's NumPy array,
    as cheaply as a fresh result (an array whose owner NumPy does not know
    costs ten times more to wrap).
    """
    array = getattr(tensor if buffer is None else buffer, "_npy_host_array", None)
    if array is not None and buffer is None:
        return wrap(array)
    if array is not None and tensor.storage_offset() == 0 and tensor.is_contiguous() and tensor.numel() == array.size:
        return wrap(array.reshape(tensor.shape))  # all of the buffer, reshaped: as cheap as a fresh result
    return wrap(tensor.numpy())


__all__ = ["empty_host", "to_host", "to_npy"]
