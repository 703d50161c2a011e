"""Elementwise arithmetic, with PyTorch's type promotion and broadcasting.

The dtype rules before the kernels serve every elementwise family
(:mod:`.unary`, :mod:`.comparison`); each kernel computes a fresh result, and
``@implements(..., pointwise=True)`` registers it for an op's functional
overload together with the ``out=`` and in-place overloads that store that
result.
"""

import math

import numpy as np
import torch

from ..dtypes import CPP_SCALAR_NAMES
from ._cpu_checks import check_on_cpu
from ._dtype_errors import DtypeNotImplemented
from ._operands import computed, numpy_compute_dtype
from .registry import aten, computed_by, implements, lowers


def float_dtype(dtype):
    """The dtype a float op gives: integers and bools give the default float dtype."""
    return dtype if dtype.is_floating_point or dtype.is_complex else torch.get_default_dtype()


def real_float_dtype(kernel, dtype):
    """The dtype a float op of real numbers gives (``atan2``, ``xlogy``, ``logit``): ``float_dtype``,
    complex refused as CPU's kernel refuses it, after ``out=`` and in-place have checked
    the cast (:class:`DtypeNotImplemented`)."""
    dtype = float_dtype(dtype)
    if dtype.is_complex:
        raise DtypeNotImplemented(kernel, dtype)
    return dtype


def is_integral(dtype):
    return not (dtype.is_floating_point or dtype.is_complex or dtype == torch.bool)


def check_convertible(value, dtype):
    """Refuse a Python number where C++'s checked conversion to ``dtype`` does (``Scalar::to<T>``),
    in its words, which name the C++ type and no op."""
    if _overflows(value, dtype):
        raise RuntimeError(f"value cannot be converted to type {CPP_SCALAR_NAMES[dtype]} without overflow")


def _truncates_floats_into_range():
    """Whether this torch converts a float to an integral type when its truncation fits: torch 2.14
    fills an int8 tensor with 127.5 (as 127) where 2.13 refused any float above 127 (c10's
    ``overflows``, c10/util/overflows.h, which ``checked_convert`` calls). Below the range, both refuse."""
    try:
        torch.zeros((), dtype=torch.int8).fill_(127.5)
    except RuntimeError:
        return False
    return True


_TRUNCATES_FLOATS_INTO_RANGE = _truncates_floats_into_range()


def _overflows(value, dtype):
    """c10's ``overflows``: out of ``dtype``'s range; unsigned types also take ``-max..-1`` (wrapping)."""
    if dtype == torch.bool or isinstance(value, bool):
        return False
    if isinstance(value, complex):
        if not dtype.is_complex and value.imag != 0:
            return True
        parts = (value.real, value.imag) if dtype.is_complex else (value.real,)
        return any(_overflows(part, dtype) for part in parts)
    if dtype.is_floating_point or dtype.is_complex:
        return math.isfinite(value) and abs(value) > torch.finfo(dtype).max
    limits = torch.iinfo(dtype)
    if isinstance(value, float):
        if _TRUNCATES_FLOATS_INTO_RANGE:
            return not limits.min <= value < limits.max + 1  # nan and infinities included
        return not limits.min <= value <= limits.max
    lowest = -limits.max if limits.min == 0 else limits.min
    return not lowest <= value <= limits.max


def _is_bool(value):
    return isinstance(value, bool) or getattr(value, "dtype", None) == torch.bool


# --- add, sub, mul, neg -------------------------------------------------------
# Each op is a NumPy function on arrays (registered with ``lowers`` where the
# compiler uses it) and an eager kernel: PyTorch's checks, which return the
# dtype the function computes, ``computed_by`` that function.


def _scaled(combine, a, b, alpha, out_dtype):
    """``combine(a, alpha * b)`` computed in ``out_dtype``'s compute dtype."""
    x, y = computed(out_dtype, a, b)
    # PyTorch scales complex operands even by 1: inf * (1+0j) has a nan imaginary part.
    if alpha != 1 or x.dtype.kind == "c":
        (scale,) = computed(out_dtype, alpha)
        y = y * scale
    return combine(x, y).astype(out_dtype, copy=False)


