"""Elementwise functions of one tensor: math, rounding, tests, clamping."""

import math

import numpy as np
import torch
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

from ._dtype_errors import DtypeNotImplemented, scalar_type_name
from ._operands import computed
from ._cpu_checks import check_on_cpu
from ._results import write_in_place
from .arithmetic import (
    OUT_OF_SELF_DTYPE, check_convertible, elementwise, exact_dtype, float_dtype, is_integral, real_float_dtype,
)
from .registry import aten, computed_by, implements, lowers, unchecked


def unary(name, check_out=None):
    """Register the decorated kernel for ``aten.<name>``, its ``out=`` and its in-place ``<name>_``."""
    packet = getattr(aten, name)
    return elementwise(packet.default, packet.out, getattr(aten, f"{name}_").default, check_out=check_out)


# --- float functions: integers and bools give the default float dtype -------


def _float_function(name, function, *, complex_inputs=True):
    """Register the NumPy function and the eager kernel of a float function; return the former."""

    def numpy_function(a, *, out_dtype):
        (x,) = computed(out_dtype, a)
        return function(x).astype(out_dtype, copy=False)

    def checks(self):
        return float_dtype(self.dtype) if complex_inputs else real_float_dtype(name, self.dtype)

    numpy_function.__name__ = checks.__name__ = name
    unary(name)(computed_by(numpy_function)(checks))
    return numpy_function


# NumPy has no erf; math.erf is exact in float64, one Python call per element.
_erf_of_each = np.frompyfunc(math.erf, 1, 1)


def _erf(x):
    # An array of Python floats, even for a zero-dim x (for which frompyfunc gives the float itself).
    return np.asarray(_erf_of_each(x))

_FLOAT_FUNCTIONS = {
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": np.reciprocal,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
}

FLOAT_FUNCTIONS = {name: _float_function(name, function) for name, function in _FLOAT_FUNCTIONS.items()}
FLOAT_FUNCTIONS["erf"] = _float_function("erf", _erf, complex_inputs=False)
for _name in ("exp", "log", "sqrt", "tanh", "reciprocal", "rsqrt", "sigmoid"):
    lowers(getattr(aten, _name).default)(FLOAT_FUNCTIONS[_name])


# --- magnitude and sign -----------------------------------------------------


def _check_abs_out(out, self):
    # Complex magnitudes go through a real temporary, which casts into any out.
    if not self.dtype.is_complex:
        OUT_OF_SELF_DTYPE(out, self)


@lowers(aten.abs.default)
def absolute(a):
    # A complex tensor's magnitudes are real, of the same precision.
    return np.abs(a)


@elementwise(aten.abs.default, aten.abs.out, check_out=_check_abs_out)
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


@unary("sign", OUT_OF_SELF_DTYPE)
@computed_by(_real_sign, name="sign")
def sign_kernel(self):
    if self.dtype.is_complex:
        raise NotImplementedError(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. "
            "Please use torch.sgn instead."
        )


unary("sgn", OUT_OF_SELF_DTYPE)(unchecked(sgn))


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

    numpy_function.__name__ = checks.__name__ = name
    return numpy_function, checks


for _name, _function in {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc}.items():
    _numpy_function, _checks = _rounding(_name, _function)
    unary(_name, OUT_OF_SELF_DTYPE)(computed_by(_numpy_function)(_checks))
_round_to_integer, _check_round_to_integer = _rounding("round", np.rint)


def round(a, *, decimals=0):
    """Half to even, as C's ``nearbyint``; ``decimals`` scales by a power of ten first."""
    if decimals == 0:
        return _round_to_integer(a)
    (x,) = computed(a.dtype, a)
    scale = x.dtype.type(10.0 ** abs(decimals))
    rounded = np.rint(x * scale) / scale if decimals > 0 else np.rint(x / scale) * scale
    return rounded.astype(a.dtype, copy=False)


@elementwise(aten.round.decimals, aten.round.decimals_out, aten.round_.decimals, check_out=OUT_OF_SELF_DTYPE)
@unary("round", OUT_OF_SELF_DTYPE)
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


@unary("frac", OUT_OF_SELF_DTYPE)
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


# A clamp by Python bounds writes only into an out= of its own dtype; by
# tensor bounds (a promoting op), into any out= that holds the result.
_SCALAR_CLAMP_OUT = exact_dtype(_scalar_clamp_dtype)


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


@elementwise(aten.clamp.default, aten.clamp.out, aten.clamp_.default, check_out=_SCALAR_CLAMP_OUT)
@computed_by(clamp)
def clamp_kernel(self, min=None, max=None):
    return clamp_dtype(self, min, max)


@elementwise(aten.clamp.Tensor, aten.clamp.Tensor_out, aten.clamp_.Tensor)
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


@elementwise(aten.clamp_min.Tensor, aten.clamp_min.Tensor_out, aten.clamp_min_.Tensor)
@elementwise(aten.clamp_min.default, aten.clamp_min.out, aten.clamp_min_.default, check_out=_SCALAR_CLAMP_OUT)
@computed_by(clamp)
def clamp_min_kernel(self, min):
    return _one_bound_dtype(self, min=min)


@elementwise(aten.clamp_max.Tensor, aten.clamp_max.Tensor_out, aten.clamp_max_.Tensor)
@elementwise(aten.clamp_max.default, aten.clamp_max.out, aten.clamp_max_.default, check_out=_SCALAR_CLAMP_OUT)
@computed_by(clamp_max, name="clamp")
def clamp_max_kernel(self, max):
    return _one_bound_dtype(self, max=max)


@lowers(aten.relu.default)
def relu(a, *, out_dtype):
    return clamp(a, 0, out_dtype=out_dtype)


# relu.out is left to PyTorch's composite, which insists on the result's own dtype.
@elementwise(aten.relu.default, in_place=aten.relu_.default)
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

    numpy_function.__name__ = name
    return numpy_function


def _infinity_test(name, infinity):
    """isposinf/isneginf: real tensors only, and only into bool outputs."""

    def checks(self):
        if self.dtype.is_complex:
            raise RuntimeError(f"{name} does not support complex inputs.")

    def check_out(out, self):
        if out.dtype != torch.bool:
            raise RuntimeError(f"{name} does not support non-boolean outputs.")

    checks.__name__ = name
    kernel = computed_by(_float_test(name, lambda x: x == infinity))(checks)
    elementwise(getattr(aten, name).default, getattr(aten, name).out, check_out=check_out)(kernel)


# isnan.out and isinf.out are left to PyTorch's composites, which insist on bool.
elementwise(aten.isnan.default)(unchecked(_float_test("isnan", np.isnan)))
elementwise(aten.isinf.default)(unchecked(_float_test("isinf", np.isinf)))
_infinity_test("isposinf", np.inf)
_infinity_test("isneginf", -np.inf)


@lowers(aten.logical_not.default)
def logical_not(a):
    return np.logical_not(a)


unary("logical_not")(unchecked(logical_not))


def bitwise_not(a):
    # On bools, NumPy's invert is logical negation, as PyTorch's is.
    return np.invert(a)


@unary("bitwise_not", OUT_OF_SELF_DTYPE)
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


elementwise(
    aten.nan_to_num.default, aten.nan_to_num.out, aten.nan_to_num_.default, check_out=_check_nan_to_num_out
)(unchecked(nan_to_num))
