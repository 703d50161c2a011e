"""Indexing: reading and writing the elements that index tensors name.

Each kernel turns PyTorch's arguments into a NumPy key (fancy indexing, or
per-element coordinates for gather/scatter) and lets NumPy move the data;
``np.ufunc.at`` does the accumulating writes, which add every duplicate
index as PyTorch's ``accumulate=True`` does. Indices are checked before
NumPy sees them, so errors are PyTorch's (exception type and wording),
not NumPy's.

Functional kernels compute into fresh memory; ``out=`` variants and in-place
ops store that result with :mod:`._results`, under PyTorch's rules.
"""

import warnings

import numpy as np
import torch

from ..dtypes import CPP_SCALAR_NAMES, SCALAR_TYPE_NAMES, TYPE_META_NAMES, to_numpy_dtype, to_torch_dtype
from ..tensor import unwrap, wrap
from ._dims import wrap_dim
from ._operands import broadcast_shapes, computed, operand
from ._out_variants import derived_out
from ._results import check_apart, check_no_overlap, warn_if_expanded, write_in_place
from ._warnings import warn_once
from .arithmetic import check_convertible
from .registry import aten, computed_by, implements, lowers

_INT_INDEX = (np.dtype(np.int32), np.dtype(np.int64))


# --- shared checks ----------------------------------------------------------


def first_out_of_bounds(index, size, *, negative_ok):
    """The first element of ``index`` (in C order) outside a dim of ``size``, or None."""
    low = -size if negative_ok else 0
    bad = index[(index < low) | (index >= size)]
    return int(bad.flat[0]) if bad.size else None


def fill_value(op, value, dtype):
    """A Scalar (or 0-dim tensor) as ``dtype``, converted as PyTorch's fill converts it:
    integers wrap, floats truncate toward zero, complex into a real dtype is refused."""
    if isinstance(value, torch.Tensor):
        if value.dim() != 0:
            raise RuntimeError(
                f"{op} only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.dim()} dimension(s)."
            )
        value = value.item()
    if isinstance(value, complex) and not dtype.is_complex:
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {CPP_SCALAR_NAMES[dtype]} without overflow")
        value = value.real
    return np.asarray(value).astype(to_numpy_dtype(dtype))


def _size(shape, dim):
    """PyTorch's ensure_nonempty_size: a 0-dim tensor counts as one element along dim 0."""
    return shape[dim] if shape else 1


def _without(shape, dim):
    """``shape`` without its dim ``dim`` (a 0-dim shape stays empty)."""
    return list(shape[:dim]) + list(shape[dim + 1:])


def _along(array, dim):
    """``array`` (a 0-dim one as 1-dim) viewed with ``dim`` first, so index arrays pick along it."""
    return np.moveaxis(np.atleast_1d(array), dim, 0)


def _check_source_dtype(self, source, message):
    """The check of an op that writes ``source``'s elements into ``self``: one dtype, or
    ``message`` formatted with the two dtypes' C++ names."""
    if source.dtype != self.dtype:
        raise RuntimeError(message.format(SCALAR_TYPE_NAMES[self.dtype], SCALAR_TYPE_NAMES[source.dtype]))


def _require_out_dtype(out, dtype, message):
    """The few ops whose ``out=`` must have one exact dtype (no casting) check it first."""
    if out.dtype != dtype:
        raise RuntimeError(message)


# --- index and index_put_: Tensor?[] indices --------------------------------


def _index_array(index):
    """One entry of an indices list as an array; PyTorch accepts CPU index tensors too."""
    array = index.numpy(force=True) if index.device.type == "cpu" else unwrap(index)
    if array.dtype == np.uint8:
        warnings.warn(
            "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.",
            UserWarning,
            stacklevel=3,
        )
        return array.astype(bool)
    if array.dtype != np.bool_ and array.dtype not in _INT_INDEX:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return array


def _check_mask(mask, shape, dim):
    for offset, (mask_size, size) in enumerate(zip(mask.shape, shape[dim:])):
        if mask_size != size:
            raise IndexError(
                f"The shape of the mask {list(mask.shape)} at index {offset} does not match the "
                f"shape of the indexed tensor {list(shape)} at index {dim + offset}"
            )


