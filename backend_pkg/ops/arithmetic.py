"""Elementwise arithmetic, with PyTorch's type promotion and broadcasting."""

import numpy as np
import torch

from ..tensor import unwrap, wrap
from ._operands import check_alpha, promoted
from ._results import as_result, write_in_place, write_out
from .registry import aten, implements


def _combine_scaled(op, combine, self, other, alpha):
    """``combine(self, alpha * other)``, promoted and checked as PyTorch does."""
    (a, b), dtype = promoted(op, self, other)
    check_alpha(op, dtype, alpha)
    if alpha != 1:
        b = b * np.asarray(alpha, dtype=b.dtype)
    return as_result(combine(a, b), dtype)


def _is_bool(value):
    return isinstance(value, bool) or getattr(value, "dtype", None) == torch.bool


@implements(aten.add.Tensor)
def add(self, other, *, alpha=1):
    return _combine_scaled("add", np.add, self, other, alpha)


@implements(aten.add_.Tensor)
def add_(self, other, *, alpha=1):
    return write_in_place("add_", self, add(self, other, alpha=alpha))


@implements(aten.add.out)
def add_out(self, other, *, alpha=1, out):
    return write_out("add", out, add(self, other, alpha=alpha))


@implements(aten.sub.Tensor)
def sub(self, other, *, alpha=1):
    if _is_bool(self) and _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if _is_bool(self) or _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return _combine_scaled("sub", np.subtract, self, other, alpha)


@implements(aten.sub_.Tensor)
def sub_(self, other, *, alpha=1):
    return write_in_place("sub_", self, sub(self, other, alpha=alpha))


@implements(aten.sub.out)
def sub_out(self, other, *, alpha=1, out):
    return write_out("sub", out, sub(self, other, alpha=alpha))


@implements(aten.neg.default)
def neg(self):
    if self.dtype == torch.bool:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return wrap(np.negative(unwrap(self)))


@implements(aten.mul.Tensor)
def mul(self, other):
    (a, b), dtype = promoted("mul", self, other)
    return as_result(a * b, dtype)


@implements(aten.mul_.Tensor)
def mul_(self, other):
    return write_in_place("mul_", self, mul(self, other))


@implements(aten.mul.out)
def mul_out(self, other, *, out):
    return write_out("mul", out, mul(self, other))
