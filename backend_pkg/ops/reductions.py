"""Reductions and scans over dims, with PyTorch's result dtypes and errors.

NumPy does the arithmetic. What these kernels add is PyTorch's side of each
op: which dims a ``dim`` argument names, the result dtype, the precision the
CPU kernels accumulate in (so results agree to the last bits that matter),
and the errors PyTorch raises for what it refuses. The helpers at the top are
shared with :mod:`.linalg` and :mod:`.nn`.
"""

import math
import warnings

import numpy as np
import torch

from ..dtypes import SCALAR_TYPE_NAMES, compute_dtype, to_numpy_dtype
from ..tensor import unwrap, wrap
from ._numpy_errors import quietly
from ._results import as_result, check_out_dtype, write_out
from .registry import aten, implements


def not_implemented_for(op, dtype):
    """The error PyTorch's per-dtype dispatch raises for a dtype an op has no kernel for."""
    return NotImplementedError(f"\"{op}\" not implemented for '{SCALAR_TYPE_NAMES[dtype]}'")


def is_inexact(dtype):
    return dtype.is_floating_point or dtype.is_complex


def reduced_axes(op, dim, ndim):
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


def single_axis(op, dim, ndim):
    """A one-int dim as a NumPy axis; None for a zero-dim tensor (dim 0 or -1), which has none."""
    axes = reduced_axes(op, [dim], ndim)
    return None if axes is None else axes[0]


def _reduced_count(shape, axes):
    """How many elements each output element of a reduction over ``axes`` combines."""
    return math.prod(shape if axes is None else [shape[axis] for axis in axes])


