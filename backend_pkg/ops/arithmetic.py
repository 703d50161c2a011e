"""Elementwise arithmetic, with PyTorch's type promotion and broadcasting."""

import numpy as np
import torch

from ..dtypes import to_numpy_dtype
from ..tensor import unwrap, wrap
from ._operands import check_alpha, promoted
from .registry import aten, implements


def _result(array, dtype):
    return wrap(np.asarray(array).astype(to_numpy_dtype(dtype), copy=False))


def _combine_scaled(op, combine, self, other, alpha):
    """``combine(self, alpha * other)``, promoted and checked as PyTorch does."""
    (a, b), dtype = promoted(op, self, other)
    check_alpha(op, dtype, alpha)
    if alpha != 1:
        b = b * np.asarray(alpha, dtype=b.dtype)
    return _result(combine(a, b), dtype)


def _is_bool(value):
    return isinstance(value, bool) or getattr(value, "dtype", None) == torch.bool


def _write_in_place(op, self, result):
    """Store ``result`` into ``self``, under PyTorch's rules for in-place ops."""
    if not torch.can_cast(result.dtype, self.dtype):
        raise RuntimeError(
            f"{op}: result type {result.dtype} can't be cast to the desired output type {self.dtype}"
        )
    if any(step == 0 and length > 1 for step, length in zip(self.stride(), self.shape)):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers "
            "to a single memory location. Please clone() the tensor before performing the operation."
        )
    if result.shape != self.shape:
        raise RuntimeError(
            f"{op}: output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    unwrap(self)[...] = unwrap(result)
    return self


@implements(aten.add.Tensor)
def add(self, other, *, alpha=1):
    return _combine_scaled("add", np.add, self, other, alpha)


@implements(aten.add_.Tensor)
def add_(self, other, *, alpha=1):
    return _write_in_place("add_", self, add(self, other, alpha=alpha))


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
    return _write_in_place("sub_", self, sub(self, other, alpha=alpha))


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
    return _result(a * b, dtype)


@implements(aten.mul_.Tensor)
def mul_(self, other):
    return _write_in_place("mul_", self, mul(self, other))
