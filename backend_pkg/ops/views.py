"""Views: new tensors over the same NumPy memory.

Each kernel returns a NumPy view (never a copy) so that writes through the
view reach the base, as on CPU. Shapes and strides follow PyTorch's rules
and errors use PyTorch's wording, since users meet them through PyTorch.
"""

import numpy as np
import torch

from ..dtypes import SCALAR_TYPE_NAMES, to_numpy_dtype
from ..tensor import (
    alias_of,
    materialized_storage,
    reshaped,
    restrided,
    retyped,
    set_metadata,
    storage_array,
    storage_nbytes,
    unwrap,
    view_of,
    wrap,
)
from ._cpu_checks import check_on_cpu
from ._dims import wrap_dim
from ._layout import storage_extent, strides_for
from .registry import aten, implements

# ``alias`` and ``detach`` have no npy kernel: PyTorch's C++ ones give a result without a
# Python object, which ``Tensor._make_subclass`` and ``as_subclass`` need (see tensor.detached).


@implements(aten.view.dtype)
def view_dtype(self, dtype):
    return retyped(self, dtype)


@implements(aten.view.default, aten._unsafe_view.default)
def view(self, size):
    return reshaped(self, size)


@implements(aten.t.default)
def t(self):
    """A matrix transposed, an alias below two dims: ``Linear`` calls it on its weight each step.

    Sizes and strides come from the NumPy view, which has the tensor's
    (reading them from a tensor subclass costs as much again).
    """
    array = unwrap(self)
    if array.ndim != 2:
        if array.ndim > 2:
            check_on_cpu(aten.t.default, self)  # "t() expects a tensor with <= 2 dimensions, but self is 3D"
        return alias_of(self)
    return _swapped(self, array, 0, 1)


@implements(aten.transpose.int)
def transpose(self, dim0, dim1):
    """PyTorch's composite reaches ``as_strided``; swapping two sizes and strides needs no bounds check."""
    array = unwrap(self)
    dim0, dim1 = wrap_dim(dim0, array.ndim), wrap_dim(dim1, array.ndim)
    return alias_of(self) if dim0 == dim1 else _swapped(self, array, dim0, dim1)


@implements(aten.squeeze.dim)
def squeeze(self, dim):
    """PyTorch's composite reaches ``as_strided``; dropping a length-1 dim stays within ``self``'s elements."""
    array = unwrap(self)
    dim = wrap_dim(dim, array.ndim)
    if array.ndim == 0 or array.shape[dim] != 1:
        return alias_of(self)
    size, stride = list(self.shape), list(self.stride())
    del size[dim], stride[dim]
    return restrided(self, size, stride, array.squeeze(dim))


@implements(aten.permute.default)
def permute(self, dims):
    """PyTorch's composite reaches ``as_strided``; reordering the sizes and strides stays within ``self``'s elements."""
    array = unwrap(self)
    rank = max(array.ndim, 1)
    axes = [dim % rank for dim in dims if -rank <= dim < rank]
    if len(dims) != array.ndim or len(axes) != len(dims) or len(set(axes)) != len(axes):
        check_on_cpu(aten.permute.default, self, dims)  # raises CPU's error
    permuted = array.transpose(axes)
    size, stride = self.shape, self.stride()
    return restrided(self, [size[axis] for axis in axes], [stride[axis] for axis in axes], permuted)


def _swapped(self, array, dim0, dim1):
    swapped = array.swapaxes(dim0, dim1)
    itemsize = array.itemsize
    return restrided(self, swapped.shape, [step // itemsize for step in swapped.strides], swapped)


def _check_in_bounds(self, size, stride, storage_offset):
    """PyTorch's checks that ``self``'s storage can hold this view."""
    if any(step < 0 for step in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    if 0 in size:
        return  # a view without elements needs no memory, wherever it starts (as in PyTorch)
    itemsize = self.element_size()
    available = storage_nbytes(self) // itemsize
    needed = storage_offset + storage_extent(size, stride)
    if needed > available:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
            f"{storage_offset}, and itemsize {itemsize} requiring a storage size of "
            f"{needed * itemsize} are out of bounds for storage of size {available * itemsize}"
        )


@implements(aten.as_strided.default)
def as_strided(self, size, stride, storage_offset=None):
    """The view every other view can be written as: ``t()``, ``transpose``, ``select``... come here.

    :func:`view_of` checks the bounds, in C++, as PyTorch does for CPU.
    """
    if storage_offset is None:
        storage_offset = self.storage_offset()
    return view_of(self, size, stride, storage_offset)


def _clone_preserving_strides(self):
    """A copy of ``self``'s whole storage, viewed as ``self`` is: PyTorch's ``clone_preserve_strides``.

    The ``*_scatter`` ops start from it. PyTorch's composite sizes the copy by
    the storage's byte count, read in C++, which is 0 for a new npy result
    whose storage has no data pointer yet (see :mod:`backend_pkg.tensor`), so
    each of them needs an npy kernel.
    """
    if any(step == 0 and length > 1 for step, length in zip(self.stride(), self.shape)):
        return wrap(np.ascontiguousarray(unwrap(self)))  # as PyTorch: an overlapping self is cloned
    return view_of(wrap(storage_array(self).copy()), self.shape, self.stride(), self.storage_offset())


def _scatter_into(output, target, src):
    """Copy ``src`` into ``target``, a view of ``output``, checked as PyTorch checks; return ``output``."""
    if target.shape != src.shape:
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. "
            f"src size = {list(src.shape)}, slice size = {list(target.shape)}"
        )
    target.copy_(src)
    return output


@implements(aten.as_strided_scatter.default)
def as_strided_scatter(self, src, size, stride, storage_offset=None):
    output = _clone_preserving_strides(self)
    return _scatter_into(output, as_strided(output, size, stride, storage_offset), src)


@implements(aten.diagonal_scatter.default)
def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    output = _clone_preserving_strides(self)
    return _scatter_into(output, output.diagonal(offset, dim1, dim2), src)


@implements(aten.select_scatter.default)
def select_scatter(self, src, dim, index):
    output = _clone_preserving_strides(self)
    return _scatter_into(output, output.select(dim, index), src)


@implements(aten.slice_scatter.default)
def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    output = _clone_preserving_strides(self)
    return _scatter_into(output, aten.slice.Tensor(output, dim, start, end, step), src)


@implements(aten.as_strided_.default)
def as_strided_(self, size, stride, storage_offset=None):
    """Change ``self``'s metadata in place: ``unsqueeze_``, ``t_``, ``transpose_``... come here."""
    if storage_offset is None:
        storage_offset = self.storage_offset()
    _check_in_bounds(self, size, stride, storage_offset)
    set_metadata(self, materialized_storage(self), storage_offset, size, stride)
    return self


def _expanded_strides(array, size):
    """PyTorch's expand rule: new leading dims and stretched size-1 dims get stride 0."""
    if len(size) < array.ndim:
        raise RuntimeError(
            f"expand(npy tensor {{{list(array.shape)}}}, size={list(size)}): the number of "
            f"sizes provided ({len(size)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({array.ndim})"
        )
    lead = len(size) - array.ndim
    for dim, target in enumerate(size[:lead]):
        if target < 0:
            raise RuntimeError(
                f"The expanded size of the tensor ({target}) isn't allowed in a leading, non-existing dimension {dim}"
            )
    shape = list(size[:lead])
    strides = [0] * lead
    for dim, (length, step, target) in enumerate(zip(array.shape, array.strides, size[lead:])):
        if target == -1:
            target = length
        if target != length and length != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({target}) must match the existing size "
                f"({length}) at non-singleton dimension {lead + dim}.  Target sizes: "
                f"{list(size)}.  Tensor sizes: {list(array.shape)}"
            )
        shape.append(target)
        strides.append(step if target == length else 0)
    return tuple(shape), tuple(strides)


