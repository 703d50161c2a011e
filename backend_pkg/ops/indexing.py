"""Indexing: reading and writing the elements that index tensors name.

Each op is a NumPy function that turns its index arrays into a NumPy key
(fancy indexing, or per-element coordinates for gather/scatter) and lets
NumPy move the data; ``np.ufunc.at`` does the accumulating writes, which add
every duplicate index as PyTorch's ``accumulate=True`` does. The same
function is the eager kernel's computation (after the checks of the
tensors, :func:`~.registry.computed_by`) and, for the ops a compiled graph
can hold, its lowering. Index values are checked before NumPy sees them, so
errors are PyTorch's (exception type and wording), not NumPy's.

Functional ops compute into fresh memory; their ``out=`` and in-place
variants store that result under PyTorch's rules (:func:`~.registry.implements`).
``index_put_`` and ``masked_fill_`` write the elements they select straight
into ``self``, as CPU's kernels do (an expanded ``self`` included).
"""

import warnings

import numpy as np
import torch

from ..dtypes import CPP_SCALAR_NAMES, SCALAR_TYPE_NAMES, TYPE_META_NAMES, to_numpy_dtype, to_torch_dtype
from ..tensor import is_npy, wrap
from ._dims import wrap_dim
from ._operands import broadcast_shapes, computed
from ._results import check_apart, check_no_overlap, warn_if_expanded
from ._warnings import warn_once
from .arithmetic import check_convertible
from .registry import aten, computed_by, computed_in_place_by, implements, lowers, no_checks, unchecked

_INT_INDEX = (np.dtype(np.int32), np.dtype(np.int64))


# --- shared checks ----------------------------------------------------------


def first_out_of_bounds(index, size, *, negative_ok):
    """The first element of ``index`` (in C order) outside a dim of ``size``, or None."""
    low = -size if negative_ok else 0
    bad = index[(index < low) | (index >= size)]
    return int(bad.flat[0]) if bad.size else None


def check_fill_tensor(op, value):
    """A fill value given as a tensor must be zero-dim."""
    if isinstance(value, torch.Tensor) and value.dim() != 0:
        raise RuntimeError(
            f"{op} only supports a 0-dimensional value tensor, but got tensor with {value.dim()} dimension(s)."
        )


def filled(value, dtype):
    """A Scalar (or zero-dim array) as a zero-dim array of NumPy's ``dtype``, converted as
    PyTorch's fill converts it: integers wrap, floats truncate toward zero, complex into a
    real dtype is refused."""
    if isinstance(value, np.ndarray):
        value = value.item()
    if isinstance(value, complex) and dtype.kind != "c":
        if value.imag != 0:
            raise RuntimeError(
                f"value cannot be converted to type {CPP_SCALAR_NAMES[to_torch_dtype(dtype)]} without overflow"
            )
        value = value.real
    return np.asarray(value).astype(dtype)


def fill_value(op, value, dtype):
    """:func:`filled` for a Scalar or zero-dim tensor and a torch ``dtype``."""
    check_fill_tensor(op, value)
    if isinstance(value, torch.Tensor):
        value = value.item()
    return filled(value, to_numpy_dtype(dtype))


def _size(shape, dim):
    """PyTorch's ensure_nonempty_size: a 0-dim tensor counts as one element along dim 0."""
    return shape[dim] if shape else 1


def _without(shape, dim):
    """``shape`` without its dim ``dim`` (a 0-dim shape stays empty)."""
    return list(shape[:dim]) + list(shape[dim + 1 :])


def _along(array, dim):
    """``array`` (a 0-dim one as 1-dim) viewed with ``dim`` first, so index arrays pick along it."""
    return np.moveaxis(np.atleast_1d(array), dim, 0)


def _check_long_index(op, index):
    """The index of ``index_copy_``, ``take`` and ``put_`` is int64, as CPU requires."""
    if index.dtype != torch.int64:
        raise RuntimeError(f"{op}(): Expected a long tensor for index, but got {SCALAR_TYPE_NAMES[index.dtype]}")


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
    """One entry of an indices list, checked as PyTorch checks its dtype."""
    if index.dtype == np.uint8:
        warnings.warn(
            "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.",
            UserWarning,
            stacklevel=5,
        )
        return index.astype(bool)
    if index.dtype != np.bool_ and index.dtype not in _INT_INDEX:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return index


