"""Elementwise functions of one tensor: math, rounding, tests, clamping."""

import math

import numpy as np
import torch
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

from ._cpu_checks import check_on_cpu
from ._dtype_errors import DtypeNotImplemented, scalar_type_name
from ._operands import computed
from ._results import out_of_self_dtype, write_in_place
from .arithmetic import check_convertible, float_dtype, is_integral, real_float_dtype
from .registry import aten, computed_by, implements, lowers, unchecked

# --- float functions: integers and bools give the default float dtype -------


def _float_function(name, function, *, complex_inputs=True):
    """The NumPy function of a float function, named ``name``, and its eager kernel."""

    def numpy_function(a, *, out_dtype):
        (x,) = computed(out_dtype, a)
        return function(x).astype(out_dtype, copy=False)

    def checks(self):
        return float_dtype(self.dtype) if complex_inputs else real_float_dtype(name, self.dtype)

    numpy_function.__name__ = numpy_function.__qualname__ = name
    checks.__name__ = checks.__qualname__ = f"{name}_kernel"
    return numpy_function, computed_by(numpy_function)(checks)


# NumPy has no erf; math.erf is exact in float64, one Python call per element:
# fine for the sizes npy tensors are for.
_erf_of_each = np.frompyfunc(math.erf, 1, 1)


def exact_erf(x):
    """erf of each element of ``x``, in float64 (a zero-dim array for a zero-dim ``x``,
    for which frompyfunc gives the float itself)."""
    return np.asarray(_erf_of_each(x), dtype=np.float64)


# Each float function: its math, then its overloads written out (the functional one, its out= and its
# in-place overloads), and whether ``torch.compile(backend="npy")`` computes it with the same NumPy function.
_LOWERED, _EAGER_ONLY = True, False
_FLOAT_FUNCTION_OVERLOADS = [
    (np.exp, aten.exp.default, aten.exp.out, aten.exp_.default, _LOWERED),
    (np.exp2, aten.exp2.default, aten.exp2.out, aten.exp2_.default, _EAGER_ONLY),
    (np.expm1, aten.expm1.default, aten.expm1.out, aten.expm1_.default, _EAGER_ONLY),
    (np.log, aten.log.default, aten.log.out, aten.log_.default, _LOWERED),
    (np.log2, aten.log2.default, aten.log2.out, aten.log2_.default, _EAGER_ONLY),
    (np.log10, aten.log10.default, aten.log10.out, aten.log10_.default, _EAGER_ONLY),
    (np.log1p, aten.log1p.default, aten.log1p.out, aten.log1p_.default, _EAGER_ONLY),
    (np.sqrt, aten.sqrt.default, aten.sqrt.out, aten.sqrt_.default, _LOWERED),
    (lambda x: 1 / np.sqrt(x), aten.rsqrt.default, aten.rsqrt.out, aten.rsqrt_.default, _LOWERED),
    (np.reciprocal, aten.reciprocal.default, aten.reciprocal.out, aten.reciprocal_.default, _LOWERED),
    (np.sin, aten.sin.default, aten.sin.out, aten.sin_.default, _EAGER_ONLY),
    (np.cos, aten.cos.default, aten.cos.out, aten.cos_.default, _EAGER_ONLY),
    (np.tan, aten.tan.default, aten.tan.out, aten.tan_.default, _EAGER_ONLY),
    (np.arcsin, aten.asin.default, aten.asin.out, aten.asin_.default, _EAGER_ONLY),
    (np.arccos, aten.acos.default, aten.acos.out, aten.acos_.default, _EAGER_ONLY),
    (np.arctan, aten.atan.default, aten.atan.out, aten.atan_.default, _EAGER_ONLY),
    (np.sinh, aten.sinh.default, aten.sinh.out, aten.sinh_.default, _EAGER_ONLY),
    (np.cosh, aten.cosh.default, aten.cosh.out, aten.cosh_.default, _EAGER_ONLY),
    (np.tanh, aten.tanh.default, aten.tanh.out, aten.tanh_.default, _LOWERED),
    (lambda x: 1 / (1 + np.exp(-x)), aten.sigmoid.default, aten.sigmoid.out, aten.sigmoid_.default, _LOWERED),
]
FLOAT_FUNCTIONS = {}
for _math, _op, _out, _in_place, _lowered in _FLOAT_FUNCTION_OVERLOADS:
    FLOAT_FUNCTIONS[_op._opname], _kernel = _float_function(_op._opname, _math)
    implements(_op, out=_out, in_place=_in_place, pointwise=True)(_kernel)
    if _lowered:
        lowers(_op)(FLOAT_FUNCTIONS[_op._opname])