def _check_nonempty_reduction(op, self, dims):
    """PyTorch's refusal to reduce nothing when the op has no identity (max, amax, ...)."""
    if self.numel() != 0:
        return
    if not dims:
        raise RuntimeError(
            f"{op}: Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    for d in dims:
        if self.shape[d] == 0:
            raise IndexError(f"{op}: Expected reduction dim {d} to have non-zero size.")


def _refuse_complex(op, self):
    if self.dtype.is_complex:
        raise not_implemented_for(op, self.dtype)


def _refuse_input(op, self, *dtypes):
    """The check max/min along a dim and argmax/argmin make before computing."""
    if self.dtype in dtypes:
        kind = "bool" if self.dtype == torch.bool else "complex"
        raise RuntimeError(f"{op}(): does not support {kind} input")


def _converted(self, dtype):
    """``self``'s array in ``dtype``, converted as PyTorch converts.

    Complex to real keeps the real part, with PyTorch's warning.
    """
    array = unwrap(self)
    if self.dtype.is_complex and not dtype.is_complex:
        message = "Casting complex values to real discards the imaginary part"
        warnings.warn(message, UserWarning, stacklevel=4)
        array = array.real
    return array.astype(to_numpy_dtype(dtype), copy=False)


def _sum_dtype(self, dtype):
    """Integers and bools sum (and multiply) to int64 unless a dtype is asked for, as in PyTorch."""
    if dtype is not None:
        return dtype
    if is_inexact(self.dtype):
        return self.dtype
    return torch.int64


def _running_dtype(dtype):
    """What PyTorch's CPU scans keep a running value in (its ``acc_type``): wider than the result."""
    if dtype == torch.float16:
        return torch.float32
    if dtype.is_floating_point:
        return torch.float64
    if dtype.is_complex:
        return torch.complex128
    return dtype


# --- sum, prod, mean ------------------------------------------------------


def _total(op, np_reduce, self, dim, keepdim, dtype):
    """``np_reduce`` (np.sum, np.prod) of ``self`` converted to ``dtype``'s compute dtype."""
    axes = reduced_axes(op, dim, self.dim())
    # inf + -inf is nan, which PyTorch returns silently and NumPy warns about
    return quietly(np_reduce, _converted(self, compute_dtype(dtype)), axis=axes, keepdims=keepdim)


def _accumulate(op, np_reduce, self, dim, keepdim, dtype):
    """``np_reduce`` (np.sum, np.prod) with PyTorch's dtype rules, half computed in float32."""
    result = _sum_dtype(self, dtype)
    return as_result(_total(op, np_reduce, self, dim, keepdim, result), result)


@implements(aten.sum.dim_IntList)
def sum_dims(self, dim, keepdim=False, *, dtype=None):
    return _accumulate("sum", np.sum, self, dim, keepdim, dtype)


@implements(aten.sum.default)
def sum_all(self, *, dtype=None):
    return sum_dims(self, None, dtype=dtype)


@implements(aten.sum.IntList_out)
def sum_dims_out(self, dim, keepdim=False, *, dtype=None, out):
    return write_out("sum", out, sum_dims(self, dim, keepdim, dtype=dtype))


@implements(aten.sum.out)
def sum_all_out(self, *, dtype=None, out):
    return write_out("sum", out, sum_all(self, dtype=dtype))


@implements(aten.prod.dim_int)
def prod_dim(self, dim, keepdim=False, *, dtype=None):
    return _accumulate("prod", np.prod, self, [dim], keepdim, dtype)


@implements(aten.prod.default)
def prod_all(self, *, dtype=None):
    return _accumulate("prod", np.prod, self, None, False, dtype)


@implements(aten.prod.int_out)
def prod_dim_out(self, dim, keepdim=False, *, dtype=None, out):
    return write_out("prod", out, prod_dim(self, dim, keepdim, dtype=dtype))


@implements(aten.prod.out)
def prod_all_out(self, *, dtype=None, out):
    return write_out("prod", out, prod_all(self, dtype=dtype))


def _mean_dtype(self, dtype):
    """A mean is inexact: integer inputs need a floating ``dtype``, as in PyTorch."""
    result = self.dtype if dtype is None else dtype
    if not is_inexact(result):
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(
            "mean(): could not infer output dtype. "
            f"{which} dtype must be either a floating point or complex dtype. "
            f"Got: {SCALAR_TYPE_NAMES[result]}"
        )
    return result


@implements(aten.mean.dim)
def mean_dims(self, dim, keepdim=False, *, dtype=None):
    # PyTorch's CPU mean: sum (half in float32), divide, round once.
    result = _mean_dtype(self, dtype)
    total = _total("mean", np.sum, self, dim, keepdim, result)
    count = _reduced_count(self.shape, reduced_axes("mean", dim, self.dim()))
    with np.errstate(invalid="ignore"):  # the mean of nothing is 0 / 0 = nan, as in PyTorch
        return as_result(total / count, result)


@implements(aten.mean.default)
def mean_all(self, *, dtype=None):
    return mean_dims(self, None, dtype=dtype)


@implements(aten.mean.out)
def mean_dims_out(self, dim, keepdim=False, *, dtype=None, out):
    return write_out("mean", out, mean_dims(self, dim, keepdim, dtype=dtype))


@implements(aten.mean.dtype_out)
def mean_all_out(self, *, dtype=None, out):
    return write_out("mean", out, mean_all(self, dtype=dtype))


# --- max, min and their positions ------------------------------------------


def _extreme(op, np_reduce, self, dim, keepdim):
    """``np_reduce`` (np.max, np.min) over ``dim`` (every dim if empty); NaN wins, as in PyTorch."""
    axes = reduced_axes(op, dim, self.dim())
    _check_nonempty_reduction(f"{op}()", self, dim)
    _refuse_complex(op, self)
    return wrap(np_reduce(unwrap(self), axis=axes, keepdims=keepdim))


@implements(aten.amax.default)
def amax(self, dim=(), keepdim=False):
    return _extreme("amax", np.max, self, dim, keepdim)


@implements(aten.amin.default)
def amin(self, dim=(), keepdim=False):
    return _extreme("amin", np.min, self, dim, keepdim)


@implements(aten.amax.out)
def amax_out(self, dim=(), keepdim=False, *, out):
    check_out_dtype(out, self)
    return write_out("amax", out, amax(self, dim, keepdim))


@implements(aten.amin.out)
def amin_out(self, dim=(), keepdim=False, *, out):
    check_out_dtype(out, self)
    return write_out("amin", out, amin(self, dim, keepdim))


@implements(aten.max.default)
def max_all(self):
    return _extreme("max", np.max, self, (), False)


@implements(aten.min.default)
def min_all(self):
    return _extreme("min", np.min, self, (), False)


@implements(aten.max.unary_out)
def max_all_out(self, *, out):
    return write_out("max", out, max_all(self))


@implements(aten.min.unary_out)
def min_all_out(self, *, out):
    return write_out("min", out, min_all(self))


def _extreme_along(op, np_arg, self, dim, keepdim):
    """Values and int64 indices of the max/min along ``dim``: the first on ties, NaN winning."""
    axis = single_axis(op, dim, self.dim())
    _check_nonempty_reduction(f"{op}()", self, [axis])
    _refuse_input(op, self, torch.complex64, torch.complex128)
    array = unwrap(self)
    if axis is None:  # a zero-dim tensor is its own extreme, at index 0
        return wrap(array.copy()), wrap(np.zeros((), np.int64))
    indices = np.expand_dims(np_arg(array, axis=axis), axis)
    values = np.take_along_axis(array, indices, axis)
    if not keepdim:
        values, indices = values.squeeze(axis), indices.squeeze(axis)
    return wrap(values), as_result(indices, torch.int64)


@implements(aten.max.dim)
def max_dim(self, dim, keepdim=False):
    return _extreme_along("max", np.argmax, self, dim, keepdim)


@implements(aten.min.dim)
def min_dim(self, dim, keepdim=False):
    return _extreme_along("min", np.argmin, self, dim, keepdim)


def write_pair(op, outs, results):
    """Store the results of a two-result op into its two ``out=`` tensors."""
    return tuple(write_out(op, out, result) for out, result in zip(outs, results))


@implements(aten.max.dim_max)
def max_dim_out(self, dim, keepdim=False, *, max, max_values):
    return write_pair("max", (max, max_values), max_dim(self, dim, keepdim))


@implements(aten.min.dim_min)
def min_dim_out(self, dim, keepdim=False, *, min, min_indices):
    return write_pair("min", (min, min_indices), min_dim(self, dim, keepdim))


def _position(op, np_arg, self, dim, keepdim):
    """argmax/argmin: int64 positions along ``dim``, or in the flattened tensor if None."""
    _refuse_input(op, self, torch.bool, torch.complex64, torch.complex128)
    if dim is None:
        if self.numel() == 0:
            raise IndexError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0.")
        axis = None
    else:
        axis = single_axis(op, dim, self.dim())
        _check_nonempty_reduction(f"{op}()", self, [axis])
    return as_result(np_arg(unwrap(self), axis=axis, keepdims=keepdim), torch.int64)


@implements(aten.argmax.default)
def argmax(self, dim=None, keepdim=False):
    return _position("argmax", np.argmax, self, dim, keepdim)


@implements(aten.argmin.default)
def argmin(self, dim=None, keepdim=False):
    return _position("argmin", np.argmin, self, dim, keepdim)


@implements(aten.argmax.out)
def argmax_out(self, dim=None, keepdim=False, *, out):
    return write_out("argmax", out, argmax(self, dim, keepdim))


@implements(aten.argmin.out)
def argmin_out(self, dim=None, keepdim=False, *, out):
    return write_out("argmin", out, argmin(self, dim, keepdim))


# --- variance and standard deviation ----------------------------------------


def _warn_if_no_degrees_of_freedom(op, dof):
    """PyTorch's warning, for which an empty input's reduction factor is 0, whatever its shape."""
    if dof <= 0:
        warnings.warn(
            f"{op}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=4,
        )


def _moments(op, self, dim, correction, keepdim, take_sqrt):
    """(Variance or std, mean) over ``dim``, in double as PyTorch's CPU Welford kernel, rounded once."""
    if not is_inexact(self.dtype):
        names = op if op.endswith("_mean") else "std and var"
        raise RuntimeError(f"{names} only support floating point and complex dtypes")
    axes = reduced_axes(op, dim, self.dim())
    array = unwrap(self).astype(np.complex128 if self.dtype.is_complex else np.float64)
    count = _reduced_count(array.shape, axes)
    dof = count - (1 if correction is None else correction)
    _warn_if_no_degrees_of_freedom(op, dof if array.size else dof - count)
    # Too few degrees of freedom (or no elements) divide by zero: inf or nan, as in PyTorch.
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.sum(array, axis=axes, keepdims=True) / count
        deviation = array - mean
        squares = (deviation * deviation.conj()).real
        spread = np.sum(squares, axis=axes, keepdims=keepdim) / max(dof, 0)
    if take_sqrt:
        spread = np.sqrt(spread)
    mean = mean.reshape(spread.shape)
    return as_result(spread, self.dtype.to_real()), as_result(mean, self.dtype)


@implements(aten.var.correction)
def var(self, dim=None, *, correction=None, keepdim=False):
    return _moments("var", self, dim, correction, keepdim, take_sqrt=False)[0]


@implements(aten.std.correction)
def std(self, dim=None, *, correction=None, keepdim=False):
    return _moments("std", self, dim, correction, keepdim, take_sqrt=True)[0]


@implements(aten.var_mean.correction)
def var_mean(self, dim=None, *, correction=None, keepdim=False):
    return _moments("var_mean", self, dim, correction, keepdim, take_sqrt=False)


@implements(aten.std_mean.correction)
def std_mean(self, dim=None, *, correction=None, keepdim=False):
    return _moments("std_mean", self, dim, correction, keepdim, take_sqrt=True)


@implements(aten.var.correction_out)
def var_out(self, dim=None, *, correction=None, keepdim=False, out):
    return write_out("var", out, var(self, dim, correction=correction, keepdim=keepdim))


@implements(aten.std.correction_out)
def std_out(self, dim=None, *, correction=None, keepdim=False, out):
    return write_out("std", out, std(self, dim, correction=correction, keepdim=keepdim))


@implements(aten.var_mean.correction_out)
def var_mean_out(self, dim=None, *, correction=None, keepdim=False, out0, out1):
    results = var_mean(self, dim, correction=correction, keepdim=keepdim)
    return write_pair("var_mean", (out0, out1), results)


@implements(aten.std_mean.correction_out)
def std_mean_out(self, dim=None, *, correction=None, keepdim=False, out0, out1):
    results = std_mean(self, dim, correction=correction, keepdim=keepdim)
    return write_pair("std_mean", (out0, out1), results)


# --- all, any ---------------------------------------------------------------


def _truth(op, np_reduce, self, dim, keepdim):
    """all/any over ``dim``: None reduces every dim, but [] none; uint8 stays uint8, as in PyTorch."""
    array = unwrap(self)
    if dim is not None and len(dim) == 0:
        verdict = array.astype(bool)
    else:
        verdict = np_reduce(array, axis=reduced_axes(op, dim, self.dim()), keepdims=keepdim)
    return as_result(verdict, torch.uint8 if self.dtype == torch.uint8 else torch.bool)


@implements(aten.all.dims)
def all_dims(self, dim=None, keepdim=False):
    return _truth("all", np.all, self, dim, keepdim)


@implements(aten.any.dims)
def any_dims(self, dim=None, keepdim=False):
    return _truth("any", np.any, self, dim, keepdim)


@implements(aten.all.dim)
def all_dim(self, dim, keepdim=False):
    return all_dims(self, [dim], keepdim)


@implements(aten.any.dim)
def any_dim(self, dim, keepdim=False):
    return any_dims(self, [dim], keepdim)


@implements(aten.all.default)
def all_all(self):
    return all_dims(self)


@implements(aten.any.default)
def any_all(self):
    return any_dims(self)


@implements(aten.all.dims_out)
def all_dims_out(self, dim=None, keepdim=False, *, out):
    return write_out("all", out, all_dims(self, dim, keepdim))


@implements(aten.any.dims_out)
def any_dims_out(self, dim=None, keepdim=False, *, out):
    return write_out("any", out, any_dims(self, dim, keepdim))


@implements(aten.all.out)
def all_dim_out(self, dim, keepdim=False, *, out):
    return write_out("all", out, all_dim(self, dim, keepdim))


@implements(aten.any.out)
def any_dim_out(self, dim, keepdim=False, *, out):
    return write_out("any", out, any_dim(self, dim, keepdim))


@implements(aten.all.all_out)
def all_all_out(self, *, out):
    return write_out("all", out, all_all(self))


@implements(aten.any.all_out)
def any_all_out(self, *, out):
    return write_out("any", out, any_all(self))


# --- cumulative sums and products -------------------------------------------


def _scan(op, np_scan, self, dim, dtype):
    """cumsum/cumprod along ``dim``: input cast to the result dtype, running value kept wider."""
    result = _sum_dtype(self, dtype)
    axis = single_axis(op, dim, self.dim())
    array = _converted(self, result)
    scanned = quietly(np_scan, array, axis=axis, dtype=to_numpy_dtype(_running_dtype(result)))
    return as_result(scanned.reshape(array.shape), result)  # a zero-dim input scans flattened


@implements(aten.cumsum.default)
def cumsum(self, dim, *, dtype=None):
    return _scan("cumsum", np.cumsum, self, dim, dtype)


@implements(aten.cumprod.default)
def cumprod(self, dim, *, dtype=None):
    return _scan("cumprod", np.cumprod, self, dim, dtype)


@implements(aten.cumsum.out)
def cumsum_out(self, dim, *, dtype=None, out):
    return write_out("cumsum", out, cumsum(self, dim, dtype=dtype))


@implements(aten.cumprod.out)
def cumprod_out(self, dim, *, dtype=None, out):
    return write_out("cumprod", out, cumprod(self, dim, dtype=dtype))


# --- logsumexp and norms -----------------------------------------------------


@implements(aten.logsumexp.default)
def logsumexp(self, dim, keepdim=False):
    result = self.dtype if is_inexact(self.dtype) else torch.get_default_dtype()
    axes = reduced_axes("logsumexp", dim, self.dim())
    array = unwrap(self).astype(to_numpy_dtype(compute_dtype(result)), copy=False)
    # Shift by the largest real part so exp cannot overflow; an infinite (or
    # empty, -inf) maximum would make inf - inf = nan, so those shift by 0.
    shift = np.max(array.real, axis=axes, keepdims=True, initial=-np.inf)
    shift = np.where(np.isfinite(shift), shift, 0).astype(array.real.dtype)
    with np.errstate(divide="ignore"):  # log(0) = -inf for empty or all -inf slices
        total = np.log(np.sum(np.exp(array - shift), axis=axes, keepdims=True)) + shift
    return as_result(total if keepdim else np.squeeze(total, axis=axes), result)


@implements(aten.logsumexp.out)
def logsumexp_out(self, dim, keepdim=False, *, out):
    return write_out("logsumexp", out, logsumexp(self, dim, keepdim))


def _norm_dtype(self, dtype):
    """The dtype a vector norm computes in: ``dtype`` if asked for, which must not narrow."""
    if dtype is None:
        return self.dtype
    name = "linalg.vector_norm"
    if not is_inexact(dtype):
        raise RuntimeError(
            f"{name}: dtype should be floating point or complex, but got {SCALAR_TYPE_NAMES[dtype]}"
        )
    if self.dtype.is_complex != dtype.is_complex:
        kind = "complex" if self.dtype.is_complex else "real"
        raise RuntimeError(
            f"{name}: dtype should be {kind} for {kind} inputs, but got {SCALAR_TYPE_NAMES[dtype]}"
        )
    if torch.promote_types(self.dtype, dtype) != dtype:
        raise RuntimeError(
            f"{name}: the dtype of the input ({SCALAR_TYPE_NAMES[self.dtype]}) should be "
            f"convertible without narrowing to the specified dtype ({SCALAR_TYPE_NAMES[dtype]})"
        )
    return dtype


def _check_norm_identity(self, ord, dim):
    """max and min of nothing are undefined, so the inf and negative norms refuse to reduce nothing."""
    if self.numel() != 0 or not (float(ord) < 0 or float(ord) == math.inf):
        return
    if not dim:
        raise RuntimeError(
            f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the "
            "operation does not have an identity"
        )
    for d in dim:
        if self.shape[d] == 0:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {ord} norm on the dimension {d}because "
                "this dimension is empty and the operation does not have an identity"
            )


