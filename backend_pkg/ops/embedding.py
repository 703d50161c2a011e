"""Embeddings: ``embedding``'s lowering, ``embedding_renorm_`` and the ``embedding_bag`` family.

``F.embedding`` is ``index_select`` forward and ``embedding_dense_backward``
backward (both in :mod:`.indexing`); with ``max_norm`` it first rescales, in
place, the rows it is about to read: ``embedding_renorm_``.

``F.embedding_bag`` reaches the backend as ``_embedding_bag`` (weight needs a
gradient) or ``_embedding_bag_forward_only``; a 2-D input is first flattened
with offsets from ``arange`` (``torch/nn/functional.py``). Both return, besides
the bags, three results that exist for the backward (``EmbeddingBag.cpp``):
``offset2bag`` (each index's bag), ``bag_size`` (each bag's count of
non-padding indices) and ``max_indices`` (in max mode, the row each output
element came from). npy computes them as PyTorch's CPU kernel does,
including its shortcuts: the plain float sum leaves ``offset2bag`` empty,
and sum mode reports zero bag sizes. Backward, autograd calls
``_embedding_bag_backward`` (a per-device kernel, which rebuilds an empty
``offset2bag`` and calls ``_embedding_bag_dense_backward``); the gradient
of ``per_sample_weights`` is ``_embedding_bag_per_sample_weights_backward``.

``scale_grad_by_freq`` divides each row's gradient by its index's count, as
documented and as ``F.embedding`` does; PyTorch 2.13's CPU kernel divides by
the count of another index when counts differ (pytorch/pytorch#190063).

A bag starts at its offset and ends where the next bag starts. With
``include_last_offset`` and a last offset short of the indices, what becomes
of the indices past it depends on CPU's path, and npy follows it. The fast
path (sum or mean of float32 or float16 weights with unit column stride,
no ``padding_idx``, and per-sample weights, if any, of unit stride) reads
each bag up to the next offset, so the last bag stops at the last offset;
the mean still divides by the count up to the end of the indices. The other
paths (max mode, float64, a ``padding_idx``) run the last bag to the end of
the indices. Backward, the forward's ``offset2bag`` puts the indices past
the last offset in the last bag, so the mean's gradient and the other
paths' reach them too (the fast mean's although its sum skipped them). The
fast sum leaves ``offset2bag`` empty, and its backward rebuilds
``offset2bag`` from all the offsets, which puts the indices past the last
one in a bag that does not exist: CPU reads their gradient from past the
end of the output gradient (whatever memory holds); npy gives them none, the
gradient of the sum it computed.
"""

from collections import namedtuple

import numpy as np
import torch

from ..dtypes import SCALAR_TYPE_NAMES, to_torch_dtype
from ..tensor import unwrap
from ._operands import numpy_compute_dtype, operand
from .indexing import index_select
from .registry import aten, computed_by, computed_in_place_by, implements, lowers, unchecked


@lowers(aten.embedding.default)
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """The rows of ``weight`` that ``indices`` name. Only a lowering: eagerly, PyTorch's own
    ``embedding`` checks the tensors and calls ``index_select``, as this does."""
    rows = index_select(weight, 0, indices.reshape(-1))
    return rows.reshape(*indices.shape, *weight.shape[1:])


# EmbeddingBagMode, as the ``mode`` argument numbers them.
_SUM, _MEAN, _MAX = 0, 1, 2

# The arguments of ``_embedding_bag`` (and ``_embedding_bag_forward_only``) and of ``_embedding_bag_backward``,
# as their schemas name them, for the checks and the NumPy functions that read them.
_BagArguments = namedtuple(
    "_BagArguments",
    "weight indices offsets scale_grad_by_freq mode sparse per_sample_weights include_last_offset padding_idx",
    defaults=(False, _SUM, False, None, False, -1),
)
_BagBackwardArguments = namedtuple(
    "_BagBackwardArguments",
    "grad indices offsets offset2bag bag_size maximum_indices num_weights scale_grad_by_freq mode sparse "
    "per_sample_weights padding_idx",
    defaults=(-1,),
)