# CPU's erf has no complex loop.
FLOAT_FUNCTIONS["erf"], _erf_kernel = _float_function("erf", exact_erf, complex_inputs=False)
implements(aten.erf.default, out=aten.erf.out, in_place=aten.erf_.default, pointwise=True)(_erf_kernel)


# --- magnitude and sign -----------------------------------------------------


def _check_abs_out(out, self):
    # Complex magnitudes go through a real temporary, which casts into any out.
    if not self.dtype.is_complex:
        out_of_self_dtype(out, self)


@lowers(aten.abs.default)
def absolute(a):
    # A complex tensor's magnitudes are real, of the same precision.
    return np.abs(a)


@implements(aten.abs.default, out=aten.abs.out, check_out=_check_abs_out, pointwise=True)
@computed_by(absolute, name="abs")
def absolute_kernel(self):
    if self.dtype == torch.bool:
        raise DtypeNotImplemented("abs", self.dtype)


@implements(aten.abs_.default)
def abs_(self):
    if self.dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return write_in_place("abs_", self, absolute_kernel(self))


def _real_sign(x):
    if x.dtype == np.bool_:
        return x.copy()
    # Not np.sign: PyTorch's sign of nan is 0.
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def sgn(a):
    """``sign`` for real arrays; ``z / |z|`` (0 at 0) for complex ones."""
    if a.dtype.kind != "c":
        return _real_sign(a)
    magnitude = np.abs(a)
    return np.where(magnitude == 0, 0, a / magnitude)


@implements(aten.sign.default, out=aten.sign.out, in_place=aten.sign_.default, pointwise="exact_dtype")
@computed_by(_real_sign, name="sign")
def sign_kernel(self):
    if self.dtype.is_complex:
        raise NotImplementedError(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead."
        )


implements(aten.sgn.default, out=aten.sgn.out, in_place=aten.sgn_.default, pointwise="exact_dtype")(unchecked(sgn))


# --- rounding ---------------------------------------------------------------


def _rounding(name, round_to_integer):
    """The NumPy function of a rounding to integers, and its eager kernel."""

    def numpy_function(a):
        # Integers are whole already: a copy, in their own dtype.
        return round_to_integer(a) if a.dtype.kind == "f" else a.copy()

    def checks(self):
        if self.dtype == torch.bool:
            raise DtypeNotImplemented(name, self.dtype)
        if self.dtype.is_complex:
            raise NotImplementedError(f"{name} is not supported for complex inputs")

    numpy_function.__name__ = numpy_function.__qualname__ = name
    checks.__name__ = checks.__qualname__ = f"{name}_kernel"
    return numpy_function, checks


def _rounding_kernel(name, round_to_integer):
    numpy_function, checks = _rounding(name, round_to_integer)
    return computed_by(numpy_function)(checks)


for _name, _op, _out, _in_place, _round_to_integer in (
    ("floor", aten.floor.default, aten.floor.out, aten.floor_.default, np.floor),
    ("ceil", aten.ceil.default, aten.ceil.out, aten.ceil_.default, np.ceil),
    ("trunc", aten.trunc.default, aten.trunc.out, aten.trunc_.default, np.trunc),
):
    implements(_op, out=_out, in_place=_in_place, pointwise="exact_dtype")(_rounding_kernel(_name, _round_to_integer))
_round_to_integer, _check_round_to_integer = _rounding("round", np.rint)


def round(a, *, decimals=0):
    """Half to even, as C's ``nearbyint``; ``decimals`` scales by a power of ten first."""
    if decimals == 0:
        return _round_to_integer(a)
    (x,) = computed(a.dtype, a)
    scale = x.dtype.type(10.0 ** abs(decimals))
    rounded = np.rint(x * scale) / scale if decimals > 0 else np.rint(x / scale) * scale
    return rounded.astype(a.dtype, copy=False)