def check_alpha(dtype, alpha):
    """PyTorch's checks of an ``alpha`` Scalar against the result dtype: its type, then its conversion
    to that dtype, which CPU's kernel makes checked (``Scalar::to``): ``alpha=1e39`` is refused for float32."""
    if isinstance(alpha, bool) and dtype != torch.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if not (dtype.is_floating_point or dtype.is_complex) and not isinstance(alpha, int):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if not dtype.is_complex and isinstance(alpha, complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")
    if alpha != 1:
        check_convertible(alpha, dtype)


@lowers(aten.add.Tensor, aten.add.Scalar)
def add(a, b, alpha=1, *, out_dtype):
    return _scaled(np.add, a, b, alpha, out_dtype)


@lowers(aten.sub.Tensor, aten.sub.Scalar)
def sub(a, b, alpha=1, *, out_dtype):
    return _scaled(np.subtract, a, b, alpha, out_dtype)


@implements(aten.add.Tensor, out=aten.add.out, in_place=aten.add_.Tensor, same_dtype=np.add, pointwise=True)
@computed_by(add)
def add_kernel(self, other, *, alpha=1):
    dtype = torch.result_type(self, other)
    check_alpha(dtype, alpha)
    return dtype


@implements(aten.sub.Tensor, out=aten.sub.out, in_place=aten.sub_.Tensor, same_dtype=np.subtract, pointwise=True)
@computed_by(sub)
def sub_kernel(self, other, *, alpha=1):
    if _is_bool(self) or _is_bool(other):
        # "Subtraction, the `-` operator, with a bool tensor is not supported..."
        check_on_cpu(aten.sub.Tensor, *(torch.as_tensor(value) for value in (self, other)))
    dtype = torch.result_type(self, other)
    check_alpha(dtype, alpha)
    return dtype


# rsub's out= overloads are left to PyTorch's composites, which insist on the result's own dtype.
@implements(aten.rsub.Scalar, pointwise=True)
@implements(aten.rsub.Tensor, pointwise=True)
def rsub(self, other, alpha=1):
    return sub_kernel(other, self, alpha=alpha)


@lowers(aten.neg.default)
def neg(a):
    return np.negative(a)


@implements(aten.neg.default, out=aten.neg.out, in_place=aten.neg_.default, pointwise="exact_dtype")
@computed_by(neg)
def neg_kernel(self):
    if self.dtype == torch.bool:
        check_on_cpu(aten.neg.default, self)  # "Negation, the `-` operator, on a bool tensor is not..."
    return self.dtype


def _exact_scalar(out_dtype, a, b):
    """``computed``, except that a one-element ``b`` is not rounded to a half precision ``out_dtype``.

    PyTorch's mul and div read such a divisor or factor at float32 precision.
    """
    x, y = computed(out_dtype, a, b)
    np_compute = numpy_compute_dtype(out_dtype)
    if np_compute != out_dtype and np.size(b) == 1:
        (y,) = computed(np_compute, b)
    return x, y


@lowers(aten.mul.Tensor, aten.mul.Scalar)
def mul(a, b, *, out_dtype):
    x, y = _exact_scalar(out_dtype, a, b)
    return (x * y).astype(out_dtype, copy=False)


@implements(aten.mul.Tensor, out=aten.mul.out, in_place=aten.mul_.Tensor, same_dtype=np.multiply, pointwise=True)
@computed_by(mul)
def mul_kernel(self, other):
    return torch.result_type(self, other)


# --- division ---------------------------------------------------------------


def _truncated_quotient(a, b):
    if a.dtype.kind == "f":
        return np.trunc(a / b)
    floor = a // b
    # Floor and truncation differ for inexact negative quotients only.
    return np.where((floor < 0) & (floor * b != a), floor + 1, floor)


def _divided(combine, a, b, out_dtype, *, exact_scalar=False):
    """A division-like op of real numbers, where integer division by zero is an error."""
    x, y = _exact_scalar(out_dtype, a, b) if exact_scalar else computed(out_dtype, a, b)
    if x.dtype.kind in "iu" and not y.all():
        raise RuntimeError("ZeroDivisionError")
    return combine(x, y).astype(out_dtype, copy=False)


_ROUNDED_QUOTIENTS = {"trunc": _truncated_quotient, "floor": np.floor_divide}


@lowers(aten.div.Tensor, aten.div.Scalar, aten.true_divide.Tensor)
def div(a, b, *, rounding_mode=None, out_dtype):
    if rounding_mode is None:
        x, y = _exact_scalar(out_dtype, a, b)
        return (x / y).astype(out_dtype, copy=False)
    return _divided(_ROUNDED_QUOTIENTS[rounding_mode], a, b, out_dtype, exact_scalar=True)


def _real_division_dtype(kernel, self, other):
    """A division-like op's dtype: real numbers only."""
    dtype = torch.result_type(self, other)
    if dtype == torch.bool or dtype.is_complex:
        raise DtypeNotImplemented(kernel, dtype)
    return dtype


@implements(aten.div.Scalar_mode, out=aten.div.Scalar_mode_out, in_place=aten.div_.Scalar_mode, pointwise=True)
@implements(aten.div.Tensor_mode, out=aten.div.out_mode, in_place=aten.div_.Tensor_mode, pointwise=True)
@implements(aten.div.Scalar, out=aten.div.Scalar_out, in_place=aten.div_.Scalar, pointwise=True)
@implements(aten.div.Tensor, out=aten.div.out, in_place=aten.div_.Tensor, pointwise=True)
@computed_by(div)
def div_kernel(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return float_dtype(torch.result_type(self, other))
    if rounding_mode in _ROUNDED_QUOTIENTS:
        return _real_division_dtype(f"div_{rounding_mode}", self, other)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")


@implements(
    aten.floor_divide.Scalar, out=aten.floor_divide.Scalar_out, in_place=aten.floor_divide_.Scalar, pointwise=True
)
@implements(aten.floor_divide.default, out=aten.floor_divide.out, in_place=aten.floor_divide_.Tensor, pointwise=True)
def floor_divide(self, other):
    """Python's ``//``."""
    return div_kernel(self, other, rounding_mode="floor")


def remainder(a, b, *, out_dtype):
    """The remainder with the divisor's sign, as Python's ``%`` (NumPy's ``remainder``)."""
    return _divided(np.remainder, a, b, out_dtype)


def fmod(a, b, *, out_dtype):
    """The remainder with the dividend's sign, as C's ``fmod``."""
    return _divided(np.fmod, a, b, out_dtype)


@implements(aten.remainder.Scalar_Tensor, out=aten.remainder.Scalar_Tensor_out, pointwise=True)
@implements(aten.remainder.Scalar, out=aten.remainder.Scalar_out, in_place=aten.remainder_.Scalar, pointwise=True)
@implements(aten.remainder.Tensor, out=aten.remainder.Tensor_out, in_place=aten.remainder_.Tensor, pointwise=True)
@computed_by(remainder)
def remainder_kernel(self, other):
    return _real_division_dtype("remainder", self, other)


@implements(aten.fmod.Scalar, out=aten.fmod.Scalar_out, in_place=aten.fmod_.Scalar, pointwise=True)
@implements(aten.fmod.Tensor, out=aten.fmod.Tensor_out, in_place=aten.fmod_.Tensor, pointwise=True)
@computed_by(fmod)
def fmod_kernel(self, other):
    return _real_division_dtype("fmod", self, other)


# --- powers, extrema, atan2 -------------------------------------------------


def _integer_power(a, b):
    """PyTorch's integer powers: a negative exponent gives 0 unless the base is 1 or -1.

    NumPy refuses negative integer exponents. ``b % 2`` keeps their parity,
    which is all ``(-1) ** b`` depends on.
    """
    negative = b < 0
    powers = np.power(a, np.where(negative, b % 2, b))
    return np.where(negative & (a != 1) & (a != -1), 0, powers)


@lowers(aten.pow.Tensor_Scalar, aten.pow.Tensor_Tensor, aten.pow.Scalar)
def pow(a, b, *, out_dtype):
    if isinstance(b, (int, float, complex)):  # a Python exponent: PyTorch's shortcuts for 0 and 1
        if b == 0:
            return np.ones(np.shape(a), out_dtype)
        if b == 1:
            return np.array(a, dtype=out_dtype)
    x, y = computed(out_dtype, a, b)
    return (_integer_power(x, y) if x.dtype.kind in "iu" else np.power(x, y)).astype(out_dtype, copy=False)


def _pow_dtype(self, exponent):
    dtype = torch.result_type(self, exponent)
    if dtype == torch.bool:
        raise DtypeNotImplemented("pow", dtype)
    return dtype


@implements(aten.pow.Scalar, out=aten.pow.Scalar_out, pointwise=True)
@implements(aten.pow.Tensor_Tensor, out=aten.pow.Tensor_Tensor_out, in_place=aten.pow_.Tensor, pointwise=True)
@computed_by(pow)
def pow_kernel(self, exponent):
    return _pow_dtype(self, exponent)


@implements(aten.pow.Tensor_Scalar, out=aten.pow.Tensor_Scalar_out, in_place=aten.pow_.Scalar, pointwise=True)
@computed_by(pow)
def pow_scalar_exponent(self, exponent):
    """``pow`` with a Python exponent, with PyTorch's checks and shortcuts for it."""
    dtype = torch.result_type(self, exponent)
    if isinstance(exponent, int) and exponent < 0 and (is_integral(self.dtype) or self.dtype == torch.bool):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    # Checked before the dtype is: bool ** True is allowed.
    if exponent in (0, 1):
        return dtype
    check_convertible(exponent, dtype)
    return _pow_dtype(self, exponent)


def promoted_binary_op(name, combine, refuse):
    """The eager kernel of a binary op ``name`` that ``combine`` computes in its operands' promoted dtype,
    by a NumPy function of that name (the kernel's ``numpy_function``); ``refuse(dtype)`` raises CPU's
    error for a promoted dtype CPU's kernel has no loop for."""

    def numpy_function(a, b, *, out_dtype):
        x, y = computed(out_dtype, a, b)
        return combine(x, y).astype(out_dtype, copy=False)

    def checks(self, other):
        dtype = torch.result_type(self, other)
        refuse(dtype)
        return dtype

    numpy_function.__name__ = numpy_function.__qualname__ = name
    checks.__name__ = checks.__qualname__ = f"{name}_kernel"
    # A traceback names the family that declares the op, as ``refuse`` is written there.
    numpy_function.__module__ = checks.__module__ = refuse.__module__
    return computed_by(numpy_function)(checks)


def _real_extremum(name, pick):
    """The eager kernel of ``maximum`` or ``minimum``: NumPy's propagate nan, as PyTorch's do."""

    def refuse_complex(dtype):
        if dtype.is_complex:
            raise RuntimeError(f"{name} not implemented for complex tensors.")

    return promoted_binary_op(name, pick, refuse_complex)


_maximum_kernel = _real_extremum("maximum", np.maximum)
maximum = _maximum_kernel.numpy_function
lowers(aten.maximum.default)(maximum)
implements(aten.maximum.default, out=aten.maximum.out, pointwise=True)(_maximum_kernel)
_minimum_kernel = _real_extremum("minimum", np.minimum)
minimum = _minimum_kernel.numpy_function
lowers(aten.minimum.default)(minimum)
implements(aten.minimum.default, out=aten.minimum.out, pointwise=True)(_minimum_kernel)


def atan2(a, b, *, out_dtype):
    x, y = computed(out_dtype, a, b)
    return np.arctan2(x, y).astype(out_dtype, copy=False)


@implements(aten.atan2.default, out=aten.atan2.out, in_place=aten.atan2_.default, pointwise=True)
@computed_by(atan2)
def atan2_kernel(self, other):
    return real_float_dtype("atan2", torch.result_type(self, other))