def _index_key(self, indices):
    """PyTorch's ``Tensor?[] indices`` as a NumPy key, checked as PyTorch checks them.

    ``None`` entries keep a dim whole; NumPy's rules for where the indexed
    dims land (in place if adjacent, first otherwise) are PyTorch's.
    """
    # All-None lists would be plain slicing, which index must not answer with a view.
    if all(index is None for index in indices):
        raise IndexError("at least one index must be provided")
    arrays = [None if index is None else _index_array(index) for index in indices]
    used = sum(array.ndim if array is not None and array.dtype == np.bool_ else 1 for array in arrays)
    if used > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()} (got {used})")
    key, broadcast = [], []
    dim = 0
    for array in arrays:
        if array is None:
            key.append(slice(None))
            dim += 1
        elif array.dtype == np.bool_:
            _check_mask(array, self.shape, dim)
            # PyTorch turns a k-dim mask into k index tensors, one per dim.
            broadcast += [[int(array.sum())]] * array.ndim
            key.append(array)
            dim += array.ndim
        else:
            # CPU's bounds error numbers the index tensors, masks counted per dim.
            bad = first_out_of_bounds(array, self.shape[dim], negative_ok=True)
            if bad is not None:
                raise IndexError(
                    f"index {bad} is out of bounds for dimension {len(broadcast)} with size {self.shape[dim]}"
                )
            broadcast.append(list(array.shape))
            key.append(array)
            dim += 1
    try:
        np.broadcast_shapes(*map(tuple, broadcast))
    except ValueError:
        shapes = ", ".join(str(shape) for shape in broadcast)
        raise IndexError(
            f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}"
        ) from None
    return tuple(key)


@derived_out(aten.index.Tensor, aten.index.Tensor_out)
def index(self, indices):
    # Row-major, as CPU's result for a contiguous self; NumPy may put the
    # indexed dims' memory first. (For a permuted self, CPU's result follows
    # self's dim order instead.)
    return wrap(np.asarray(unwrap(self)[_index_key(self, indices)], order="C"))


def _indexed_shape(shape, key):
    """The shape ``array[key]`` has, found on a zero-strided stand-in (no copy of the data)."""
    return np.broadcast_to(np.empty((), dtype=np.int8), shape)[key].shape


def _is_masked_fill(indices, values):
    """Whether CPU's index_put_ hands this to masked_fill_ (one mask, one value), which does not
    check that the value shares memory with self (``canDispatchToMaskedFill``)."""
    masks = [index for index in indices if index is not None]
    return values.numel() == 1 and len(masks) == 1 and masks[0].dtype in (torch.bool, torch.uint8)


@implements(aten._index_put_impl_.default)
def index_put_(self, indices, values, accumulate=False, unsafe=False):
    warn_if_expanded("index_put_", self, "tensor[indices] = tensor")
    if not _is_masked_fill(indices, values):
        check_no_overlap(self, values, *indices)
    if values.dtype != self.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{SCALAR_TYPE_NAMES[self.dtype]} for the destination and "
            f"{SCALAR_TYPE_NAMES[values.dtype]} for the source."
        )
    key = _index_key(self, indices)
    target = _indexed_shape(self.shape, key)
    source = operand("index_put_", values)
    try:
        np.broadcast_shapes(source.shape, target)
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(source.shape)} cannot be broadcast to "
            f"indexing result of shape {list(target)}"
        ) from None
    target = unwrap(self)
    if accumulate:
        np.add.at(target, key, source)
    else:
        target[key] = source
    return self


# --- along one dim: index_select, index_fill_, index_add, index_copy --------


def _vector_index(op, index, error):
    """A 0- or 1-dim index tensor as a 1-dim array; ``error`` is what a bigger one raises."""
    if index.dim() > 1:
        raise error
    return operand(op, index).reshape(-1)


def _check_positions_on_fast_paths(positions, size):
    """CPU's index_select checks the positions in its own words on its paths for an empty
    self and for dim 1 of a matrix or more (``index_select_out_cpu_``)."""
    if size == 0:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    bad = first_out_of_bounds(positions, size, negative_ok=False)
    if bad is not None:
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")


def _check_index_select_out(out, self, dim, index):
    check_apart(out, self, index)  # before the resize, as CPU checks


