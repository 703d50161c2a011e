"""Strided memory layouts, in elements as PyTorch counts them, over NumPy memory."""

import numpy as np
import torch

from ..dtypes import to_numpy_dtype


def storage_extent(size, stride):
    """How many elements a tensor of this size and stride spans."""
    if any(length == 0 for length in size):
        return 0
    return 1 + sum((length - 1) * step for length, step in zip(size, stride))


def allocate_strided(size, stride, dtype):
    """Uninitialised NumPy memory laid out with PyTorch strides (in elements)."""
    np_dtype = to_numpy_dtype(dtype)
    if 0 not in size and tuple(stride) == contiguous_strides(size):
        return np.empty(tuple(size), np_dtype)  # the common case, without as_strided's cost
    storage = np.empty(storage_extent(size, stride), dtype=np_dtype)
    return np.lib.stride_tricks.as_strided(
        storage,
        shape=tuple(size),
        strides=tuple(step * np_dtype.itemsize for step in stride),
        writeable=True,
    )


def contiguous_strides(size):
    """The strides, in elements, of a C-ordered tensor of ``size``."""
    strides, step = [], 1
    for length in reversed(size):
        strides.append(step)
        step *= length
    return tuple(reversed(strides))


def strides_for(size, memory_format):
    """The strides PyTorch gives a new tensor of ``size`` in ``memory_format``.

    PyTorch owns the rules of channels_last and friends, so a meta tensor
    (no memory) is asked.
    """
    return torch.empty(size, device="meta", memory_format=memory_format).stride()


def is_non_overlapping_and_dense(size, stride):
    """Whether a tensor of ``size`` and ``stride`` holds each element once, with no gaps, in some
    order of its dimensions, as ``TensorImpl::_refresh_contiguous`` (c10/core/TensorImpl.h) decides
    it, which Python cannot ask: contiguous, which a tensor without elements is, or
    ``_compute_non_overlapping_and_dense`` (c10/core/Contiguity.h). A dimension of length 1 takes any
    stride."""
    if 0 in size:
        return True
    expected = 1
    for length, step in sorted(zip(size, stride), key=lambda pair: (pair[0] < 2, pair[1])):
        if length < 2:
            return True
        if step != expected:
            return False
        expected *= length
    return True
