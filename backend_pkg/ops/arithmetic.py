"""Elementwise arithmetic, with PyTorch's type promotion and broadcasting.

The helpers before the kernels serve every elementwise family
(:mod:`.unary`, :mod:`.comparison`): one kernel computes a fresh result, and
:func:`elementwise` registers it for an op's functional overload together
with the ``out=`` and in-place overloads that store that result.
"""

import functools
import math

import numpy as np
import torch

from ..dtypes import SCALAR_TYPE_NAMES, compute_dtype, to_numpy_dtype
from ..tensor import unwrap, wrap
from ._cpu_checks import check_on_cpu
from ._numpy_errors import quietly
from ._operands import broadcast_shapes, check_alpha, operand, tensor_shapes
from ._results import _check_castable as check_castable
from ._results import write_in_place, write_out
from ._same_dtype import with_same_dtype_shortcut
from .registry import aten, implements


def elementwise(functional, out=None, in_place=None, *, check_out=None, same_dtype=None):
    """Register the decorated kernel for ``functional``, and for ``out`` and
    ``in_place`` kernels that store its result under PyTorch's rules.

    ``check_out(out, *args, **kwargs)`` refuses, before computing, an ``out``
    that PyTorch refuses although the result could be cast into it (see
    :func:`exact_dtype`). ``same_dtype``, a NumPy function, computes
    ``functional`` for two tensors of one dtype (see :mod:`._same_dtype`).
    Stack the decorator to register one kernel for several overload
    families (``.Tensor`` and ``.Scalar``).
    """

    def decorator(compute):
        quiet = _quiet(compute)
        if same_dtype is None:
            implements(functional)(quiet)
        else:
            implements(functional)(with_same_dtype_shortcut(same_dtype, quiet))
        if out is not None:
            implements(out)(_out_kernel(functional._opname, quiet, check_out))
        if in_place is not None:
            implements(in_place)(_in_place_kernel(in_place._opname, quiet))
        return compute

    return decorator


def _quiet(compute):
    @functools.wraps(compute)
    def kernel(*args, **kwargs):
        try:
            return quietly(compute, *args, **kwargs)
        except ValueError:
            # NumPy's broadcasting error: PyTorch's words for it, from the shapes alone.
            broadcast_shapes(*tensor_shapes(args))
            raise

    return kernel


def _out_kernel(op, compute, check_out):
    def kernel(*args, out, **kwargs):
        try:
            result = compute(*args, **kwargs)
        except DtypeNotImplemented as error:
            _refuse_target_first(op, error, out, check_out, args, kwargs)
            raise
        if check_out is not None:
            check_out(out, *args, **kwargs)
        return write_out(op, out, result)

    kernel.__name__ = f"{compute.__name__}_out"
    return kernel


def _in_place_kernel(op, compute):
    def kernel(self, *args, **kwargs):
        try:
            result = compute(self, *args, **kwargs)
        except DtypeNotImplemented as error:
            _refuse_target_first(op, error, self)
            raise
        return write_in_place(op, self, result)

    kernel.__name__ = f"{compute.__name__}_"
    return kernel


def _refuse_target_first(op, error, target, check_out=None, args=(), kwargs=None):
    """PyTorch checks the tensor it writes to before it looks for a loop for the dtype."""
    if check_out is not None:
        check_out(target, *args, **kwargs)
    check_castable(op, torch.empty(0, dtype=error.result_dtype, device="meta"), target)


def exact_dtype(dtype_of):
    """A ``check_out`` for ops whose ``out=`` must have the dtype ``dtype_of(*args, **kwargs)``.

    PyTorch's ops that do not promote (``neg``, ``floor``, ``clamp``...)
    refuse any other ``out`` dtype, even one the result casts to.
    """

    def check_out(out, *args, **kwargs):
        expected = dtype_of(*args, **kwargs)
        if out.dtype != expected:
            raise RuntimeError(
                f"Found dtype {scalar_type_name(out.dtype)} but expected {scalar_type_name(expected)}"
            )

    return check_out


def _self_dtype(self, *args, **kwargs):
    return self.dtype


OUT_OF_SELF_DTYPE = exact_dtype(_self_dtype)


def as_result(array, dtype):
    """An npy tensor of ``dtype`` over ``array``, which must be the kernel's own memory."""
    return wrap(np.asarray(array).astype(to_numpy_dtype(dtype), copy=False))


def arrays(op, values, dtype):
    """The operands as NumPy arrays, cast as PyTorch casts them for a ``dtype`` result.

    Each is cast to ``dtype`` (a Python 0.7 becomes float16's 0.69970703),
    then to the compute dtype. Python numbers cast as C++ casts them
    (``uint8 < -1`` compares with 255), where ``np.asarray(number, dtype=...)``
    refuses out-of-range ones.
    """
    np_dtype, np_compute = to_numpy_dtype(dtype), to_numpy_dtype(compute_dtype(dtype))
    return [
        np.asarray(operand(op, value)).astype(np_dtype, copy=False).astype(np_compute, copy=False)
        for value in values
    ]