def _check_mask(mask, shape, dim):
    for offset, (mask_size, size) in enumerate(zip(mask.shape, shape[dim:])):
        if mask_size != size:
            raise IndexError(
                f"The shape of the mask {list(mask.shape)} at index {offset} does not match the "
                f"shape of the indexed tensor {list(shape)} at index {dim + offset}"
            )


def _index_key(a, indices):
    """PyTorch's ``Tensor?[] indices`` (arrays here) as a NumPy key into ``a``, checked as
    PyTorch checks them.

    ``None`` entries keep a dim whole; NumPy's rules for where the indexed
    dims land (in place if adjacent, first otherwise) are PyTorch's.
    """
    # All-None lists would be plain slicing, which index must not answer with a view.
    if all(index is None for index in indices):
        raise IndexError("at least one index must be provided")
    arrays = [None if index is None else _index_array(index) for index in indices]
    used = sum(array.ndim if array is not None and array.dtype == np.bool_ else 1 for array in arrays)
    if used > a.ndim:
        raise IndexError(f"too many indices for tensor of dimension {a.ndim} (got {used})")
    key, broadcast = [], []
    dim = 0
    for array in arrays:
        if array is None:
            key.append(slice(None))
            dim += 1
        elif array.dtype == np.bool_:
            _check_mask(array, a.shape, dim)
            # PyTorch turns a k-dim mask into k index tensors, one per dim.
            broadcast += [[int(array.sum())]] * array.ndim
            key.append(array)
            dim += array.ndim
        else:
            # CPU's bounds error numbers the index tensors, masks counted per dim.
            bad = first_out_of_bounds(array, a.shape[dim], negative_ok=True)
            if bad is not None:
                raise IndexError(
                    f"index {bad} is out of bounds for dimension {len(broadcast)} with size {a.shape[dim]}"
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


def _on_npy(indices):
    """The indices list with its CPU index tensors, which PyTorch takes for any device's
    tensor, as npy tensors (zero-dim ones are read as scalars anyway)."""
    if all(index is None or is_npy(index) or index.dim() == 0 for index in indices):
        return indices
    return [
        wrap(index.numpy(force=True)) if index is not None and index.device.type == "cpu" else index
        for index in indices
    ]


@lowers(aten.index.Tensor)
def index(a, indices):
    # Row-major, as CPU's result for a contiguous self; NumPy may put the
    # indexed dims' memory first. (For a permuted self, CPU's result follows
    # self's dim order instead.)
    return np.asarray(a[_index_key(a, indices)], order="C")


_index_of_npy_indices = unchecked(index)


@implements(aten.index.Tensor, out=aten.index.Tensor_out)
def index_kernel(self, indices):
    return _index_of_npy_indices(self, _on_npy(indices))


def _indexed_shape(shape, key):
    """The shape ``array[key]`` has, found on a zero-strided stand-in (no copy of the data)."""
    return np.broadcast_to(np.empty((), dtype=np.int8), shape)[key].shape


def _is_masked_fill(indices, values):
    """Whether CPU's index_put_ hands this to masked_fill_ (one mask, one value), which does not
    check that the value shares memory with self (``canDispatchToMaskedFill``)."""
    masks = [index for index in indices if index is not None]
    return values.numel() == 1 and len(masks) == 1 and masks[0].dtype in (torch.bool, torch.uint8)


def index_put_(a, indices, values, accumulate=False, unsafe=False):
    """Write ``values`` into ``a`` where ``indices`` say (adding them up, with ``accumulate``)."""
    key = _index_key(a, indices)
    target = _indexed_shape(a.shape, key)
    try:
        np.broadcast_shapes(np.shape(values), target)
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(np.shape(values))} cannot be broadcast to "
            f"indexing result of shape {list(target)}"
        ) from None
    if accumulate:
        np.add.at(a, key, values)
    else:
        a[key] = values
    return a


@lowers(aten.index_put.default)
def index_put(a, indices, values, accumulate=False):
    return index_put_(np.array(a, copy=True), indices, values, accumulate)


_index_put_into_npy = computed_in_place_by(index_put_)(no_checks)


@implements(aten._index_put_impl_.default)
def index_put_kernel(self, indices, values, accumulate=False, unsafe=False):
    warn_if_expanded("index_put_", self, "tensor[indices] = tensor")
    if not _is_masked_fill(indices, values):
        check_no_overlap(self, values, *indices)
    if values.dtype != self.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{SCALAR_TYPE_NAMES[self.dtype]} for the destination and "
            f"{SCALAR_TYPE_NAMES[values.dtype]} for the source."
        )
    return _index_put_into_npy(self, _on_npy(indices), values, accumulate, unsafe)


