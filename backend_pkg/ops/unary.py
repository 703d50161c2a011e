"""Elementwise functions of one tensor: math, rounding, tests, clamping."""

import math

import numpy as np
import torch
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

from ..tensor import unwrap, wrap
from ._cpu_checks import check_on_cpu
from ._results import write_in_place
from .arithmetic import (
    OUT_OF_SELF_DTYPE,
    DtypeNotImplemented,
    arrays,
    as_result,
    check_convertible,
    elementwise,
    exact_dtype,
    float_dtype,
    is_integral,
    scalar_type_name,
)
from .registry import aten, implements


def unary(name, check_out=None):
    """Register the decorated kernel for ``aten.<name>``, its ``out=`` and its in-place ``<name>_``."""
    packet = getattr(aten, name)
    return elementwise(packet.default, packet.out, getattr(aten, f"{name}_").default, check_out=check_out)


# --- float functions: integers and bools give the default float dtype -------


def _float_function(name, function, *, complex_inputs=True):
    def kernel(self):
        dtype = float_dtype(self.dtype)
        if dtype.is_complex and not complex_inputs:
            raise DtypeNotImplemented(name, dtype)
        (x,) = arrays(name, (self,), dtype)
        return as_result(function(x), dtype)

    kernel.__name__ = name
    return kernel


# NumPy has no erf; math.erf is exact in float64, one Python call per element.
_erf = np.frompyfunc(math.erf, 1, 1)

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

for _name, _function in _FLOAT_FUNCTIONS.items():
    unary(_name)(_float_function(_name, _function))
unary("erf")(_float_function("erf", _erf, complex_inputs=False))


# --- magnitude and sign -----------------------------------------------------


def _check_abs_out(out, self):
    # Complex magnitudes go through a real temporary, which casts into any out.
    if not self.dtype.is_complex:
        OUT_OF_SELF_DTYPE(out, self)


@elementwise(aten.abs.default, aten.abs.out, check_out=_check_abs_out)
def absolute(self):
    if self.dtype == torch.bool:
        raise DtypeNotImplemented("abs", self.dtype)
    # A complex tensor's magnitudes are real, of the same precision.
    return wrap(np.abs(unwrap(self)))


@implements(aten.abs_.default)
def abs_(self):
    if self.dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return write_in_place("abs_", self, absolute(self))


def _real_sign(x):
    if x.dtype == np.bool_:
        return x.copy()
    # Not np.sign: PyTorch's sign of nan is 0.
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


@unary("sign", OUT_OF_SELF_DTYPE)
def sign(self):
    if self.dtype.is_complex:
        raise NotImplementedError(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. "
            "Please use torch.sgn instead."
        )
    return wrap(_real_sign(unwrap(self)))


@unary("sgn", OUT_OF_SELF_DTYPE)
def sgn(self):
    """``sign`` for real tensors; ``z / |z|`` (0 at 0) for complex ones."""
    x = unwrap(self)
    if not self.dtype.is_complex:
        return wrap(_real_sign(x))
    magnitude = np.abs(x)
    return wrap(np.where(magnitude == 0, 0, x / magnitude))


# --- rounding ---------------------------------------------------------------


def _rounding(name, round_to_integer):
    def kernel(self):
        if self.dtype == torch.bool:
            raise DtypeNotImplemented(name, self.dtype)
        if self.dtype.is_complex:
            raise NotImplementedError(f"{name} is not supported for complex inputs")
        x = unwrap(self)
        # Integers are whole already: a copy, in their own dtype.
        return wrap(round_to_integer(x) if self.dtype.is_floating_point else x.copy())

    kernel.__name__ = name
    return kernel


for _name, _function in {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc}.items():
    unary(_name, OUT_OF_SELF_DTYPE)(_rounding(_name, _function))
_round_to_integer = _rounding("round", np.rint)


@elementwise(aten.round.decimals, aten.round.decimals_out, aten.round_.decimals, check_out=OUT_OF_SELF_DTYPE)
@unary("round", OUT_OF_SELF_DTYPE)
def round(self, *, decimals=0):
    """Half to even, as C's ``nearbyint``; ``decimals`` scales by a power of ten first."""
    if decimals == 0:
        if self.dtype.is_complex:
            raise DtypeNotImplemented("round", self.dtype)
        return _round_to_integer(self)
    if not self.dtype.is_floating_point:
        raise DtypeNotImplemented("round", self.dtype)
    (x,) = arrays("round", (self,), self.dtype)
    scale = x.dtype.type(10.0 ** abs(decimals))
    rounded = np.rint(x * scale) / scale if decimals > 0 else np.rint(x / scale) * scale
    return as_result(rounded, self.dtype)


@unary("frac", OUT_OF_SELF_DTYPE)
def frac(self):
    if not self.dtype.is_floating_point:
        raise DtypeNotImplemented("frac", self.dtype)
    x = unwrap(self)
    return wrap(x - np.trunc(x))


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


def _clamp_arrays(self, min, max, dtype):
    """``minimum(maximum(self, min), max)``: with ``min > max`` every element is ``max``."""
    x, *limits = arrays("clamp", [bound for bound in (self, min, max) if bound is not None], dtype)
    if min is not None:
        x = np.maximum(x, limits.pop(0))
    if max is not None:
        x = np.minimum(x, limits.pop(0))
    # NumPy's maximum/minimum propagate nan from either side, as clamp does.
    return as_result(x, dtype)