def promoted_arrays(op, self, other):
    """Both operands in PyTorch's compute dtype, and the promoted result dtype."""
    dtype = torch.result_type(self, other)
    return arrays(op, (self, other), dtype), dtype


def _exact_scalar_arrays(op, self, other, dtype):
    """``arrays``, except that a one-element ``other`` is not rounded to a half precision ``dtype``.

    PyTorch's mul and div read such a divisor or factor at float32 precision.
    """
    a, b = arrays(op, (self, other), dtype)
    if compute_dtype(dtype) != dtype and _numel(other) == 1:
        (b,) = arrays(op, (other,), compute_dtype(dtype))
    return a, b


def _numel(value):
    return value.numel() if isinstance(value, torch.Tensor) else 1


def float_dtype(dtype):
    """The dtype a float op gives: integers and bools give the default float dtype."""
    return dtype if dtype.is_floating_point or dtype.is_complex else torch.get_default_dtype()


def is_integral(dtype):
    return not (dtype.is_floating_point or dtype.is_complex or dtype == torch.bool)


def scalar_type_name(dtype):
    """C++'s name for ``dtype`` (``Long``, ``ComplexFloat``), which PyTorch's dtype errors use."""
    return SCALAR_TYPE_NAMES[dtype]


class DtypeNotImplemented(NotImplementedError):
    """PyTorch's error for a dtype a kernel has no loop for.

    CPU names its kernel ``"fmod_cpu"``, CUDA ``"fmod_cuda"``; npy, ``"fmod_npy"``.
    ``result_dtype`` is the dtype the op would have given.
    """

    def __init__(self, kernel, dtype, result_dtype=None):
        super().__init__(f"\"{kernel}_npy\" not implemented for '{scalar_type_name(dtype)}'")
        self.result_dtype = dtype if result_dtype is None else result_dtype


def check_convertible(op, value, dtype):
    """Refuse a Python number where C++'s checked conversion to ``dtype`` does (``Scalar::to<T>``)."""
    if _overflows(value, dtype):
        raise RuntimeError(f"{op}: value cannot be converted to type {dtype} without overflow")


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


def _combine_scaled(op, combine, self, other, alpha):
    """``combine(self, alpha * other)``, promoted and checked as PyTorch does."""
    (a, b), dtype = promoted_arrays(op, self, other)
    check_alpha(op, dtype, alpha)
    # PyTorch scales complex operands even by 1: inf * (1+0j) has a nan imaginary part.
    if alpha != 1 or dtype.is_complex:
        (scale,) = arrays(op, (alpha,), dtype)
        b = b * scale
    return as_result(combine(a, b), dtype)


def _is_bool(value):
    return isinstance(value, bool) or getattr(value, "dtype", None) == torch.bool


@elementwise(aten.add.Tensor, aten.add.out, aten.add_.Tensor, same_dtype=np.add)
def add(self, other, *, alpha=1):
    return _combine_scaled("add", np.add, self, other, alpha)


@elementwise(aten.sub.Tensor, aten.sub.out, aten.sub_.Tensor, same_dtype=np.subtract)
def sub(self, other, *, alpha=1):
    if _is_bool(self) or _is_bool(other):
        # "Subtraction, the `-` operator, with a bool tensor is not supported..."
        check_on_cpu(aten.sub.Tensor, *(torch.as_tensor(value) for value in (self, other)))
    return _combine_scaled("sub", np.subtract, self, other, alpha)


# rsub's out= overloads are left to PyTorch's composites, which insist on the result's own dtype.
@elementwise(aten.rsub.Scalar)
@elementwise(aten.rsub.Tensor)
def rsub(self, other, alpha=1):
    return sub(other, self, alpha=alpha)


@elementwise(aten.neg.default, aten.neg.out, aten.neg_.default, check_out=OUT_OF_SELF_DTYPE)
def neg(self):
    if self.dtype == torch.bool:
        check_on_cpu(aten.neg.default, self)  # "Negation, the `-` operator, on a bool tensor is not..."
    return wrap(np.negative(unwrap(self)))


@elementwise(aten.mul.Tensor, aten.mul.out, aten.mul_.Tensor, same_dtype=np.multiply)
def mul(self, other):
    dtype = torch.result_type(self, other)
    a, b = _exact_scalar_arrays("mul", self, other, dtype)
    return as_result(a * b, dtype)


# --- division ---------------------------------------------------------------