@derived_out(aten.index_select.default, aten.index_select.out, check_out=_check_index_select_out)
def index_select(self, dim, index):
    dim = wrap_dim(dim, self.dim())
    positions = _vector_index(
        "index_select", index, IndexError("index_select(): Index is supposed to be a vector")
    )
    if positions.dtype not in _INT_INDEX:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if self.dim() == 0 and positions.size != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {positions.size} value(s)"
        )
    if positions.size and self.dim() > 1 and (self.numel() == 0 or dim == 1):
        _check_positions_on_fast_paths(positions, self.shape[dim])
    if first_out_of_bounds(positions, _size(self.shape, dim), negative_ok=False) is not None:
        raise IndexError("index out of range in self")
    picked = np.take(np.atleast_1d(unwrap(self)), positions, axis=dim)
    return wrap(picked.reshape(()) if self.dim() == 0 else picked)


def _fill_positions(self, dim, index):
    positions = _vector_index("index_fill_", index, RuntimeError("Index has to be a vector/scalar"))
    if positions.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    size = _size(self.shape, dim)
    bad = first_out_of_bounds(positions, size, negative_ok=True)
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    return positions


@implements(aten.index_fill_.int_Scalar, aten.index_fill_.int_Tensor)
def index_fill_(self, dim, index, value):
    dim = wrap_dim(dim, self.dim())
    if isinstance(value, complex) and not self.dtype.is_complex:
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    positions = _fill_positions(self, dim, index)
    result = unwrap(self).copy()
    _along(result, dim)[positions] = fill_value("index_fill_", value, self.dtype)
    return write_in_place("index_fill_", self, wrap(result))


@derived_out(aten.index_add.default, aten.index_add.out)
def index_add(self, dim, index, source, *, alpha=1):
    dim = wrap_dim(dim, self.dim())
    positions = _vector_index(
        "index_add",
        index,
        IndexError(
            f"index_add_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
            f"{SCALAR_TYPE_NAMES[index.dtype]} and size: {list(index.shape)}"
        ),
    )
    if positions.dtype not in _INT_INDEX:
        raise RuntimeError("index_add_(): Expected dtype int32/int64 for index")
    _check_source_dtype(self, source, "index_add_(): self ({}) and source ({}) must have the same scalar type")
    if positions.size != _size(source.shape, dim):
        raise RuntimeError(
            f"index_add_(): Number of indices ({positions.size}) should be equal to source.size(dim): "
            f"({_size(source.shape, dim)}), for dim: {dim}"
        )
    if _without(self.shape, dim) != _without(source.shape, dim):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. "
            f"Got self.shape = {list(self.shape)} source.shape = {list(source.shape)}"
        )
    size = _size(self.shape, dim)
    bad = first_out_of_bounds(positions, size, negative_ok=False)
    # CPU's message depends on its path: the scatter_add one it takes for
    # int64 indices, alpha 1 and 2+ dims names the index; the other does not.
    if bad is not None and self.dim() > 1 and index.dtype == torch.int64 and alpha == 1:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    if bad is not None:
        raise IndexError("index out of range in self")
    result = unwrap(self).copy()
    # alpha is converted to self's dtype first, as CPU does (2.5 adds twice for ints).
    added = _along(unwrap(source), dim) * fill_value("index_add_", alpha, self.dtype)
    np.add.at(_along(result, dim), positions, added.astype(result.dtype, copy=False))
    return wrap(result)


@derived_out(aten.index_copy.default, aten.index_copy.out)
def index_copy(self, dim, index, source):
    dim = wrap_dim(dim, self.dim())
    positions = _vector_index(
        "index_copy", index, IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.dim()})")
    )
    if positions.dtype != np.int64:
        raise RuntimeError(
            f"index_copy_(): Expected a long tensor for index, but got {SCALAR_TYPE_NAMES[index.dtype]}"
        )
    _check_source_dtype(
        self,
        source,
        "index_copy_(): self and source expected to have the same dtype, but got (self) {} and (source) {}",
    )
    if positions.size != _size(source.shape, dim):
        raise IndexError(
            f"index_copy_(): Number of indices ({positions.size}) should be equal to source.size(dim) "
            f"({_size(source.shape, dim)})"
        )
    size = _size(self.shape, dim)
    bad = first_out_of_bounds(positions, size, negative_ok=False)
    if bad is not None:
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {dim} with size {size}")
    result = unwrap(self).copy()
    _along(result, dim)[positions] = _along(unwrap(source), dim)
    return wrap(result)