# A clamp by Python bounds writes only into an out= of its own dtype; by
# tensor bounds (a promoting op), into any out= that holds the result.
_SCALAR_CLAMP_OUT = exact_dtype(_scalar_clamp_dtype)


@elementwise(aten.clamp.default, aten.clamp.out, aten.clamp_.default, check_out=_SCALAR_CLAMP_OUT)
def clamp(self, min=None, max=None):
    """Python bounds are converted to ``self``'s dtype if it is floating; otherwise they promote it."""
    _check_clampable(self, min, max)
    dtype = _scalar_clamp_dtype(self, min, max)
    if dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if dtype == torch.bool:
        raise DtypeNotImplemented("clamp_scalar", dtype)
    for bound in (min, max):
        if bound is not None:
            check_convertible("clamp", bound, dtype)
    return _clamp_arrays(self, min, max, dtype)


@elementwise(aten.clamp.Tensor, aten.clamp.Tensor_out, aten.clamp_.Tensor)
def clamp_by_tensors(self, min=None, max=None):
    _check_clampable(self, min, max)
    return _clamped_by_tensors(self, min, max)


def _clamped_by_tensors(self, min, max):
    # Complex tensors reach no loop here: PyTorch's refusal names the dtype, not clamp.
    dtype = _promoted(self, min, max)
    if dtype.is_complex:
        raise DtypeNotImplemented("clamp", dtype)
    return _clamp_arrays(self, min, max, dtype)


def _one_bound(self, min=None, max=None):
    """clamp_min and clamp_max: tensor bounds as maximum and minimum, Python ones as clamp."""
    bound = min if max is None else max
    if isinstance(bound, torch.Tensor):
        return _clamped_by_tensors(self, min, max)
    if isinstance(bound, complex):
        raise NotImplementedError("clamp is not supported for complex types")
    return clamp(self, min, max)


@elementwise(aten.clamp_min.Tensor, aten.clamp_min.Tensor_out, aten.clamp_min_.Tensor)
@elementwise(aten.clamp_min.default, aten.clamp_min.out, aten.clamp_min_.default, check_out=_SCALAR_CLAMP_OUT)
def clamp_min(self, min):
    return _one_bound(self, min=min)


@elementwise(aten.clamp_max.Tensor, aten.clamp_max.Tensor_out, aten.clamp_max_.Tensor)
@elementwise(aten.clamp_max.default, aten.clamp_max.out, aten.clamp_max_.default, check_out=_SCALAR_CLAMP_OUT)
def clamp_max(self, max):
    return _one_bound(self, max=max)


# relu.out is left to PyTorch's composite, which insists on the result's own dtype.
@elementwise(aten.relu.default, in_place=aten.relu_.default)
def relu(self):
    if self.dtype == torch.bool:
        check_on_cpu(aten.relu.default, self)  # "Boolean inputs not supported for relu"
    return clamp(self, min=0)


# --- tests of values, and logical and bitwise negation ----------------------


def _float_test(name, test):
    """A test that is False everywhere for integers and bools, which hold no nan or inf."""

    def kernel(self):
        x = unwrap(self)
        return wrap(test(x) if x.dtype.kind in "fc" else np.zeros(x.shape, dtype=np.bool_))

    kernel.__name__ = name
    return kernel


def _infinity_test(name, infinity):
    """isposinf/isneginf: real tensors only, and only into bool outputs."""
    test = _float_test(name, lambda x: x == infinity)

    def kernel(self):
        if self.dtype.is_complex:
            raise RuntimeError(f"{name} does not support complex inputs.")
        return test(self)

    def check_out(out, self):
        if out.dtype != torch.bool:
            raise RuntimeError(f"{name} does not support non-boolean outputs.")

    kernel.__name__ = name
    elementwise(getattr(aten, name).default, getattr(aten, name).out, check_out=check_out)(kernel)


# isnan.out and isinf.out are left to PyTorch's composites, which insist on bool.
elementwise(aten.isnan.default)(_float_test("isnan", np.isnan))
elementwise(aten.isinf.default)(_float_test("isinf", np.isinf))
_infinity_test("isposinf", np.inf)
_infinity_test("isneginf", -np.inf)


@unary("logical_not")
def logical_not(self):
    return wrap(np.logical_not(unwrap(self)))


@unary("bitwise_not", OUT_OF_SELF_DTYPE)
def bitwise_not(self):
    if not (is_integral(self.dtype) or self.dtype == torch.bool):
        raise DtypeNotImplemented("bitwise_not", self.dtype)
    # On bools, NumPy's invert is logical negation, as PyTorch's is.
    return wrap(np.invert(unwrap(self)))


def _check_nan_to_num_out(out, self, *args, **kwargs):
    if out.dtype != self.dtype:
        raise RuntimeError(
            f"nan_to_num: dtype of out: {scalar_type_name(out.dtype)} should be same as input: "
            f"{scalar_type_name(self.dtype)}"
        )


@elementwise(
    aten.nan_to_num.default, aten.nan_to_num.out, aten.nan_to_num_.default, check_out=_check_nan_to_num_out
)
def nan_to_num(self, nan=None, posinf=None, neginf=None):
    """nan becomes ``nan`` (0), infinities ``posinf``/``neginf`` (the dtype's extremes).

    Complex tensors are mended part by part, as in PyTorch.
    """
    x = unwrap(self)
    if x.dtype.kind not in "fc":
        return wrap(x.copy())
    return wrap(np.nan_to_num(x, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf))