@implements(aten.round.decimals, out=aten.round.decimals_out, in_place=aten.round_.decimals, pointwise="exact_dtype")
@implements(aten.round.default, out=aten.round.out, in_place=aten.round_.default, pointwise="exact_dtype")
@computed_by(round)
def round_kernel(self, *, decimals=0):
    if decimals == 0:
        if self.dtype.is_complex:
            raise DtypeNotImplemented("round", self.dtype)
        _check_round_to_integer(self)
    elif not self.dtype.is_floating_point:
        raise DtypeNotImplemented("round", self.dtype)


def frac(a):
    return a - np.trunc(a)


@implements(aten.frac.default, out=aten.frac.out, in_place=aten.frac_.default, pointwise="exact_dtype")
@computed_by(frac)
def frac_kernel(self):
    if not self.dtype.is_floating_point:
        raise DtypeNotImplemented("frac", self.dtype)


# --- clamping ---------------------------------------------------------------


def _scalar_clamp_dtype(self, min=None, max=None):
    """The dtype of a clamp by Python bounds: a floating ``self`` keeps its own."""
    if self.dtype.is_floating_point:
        return self.dtype
    return _promoted(self, min, max)


def _promoted(self, *bounds):
    # torch.result_type takes two operands; self and both bounds promote together.
    present = [bound for bound in bounds if bound is not None]
    _, dtype = elementwise_dtypes(self, *present, type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)
    return dtype


def _check_clampable(self, min, max):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if self.dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")


@lowers(aten.clamp.default)
def clamp(a, min=None, max=None, *, out_dtype):
    """``minimum(maximum(a, min), max)``: with ``min > max`` every element is ``max``."""
    x, *limits = computed(out_dtype, *(value for value in (a, min, max) if value is not None))
    if min is not None:
        x = np.maximum(x, limits.pop(0))
    if max is not None:
        x = np.minimum(x, limits.pop(0))
    # NumPy's maximum/minimum propagate nan from either side, as clamp does.
    return x.astype(out_dtype, copy=False)


def clamp_max(a, max, *, out_dtype):
    return clamp(a, None, max, out_dtype=out_dtype)


def clamp_dtype(self, min=None, max=None):
    """Python bounds are converted to ``self``'s dtype if it is floating; otherwise they promote it."""
    _check_clampable(self, min, max)
    dtype = _scalar_clamp_dtype(self, min, max)
    if dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if dtype == torch.bool:
        raise DtypeNotImplemented("clamp_scalar", dtype)
    for bound in (min, max):
        if bound is not None:
            check_convertible(bound, dtype)
    return dtype


def _tensor_clamp_dtype(self, min, max):
    # Complex tensors reach no loop here: PyTorch's refusal names the dtype, not clamp.
    dtype = _promoted(self, min, max)
    if dtype.is_complex:
        raise DtypeNotImplemented("clamp", dtype)
    return dtype


# A clamp by Python bounds writes only into an out= of its own dtype; by
# tensor bounds (a promoting op), into any out= that holds the result.
@implements(aten.clamp.default, out=aten.clamp.out, in_place=aten.clamp_.default, pointwise="exact_dtype")
@computed_by(clamp)
def clamp_kernel(self, min=None, max=None):
    return clamp_dtype(self, min, max)


@implements(aten.clamp.Tensor, out=aten.clamp.Tensor_out, in_place=aten.clamp_.Tensor, pointwise=True)
@computed_by(clamp)
def clamp_by_tensors(self, min=None, max=None):
    _check_clampable(self, min, max)
    return _tensor_clamp_dtype(self, min, max)


def _one_bound_dtype(self, min=None, max=None):
    """clamp_min and clamp_max: tensor bounds as maximum and minimum, Python ones as clamp."""
    bound = min if max is None else max
    if isinstance(bound, torch.Tensor):
        return _tensor_clamp_dtype(self, min, max)
    if isinstance(bound, complex):
        raise NotImplementedError("clamp is not supported for complex types")
    return clamp_dtype(self, min, max)


@implements(aten.clamp_min.Tensor, out=aten.clamp_min.Tensor_out, in_place=aten.clamp_min_.Tensor, pointwise=True)
@implements(aten.clamp_min.default, out=aten.clamp_min.out, in_place=aten.clamp_min_.default, pointwise="exact_dtype")
@computed_by(clamp)
def clamp_min_kernel(self, min):
    return _one_bound_dtype(self, min=min)