@implements(aten.embedding_dense_backward.default)
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The weight gradient of ``embedding``: each looked-up row's gradient, summed per row."""
    rows = operand("embedding_backward", indices).reshape(-1)
    grad = unwrap(grad_output).reshape(rows.size, -1)
    if scale_grad_by_freq:
        grad = grad / np.bincount(rows, minlength=num_weights)[rows, None].astype(grad.dtype)
    keep = rows != padding_idx
    weight_grad = np.zeros((num_weights, grad.shape[1]), dtype=grad.dtype)
    np.add.at(weight_grad, rows[keep], grad[keep])
    return wrap(weight_grad)


# --- gather and scatter: one index per element ------------------------------


def _check_index_dtype(op, index):
    """PyTorch's ``scatter_gather_dtype_check``: an empty index may have any dtype."""
    if index.numel() != 0 and index.dtype not in (torch.int32, torch.int64):
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")


def _element_key(index, dim, size):
    """For each element of ``index``, the coordinates of the element it names along ``dim``."""
    bad = first_out_of_bounds(index, size, negative_ok=False)
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    key = list(np.indices(index.shape, sparse=True))
    key[dim] = index
    return tuple(key)


@lowers(aten.gather.default)
def gather(a, dim, index, *, sparse_grad=False):
    dim = wrap_dim(dim, a.ndim)
    if index.size == 0:
        return np.empty(index.shape, dtype=a.dtype)
    key = _element_key(np.atleast_1d(index), dim, _size(a.shape, dim))
    return np.atleast_1d(a)[key].reshape(index.shape)


def _check_gather_out(out, self, *args, **kwargs):
    if out.dtype != self.dtype:
        raise RuntimeError(
            f"Expected out tensor to have dtype {TYPE_META_NAMES[self.dtype]}, but got "
            f"{TYPE_META_NAMES[out.dtype]} instead"
        )


@computed_by(gather)
def gather_kernel(self, dim, index, *, sparse_grad=False):
    dim = wrap_dim(dim, self.dim())
    if index.numel() == 0:  # PyTorch checks nothing else of an empty index
        return
    _check_index_dtype("gather", index)
    if max(self.dim(), 1) != max(index.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d in range(max(self.dim(), 1)):
        if d != dim and _size(index.shape, d) > _size(self.shape, d):
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index.shape)} to be no "
                f"larger than self {list(self.shape)} apart from dimension {dim}"
            )


derived_out(aten.gather.default, aten.gather.out, check_out=_check_gather_out, reads=("self",), partial=("index",))(
    gather_kernel
)


