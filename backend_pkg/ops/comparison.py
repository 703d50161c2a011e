"""Comparisons, logical and bitwise combinations, and selection (``where``, ``masked_fill``)."""

import warnings

import numpy as np
import torch

from ..dtypes import to_numpy_dtype
from ..tensor import unwrap, wrap
from ._operands import operand
from ._results import write_out
from .arithmetic import (
    DtypeNotImplemented,
    as_result,
    check_convertible,
    elementwise,
    is_integral,
    promoted_arrays,
    scalar_type_name,
)
from .registry import aten, implements

# --- comparisons: bool results, compared in the promoted dtype --------------


def _comparison(name, compare, *, ordered):
    def kernel(self, other):
        (a, b), dtype = promoted_arrays(name, self, other)
        if ordered and dtype.is_complex:
            raise DtypeNotImplemented(name, dtype, torch.bool)
        return wrap(compare(a, b))

    kernel.__name__ = name
    return kernel


def _register_tensor_and_scalar(name, kernel):
    """Register ``kernel`` for ``<name>.Tensor`` and ``<name>.Scalar``, with their out= and in-place forms."""
    functional, in_place = getattr(aten, name), getattr(aten, f"{name}_")
    for overload in ("Tensor", "Scalar"):
        elementwise(
            getattr(functional, overload),
            getattr(functional, f"{overload}_out"),
            getattr(in_place, overload),
        )(kernel)


_COMPARISONS = {
    "eq": (np.equal, False),
    "ne": (np.not_equal, False),
    "lt": (np.less, True),
    "le": (np.less_equal, True),
    "gt": (np.greater, True),
    "ge": (np.greater_equal, True),
}
for _name, (_compare, _ordered) in _COMPARISONS.items():
    _register_tensor_and_scalar(_name, _comparison(_name, _compare, ordered=_ordered))


# --- logical and bitwise combinations ---------------------------------------


def _logical(name, combine):
    # Any dtype, complex included: nonzero is True. No promotion is needed.
    def kernel(self, other):
        return wrap(combine(operand(name, self), operand(name, other)))

    kernel.__name__ = name
    return kernel


for _name, _combine in {
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "logical_xor": np.logical_xor,
}.items():
    elementwise(getattr(aten, _name).default, getattr(aten, _name).out, getattr(aten, f"{_name}_").default)(
        _logical(_name, _combine)
    )


def _bitwise(name, combine):
    def kernel(self, other):
        (a, b), dtype = promoted_arrays(name, self, other)
        if not (is_integral(dtype) or dtype == torch.bool):
            raise DtypeNotImplemented(name, dtype)
        return as_result(combine(a, b), dtype)

    kernel.__name__ = name
    return kernel


for _name, _combine in {
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
}.items():
    _kernel = _bitwise(_name, _combine)
    _register_tensor_and_scalar(_name, _kernel)
    elementwise(getattr(aten, _name).Scalar_Tensor, getattr(aten, _name).Scalar_Tensor_out)(_kernel)


# --- selection --------------------------------------------------------------


@elementwise(aten.where.self)
def where(condition, self, other):
    if condition.dtype == torch.uint8:
        warnings.warn(
            "where received a uint8 condition tensor. This behavior is deprecated and will be "
            "removed in a future version of PyTorch. Use a boolean condition instead.",
            UserWarning,
            stacklevel=2,
        )
    elif condition.dtype != torch.bool:
        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{scalar_type_name(condition.dtype)}"
        )
    (a, b), dtype = promoted_arrays("where", self, other)
    return as_result(np.where(operand("where", condition), a, b), dtype)


@implements(aten.where.self_out)
def where_out(condition, self, other, *, out):
    # Checked before the condition is: out= must have the result's own dtype.
    dtype = torch.result_type(self, other)
    if out.dtype != dtype:
        raise RuntimeError(
            f"Expected out type to be {scalar_type_name(dtype)} but got {scalar_type_name(out.dtype)}"
        )
    return write_out("where", out, where(condition, self, other))


# The out= overloads are left to PyTorch's composites, which insist on self's dtype.
@elementwise(aten.masked_fill.Tensor, in_place=aten.masked_fill_.Tensor)
@elementwise(aten.masked_fill.Scalar, in_place=aten.masked_fill_.Scalar)
def masked_fill(self, mask, value):
    """``value`` where ``mask`` is True; the result keeps ``self``'s dtype (no promotion)."""
    if mask.dtype != torch.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    if isinstance(value, torch.Tensor):
        if value.dim() != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, "
                f"but got tensor with {value.dim()} dimension(s)."
            )
        value = value.item()
    check_convertible("masked_fill_", value, self.dtype)
    if isinstance(value, complex) and not (self.dtype.is_complex or self.dtype == torch.bool):
        value = value.real  # the imaginary part is 0: checked
    fill = np.asarray(value).astype(to_numpy_dtype(self.dtype))
    return wrap(np.where(operand("masked_fill", mask), fill, unwrap(self)))