@implements(aten.clamp_max.Tensor, out=aten.clamp_max.Tensor_out, in_place=aten.clamp_max_.Tensor, pointwise=True)
@implements(aten.clamp_max.default, out=aten.clamp_max.out, in_place=aten.clamp_max_.default, pointwise="exact_dtype")
@computed_by(clamp_max, name="clamp")
def clamp_max_kernel(self, max):
    return _one_bound_dtype(self, max=max)


@lowers(aten.relu.default)
def relu(a, *, out_dtype):
    return clamp(a, 0, out_dtype=out_dtype)


# relu.out is left to PyTorch's composite, which insists on the result's own dtype.
@implements(aten.relu.default, in_place=aten.relu_.default, pointwise=True)
@computed_by(relu)
def relu_kernel(self):
    if self.dtype == torch.bool:
        check_on_cpu(aten.relu.default, self)  # "Boolean inputs not supported for relu"
    if self.dtype.is_floating_point:
        return self.dtype  # clamp's checks cannot refuse a floating tensor and 0
    return clamp_dtype(self, min=0)


# --- tests of values, and logical and bitwise negation ----------------------


def _float_test(name, test):
    """A test that is False everywhere for integers and bools, which hold no nan or inf."""

    def numpy_function(a):
        return test(a) if a.dtype.kind in "fc" else np.zeros(a.shape, dtype=np.bool_)

    numpy_function.__name__ = numpy_function.__qualname__ = name
    return numpy_function


def _infinity_test(name, infinity):
    """isposinf/isneginf: real tensors only, and only into bool outputs: the kernel and its ``check_out``."""

    def checks(self):
        if self.dtype.is_complex:
            raise RuntimeError(f"{name} does not support complex inputs.")

    def check_out(out, self):
        if out.dtype != torch.bool:
            raise RuntimeError(f"{name} does not support non-boolean outputs.")

    checks.__name__ = checks.__qualname__ = f"{name}_kernel"
    return computed_by(_float_test(name, lambda x: x == infinity))(checks), check_out


# isnan.out and isinf.out are left to PyTorch's composites, which insist on bool.
implements(aten.isnan.default, pointwise=True)(unchecked(_float_test("isnan", np.isnan)))
implements(aten.isinf.default, pointwise=True)(unchecked(_float_test("isinf", np.isinf)))
_isposinf_kernel, _check_isposinf_out = _infinity_test("isposinf", np.inf)
implements(aten.isposinf.default, out=aten.isposinf.out, check_out=_check_isposinf_out, pointwise=True)(
    _isposinf_kernel
)
_isneginf_kernel, _check_isneginf_out = _infinity_test("isneginf", -np.inf)
implements(aten.isneginf.default, out=aten.isneginf.out, check_out=_check_isneginf_out, pointwise=True)(
    _isneginf_kernel
)


@lowers(aten.logical_not.default)
def logical_not(a):
    return np.logical_not(a)


implements(aten.logical_not.default, out=aten.logical_not.out, in_place=aten.logical_not_.default, pointwise=True)(
    unchecked(logical_not)
)


def bitwise_not(a):
    # On bools, NumPy's invert is logical negation, as PyTorch's is.
    return np.invert(a)


@implements(
    aten.bitwise_not.default, out=aten.bitwise_not.out, in_place=aten.bitwise_not_.default, pointwise="exact_dtype"
)
@computed_by(bitwise_not)
def bitwise_not_kernel(self):
    if not (is_integral(self.dtype) or self.dtype == torch.bool):
        raise DtypeNotImplemented("bitwise_not", self.dtype)


def _check_nan_to_num_out(out, self, *args, **kwargs):
    if out.dtype != self.dtype:
        raise RuntimeError(
            f"nan_to_num: dtype of out: {scalar_type_name(out.dtype)} should be same as input: "
            f"{scalar_type_name(self.dtype)}"
        )


def nan_to_num(a, nan=None, posinf=None, neginf=None):
    """nan becomes ``nan`` (0), infinities ``posinf``/``neginf`` (the dtype's extremes).

    Complex arrays are mended part by part, as in PyTorch.
    """
    if a.dtype.kind not in "fc":
        return a.copy()
    return np.nan_to_num(a, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)


implements(
    aten.nan_to_num.default,
    out=aten.nan_to_num.out,
    in_place=aten.nan_to_num_.default,
    check_out=_check_nan_to_num_out,
    pointwise=True,
)(unchecked(nan_to_num))