_LEGACY_TENSOR_TYPES = {
    torch.bool: "BoolTensor",
    torch.uint8: "ByteTensor",
    torch.int8: "CharTensor",
    torch.int16: "ShortTensor",
    torch.int32: "IntTensor",
    torch.int64: "LongTensor",
    torch.float16: "HalfTensor",
    torch.float32: "FloatTensor",
    torch.float64: "DoubleTensor",
    torch.complex64: "ComplexFloatTensor",
    torch.complex128: "ComplexDoubleTensor",
}


# --- the math, in NumPy -------------------------------------------------------


def renormed_rows(weight, rows, max_norm, norm_type):
    """The rows of ``weight`` whose ``norm_type``-norm exceeds ``max_norm``, and those
    rows scaled to norm ``max_norm`` (less a 1e-7 guard), as ``embedding_renorm_`` does."""
    values = weight[rows]
    norms = np.linalg.norm(values.astype(np.float64), ord=norm_type, axis=1)
    too_long = norms > max_norm
    scale = (max_norm / (norms[too_long] + 1e-7)).astype(weight.dtype)
    return rows[too_long], values[too_long] * scale[:, None]


def bag_of_each_index(starts, count):
    """For each of ``count`` indices, the bag it falls in: the last bag starting at or before it.

    Empty bags (repeated starts) hold nothing, as PyTorch's ``make_offset2bag`` makes them.
    """
    return np.searchsorted(starts, np.arange(count), side="right") - 1


def _bag_max(rows, bags, kept, num_bags, indices):
    """Each bag's elementwise max of its kept ``rows``, and the index it came from (the
    first one in case of ties; 0 for an empty bag, whose max is 0)."""
    count, features = rows.shape
    output = np.full((num_bags, features), -np.inf, dtype=rows.dtype)
    np.maximum.at(output, bags[kept], rows[kept])
    is_max = kept[:, None] & (rows == output[bags])
    first = np.full((num_bags, features), count)
    np.minimum.at(first, bags, np.where(is_max, np.arange(count)[:, None], count))
    found = first < count
    max_indices = np.where(found, np.append(indices, 0)[first], 0)
    return np.where(found, output, 0), max_indices


def embedding_bag(weight, indices, bags, num_bags, mode, per_sample_weights, padding_idx, summed_count=None):
    """The bags' sums, means or maxes of the rows of ``weight`` that ``indices`` name,
    each bag's count of non-padding indices, and (max mode) where each max came from.

    A sum or mean adds only the first ``summed_count`` indices (all of them if None),
    but counts all of them in the bag sizes, as CPU's fast path does.
    """
    if num_bags == 0:  # no offsets: every index is outside any bag
        empty = np.zeros(0, dtype=np.int64)
        return np.zeros((0, weight.shape[1]), weight.dtype), empty, np.zeros((0, weight.shape[1]), np.int64)
    kept = indices != padding_idx
    rows = weight[indices]
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    bag_size = np.bincount(bags[kept], minlength=num_bags)
    if mode == _MAX:
        output, max_indices = _bag_max(rows, bags, kept, num_bags, indices)
        return output, bag_size, max_indices
    summed = kept & (np.arange(indices.size) < (indices.size if summed_count is None else summed_count))
    output = np.zeros((num_bags, weight.shape[1]), dtype=rows.dtype)
    np.add.at(output, bags[summed], rows[summed])
    if mode == _MEAN:
        output = output / np.maximum(bag_size, 1)[:, None].astype(rows.dtype)
    return output, bag_size, None


def weight_grad(
    grad,
    indices,
    offset2bag,
    bag_size,
    maximum_indices,
    num_weights,
    scale_grad_by_freq,
    mode,
    per_sample_weights,
    padding_idx=-1,
):
    """The gradient of ``weight``, in ``grad``'s compute dtype: each output gradient sent back to the rows its bag
    read (the arguments of ``_embedding_bag_dense_backward``)."""
    grad, per_sample_weights = _computed(grad), _computed(per_sample_weights)
    indices, bags, max_indices = _int64(indices), _int64(offset2bag), _int64(maximum_indices)
    grad_weight = np.zeros((num_weights, grad.shape[1]), dtype=grad.dtype)
    if mode == _MAX:
        # Only the row each max came from gets its gradient; empty bags give none.
        nonempty = bag_size != 0
        features = np.arange(grad.shape[1])
        np.add.at(grad_weight, (max_indices[nonempty], features), grad[nonempty])
        return grad_weight
    scale = np.ones(indices.shape, dtype=grad.dtype)
    if scale_grad_by_freq:
        scale /= np.bincount(indices, minlength=num_weights)[indices]
    if mode == _MEAN:
        sizes = bag_size[bags]
        scale = np.where(sizes != 0, scale / np.where(sizes != 0, sizes, 1), scale)
    if per_sample_weights is not None:
        scale = scale * per_sample_weights
    kept = (indices != padding_idx) & _in_a_bag(bags, grad)
    np.add.at(grad_weight, indices[kept], grad[bags[kept]] * scale[kept, None].astype(grad.dtype))
    return grad_weight