@implements(aten.expand.default)
def expand(self, size, *, implicit=False):
    array = unwrap(self)
    shape, strides = _expanded_strides(array, size)
    itemsize = array.itemsize
    expanded = np.lib.stride_tricks.as_strided(array, shape=shape, strides=strides, writeable=True)
    return restrided(self, shape, [step // itemsize for step in strides], expanded)


@implements(aten._reshape_alias.default)
def reshape_alias(self, size, stride):
    return as_strided(self, size, stride)


@implements(aten.unfold.default)
def unfold(self, dimension, size, step):
    """Every ``size``-long window along ``dimension``, ``step`` apart, as a new last dim."""
    array = np.atleast_1d(unwrap(self))
    dim = wrap_dim(dimension, self.dim())
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > array.shape[dim]:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {array.shape[dim]} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    shape = list(array.shape)
    strides = list(array.strides)
    shape[dim] = (shape[dim] - size) // step + 1
    strides[dim] *= step
    # A 0-dim tensor's one window replaces it: it has no dim to keep.
    kept = slice(None) if self.dim() else slice(0)
    return wrap(
        np.lib.stride_tricks.as_strided(
            array,
            shape=(*shape[kept], size),
            strides=(*strides[kept], array.strides[dim]),
            writeable=True,
        ),
        base=self,
    )


def _reinterpret(self, np_dtype, shape, byte_strides):
    """``self``'s memory seen as ``np_dtype`` elements, from its first byte on."""
    storage = storage_array(self)
    offset = self.storage_offset() * storage.itemsize
    if 0 in shape:  # a view without elements may start past the end of the memory, which NumPy refuses
        offset = min(offset, storage.nbytes)
    return np.ndarray(shape, dtype=np_dtype, buffer=storage, offset=offset, strides=byte_strides)


@implements(aten.view_as_real.default)
def view_as_real(self):
    if not self.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if self.is_conj():
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
            "tensor so you can view it as real, use self.resolve_conj(); however, be warned that the "
            "resulting tensor will NOT alias the original."
        )
    array = unwrap(self)
    part = np.dtype(array.dtype.char.lower())  # complex64 -> float32: 'F' -> 'f'
    return wrap(_reinterpret(self, part, (*array.shape, 2), (*array.strides, part.itemsize)), base=self)


@implements(aten.view_as_complex.default)
def view_as_complex(self):
    if self.dtype not in (torch.float16, torch.float32, torch.float64):
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a "
            f"tensor of scalar type: {SCALAR_TYPE_NAMES[self.dtype]}"
        )
    if self.dim() == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if self.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if self.stride(-1) != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(step % 2 for step in self.stride()[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if self.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    whole = to_numpy_dtype(self.dtype.to_complex())
    array = unwrap(self)
    return wrap(_reinterpret(self, whole, array.shape[:-1], array.strides[:-1]), base=self)


@implements(aten.set_.source_Storage_storage_offset)
def set_storage(self, source, storage_offset, size, stride=()):
    """Make ``self`` a view of ``source``, an npy storage (how ``torch.save`` reads storages)."""
    set_metadata(self, source, storage_offset, size, stride or strides_for(size, torch.contiguous_format))
    return self


@implements(aten.set_.source_Storage)
def set_whole_storage(self, source):
    return set_storage(self, source, 0, [source.nbytes() // self.element_size()], [1])


@implements(aten.set_.source_Tensor)
def set_like_tensor(self, source):
    return set_storage(self, source.untyped_storage(), source.storage_offset(), source.shape, source.stride())
