"""Reductions over dims, with PyTorch's result dtypes."""

import numpy as np
import torch

from ..dtypes import compute_dtype, to_numpy_dtype
from ..tensor import unwrap, wrap
from ._results import write_out
from .registry import aten, implements


def _reduced_axes(op, dim, ndim):
    """PyTorch's dim argument as NumPy axes: None or [] reduces every dim."""
    if dim is None or len(dim) == 0:
        return None
    rank = max(ndim, 1)
    axes = []
    for d in dim:
        if not -rank <= d < rank:
            raise IndexError(
                f"{op}: Dimension out of range (expected to be in range of "
                f"[{-rank}, {rank - 1}], but got {d})"
            )
        axis = d % rank
        if axis in axes:
            raise RuntimeError(f"{op}: dim {axis} appears multiple times in the list of dims")
        axes.append(axis)
    return tuple(axes) if ndim else None


def _sum_dtype(self, dtype):
    """Integers and bools sum to int64 unless a dtype is asked for, as in PyTorch."""
    if dtype is not None:
        return dtype
    if self.dtype.is_floating_point or self.dtype.is_complex:
        return self.dtype
    return torch.int64


@implements(aten.sum.dim_IntList)
def sum_dims(self, dim, keepdim=False, *, dtype=None):
    result = _sum_dtype(self, dtype)
    axes = _reduced_axes("sum", dim, self.dim())
    total = np.sum(
        unwrap(self),
        axis=axes,
        dtype=to_numpy_dtype(compute_dtype(result)),
        keepdims=keepdim,
    )
    return wrap(np.asarray(total).astype(to_numpy_dtype(result), copy=False))


@implements(aten.sum.default)
def sum_all(self, *, dtype=None):
    return sum_dims(self, None, dtype=dtype)


@implements(aten.sum.IntList_out)
def sum_dims_out(self, dim, keepdim=False, *, dtype=None, out):
    return write_out("sum", out, sum_dims(self, dim, keepdim, dtype=dtype))


@implements(aten.sum.out)
def sum_all_out(self, *, dtype=None, out):
    return write_out("sum", out, sum_all(self, dtype=dtype))