# --- along one dim: index_select, index_fill_, index_add, index_copy --------


def _check_vector(index, error):
    """A 0- or 1-dim index tensor passes; ``error`` is what a bigger one raises."""
    if index.dim() > 1:
        raise error


def _check_positions_on_fast_paths(positions, size):
    """CPU's index_select checks the positions in its own words on its paths for an empty
    self and for dim 1 of a matrix or more (``index_select_out_cpu_``)."""
    if size == 0:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    bad = first_out_of_bounds(positions, size, negative_ok=False)
    if bad is not None:
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")


@lowers(aten.index_select.default)
def index_select(a, dim, index):
    dim = wrap_dim(dim, a.ndim)
    positions = index.reshape(-1)
    if positions.size and a.ndim > 1 and (a.size == 0 or dim == 1):
        _check_positions_on_fast_paths(positions, a.shape[dim])
    if first_out_of_bounds(positions, _size(a.shape, dim), negative_ok=False) is not None:
        raise IndexError("index out of range in self")
    picked = np.take(np.atleast_1d(a), positions, axis=dim)
    return picked.reshape(()) if a.ndim == 0 else picked


def _check_index_select_out(out, self, dim, index):
    check_apart(out, self, index)  # before the resize, as CPU checks


@implements(aten.index_select.default, out=aten.index_select.out, check_out=_check_index_select_out)
@computed_by(index_select)
def index_select_kernel(self, dim, index):
    wrap_dim(dim, self.dim())
    _check_vector(index, IndexError("index_select(): Index is supposed to be a vector"))
    if index.dtype not in (torch.int32, torch.int64):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if self.dim() == 0 and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)")


def _positions_along(a, dim, index, *, negative_ok):
    """``dim`` wrapped, ``index`` as flat positions along it, its size, and the first position
    out of bounds (None if none): what index_fill, index_add and index_copy check first."""
    dim = wrap_dim(dim, a.ndim)
    positions = index.reshape(-1)
    size = _size(a.shape, dim)
    return dim, positions, size, first_out_of_bounds(positions, size, negative_ok=negative_ok)


def index_fill(a, dim, index, value):
    dim, positions, size, bad = _positions_along(a, dim, index, negative_ok=True)
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    result = np.array(a, copy=True)
    _along(result, dim)[positions] = filled(value, result.dtype)
    return result


@implements(in_place=aten.index_fill_.int_Scalar)
@implements(in_place=aten.index_fill_.int_Tensor)
@computed_by(index_fill, name="index_fill_")
def index_fill_kernel(self, dim, index, value):
    wrap_dim(dim, self.dim())
    if isinstance(value, complex) and not self.dtype.is_complex:
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    _check_vector(index, RuntimeError("Index has to be a vector/scalar"))
    if index.dtype != torch.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    check_fill_tensor("index_fill_", value)


def index_add(a, dim, index, source, *, alpha=1):
    dim, positions, size, bad = _positions_along(a, dim, index, negative_ok=False)
    # CPU's message depends on its path: the scatter_add one it takes for
    # int64 indices, alpha 1 and 2+ dims names the index; the other does not.
    if bad is not None and a.ndim > 1 and positions.dtype == np.int64 and alpha == 1:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    if bad is not None:
        raise IndexError("index out of range in self")
    result = np.array(a, copy=True)
    # alpha is converted to self's dtype first, as CPU does (2.5 adds twice for ints).
    added = _along(source, dim) * filled(alpha, result.dtype)
    np.add.at(_along(result, dim), positions, added.astype(result.dtype, copy=False))
    return result


@implements(aten.index_add.default, out=aten.index_add.out)
@computed_by(index_add)
def index_add_kernel(self, dim, index, source, *, alpha=1):
    dim = wrap_dim(dim, self.dim())
    _check_vector(
        index,
        IndexError(
            f"index_add_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
            f"{SCALAR_TYPE_NAMES[index.dtype]} and size: {list(index.shape)}"
        ),
    )
    if index.dtype not in (torch.int32, torch.int64):
        raise RuntimeError("index_add_(): Expected dtype int32/int64 for index")
    _check_source_dtype(self, source, "index_add_(): self ({}) and source ({}) must have the same scalar type")
    if index.numel() != _size(source.shape, dim):
        raise RuntimeError(
            f"index_add_(): Number of indices ({index.numel()}) should be equal to source.size(dim): "
            f"({_size(source.shape, dim)}), for dim: {dim}"
        )
    if _without(self.shape, dim) != _without(source.shape, dim):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. "
            f"Got self.shape = {list(self.shape)} source.shape = {list(source.shape)}"
        )