def _check_scatter(self, dim, index, src):
    """Checks shared by the scatter family, of tensors; ``src`` is a tensor or a Scalar."""
    dim = wrap_dim(dim, self.dim())
    _check_index_dtype("scatter", index)
    is_tensor = isinstance(src, torch.Tensor)
    if is_tensor and src.dtype != self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if index.numel() == 0:
        return
    if max(self.dim(), 1) != max(index.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if is_tensor and max(src.dim(), 1) != max(index.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    dims = range(max(self.dim(), 1))
    too_big = any(d != dim and _size(index.shape, d) > _size(self.shape, d) for d in dims)
    if is_tensor:
        too_big = too_big or any(_size(index.shape, d) > _size(src.shape, d) for d in dims)
    if too_big:
        src_part = f" and to be no larger size than src {list(src.shape)}" if is_tensor else ""
        raise RuntimeError(
            f"Expected index {list(index.shape)} to be no larger than self {list(self.shape)} "
            f"apart from dimension {dim}{src_part}"
        )


def _scattered(a, dim, index, src, update):
    """A copy of ``a`` with ``update(result, key, values)`` applied where ``index`` says.

    ``src`` is an array (only its part that ``index`` covers is read) or a Scalar.
    """
    dim = wrap_dim(dim, a.ndim)
    result = np.atleast_1d(a).copy()
    if index.size:
        positions = np.atleast_1d(index)
        key = _element_key(positions, dim, _size(a.shape, dim))
        if isinstance(src, np.ndarray):
            values = np.atleast_1d(src)[tuple(slice(length) for length in positions.shape)]
        else:
            values = fill_value("scatter", src, to_torch_dtype(a.dtype))
        update(result, key, values)
    return result.reshape(a.shape)


def _assign(result, key, values):
    result[key] = values


# The deprecated ``reduce=`` of scatter and scatter_reduce's own names.
_SCATTER_REDUCE = {"add": np.add, "multiply": np.multiply}
# CPU also takes "max" and "min" for amax and amin, unlisted in its message.
_SCATTER_REDUCE_TWO = {
    "sum": np.add,
    "prod": np.multiply,
    "amax": np.maximum,
    "max": np.maximum,
    "amin": np.minimum,
    "min": np.minimum,
}


@lowers(aten.scatter.value, aten.scatter.src)
def scatter(a, dim, index, src):
    return _scattered(a, dim, index, src, _assign)


def scatter_reduce_legacy(a, dim, index, src, *, reduce):
    return _scattered(a, dim, index, src, _SCATTER_REDUCE[reduce].at)


def scatter_add(a, dim, index, src):
    return _scattered(a, dim, index, src, np.add.at)


def scatter_reduce(a, dim, index, src, reduce, *, include_self=True):
    ufunc = _SCATTER_REDUCE_TWO.get(reduce, np.add)

    def update(result, key, values):
        if not include_self:
            # Start the written elements from the reduction's identity; max and
            # min of a value with itself is the value, so a source value does.
            result[key] = values if ufunc in (np.maximum, np.minimum) else int(reduce == "prod")
        ufunc.at(result, key, values)
        if reduce == "mean":
            count = np.full(result.shape, int(include_self))
            np.add.at(count, key, 1)
            count = np.maximum(count, 1)  # elements nothing was written to stay as they are
            # Integer means round down, as CPU's floor division does.
            result[...] = result / count if result.dtype.kind in "fc" else result // count

    return _scattered(a, dim, index, src, update)


@derived_out(aten.scatter.src, aten.scatter.src_out)
@derived_out(aten.scatter.value, aten.scatter.value_out)
@computed_by(scatter)
def scatter_kernel(self, dim, index, src):
    _check_scatter(self, dim, index, src)


@derived_out(aten.scatter.reduce, aten.scatter.reduce_out, name="scatter")
@derived_out(aten.scatter.value_reduce, aten.scatter.value_reduce_out, name="scatter")
@computed_by(scatter_reduce_legacy, name="scatter")
def scatter_reduce_legacy_kernel(self, dim, index, src, *, reduce):
    if reduce not in _SCATTER_REDUCE:
        raise RuntimeError("reduce argument must be either add or multiply.")
    _check_scatter(self, dim, index, src)


@derived_out(aten.scatter_add.default, aten.scatter_add.out)
@computed_by(scatter_add, name="scatter")
def scatter_add_kernel(self, dim, index, src):
    _check_scatter(self, dim, index, src)


@derived_out(aten.scatter_reduce.two, aten.scatter_reduce.two_out)
@computed_by(scatter_reduce, name="scatter")
def scatter_reduce_kernel(self, dim, index, src, reduce, *, include_self=True):
    if reduce not in (*_SCATTER_REDUCE_TWO, "mean"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    kernel = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if (kernel in ("amax", "amin") and self.is_complex()) or (kernel == "mean" and self.dtype == torch.bool):
        # CPU has no kernel for these (NumPy would compute something), and says so.
        raise NotImplementedError(
            f'"scatter_gather_tensor_cpu_reduce_{kernel}" not implemented for \'{SCALAR_TYPE_NAMES[self.dtype]}\''
        )
    _check_scatter(self, dim, index, src)


# --- whole-tensor selections: take, put_, masked ops, nonzero, where --------


@derived_out(aten.take.default, aten.take.out, reads=("self", "index"))
def take(self, index):
    if index.dtype != torch.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {SCALAR_TYPE_NAMES[index.dtype]}")
    positions = operand("take", index)
    if self.numel() == 0 and positions.size:
        raise IndexError("take(): tried to take from an empty tensor")
    bad = first_out_of_bounds(positions, self.numel(), negative_ok=True)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {self.numel()} elements.")
    return wrap(np.take(unwrap(self), positions))


@implements(aten.put_.default)
def put_(self, index, source, accumulate=False):
    """take's inverse: write ``source`` at flat (row-major) positions of ``self``."""
    if index.dtype != torch.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {SCALAR_TYPE_NAMES[index.dtype]}")
    _check_source_dtype(
        self,
        source,
        "put_(): self and source expected to have the same dtype, but got self.dtype = {} and source.dtype = {}",
    )
    if index.numel() != source.numel():
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
    if self.numel() == 0 and index.numel():
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    positions = operand("put_", index).reshape(-1)
    bad = first_out_of_bounds(positions, self.numel(), negative_ok=True)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {self.numel()} elements.")
    result = unwrap(self).copy()  # row-major, so reshape(-1) below is a view of it
    values = operand("put_", source).reshape(-1)
    if accumulate:
        np.add.at(result.reshape(-1), positions, values)
    else:
        result.reshape(-1)[positions] = values
    return write_in_place("put_", self, wrap(result))


def _mask(op, mask, message):
    if mask.dtype != torch.bool:
        raise RuntimeError(message)
    return operand(op, mask)


def _check_masked_select_out(out, self, mask):
    _require_out_dtype(out, self.dtype, "masked_select(): self and result must have the same scalar type")


@derived_out(
    aten.masked_select.default, aten.masked_select.out, check_out=_check_masked_select_out, reads=("self", "mask")
)
def masked_select(self, mask):
    selector = _mask("masked_select", mask, "masked_select: expected BoolTensor for mask")
    shape = broadcast_shapes(mask.shape, self.shape)
    return wrap(np.broadcast_to(unwrap(self), shape)[np.broadcast_to(selector, shape)])


@implements(aten.masked_fill_.Scalar, aten.masked_fill_.Tensor)
def masked_fill_(self, mask, value):
    selector = _mask(
        "masked_fill_", mask, f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype}"
    )
    warn_if_expanded("masked_fill_", self, "tensor[mask] = scalar")
    shape = broadcast_shapes(self.shape, mask.shape)
    if shape != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}")
    if isinstance(value, (int, float)) or (isinstance(value, complex) and self.dtype.is_complex):
        check_convertible(value, self.dtype)
    np.copyto(unwrap(self), fill_value("masked_fill_", value, self.dtype), where=selector)
    return self


@implements(aten.masked_scatter_.default)
def masked_scatter_(self, mask, source):
    """Write ``source``'s leading elements, in order, where ``mask`` is set."""
    if mask.dtype != torch.bool:
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype {SCALAR_TYPE_NAMES[mask.dtype]}"
        )
    # CPU's message runs "got" into the first dtype name; so does this one.
    _check_source_dtype(self, source, "masked_scatter: expected self and source to have same dtypes but got{} and {}")
    selector = operand("masked_scatter_", mask.expand(self.shape))  # expand's checks and message
    count = int(selector.sum())
    if source.numel() < count:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    result = unwrap(self).copy()
    result[selector] = operand("masked_scatter_", source).reshape(-1)[:count]
    return write_in_place("masked_scatter_", self, wrap(result))