def _p_norm(magnitude, ord, axes, keepdim):
    """The ``ord``-norm of non-negative ``magnitude`` over ``axes``."""
    reduce = dict(axis=axes, keepdims=keepdim)
    if ord == math.inf:
        return np.max(magnitude, **reduce)
    if ord == -math.inf:
        return np.min(magnitude, **reduce)
    if ord == 0:
        return np.sum(magnitude != 0, dtype=magnitude.dtype, **reduce)
    if ord == 1:
        return np.sum(magnitude, **reduce)
    if ord == 2:
        return np.sqrt(np.sum(magnitude * magnitude, **reduce))
    with np.errstate(divide="ignore"):  # negative orders: 0 ** -p = inf, and inf ** -1/p = 0
        return np.sum(magnitude**ord, **reduce) ** (1 / ord)


@implements(aten.linalg_vector_norm.default)
def vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None):
    if not is_inexact(self.dtype):
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. "
            f"Got {SCALAR_TYPE_NAMES[self.dtype]}"
        )
    _check_norm_identity(self, ord, dim)
    computed = _norm_dtype(self, dtype)
    axes = reduced_axes("linalg.vector_norm", dim, self.dim())
    magnitude = np.abs(unwrap(self).astype(to_numpy_dtype(compute_dtype(computed)), copy=False))
    return as_result(_p_norm(magnitude, float(ord), axes, keepdim), computed.to_real())


@implements(aten.linalg_vector_norm.out)
def vector_norm_out(self, ord=2, dim=None, keepdim=False, *, dtype=None, out):
    return write_out("linalg.vector_norm", out, vector_norm(self, ord, dim, keepdim, dtype=dtype))


def _check_norm_input(self):
    if not is_inexact(self.dtype):
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. "
            f"Got {SCALAR_TYPE_NAMES[self.dtype]} instead."
        )


@implements(aten.norm.ScalarOpt_dim)
def norm(self, p, dim, keepdim=False):
    _check_norm_input(self)
    return vector_norm(self, 2 if p is None else p, dim, keepdim)


@implements(aten.norm.ScalarOpt_dim_dtype)
def norm_dtype(self, p, dim, keepdim, *, dtype):
    return vector_norm(self, 2 if p is None else p, dim, keepdim, dtype=dtype)


@implements(aten.norm.out)
def norm_out(self, p, dim, keepdim=False, *, out):
    return write_out("norm", out, norm(self, p, dim, keepdim))


@implements(aten.norm.dtype_out)
def norm_dtype_out(self, p, dim, keepdim, *, dtype, out):
    return write_out("norm", out, norm_dtype(self, p, dim, keepdim, dtype=dtype))