@elementwise(aten.div.Scalar_mode, aten.div.Scalar_mode_out, aten.div_.Scalar_mode)
@elementwise(aten.div.Tensor_mode, aten.div.out_mode, aten.div_.Tensor_mode)
@elementwise(aten.div.Scalar, aten.div.Scalar_out, aten.div_.Scalar)
@elementwise(aten.div.Tensor, aten.div.out, aten.div_.Tensor)
def div(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        dtype = float_dtype(torch.result_type(self, other))
        a, b = _exact_scalar_arrays("div", self, other, dtype)
        return as_result(a / b, dtype)
    if rounding_mode == "trunc":
        return _division_like("div_trunc", _truncated_quotient, self, other, exact_scalar=True)
    if rounding_mode == "floor":
        return _division_like("div_floor", np.floor_divide, self, other, exact_scalar=True)
    raise RuntimeError(
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' "
        f"but found '{rounding_mode}'"
    )


@elementwise(aten.floor_divide.Scalar, aten.floor_divide.Scalar_out, aten.floor_divide_.Scalar)
@elementwise(aten.floor_divide.default, aten.floor_divide.out, aten.floor_divide_.Tensor)
def floor_divide(self, other):
    """Python's ``//``."""
    return div(self, other, rounding_mode="floor")


def _truncated_quotient(a, b):
    if a.dtype.kind == "f":
        return np.trunc(a / b)
    floor = a // b
    # Floor and truncation differ for inexact negative quotients only.
    return np.where((floor < 0) & (floor * b != a), floor + 1, floor)


def _division_like(kernel, combine, self, other, *, exact_scalar=False):
    """A division-like op: real numbers only, and integer division by zero is an error."""
    dtype = torch.result_type(self, other)
    if dtype == torch.bool or dtype.is_complex:
        raise DtypeNotImplemented(kernel, dtype)
    if exact_scalar:
        a, b = _exact_scalar_arrays(kernel, self, other, dtype)
    else:
        a, b = arrays(kernel, (self, other), dtype)
    if is_integral(dtype) and not b.all():
        raise RuntimeError("ZeroDivisionError")
    return as_result(combine(a, b), dtype)


@elementwise(aten.remainder.Scalar_Tensor, aten.remainder.Scalar_Tensor_out)
@elementwise(aten.remainder.Scalar, aten.remainder.Scalar_out, aten.remainder_.Scalar)
@elementwise(aten.remainder.Tensor, aten.remainder.Tensor_out, aten.remainder_.Tensor)
def remainder(self, other):
    """The remainder with the divisor's sign, as Python's ``%`` (NumPy's ``remainder``)."""
    return _division_like("remainder", np.remainder, self, other)


@elementwise(aten.fmod.Scalar, aten.fmod.Scalar_out, aten.fmod_.Scalar)
@elementwise(aten.fmod.Tensor, aten.fmod.Tensor_out, aten.fmod_.Tensor)
def fmod(self, other):
    """The remainder with the dividend's sign, as C's ``fmod``."""
    return _division_like("fmod", np.fmod, self, other)


# --- powers, extrema, atan2 -------------------------------------------------


@elementwise(aten.pow.Scalar, aten.pow.Scalar_out)
@elementwise(aten.pow.Tensor_Tensor, aten.pow.Tensor_Tensor_out, aten.pow_.Tensor)
def pow(self, exponent):
    (a, b), dtype = promoted_arrays("pow", self, exponent)
    if dtype == torch.bool:
        raise DtypeNotImplemented("pow", dtype)
    return as_result(_integer_power(a, b) if is_integral(dtype) else np.power(a, b), dtype)


@elementwise(aten.pow.Tensor_Scalar, aten.pow.Tensor_Scalar_out, aten.pow_.Scalar)
def pow_scalar_exponent(self, exponent):
    """``pow`` with a Python exponent, with PyTorch's checks and shortcuts for it."""
    dtype = torch.result_type(self, exponent)
    if isinstance(exponent, int) and exponent < 0 and (is_integral(self.dtype) or self.dtype == torch.bool):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    # Checked before the dtype is: bool ** True is allowed.
    if exponent == 0:
        return as_result(np.ones(self.shape), dtype)
    if exponent == 1:
        return as_result(np.array(unwrap(self)), dtype)
    check_convertible("pow", exponent, dtype)
    return pow(self, exponent)


def _integer_power(a, b):
    """PyTorch's integer powers: a negative exponent gives 0 unless the base is 1 or -1.

    NumPy refuses negative integer exponents. ``b % 2`` keeps their parity,
    which is all ``(-1) ** b`` depends on.
    """
    negative = b < 0
    powers = np.power(a, np.where(negative, b % 2, b))
    return np.where(negative & (a != 1) & (a != -1), 0, powers)


def _real_extremum(name, pick):
    def kernel(self, other):
        (a, b), dtype = promoted_arrays(name, self, other)
        if dtype.is_complex:
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        # NumPy's maximum/minimum propagate nan, as PyTorch's do.
        return as_result(pick(a, b), dtype)

    kernel.__name__ = name
    return kernel


maximum = elementwise(aten.maximum.default, aten.maximum.out)(_real_extremum("maximum", np.maximum))
minimum = elementwise(aten.minimum.default, aten.minimum.out)(_real_extremum("minimum", np.minimum))


@elementwise(aten.atan2.default, aten.atan2.out, aten.atan2_.default)
def atan2(self, other):
    dtype = float_dtype(torch.result_type(self, other))
    if dtype.is_complex:
        raise DtypeNotImplemented("atan2", dtype)
    a, b = arrays("atan2", (self, other), dtype)
    return as_result(np.arctan2(a, b), dtype)