def per_sample_weights_backward(grad, weight, indices, bags, padding_idx):
    """The gradient of each per-sample weight: its bag's output gradient dotted with its row."""
    in_a_bag = _in_a_bag(bags, grad)
    dots = np.einsum("nd,nd->n", grad[np.where(in_a_bag, bags, 0)], weight[indices])
    return np.where((indices == padding_idx) | ~in_a_bag, 0, dots)


def _in_a_bag(bags, grad):
    """Which indices fall in a bag that has a gradient row: not those past a last offset (see the module
    docstring), whose rebuilt ``offset2bag`` names the bag after the last."""
    return bags < grad.shape[0]


# --- checks, as PyTorch's CPU kernels make them -------------------------------


def _legacy_name(dtype):
    return f"torch.{_LEGACY_TENSOR_TYPES[dtype]}"


def _check_scalar_types(op, tensor, argument, position, allowed):
    """``checkScalarTypes``: the tensor's dtype is one of ``allowed``."""
    if tensor.dtype not in allowed:
        names = ", ".join(SCALAR_TYPE_NAMES[dtype] for dtype in allowed)
        raise RuntimeError(
            f"Expected tensor for argument #{position} '{argument}' to have one of the following "
            f"scalar types: {names}; but got {_legacy_name(tensor.dtype)} instead "
            f"(while checking arguments for {op})"
        )


_INDEX_DTYPES = (torch.int64, torch.int32)
_WEIGHT_DTYPES = (torch.float16, torch.float32, torch.float64)


def _check_bag_arguments(weight, indices, offsets, mode, per_sample_weights, include_last_offset):
    """``check_arguments`` and the dims check of ``_embedding_bag_cpu_impl``."""
    if indices.dim() not in (1, 2):
        raise RuntimeError(f"input has to be a 1D or 2D Tensor, but got Tensor of dimension {indices.dim()}")
    if indices.dim() == 1 and offsets.dim() != 1:
        raise RuntimeError(f"offsets has to be a 1D Tensor, but got Tensor of dimension {offsets.dim()}")
    _check_scalar_types("embedding_bag", indices, "indices", 1, _INDEX_DTYPES)
    _check_scalar_types("embedding_bag", offsets, "offsets", 1, _INDEX_DTYPES)
    if weight.dtype not in _WEIGHT_DTYPES:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have one of the following scalar types: "
            f"Half, BFloat16, Float, Double; but got {_legacy_name(weight.dtype)} instead "
            "(while checking arguments for embedding_bag)"
        )
    starts = unwrap(offsets)
    if starts.size and starts[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
            f"position 0. However, got {starts[0]}"
        )
    if starts.size and starts[-1] > indices.shape[0]:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length {indices.shape[0]} but got offsets[-1] of {starts[-1]}"
        )
    if per_sample_weights is not None:
        if mode != _SUM:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
        if per_sample_weights.dtype != weight.dtype:
            raise RuntimeError(
                "Expected tensor for argument #1 'weight' to have the same type as tensor for argument "
                f"#1 'per_sample_weights'; but type {_legacy_name(weight.dtype)} does not equal "
                f"{_legacy_name(per_sample_weights.dtype)} (while checking arguments for embedding_bag)"
            )
        for holds, condition in (
            (per_sample_weights.dim() == 1, "per_sample_weights.value().dim() == 1"),
            (per_sample_weights.numel() == indices.numel(), "per_sample_weights.value().numel() == indices.numel()"),
        ):
            if not holds:
                raise RuntimeError(
                    f"Expected {condition} to be true, but got false.  (Could this error message be "
                    "improved?  If so, please report an enhancement request to PyTorch.)"
                )
    if include_last_offset and offsets.shape[0] < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")


