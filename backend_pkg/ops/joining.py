"""Joining and rearranging: ops whose result is a new arrangement of the input's elements.

Each result is fresh memory, never a view of an input: ``np.flip`` of no
dims, for one, would hand back the input itself. ``hstack`` and friends
reach the backend as ``cat``, and so does ``stack`` (as each tensor
unsqueezed, a view op each) except for npy tensors of one shape and dtype,
which its own kernel joins in one NumPy call (``clip_grad_norm_`` stacks
one norm per parameter); ``repeat`` and ``tile`` as
``unfold`` views written through (see :mod:`.views`); ``split``,
``chunk`` and ``unbind`` as slices.
"""

import functools

import numpy as np
import torch
from torch._prims_common import suggest_memory_format

from ..dtypes import to_torch_dtype
from ..tensor import wrap
from ._dims import wrap_dim
from ._layout import allocate_strided, strides_for
from ._results import check_apart
from .registry import aten, computed_by, implements, lowers, unchecked


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
        return  # every tensor is left out: PyTorch checks no dim (legacy_cat_wrap_dim)
    dim = wrap_dim(dim, first.dim())
    for number, tensor in enumerate(tensors):
        if _skipped(tensor) or number == first_index:
            continue
        if tensor.dim() != first.dim():
            raise RuntimeError(f"Tensors must have same number of dimensions: got {first.dim()} and {tensor.dim()}")
        for d, (expected, got) in enumerate(zip(first.shape, tensor.shape)):
            if d != dim and expected != got:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size {expected} "
                    f"but got size {got} for tensor number {number} in the list."
                )


def _skipped(tensor):
    """cat's legacy rule: a 1-dim empty tensor (or array) joins anything, by being left out."""
    return tensor.ndim == 1 and tensor.shape[0] == 0


def _memory_format(array):
    """PyTorch's suggested memory format for a tensor laid out as ``array``."""
    if array.ndim not in (4, 5):  # channels-last needs 4 or 5 dims
        return torch.contiguous_format
    return _format_of_layout(array.shape, tuple(step // array.itemsize for step in array.strides))


@functools.lru_cache(maxsize=256)
def _format_of_layout(shape, strides):
    """PyTorch owns the rules of channels-last strides: a meta tensor (no memory) is asked,
    once per layout."""
    return suggest_memory_format(torch.empty_strided(shape, strides, dtype=torch.int8, device="meta"))


def _cat_memory_format(arrays):
    """PyTorch's layout for cat's result: the inputs' memory format if they share one."""
    formats = {_memory_format(array) for array in arrays}
    return formats.pop() if len(formats) == 1 else torch.contiguous_format


@lowers(aten.cat.default)
def cat(arrays, dim=0, *, out_dtype):
    joined = [array for array in arrays if not _skipped(array)]
    if not joined:
        return np.empty((0,), dtype=out_dtype)
    dim = wrap_dim(dim, joined[0].ndim)
    shape = list(joined[0].shape)
    shape[dim] = sum(array.shape[dim] for array in joined)
    memory_format = _cat_memory_format(joined)
    if memory_format == torch.contiguous_format:
        out = np.empty(shape, dtype=out_dtype)
    else:
        out = allocate_strided(shape, strides_for(shape, memory_format), to_torch_dtype(out_dtype))
    np.concatenate(joined, axis=dim, out=out, casting="unsafe")
    return out


def _check_cat_out(out, tensors, dim=0):
    check_apart(out, *tensors)  # before the resize, as CPU checks


@implements(aten.cat.default, out=aten.cat.out, check_out=_check_cat_out)
@computed_by(cat)
def cat_kernel(tensors, dim=0):
    _check_cat_shapes(tensors, dim)
    return functools.reduce(torch.promote_types, (t.dtype for t in tensors))


@implements(aten.stack.default)
def stack(tensors, dim=0):
    """``np.stack`` of npy tensors of one shape and dtype, of at most two dims (``cat`` gives a
    result of three dims or fewer PyTorch's contiguous layout, as NumPy does), that keep their
    NumPy views; any other call to PyTorch's kernel, which unsqueezes each tensor for ``cat`` and
    raises its errors."""
    arrays = [getattr(tensor, "_npy_array", None) for tensor in tensors]
    if _stackable(arrays) and -arrays[0].ndim - 1 <= dim <= arrays[0].ndim:
        shape = list(arrays[0].shape)
        shape.insert(dim % (len(shape) + 1), len(arrays))
        # Into C order: NumPy would lay its result out as the inputs are, PyTorch's cat does not.
        return wrap(np.stack(arrays, axis=dim, out=np.empty(shape, arrays[0].dtype)))
    return aten.stack.default._op_dk(torch._C.DispatchKey.CompositeExplicitAutograd, tensors, dim)


def _stackable(arrays):
    """Whether :func:`stack` joins these arrays itself: at least one, all of one shape and dtype,
    of at most two dims (None for a tensor without a kept view)."""
    if not arrays or arrays[0] is None or arrays[0].ndim > 2:
        return False
    first = arrays[0]
    return all(array is not None and array.shape == first.shape and array.dtype is first.dtype for array in arrays)


def flip(a, dims):
    axes = _wrap_dims(dims, a.ndim)
    # NumPy has no axis 0 on a 0-dim array, whose flip is a copy. Order "K"
    # keeps self's layout, as CPU's empty_like(self) does.
    return np.flip(a, axes if a.ndim else ()).copy(order="K")


flip_kernel = implements(aten.flip.default)(unchecked(flip))


def roll(a, shifts, dims=()):
    # No dims rolls the flattened tensor, as np.roll does for axis=None.
    axes = _wrap_dims(dims, a.ndim) if dims else None
    rolled = np.roll(a, tuple(shifts) if dims else shifts[0], axes)
    return np.asarray(rolled, order="C")  # CPU's roll result is contiguous


@implements(aten.roll.default)
@computed_by(roll)
def roll_kernel(self, shifts, dims=()):
    if not shifts:
        raise RuntimeError("`shifts` required")
    if len(shifts) != len(dims) and not (len(shifts) == 1 and not dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if dims and self.dim() == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")


def _check_triangle(name, self):
    if self.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def tril(a, diagonal=0):
    return np.asarray(np.tril(a, diagonal), order="C")  # contiguous, as on CPU


def triu(a, diagonal=0):
    return np.asarray(np.triu(a, diagonal), order="C")  # contiguous, as on CPU


@implements(aten.tril.default, out=aten.tril.out)
@computed_by(tril)
def tril_kernel(self, diagonal=0):
    _check_triangle("tril", self)


@implements(aten.triu.default, out=aten.triu.out)
@computed_by(triu)
def triu_kernel(self, diagonal=0):
    _check_triangle("triu", self)