def index_copy(a, dim, index, source):
    dim, positions, size, bad = _positions_along(a, dim, index, negative_ok=False)
    if bad is not None:
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {dim} with size {size}")
    result = np.array(a, copy=True)
    _along(result, dim)[positions] = _along(source, dim)
    return result


@implements(aten.index_copy.default, out=aten.index_copy.out)
@computed_by(index_copy)
def index_copy_kernel(self, dim, index, source):
    dim = wrap_dim(dim, self.dim())
    _check_vector(index, IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.dim()})"))
    _check_long_index("index_copy_", index)
    _check_source_dtype(
        self,
        source,
        "index_copy_(): self and source expected to have the same dtype, but got (self) {} and (source) {}",
    )
    if index.numel() != _size(source.shape, dim):
        raise IndexError(
            f"index_copy_(): Number of indices ({index.numel()}) should be equal to source.size(dim) "
            f"({_size(source.shape, dim)})"
        )


def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The weight gradient of ``embedding``: each looked-up row's gradient, summed per row."""
    rows = indices.reshape(-1)
    grad = grad_output.reshape(rows.size, -1)
    if scale_grad_by_freq:
        grad = grad / np.bincount(rows, minlength=num_weights)[rows, None].astype(grad.dtype)
    keep = rows != padding_idx
    weight_grad = np.zeros((num_weights, grad.shape[1]), dtype=grad.dtype)
    np.add.at(weight_grad, rows[keep], grad[keep])
    return weight_grad


embedding_dense_backward_kernel = implements(aten.embedding_dense_backward.default)(
    unchecked(embedding_dense_backward, name="embedding_backward")
)


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