def _check_nonzero_out(out, self):
    # CPU's message runs "type" into the dtype name; so does this one.
    _require_out_dtype(
        out,
        torch.int64,
        f"nonzero: Expected out tensor to have scalar type Long but got scalar type{SCALAR_TYPE_NAMES[out.dtype]}",
    )


@derived_out(aten.nonzero.default, aten.nonzero.out, check_out=_check_nonzero_out)
def nonzero(self):
    return wrap(np.argwhere(unwrap(self)))


@lowers(aten.where.self)
def where(condition, a, b, *, out_dtype):
    x, y = computed(out_dtype, a, b, exact=True)
    return np.where(condition.astype(bool), x, y).astype(out_dtype, copy=False)


@computed_by(where)
def where_kernel(condition, self, other):
    if condition.dtype == torch.uint8:
        warn_once(
            "where received a uint8 condition tensor. This behavior is deprecated and will be removed "
            "in a future version of PyTorch. Use a boolean condition instead.",
            stacklevel=3,
        )
    elif condition.dtype != torch.bool:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{SCALAR_TYPE_NAMES[condition.dtype]}"
        )
    broadcast_shapes(condition.shape, self.shape, other.shape)  # for PyTorch's message
    return torch.result_type(self, other)


def _check_where_out(out, condition, self, other):
    # Checked before the condition is: out= must have the result's own dtype.
    dtype = torch.result_type(self, other)
    if out.dtype != dtype:
        raise RuntimeError(
            f"Expected out type to be {SCALAR_TYPE_NAMES[dtype]} but got {SCALAR_TYPE_NAMES[out.dtype]}"
        )


derived_out(aten.where.self, aten.where.self_out, check_out=_check_where_out, name="where")(where_kernel)