def _check_in_vocabulary(indices, num_weights, fast_path):
    """Every index names a row, or the error of the CPU loop that meets the first bad one.

    On its fast path CPU's message comes from fbgemm's error report, which each
    thread runs over its share of the bags; npy's is the report of one thread
    over all of them (CPU's own, for a bad index in the first thread's share).
    """
    bad = np.flatnonzero((indices < 0) | (indices >= num_weights))
    if bad.size == 0:
        return
    position, value = bad[0], indices[bad[0]]
    if fast_path:
        raise RuntimeError(
            f"Index {position} of input takes value {value} which is not in the valid range [0, {num_weights})"
        )
    raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {value}")


def _is_fast_path(weight, per_sample_weights, padding_idx):
    """Whether CPU's ``index_select_add`` takes its fbgemm shortcut, which skips ``offset2bag``
    (``weight`` and ``per_sample_weights`` are arrays)."""
    return (
        weight.dtype in (np.float16, np.float32)
        and weight.strides[1] == weight.itemsize
        and padding_idx < 0
        and (per_sample_weights is None or per_sample_weights.strides[0] == per_sample_weights.itemsize)
    )


def _index_dtype(indices, offsets):
    """indices and offsets of mixed int32/int64 are both read as int64 (``promoteIndicesAndOffsets``)."""
    return indices.dtype if indices.dtype == offsets.dtype else torch.int64


def _computed(array):
    """``array`` (None staying None) in its compute dtype: float32 for half."""
    return None if array is None else array.astype(numpy_compute_dtype(array.dtype), copy=False)


def _int64(array):
    return array.astype(np.int64, copy=False)


# --- the ops, on arrays ---------------------------------------------------------


def embedding_renorm_(weight, indices, max_norm, norm_type):
    """Scale, in place, the rows of ``weight`` that ``indices`` name whose norm exceeds ``max_norm``."""
    size = weight.shape[0]
    out_of_range = np.unique(indices[(indices < -size) | (indices >= size)])  # CPU visits them sorted
    if out_of_range.size:
        raise IndexError(
            f"select(): index {out_of_range[0]} out of range for tensor of size {list(weight.shape)} at dimension 0"
        )
    if indices.size and weight.dtype.kind not in "fc":
        raise RuntimeError(
            f"norm(): input dtype should be either floating point or complex. "
            f"Got {SCALAR_TYPE_NAMES[to_torch_dtype(weight.dtype)]} instead."
        )
    requested = np.unique(indices % max(size, 1))
    rows, renormed = renormed_rows(weight, requested, max_norm, norm_type)
    weight[rows] = renormed
    return weight


def _embedding_bag(bag, requires_grad, out_dtype):
    """The four results of ``_embedding_bag`` for its arguments ``bag`` (a :data:`_BagArguments`)."""
    positions, starts = _int64(bag.indices.reshape(-1)), _int64(bag.offsets)
    num_bags = starts.size - 1 if bag.include_last_offset else starts.size
    bags = bag_of_each_index(starts[:num_bags], positions.size)
    per_sample_weights = _computed(bag.per_sample_weights)
    fast_path = bag.mode != _MAX and _is_fast_path(bag.weight, bag.per_sample_weights, bag.padding_idx)
    summed_count = starts[-1] if fast_path and bag.include_last_offset else None
    output, bag_size, max_indices = embedding_bag(
        _computed(bag.weight), positions, bags, num_bags, bag.mode, per_sample_weights, bag.padding_idx, summed_count
    )
    if bag.mode == _SUM:
        # CPU zeroes sum mode's bag sizes ("make bag_size output deterministic"); without
        # a gradient to come it keeps them the length of the offsets.
        bag_size = np.zeros(num_bags if requires_grad else starts.size, dtype=np.int64)
    if max_indices is None:
        max_indices = bag_size
    if bag.mode == _SUM and fast_path:
        bags = bags[:0]
    return tuple(
        array.astype(dtype, copy=False) for array, dtype in zip((output, bags, bag_size, max_indices), out_dtype)
    )


def embedding_bag_with_grad(*arguments, out_dtype):
    """``_embedding_bag``: the bags, and what their backward reads."""
    return _embedding_bag(_BagArguments(*arguments), True, out_dtype)