implements(aten.gather.default, out=aten.gather.out, check_out=_check_gather_out, reads=("self",), partial=("index",))(
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
            values = filled(src, a.dtype)
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


@lowers(aten.scatter_add.default)
def scatter_add(a, dim, index, src):
    return _scattered(a, dim, index, src, np.add.at)


@lowers(aten.scatter_reduce.two)
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


@implements(aten.scatter.src, out=aten.scatter.src_out)
@implements(aten.scatter.value, out=aten.scatter.value_out)
@computed_by(scatter)
def scatter_kernel(self, dim, index, src):
    _check_scatter(self, dim, index, src)


@implements(aten.scatter.reduce, out=aten.scatter.reduce_out, name="scatter")
@implements(aten.scatter.value_reduce, out=aten.scatter.value_reduce_out, name="scatter")
@computed_by(scatter_reduce_legacy, name="scatter")
def scatter_reduce_legacy_kernel(self, dim, index, src, *, reduce):
    if reduce not in _SCATTER_REDUCE:
        raise RuntimeError("reduce argument must be either add or multiply.")
    _check_scatter(self, dim, index, src)


@implements(aten.scatter_add.default, out=aten.scatter_add.out)
@computed_by(scatter_add, name="scatter")
def scatter_add_kernel(self, dim, index, src):
    _check_scatter(self, dim, index, src)


@implements(aten.scatter_reduce.two, out=aten.scatter_reduce.two_out)
@computed_by(scatter_reduce, name="scatter")
def scatter_reduce_kernel(self, dim, index, src, reduce, *, include_self=True):
    if reduce not in (*_SCATTER_REDUCE_TWO, "mean"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    kernel = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if (kernel in ("amax", "amin") and self.is_complex()) or (kernel == "mean" and self.dtype == torch.bool):
        # CPU has no kernel for these (NumPy would compute something), and says so.
        raise NotImplementedError(
            f"\"scatter_gather_tensor_cpu_reduce_{kernel}\" not implemented for '{SCALAR_TYPE_NAMES[self.dtype]}'"
        )
    _check_scatter(self, dim, index, src)


# --- whole-tensor selections: take, put_, masked ops, nonzero, where --------


def take(a, index):
    if a.size == 0 and index.size:
        raise IndexError("take(): tried to take from an empty tensor")
    bad = first_out_of_bounds(index, a.size, negative_ok=True)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {a.size} elements.")
    return np.take(a, index)


@implements(aten.take.default, out=aten.take.out, reads=("self", "index"))
@computed_by(take)
def take_kernel(self, index):
    _check_long_index("take", index)


@lowers(aten.put.default)
def put(a, index, source, accumulate=False):
    """take's inverse: ``a`` with ``source`` written at its flat (row-major) positions."""
    positions = index.reshape(-1)
    bad = first_out_of_bounds(positions, a.size, negative_ok=True)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {a.size} elements.")
    result = np.array(a, copy=True, order="C")  # row-major, so reshape(-1) below is a view of it
    values = source.reshape(-1)
    if accumulate:
        np.add.at(result.reshape(-1), positions, values)
    else:
        result.reshape(-1)[positions] = values
    return result


@implements(in_place=aten.put_.default)
@computed_by(put, name="put_")
def put_kernel(self, index, source, accumulate=False):
    _check_long_index("put_", index)
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


def _check_mask_dtype(mask, message):
    if mask.dtype != torch.bool:
        raise RuntimeError(message)


def _check_masked_select_out(out, self, mask):
    _require_out_dtype(out, self.dtype, "masked_select(): self and result must have the same scalar type")


def masked_select(a, mask):
    """The elements of ``a`` where ``mask`` is set, ``a`` and ``mask`` broadcast together.

    Not lowered: its length depends on the mask's values, which a compiled
    graph's shapes cannot.
    """
    if a.shape == mask.shape:  # the usual case, without broadcast_to's microseconds
        return a[mask]
    shape = np.broadcast_shapes(a.shape, mask.shape)
    return np.broadcast_to(a, shape)[np.broadcast_to(mask, shape)]


@implements(
    aten.masked_select.default, out=aten.masked_select.out, check_out=_check_masked_select_out, reads=("self", "mask")
)
@computed_by(masked_select)
def masked_select_kernel(self, mask):
    _check_mask_dtype(mask, "masked_select: expected BoolTensor for mask")
    broadcast_shapes(mask.shape, self.shape)  # for PyTorch's message


def masked_fill_(a, mask, value):
    np.copyto(a, filled(value, a.dtype), where=mask)
    return a


@implements(aten.masked_fill_.Scalar, aten.masked_fill_.Tensor)
@computed_in_place_by(masked_fill_)
def masked_fill_kernel(self, mask, value):
    _check_mask_dtype(mask, f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    warn_if_expanded("masked_fill_", self, "tensor[mask] = scalar")
    shape = broadcast_shapes(self.shape, mask.shape)
    if shape != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}")
    if isinstance(value, (int, float)) or (isinstance(value, complex) and self.dtype.is_complex):
        check_convertible(value, self.dtype)
    check_fill_tensor("masked_fill_", value)


def masked_scatter(a, mask, source):
    """``a`` with ``source``'s leading elements written, in order, where ``mask`` is set."""
    selector = np.broadcast_to(mask, a.shape)
    count = int(selector.sum())
    if source.size < count:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    result = np.array(a, copy=True)
    result[selector] = source.reshape(-1)[:count]
    return result


@implements(in_place=aten.masked_scatter_.default)
@computed_by(masked_scatter, name="masked_scatter_")
def masked_scatter_kernel(self, mask, source):
    if mask.dtype != torch.bool:
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype {SCALAR_TYPE_NAMES[mask.dtype]}"
        )
    # CPU's message runs "got" into the first dtype name; so does this one.
    _check_source_dtype(self, source, "masked_scatter: expected self and source to have same dtypes but got{} and {}")
    mask.expand(self.shape)  # expand's checks and message


def _check_nonzero_out(out, self):
    # CPU's message runs "type" into the dtype name; so does this one.
    _require_out_dtype(
        out,
        torch.int64,
        f"nonzero: Expected out tensor to have scalar type Long but got scalar type{SCALAR_TYPE_NAMES[out.dtype]}",
    )


def nonzero(a):
    """The positions of ``a``'s nonzero elements, one row each. Not lowered: how many there
    are depends on the values."""
    return np.argwhere(a)


nonzero_kernel = implements(
    aten.nonzero.default,
    out=aten.nonzero.out,
    check_out=_check_nonzero_out,
)(unchecked(nonzero))


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
        raise RuntimeError(f"Expected out type to be {SCALAR_TYPE_NAMES[dtype]} but got {SCALAR_TYPE_NAMES[out.dtype]}")


implements(aten.where.self, out=aten.where.self_out, check_out=_check_where_out, name="where")(where_kernel)
