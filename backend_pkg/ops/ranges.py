"""``torch.arange``: PyTorch's range factories end in ``arange.start_out``.

``arange.default`` and ``arange.start_step`` are composites that allocate
an empty tensor and fill it with ``arange.start_out``, whose kernels are per
device (``aten/src/ATen/native/RangeFactories.cpp``); that is the one an npy
tensor needs. Packed sequences reach it: ``pack_padded_sequence(...,
enforce_sorted=False)`` inverts its sort permutation with an arange on the
input's device (``torch/nn/utils/rnn.py``, ``invert_permutation``).

The length and the values follow ``compute_arange_size`` and the CPU
``arange_kernel``: each value is ``start + step * index`` in the dtype's
accumulate type (int64 for integers, float32 for half, float64 otherwise),
then converted once. ``torch.compile`` runs the same function for the
``arange.start_step`` its graphs keep.
"""

import math
import warnings

import numpy as np
import torch

from ..dtypes import to_numpy_dtype, to_torch_dtype
from ..tensor import unwrap
from ._dtype_errors import not_implemented_for
from .registry import aten, implements, lowers

_OP = "arange_cpu"
_INT64_MAX = 2**63 - 1


def _exact_only_for_integer_bounds():
    """Whether this torch counts an int64 range exactly only when start, end and step are all
    integers (torch 2.14's ``compute_arange_size``, aten/src/ATen/native/RangeUtils.h:
    ``arange(0, 3, 1.5)`` has ceil(3 / 1.5) = 2 elements, 0 and 1), not for every int64 result
    with its bounds truncated first (2.13: the step truncates to 1, giving 3 elements)."""
    return torch.arange(0, 3, 1.5, dtype=torch.int64).numel() == 2


_EXACT_ONLY_FOR_INTEGER_BOUNDS = _exact_only_for_integer_bounds()


def _accumulate_dtype(dtype):
    if not dtype.is_floating_point:
        return torch.int64
    return torch.float32 if dtype == torch.float16 else torch.float64


def _as_accumulate(value, accumulate):
    """A Python number as C++'s ``Scalar::to<accscalar_t>`` reads it: integers truncate, and
    refuse what int64 cannot hold."""
    if accumulate != torch.int64:
        return float(value)
    if not -(2**63) <= value <= _INT64_MAX:  # nan and infinities included
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return int(value)


def _cpp_format(value):
    """How C++'s ``ostream`` prints a double in an error message (six significant digits)."""
    return format(value, "g")


def check_range(start, end, step):
    """``arange_check_bounds``, on the bounds read as float64 (a nan step is neither sign)."""
    if not (step > 0 or step < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_cpp_format(start)} -> {_cpp_format(end)}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def arange_length(start, end, step, exact):
    """``compute_arange_size``: exact integer arithmetic for int64 results, float64 for the others."""
    if exact:
        if step == 0:  # a fractional step truncated to 0
            raise ValueError("step must be nonzero")
        # C++'s integer division truncates toward zero.
        span = end - start + step - (1 if step > 0 else -1)
        return abs(span) // abs(step)
    length = math.ceil((float(end) - float(start)) / float(step))
    if length > _INT64_MAX:
        raise RuntimeError("invalid size, possible overflow?")
    return length


def arange_values(start, step, length, accumulate, result):
    """``start + step * index`` for each index, in NumPy dtype ``accumulate``, converted to ``result``."""
    # Too large for a float32 accumulator, or for the result, is inf, silently as in PyTorch.
    with np.errstate(over="ignore", invalid="ignore"):
        index = np.arange(length, dtype=accumulate)
        values = np.asarray(start, dtype=accumulate) + np.asarray(step, dtype=accumulate) * index
        return values.astype(result)


@lowers(aten.arange.start_step)
def arange(start, end, step=1, *, out_dtype, **_placement):
    """The range's values in NumPy's ``out_dtype``, counted and computed as CPU's kernel does."""
    dtype = to_torch_dtype(out_dtype)
    if dtype == torch.bool or dtype.is_complex:
        raise not_implemented_for(_OP, dtype)
    check_range(float(start), float(end), float(step))
    accumulate = _accumulate_dtype(dtype)
    first, last, stride = (_as_accumulate(value, accumulate) for value in (start, end, step))
    integer_bounds = all(type(value) is int for value in (start, end, step))
    if dtype == torch.int64 and (integer_bounds or not _EXACT_ONLY_FOR_INTEGER_BOUNDS):
        length = arange_length(first, last, stride, exact=True)
    else:
        length = arange_length(start, end, step, exact=False)
    return arange_values(first, stride, length, to_numpy_dtype(accumulate), out_dtype)


@implements(aten.arange.start_out)
def arange_out(start, end, step=1, *, out):
    """The only npy kernel of the range factories: ``out`` resized as CPU resizes it, then
    written (a memory op, so not made with ``computed_by``)."""
    values = arange(start, end, step, out_dtype=to_numpy_dtype(out.dtype))
    _resize_for(out, values.size)
    unwrap(out)[...] = values
    return out


def _resize_for(out, length):
    """Give ``out`` ``length`` elements, warning (as CPU does) when that drops or adds any."""
    if out.numel() == length:
        return
    if out.numel() > 0:
        warnings.warn(
            f"The number of elements in the out tensor of shape {list(out.shape)} is "
            f"{out.numel()} which does not match the computed number of elements {length}. "
            "Note that this may occur as a result of rounding error. The out tensor will be "
            f"resized to a tensor of shape ({length},).",
            UserWarning,
            stacklevel=3,
        )
    out.resize_((length,))