def embedding_bag_forward_only(*arguments, out_dtype):
    return _embedding_bag(_BagArguments(*arguments), False, out_dtype)


def embedding_bag_dense_backward(grad, *arguments):
    """The gradient of ``weight``, in ``grad``'s dtype."""
    return weight_grad(grad, *arguments).astype(grad.dtype, copy=False)


def embedding_bag_backward(*arguments):
    """The weight gradient autograd asks for: CPU's kernel rebuilds the ``offset2bag`` that
    the sum's fast path left empty, then calls the dense (or sparse) backward, whose
    arguments are these but ``offsets`` and ``sparse``."""
    backward = _BagBackwardArguments(*arguments)
    if backward.indices.size and not backward.offset2bag.size:
        backward = backward._replace(offset2bag=bag_of_each_index(backward.offsets, backward.indices.size))
    dense = backward._asdict()
    del dense["offsets"], dense["sparse"]
    return embedding_bag_dense_backward(*dense.values())


def embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode, padding_idx=-1):
    positions, bags = _int64(indices), _int64(offset2bag)
    if positions.size and not bags.size:  # the sum's fast path left it empty
        bags = bag_of_each_index(_int64(offsets), positions.size)
    result = per_sample_weights_backward(_computed(grad), _computed(weight), positions, bags, padding_idx)
    return result.astype(grad.dtype, copy=False)


# --- kernels: the checks, then the op on arrays -----------------------------------


@implements(aten.embedding_renorm_.default)
@computed_in_place_by(embedding_renorm_)
def embedding_renorm_kernel(self, indices, max_norm, norm_type):
    if self.dim() != 2:
        raise RuntimeError(
            f"Expected 2-dimensional tensor, but got {self.dim()}-dimensional tensor for argument #1 "
            "'self' (while checking arguments for embedding_renorm_)"
        )
    _check_scalar_types("embedding_renorm_", indices, "indices", 2, _INDEX_DTYPES)


def _embedding_bag_checks(*arguments):
    bag = _BagArguments(*arguments)
    _check_bag_arguments(
        bag.weight, bag.indices, bag.offsets, bag.mode, bag.per_sample_weights, bag.include_last_offset
    )
    weights = None if bag.per_sample_weights is None else operand("_embedding_bag", bag.per_sample_weights)
    fast_path = bag.mode != _MAX and _is_fast_path(operand("_embedding_bag", bag.weight), weights, bag.padding_idx)
    _check_in_vocabulary(_int64(unwrap(bag.indices).reshape(-1)), bag.weight.shape[0], fast_path)
    index_dtype = _index_dtype(bag.indices, bag.offsets)
    return bag.weight.dtype, index_dtype, index_dtype, index_dtype


implements(aten._embedding_bag.default, out=aten._embedding_bag.out)(
    computed_by(embedding_bag_with_grad, name="_embedding_bag")(_embedding_bag_checks)
)
implements(aten._embedding_bag_forward_only.default, out=aten._embedding_bag_forward_only.out)(
    computed_by(embedding_bag_forward_only, name="_embedding_bag_forward_only")(_embedding_bag_checks)
)


def _embedding_bag_backward_checks(*arguments):
    backward = _BagBackwardArguments(*arguments)
    _check_scalar_types("embedding_bag", backward.indices, "indices", 1, _INDEX_DTYPES)
    _check_scalar_types("embedding_bag", backward.offsets, "offsets", 1, _INDEX_DTYPES)
    if backward.sparse:
        raise NotImplementedError("npy device: embedding_bag has no sparse gradient: npy has no sparse tensors")


implements(aten._embedding_bag_backward.default)(
    computed_by(embedding_bag_backward, name="_embedding_bag_backward")(_embedding_bag_backward_checks)
)
implements(aten._embedding_bag_dense_backward.default, out=aten._embedding_bag_dense_backward.out)(
    unchecked(embedding_bag_dense_backward, name="_embedding_bag_dense_backward")
)


def _per_sample_weights_backward_checks(grad, weight, indices, offsets, offset2bag, mode, padding_idx=-1):
    if mode != _SUM:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for mode='sum'")


implements(
    aten._embedding_bag_per_sample_weights_backward.default,
    out=aten._embedding_bag_per_sample_weights_backward.out,
)(computed_by(embedding_bag_per_sample_weights_backward)(_per_sample_weights_backward_checks))
