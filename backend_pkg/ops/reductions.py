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

from ..dtypes import SCALAR_TYPE_NAMES, to_numpy_dtype, to_torch_dtype
from ._dims import reduced_axes, single_axis, wrap_dim
from ._dtype_errors import not_implemented_for
from ._operands import numpy_compute_dtype
from ._results import check_out_dtype
from ._warnings import warn_once
from .registry import aten, computed_by, implements, lowers, unchecked


def is_inexact(dtype):
    return dtype.is_floating_point or dtype.is_complex


def _reduced_count(shape, axes):
    """How many elements each output element of a reduction over ``axes`` combines."""
    return math.prod(shape if axes is None else [shape[axis] for axis in axes])


def _refuse_reducing_nothing(self, dims, everything, one_dim):
    """An op with no identity cannot reduce an empty tensor: raise ``everything`` when it would
    reduce all of it (``dims`` empty), else ``one_dim(d)`` for the first empty dim ``d`` of ``dims``."""
    if not dims:
        raise everything
    empty = [d for d in dims if self.shape[d] == 0]
    if empty:
        raise one_dim(empty[0])


def _check_nonempty_reduction(op, self, dims):
    """PyTorch's refusal to reduce nothing when the op has no identity (max, amax, ...)."""
    if self.numel() == 0:
        _refuse_reducing_nothing(
            self,
            dims,
            RuntimeError(
                f"{op}: Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            ),
            lambda d: IndexError(f"{op}: Expected reduction dim {d} to have non-zero size."),
        )


def _refuse_complex(op, self):
    if self.dtype.is_complex:
        raise not_implemented_for(op, self.dtype)


def _refuse_input(op, self, *dtypes):
    """The check max/min along a dim and argmax/argmin make before computing."""
    if self.dtype in dtypes:
        kind = "bool" if self.dtype == torch.bool else "complex"
        raise RuntimeError(f"{op}(): does not support {kind} input")


def _converted(array, np_dtype):
    """``array`` in ``np_dtype``, converted as PyTorch converts.

    Complex to real keeps the real part, with PyTorch's warning.
    """
    if array.dtype.kind == "c" and np.dtype(np_dtype).kind != "c":
        warn_once("Casting complex values to real discards the imaginary part", stacklevel=5)
        array = array.real
    return array.astype(np_dtype, copy=False)


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
# Each reduction is a NumPy function on arrays, which ``torch.compile`` also
# runs, and an eager kernel: PyTorch's checks, ``computed_by`` that function.


def _total(op, np_reduce, a, dim, keepdim, out_dtype):
    """``np_reduce`` (np.sum, np.prod) of ``a`` converted to ``out_dtype``'s compute dtype."""
    axes = reduced_axes(op, dim, a.ndim)
    return np_reduce(_converted(a, numpy_compute_dtype(out_dtype)), axis=axes, keepdims=keepdim)


@lowers(aten.sum.dim_IntList)
def sum_dims(a, dim, keepdim=False, *, dtype=None, out_dtype):
    return _total("sum", np.sum, a, dim, keepdim, out_dtype).astype(out_dtype, copy=False)


@lowers(aten.sum.default)
def sum_all(a, *, dtype=None, out_dtype):
    return sum_dims(a, None, out_dtype=out_dtype)


def prod_dim(a, dim, keepdim=False, *, dtype=None, out_dtype):
    return _total("prod", np.prod, a, [dim], keepdim, out_dtype).astype(out_dtype, copy=False)


def prod_all(a, *, dtype=None, out_dtype):
    return _total("prod", np.prod, a, None, False, out_dtype).astype(out_dtype, copy=False)


def _sum_checks(self, *args, dtype=None, **kwargs):
    return _sum_dtype(self, dtype)


implements(aten.sum.dim_IntList, out=aten.sum.IntList_out)(computed_by(sum_dims)(_sum_checks))
implements(aten.sum.default, out=aten.sum.out)(computed_by(sum_all, name="sum")(_sum_checks))
implements(aten.prod.dim_int, out=aten.prod.int_out)(computed_by(prod_dim, name="prod")(_sum_checks))
implements(aten.prod.default, out=aten.prod.out)(computed_by(prod_all, name="prod")(_sum_checks))


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


@lowers(aten.mean.dim)
def mean_dims(a, dim, keepdim=False, *, dtype=None, out_dtype):
    # PyTorch's CPU mean: sum (half in float32), divide, round once; the mean of nothing is 0 / 0 = nan.
    total = _total("mean", np.sum, a, dim, keepdim, out_dtype)
    count = _reduced_count(a.shape, reduced_axes("mean", dim, a.ndim))
    return (total / count).astype(out_dtype, copy=False)


@lowers(aten.mean.default)
def mean_all(a, *, dtype=None, out_dtype):
    return mean_dims(a, None, out_dtype=out_dtype)


def _mean_checks(self, *args, dtype=None, **kwargs):
    return _mean_dtype(self, dtype)


implements(aten.mean.dim, out=aten.mean.out)(computed_by(mean_dims, name="mean")(_mean_checks))
implements(aten.mean.default, out=aten.mean.dtype_out)(computed_by(mean_all, name="mean")(_mean_checks))


# --- max, min and their positions ------------------------------------------


@lowers(aten.amax.default)
def amax(a, dim=(), keepdim=False):
    """The max over ``dim`` (every dim if empty); NaN wins, as in PyTorch."""
    return np.max(a, axis=reduced_axes("amax", dim, a.ndim), keepdims=keepdim)


@lowers(aten.amin.default)
def amin(a, dim=(), keepdim=False):
    """The min over ``dim`` (every dim if empty); NaN wins, as in PyTorch."""
    return np.min(a, axis=reduced_axes("amin", dim, a.ndim), keepdims=keepdim)


def _extreme_checks(op):
    """The checks of a max or min over dims: the dims exist, are not empty, and the input is real."""

    def checks(self, dim=(), keepdim=False):
        reduced_axes(op, dim, self.dim())
        _check_nonempty_reduction(f"{op}()", self, dim)
        _refuse_complex(op, self)

    checks.__name__ = checks.__qualname__ = op
    return checks


def _check_same_dtype_out(out, self, *args, **kwargs):
    check_out_dtype(out, self)


implements(aten.amax.default, out=aten.amax.out, check_out=_check_same_dtype_out)(
    computed_by(amax)(_extreme_checks("amax"))
)
implements(aten.amin.default, out=aten.amin.out, check_out=_check_same_dtype_out)(
    computed_by(amin)(_extreme_checks("amin"))
)
implements(aten.max.default, out=aten.max.unary_out)(computed_by(amax, name="max")(_extreme_checks("max")))
implements(aten.min.default, out=aten.min.unary_out)(computed_by(amin, name="min")(_extreme_checks("min")))


def _extreme_along(op, np_arg, a, dim, keepdim):
    """Values and int64 indices of the max/min along ``dim``: the first on ties, NaN winning."""
    axis = single_axis(op, dim, a.ndim)
    if axis is None:  # a zero-dim tensor is its own extreme, at index 0
        return np.array(a, copy=True), np.zeros((), np.int64)
    indices = np.expand_dims(np_arg(a, axis=axis), axis)
    values = np.take_along_axis(a, indices, axis)
    if not keepdim:
        values, indices = values.squeeze(axis), indices.squeeze(axis)
    return values, indices.astype(np.int64, copy=False)


@lowers(aten.max.dim)
def max_dim(a, dim, keepdim=False):
    return _extreme_along("max", np.argmax, a, dim, keepdim)


@lowers(aten.min.dim)
def min_dim(a, dim, keepdim=False):
    return _extreme_along("min", np.argmin, a, dim, keepdim)


def _extreme_along_checks(op):
    def checks(self, dim, keepdim=False):
        axis = single_axis(op, dim, self.dim())
        _check_nonempty_reduction(f"{op}()", self, [axis])
        _refuse_input(op, self, torch.complex64, torch.complex128)

    checks.__name__ = checks.__qualname__ = f"{op}_dim"
    return checks


implements(aten.max.dim, out=aten.max.dim_max)(computed_by(max_dim)(_extreme_along_checks("max")))
implements(aten.min.dim, out=aten.min.dim_min)(computed_by(min_dim)(_extreme_along_checks("min")))


def _position(op, np_arg, a, dim, keepdim):
    """argmax/argmin: int64 positions along ``dim``, or in the flattened tensor if None."""
    axis = None if dim is None else single_axis(op, dim, a.ndim)
    return np.asarray(np_arg(a, axis=axis, keepdims=keepdim)).astype(np.int64, copy=False)


@lowers(aten.argmax.default)
def argmax(a, dim=None, keepdim=False):
    return _position("argmax", np.argmax, a, dim, keepdim)


@lowers(aten.argmin.default)
def argmin(a, dim=None, keepdim=False):
    return _position("argmin", np.argmin, a, dim, keepdim)


def _position_checks(op):
    def checks(self, dim=None, keepdim=False):
        _refuse_input(op, self, torch.bool, torch.complex64, torch.complex128)
        if dim is None:
            if self.numel() == 0:
                raise IndexError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0.")
        else:
            _check_nonempty_reduction(f"{op}()", self, [single_axis(op, dim, self.dim())])

    checks.__name__ = checks.__qualname__ = op
    return checks


implements(aten.argmax.default, out=aten.argmax.out)(computed_by(argmax)(_position_checks("argmax")))
implements(aten.argmin.default, out=aten.argmin.out)(computed_by(argmin)(_position_checks("argmin")))


# --- sorting, and the k largest or smallest ----------------------------------


def _ascending(a, axis):
    """Positions along ``axis`` that sort ``a`` ascending, NaN last; ties in index order."""
    return np.argsort(a, axis=axis, kind="stable")


def _descending(a, axis):
    """Positions along ``axis`` that sort ``a`` descending, NaN first; ties in index order.

    A stable ascending sort of the reversed ``a``, read backwards: negating
    instead would leave NaN last and overflow the smallest integer."""
    last = a.shape[axis] - 1
    return last - np.flip(_ascending(np.flip(a, axis), axis), axis)


def _topk_axis(dim, ndim):
    """``dim`` as an axis (None for a zero-dim tensor), refused without the op's name, as topk
    and sort do."""
    axis = wrap_dim(dim, ndim)
    return axis if ndim else None


def topk(a, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) values along ``dim`` and their int64 positions, in order:
    PyTorch leaves the order unspecified with ``sorted=False``, so sorted is one valid answer.
    NaN counts as larger than any number, as in PyTorch."""
    axis = _topk_axis(dim, a.ndim)
    if axis is None:  # a zero-dim tensor is its own top 1 (or top 0)
        return np.array(a, copy=True), np.zeros((), np.int64)
    order = _descending(a, axis) if largest else _ascending(a, axis)
    indices = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(a, indices, axis), indices.astype(np.int64, copy=False)


@implements(aten.topk.default, out=aten.topk.values)
@computed_by(topk)
def topk_kernel(self, k, dim=-1, largest=True, sorted=True):
    axis = _topk_axis(dim, self.dim())
    if not 0 <= k <= (1 if axis is None else self.shape[axis]):
        raise RuntimeError("selected index k out of range")
    if self.dtype == torch.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if self.dtype.is_complex:
        raise RuntimeError(" topk does not support complex dtypes on CPU")  # sic: CPU's leading space
    if self.dtype in (torch.uint16, torch.uint32, torch.uint64):
        raise not_implemented_for("topk_cpu", self.dtype)


def _dense_order(shape, strides):
    """The dims from innermost to outermost of dense strides like ``strides`` (PyTorch's
    ``infer_dense_strides``): an insertion sort by stride, then size, a zero stride
    leaving its dim where C order puts it."""
    order = list(range(len(shape) - 1, -1, -1))

    def should_swap(inner, outer):
        if strides[inner] == 0 or strides[outer] == 0:
            return 0
        if strides[inner] != strides[outer]:
            return -1 if strides[inner] < strides[outer] else 1
        return 1 if shape[inner] > shape[outer] else 0

    for index in range(1, len(order)):
        moving = index
        for before in range(index - 1, -1, -1):
            verdict = should_swap(order[before], order[moving])
            if verdict > 0:
                order[before], order[moving] = order[moving], order[before]
                moving = before
            elif verdict < 0:
                break
    return order


def _laid_out_like(a, result):
    """``result`` (``a``'s shape) in dense memory ordered as ``a``'s: sort's outputs take the
    input's strides, made dense, as on CPU."""
    if result.size == 0:
        return result
    outer_first = _dense_order(a.shape, [stride // a.itemsize for stride in a.strides])[::-1]
    laid_out = np.ascontiguousarray(result.transpose(outer_first))
    return laid_out.transpose(np.argsort(outer_first))


def sort(a, *, stable=False, dim=-1, descending=False):
    """``a`` sorted along ``dim`` and the int64 positions it came from, NaN the largest. Always
    stable: with ``stable=False`` PyTorch leaves the order of ties unspecified (CPU's keeps it
    only up to 16 elements), so the stable order is one valid answer."""
    axis = _topk_axis(dim, a.ndim)
    if axis is None:
        return np.array(a, copy=True), np.zeros((), np.int64)
    order = _descending(a, axis) if descending else _ascending(a, axis)
    values = np.take_along_axis(a, order, axis)
    return _laid_out_like(a, values), _laid_out_like(a, order.astype(np.int64, copy=False))


@implements(aten.sort.stable, out=aten.sort.values_stable, name="sort")
@computed_by(sort)
def sort_kernel(self, *, stable=False, dim=-1, descending=False):
    _topk_axis(dim, self.dim())
    if self.dtype.is_complex:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")  # sic: CPU's leading space


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


def _moments(op, a, dim, correction, keepdim, take_sqrt, out_dtypes):
    """(Variance or std, mean) over ``dim``, in double as PyTorch's CPU Welford kernel, rounded once."""
    axes = reduced_axes(op, dim, a.ndim)
    array = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    count = _reduced_count(array.shape, axes)
    dof = count - (1 if correction is None else correction)
    # Too few degrees of freedom (or no elements) divide by zero: inf or nan, as in PyTorch.
    mean = np.sum(array, axis=axes, keepdims=True) / count
    deviation = array - mean
    squares = (deviation * deviation.conj()).real
    spread = np.sum(squares, axis=axes, keepdims=keepdim) / max(dof, 0)
    if take_sqrt:
        spread = np.sqrt(spread)
    mean = mean.reshape(spread.shape)
    return spread.astype(out_dtypes[0], copy=False), mean.astype(out_dtypes[1], copy=False)


@lowers(aten.var.correction)
def var(a, dim=None, *, correction=None, keepdim=False, out_dtype):
    return _moments("var", a, dim, correction, keepdim, False, (out_dtype, a.dtype))[0]


def std(a, dim=None, *, correction=None, keepdim=False, out_dtype):
    return _moments("std", a, dim, correction, keepdim, True, (out_dtype, a.dtype))[0]


@lowers(aten.var_mean.correction)
def var_mean(a, dim=None, *, correction=None, keepdim=False, out_dtype):
    return _moments("var_mean", a, dim, correction, keepdim, False, out_dtype)


def std_mean(a, dim=None, *, correction=None, keepdim=False, out_dtype):
    return _moments("std_mean", a, dim, correction, keepdim, True, out_dtype)


def _moments_checks(op):
    """The checks of a variance or standard deviation (with its mean, for ``*_mean``)."""

    def checks(self, dim=None, *, correction=None, keepdim=False):
        if not is_inexact(self.dtype):
            names = op if op.endswith("_mean") else "std and var"
            raise RuntimeError(f"{names} only support floating point and complex dtypes")
        count = _reduced_count(self.shape, reduced_axes(op, dim, self.dim()))
        dof = count - (1 if correction is None else correction)
        _warn_if_no_degrees_of_freedom(op, dof if self.numel() else dof - count)
        real = self.dtype.to_real()
        return (real, self.dtype) if op.endswith("_mean") else real

    checks.__name__ = checks.__qualname__ = op
    return checks


for _function, _functional, _out in [
    (var, aten.var.correction, aten.var.correction_out),
    (std, aten.std.correction, aten.std.correction_out),
    (var_mean, aten.var_mean.correction, aten.var_mean.correction_out),
    (std_mean, aten.std_mean.correction, aten.std_mean.correction_out),
]:
    implements(_functional, out=_out)(computed_by(_function)(_moments_checks(_function.__name__)))


# --- all, any ---------------------------------------------------------------


def _truth(op, np_reduce, a, dim, keepdim):
    """all/any over ``dim`` (one dim or a list): None reduces every dim, but [] none;
    uint8 stays uint8, as in PyTorch."""
    if isinstance(dim, int):
        dim = [dim]
    if dim is not None and len(dim) == 0:
        verdict = a.astype(bool)
    else:
        verdict = np_reduce(a, axis=reduced_axes(op, dim, a.ndim), keepdims=keepdim)
    return verdict.astype(np.uint8 if a.dtype == np.uint8 else np.bool_, copy=False)


def all_of(a, dim=None, keepdim=False):
    return _truth("all", np.all, a, dim, keepdim)


@lowers(aten.any.dims, aten.any.dim, aten.any.default)
def any_of(a, dim=None, keepdim=False):
    return _truth("any", np.any, a, dim, keepdim)


_all_kernel = unchecked(all_of, "all")
implements(aten.all.dims, out=aten.all.dims_out)(_all_kernel)
implements(aten.all.dim, out=aten.all.out)(_all_kernel)
implements(aten.all.default, out=aten.all.all_out)(_all_kernel)
_any_kernel = unchecked(any_of, "any")
implements(aten.any.dims, out=aten.any.dims_out)(_any_kernel)
implements(aten.any.dim, out=aten.any.out)(_any_kernel)
implements(aten.any.default, out=aten.any.all_out)(_any_kernel)


# --- cumulative sums and products -------------------------------------------


def _scan(op, np_scan, a, dim, out_dtype):
    """cumsum/cumprod along ``dim``: input cast to the result dtype, running value kept wider."""
    axis = single_axis(op, dim, a.ndim)
    array = _converted(a, out_dtype)
    running = to_numpy_dtype(_running_dtype(to_torch_dtype(out_dtype)))
    scanned = np_scan(array, axis=axis, dtype=running)
    return scanned.reshape(array.shape).astype(out_dtype, copy=False)  # a zero-dim input scans flattened


@lowers(aten.cumsum.default)
def cumsum(a, dim, *, dtype=None, out_dtype):
    return _scan("cumsum", np.cumsum, a, dim, out_dtype)


@lowers(aten.cumprod.default)
def cumprod(a, dim, *, dtype=None, out_dtype):
    return _scan("cumprod", np.cumprod, a, dim, out_dtype)


implements(aten.cumsum.default, out=aten.cumsum.out)(computed_by(cumsum)(_sum_checks))
implements(aten.cumprod.default, out=aten.cumprod.out)(computed_by(cumprod)(_sum_checks))


# --- logsumexp and norms -----------------------------------------------------


def logsumexp(a, dim, keepdim=False, *, out_dtype):
    axes = reduced_axes("logsumexp", dim, a.ndim)
    array = a.astype(numpy_compute_dtype(out_dtype), copy=False)
    # Shift by the largest real part so exp cannot overflow; an infinite (or
    # empty, -inf) maximum would make inf - inf = nan, so those shift by 0.
    shift = np.max(array.real, axis=axes, keepdims=True, initial=-np.inf)
    shift = np.where(np.isfinite(shift), shift, 0).astype(array.real.dtype)
    total = np.log(np.sum(np.exp(array - shift), axis=axes, keepdims=True)) + shift  # log(0) = -inf
    return (total if keepdim else np.squeeze(total, axis=axes)).astype(out_dtype, copy=False)


@implements(aten.logsumexp.default, out=aten.logsumexp.out)
@computed_by(logsumexp)
def logsumexp_kernel(self, dim, keepdim=False):
    reduced_axes("logsumexp", dim, self.dim())
    return self.dtype if is_inexact(self.dtype) else torch.get_default_dtype()


def _norm_dtype(self, dtype):
    """The dtype a vector norm computes in: ``dtype`` if asked for, which must not narrow."""
    if dtype is None:
        return self.dtype
    name = "linalg.vector_norm"
    if not is_inexact(dtype):
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got {SCALAR_TYPE_NAMES[dtype]}")
    if self.dtype.is_complex != dtype.is_complex:
        kind = "complex" if self.dtype.is_complex else "real"
        raise RuntimeError(f"{name}: dtype should be {kind} for {kind} inputs, but got {SCALAR_TYPE_NAMES[dtype]}")
    if torch.promote_types(self.dtype, dtype) != dtype:
        raise RuntimeError(
            f"{name}: the dtype of the input ({SCALAR_TYPE_NAMES[self.dtype]}) should be "
            f"convertible without narrowing to the specified dtype ({SCALAR_TYPE_NAMES[dtype]})"
        )
    return dtype


def _check_norm_identity(self, ord, dim):
    """max and min of nothing are undefined, so the inf and negative norms refuse to reduce nothing."""
    if self.numel() == 0 and (float(ord) < 0 or float(ord) == math.inf):
        prefix = f"linalg.vector_norm cannot compute the {ord} norm on"
        _refuse_reducing_nothing(
            self,
            dim,
            RuntimeError(f"{prefix} an empty tensor because the operation does not have an identity"),
            lambda d: RuntimeError(
                f"{prefix} the dimension {d}because this dimension is empty and the operation does not have an identity"
            ),
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


@lowers(aten.linalg_vector_norm.default)
def vector_norm(a, ord=2, dim=None, keepdim=False, *, dtype=None, out_dtype):
    """The ``ord``-norm over ``dim``, computed in ``dtype`` (or ``a``'s), complex if ``a`` is."""
    np_compute = numpy_compute_dtype(out_dtype)
    if a.dtype.kind == "c":
        np_compute = np.result_type(np_compute, np.complex64)
    axes = reduced_axes("linalg.vector_norm", dim, a.ndim)
    magnitude = np.abs(a.astype(np_compute, copy=False))
    return np.asarray(_p_norm(magnitude, float(ord), axes, keepdim)).astype(out_dtype, copy=False)


@implements(aten.linalg_vector_norm.default, out=aten.linalg_vector_norm.out, name="linalg.vector_norm")
@computed_by(vector_norm, name="linalg.vector_norm")
def vector_norm_kernel(self, ord=2, dim=None, keepdim=False, *, dtype=None):
    if not is_inexact(self.dtype):
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. "
            f"Got {SCALAR_TYPE_NAMES[self.dtype]}"
        )
    _check_norm_identity(self, ord, dim)
    computed = _norm_dtype(self, dtype)
    reduced_axes("linalg.vector_norm", dim, self.dim())
    return computed.to_real()


def _check_norm_input(self):
    if not is_inexact(self.dtype):
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. "
            f"Got {SCALAR_TYPE_NAMES[self.dtype]} instead."
        )


@implements(aten.norm.ScalarOpt_dim, out=aten.norm.out)
def norm(self, p, dim, keepdim=False):
    _check_norm_input(self)
    return vector_norm_kernel(self, 2 if p is None else p, dim, keepdim)


@implements(aten.norm.ScalarOpt_dim_dtype, out=aten.norm.dtype_out)
def norm_dtype(self, p, dim, keepdim, *, dtype):
    return vector_norm_kernel(self, 2 if p is None else p, dim, keepdim, dtype=dtype)
