"""Joining and rearranging: ops whose result is a new arrangement of the input's elements.

Each result is fresh memory, never a view of an input: ``np.flip`` of no
dims, for one, would hand back the input itself. ``stack``, ``hstack``
and friends reach the backend as ``cat``; ``repeat`` and ``tile`` as
``unfold`` views written through (see :mod:`.views`); ``split``,
``chunk`` and ``unbind`` as slices.
"""

import functools

import numpy as np
import torch
from torch._prims_common import suggest_memory_format

from ..dtypes import to_numpy_dtype
from ..tensor import unwrap, wrap
from ._dims import wrap_dim
from ._layout import allocate_strided, strides_for
from ._operands import operand
from ._out_variants import derived_out
from ._results import check_apart
from .registry import aten, implements


def _wrap_dims(dims, ndim):
    """``dims`` as distinct non-negative dims, refused as PyTorch refuses them."""
    axes = []
    for dim in dims:
        axis = wrap_dim(dim, ndim)
        if axis in axes:
            raise RuntimeError(f"dim {axis} appears multiple times in the list of dims")
        axes.append(axis)
    return tuple(axes)


def _check_cat_shapes(tensors, dim):
    """PyTorch's cat checks, against the first tensor that is not skipped."""
    for number, tensor in enumerate(tensors):
        if tensor.dim() == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {number}) cannot be concatenated")
    first_index, first = next(((i, t) for i, t in enumerate(tensors) if not _skipped(t)), (None, None))
    if first is None:
        return dim  # every tensor is left out: PyTorch checks no dim (legacy_cat_wrap_dim)
    dim = wrap_dim(dim, first.dim())
    for number, tensor in enumerate(tensors):
        if _skipped(tensor) or number == first_index:
            continue
        if tensor.dim() != first.dim():
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {first.dim()} and {tensor.dim()}"
            )
        for d, (expected, got) in enumerate(zip(first.shape, tensor.shape)):
            if d != dim and expected != got:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size {expected} "
                    f"but got size {got} for tensor number {number} in the list."
                )
    return dim


def _skipped(tensor):
    """cat's legacy rule: a 1-dim empty tensor joins anything, by being left out."""
    return tensor.dim() == 1 and tensor.shape[0] == 0


def _cat_memory_format(tensors):
    """PyTorch's layout for cat's result: the inputs' memory format if they share one."""
    formats = {suggest_memory_format(t) for t in tensors}
    return formats.pop() if len(formats) == 1 else torch.contiguous_format


def _check_cat_out(out, tensors, dim=0):
    check_apart(out, *tensors)  # before the resize, as CPU checks


@derived_out(aten.cat.default, aten.cat.out, check_out=_check_cat_out)
def cat(tensors, dim=0):
    dim = _check_cat_shapes(tensors, dim)
    dtype = functools.reduce(torch.promote_types, (t.dtype for t in tensors))
    joined = [t for t in tensors if not _skipped(t)]
    if not joined:
        return wrap(np.empty((0,), dtype=to_numpy_dtype(dtype)))
    shape = list(joined[0].shape)
    shape[dim] = sum(t.shape[dim] for t in joined)
    out = allocate_strided(shape, strides_for(shape, _cat_memory_format(joined)), dtype)
    np.concatenate([operand("cat", t) for t in joined], axis=dim, out=out)
    return wrap(out)


@implements(aten.flip.default)
def flip(self, dims):
    axes = _wrap_dims(dims, self.dim())
    # NumPy has no axis 0 on a 0-dim array, whose flip is a copy. Order "K"
    # keeps self's layout, as CPU's empty_like(self) does.
    return wrap(np.flip(unwrap(self), axes if self.dim() else ()).copy(order="K"))


@implements(aten.roll.default)
def roll(self, shifts, dims=()):
    if not shifts:
        raise RuntimeError("`shifts` required")
    if len(shifts) != len(dims) and not (len(shifts) == 1 and not dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if dims and self.dim() == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    # No dims rolls the flattened tensor, as np.roll does for axis=None.
    axes = _wrap_dims(dims, self.dim()) if dims else None
    rolled = np.roll(unwrap(self), tuple(shifts) if dims else shifts[0], axes)
    return wrap(np.asarray(rolled, order="C"))  # CPU's roll result is contiguous


def _triangle(name, keep, self, diagonal):
    if self.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return wrap(np.asarray(keep(unwrap(self), diagonal), order="C"))  # contiguous, as on CPU


@derived_out(aten.tril.default, aten.tril.out)
def tril(self, diagonal=0):
    return _triangle("tril", np.tril, self, diagonal)


@derived_out(aten.triu.default, aten.triu.out)
def triu(self, diagonal=0):
    return _triangle("triu", np.triu, self, diagonal)
