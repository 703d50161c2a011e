"""The edges of a graph that Inductor compiled for npy: npy tensors in, npy tensors out.

Inside, the graph runs Inductor's CPU code (see :mod:`.inductor`) on CPU
tensors; these functions, called by that code, move no bytes. Each call of a
compiled graph pays for them, so each does the least it can:

* an npy tensor keeps the CPU tensor over its memory (its *host view*)
  from one call to the next, as it keeps its NumPy view (see
  :mod:`backend_pkg.tensor`): a parameter, passed to every call, gets its
  host view once, and an output leaves with its own;
* a small output's buffer is allocated as a NumPy array seen as a CPU
  tensor, so that it leaves as an npy tensor over the array it was computed
  in, for the cost of a fresh result (``wrap``'s shortcut for an array that
  owns its memory); a large one is the CPU allocator's, whose alignment
  the kernels writing it prefer (see ``LARGE_BUFFER_BYTES`` in :mod:`.inductor`),
  and leaves as an npy tensor over that memory, which it keeps alive.
"""

import numpy as np
import torch

from ..dtypes import TORCH_TO_NUMPY
from ..ops._layout import allocate_strided
from ..tensor import NpyTensor, host_view, unwrap, wrap, wrap_new, wrap_over


def to_host(*tensors):
    """CPU tensors over the memory of ``tensors`` (npy tensors, or CPU tensors saved for a backward, kept as
    they are)."""
    views = []
    for tensor in tensors:
        if type(tensor) is not NpyTensor and tensor.is_cpu:
            views.append(tensor)  # saved for a backward: a host view already
            continue
        # Dropped with the NumPy view whenever the tensor's metadata changes in place (set_,
        # resize_, .data = ...; see forget_array): a kept host view still describes the tensor.
        kept = tensor.__dict__.get("_npy_host_view")
        views.append(_host_view_of(tensor) if kept is None else kept)
    return views


def _host_view_of(tensor):
    """An npy ``tensor``'s host view, kept on an :class:`NpyTensor`."""
    array = unwrap(tensor)
    kept = host_view(tensor) if tensor.is_conj() or tensor.is_neg() else torch.from_numpy(array)
    if type(tensor) is NpyTensor:  # PyTorch gives some npy tensors a plain Tensor object, whose NumPy view is not kept
        tensor._npy_host_view = kept
    return kept


def empty_host(size, dtype):
    """A contiguous CPU tensor over new NumPy memory, which it remembers for :func:`to_npy`."""
    array = np.empty(size, TORCH_TO_NUMPY[dtype])  # an npy graph's dtype: one NumPy holds
    tensor = torch.from_numpy(array)
    tensor._npy_host_array = array
    return tensor


def empty_host_strided(size, stride, dtype):
    """:func:`empty_host` with PyTorch strides (in elements), for a layout that is not contiguous."""
    array = allocate_strided(size, stride, dtype)
    tensor = torch.from_numpy(array)
    tensor._npy_host_array = array
    return tensor


def in_layout(tensor, size, stride):
    """``tensor`` with ``stride`` (in elements): itself when its strides are those already (a
    dimension of length 1 has any stride), otherwise a copy in new CPU memory laid out so."""
    if tensor.numel() == 0 or all(
        actual == expected for length, actual, expected in zip(size, tensor.stride(), stride) if length > 1
    ):
        return tensor
    return torch.empty_strided(size, stride, dtype=tensor.dtype).copy_(tensor)


def to_npy(tensor, buffer=None):
    """An npy tensor over a CPU tensor's memory, which it keeps alive, and which it keeps as its
    host view for the next graph that reads it (an optimizer's step reads the gradients).

    ``tensor`` may be a view of a ``buffer`` made by :func:`empty_host`; when
    it covers all of it, the npy tensor is made from the buffer's NumPy array,
    as cheaply as a fresh result. Other memory NumPy sees through ``tensor``.
    """
    array = getattr(tensor if buffer is None else buffer, "_npy_host_array", None)
    if buffer is None and array is not None and array.base is None:
        # All of a buffer as NumPy allocated it: what wrap_new takes, without wrap's checks.
        result = wrap_new(array)
        result._npy_host_view = tensor
        return result
    if array is not None and buffer is not None:
        array = array.reshape(tensor.shape) if _covers(tensor, array) else None
    if array is None:
        array = tensor.numpy() if _starts_its_memory(tensor) else _view_over_its_storage(tensor)
    result = wrap(array)
    if result.__dict__.get("_npy_array") is array:  # not a copy (wrap copies a layout no tensor has)
        result._npy_host_view = tensor
    return result


def _starts_its_memory(tensor):
    """Whether ``tensor`` is contiguous from its storage's start, so that ``tensor.numpy()``, which
    owns just the tensor's elements, is all the memory an npy storage needs for it."""
    return tensor.storage_offset() == 0 and tensor.is_contiguous()


def _view_over_its_storage(tensor):
    """The NumPy view ``tensor`` describes, of an array over all of its CPU storage: a view with
    an offset or gaps (``buf[:, 1::2]``) reaches past its own elements, which ``tensor.numpy()`` has."""
    storage = torch.empty(0, dtype=torch.uint8).set_(tensor.untyped_storage()).numpy()
    itemsize = tensor.element_size()
    strides = [step * itemsize for step in tensor.stride()]
    offset = tensor.storage_offset() * itemsize
    return np.ndarray(tuple(tensor.shape), TORCH_TO_NUMPY[tensor.dtype], storage, offset, strides)


def as_plain_tensor(tensor):
    """``tensor``, an npy tensor, with a plain ``torch.Tensor`` Python object (as PyTorch gives ``view(dtype)``).

    AOTAutograd's runtime wrapper makes a view of some outputs with an aten
    op, on its first call under a dispatch mode that refuses every tensor
    subclass (see ``inductor._remade_by_runtime_wrapper``); the view, which
    the caller gets, is an :class:`~backend_pkg.NpyTensor` as any kernel's result.
    """
    tensor.__class__ = torch.Tensor
    return tensor


def to_npy_reshaped(buffer, shape):
    """:func:`to_npy` for ``buffer`` reshaped to ``shape`` (the code generator knows that the
    output, a view of ``buffer``, is all of it in its order): for a buffer :func:`empty_host`
    made, the npy tensor is made from its NumPy array reshaped, as cheaply as a fresh result."""
    root = getattr(buffer, "_npy_host_array", None)
    if root is None or root.base is not None or not root.size:
        return to_npy(buffer.view(shape), buffer)
    array = root.reshape(shape)  # NumPy refuses a shape of another size
    result = wrap_over(array, root)
    result._npy_host_view = torch.from_numpy(array)
    return result


def _covers(view, array):
    """Whether ``view`` is all of ``array``'s memory in its order, so that a reshape of the array is
    a view (never a copy) of the same elements: ``view`` contiguous from its start, ``array`` C-ordered."""
    return (
        array.flags.c_contiguous and view.storage_offset() == 0 and view.is_contiguous() and view.numel() == array.size
    )


__all__ = ["as_plain_tensor", "empty_host", "empty_host_strided", "in_layout", "to_host", "to_npy", "to_npy_reshaped"]
