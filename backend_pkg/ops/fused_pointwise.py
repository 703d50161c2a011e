"""The fused pointwise ops optimizers run: ``addcmul``, ``addcdiv`` and ``lerp``.

Adam's update is ``lerp_`` of the first moment, ``addcmul_`` of the second
and ``addcdiv_`` of the weights. On an accelerator (npy included) PyTorch's
optimizers take their ``foreach`` path, whose ``_foreach_*`` ops have no
kernel for a device without fused list kernels and fall back, op by op, to
these in-place forms; structured in-place ops then arrive at the ``.out``
overloads. Each is computed in the order PyTorch's CPU kernels compute it,
in float32 for half, so the rounding matches.
"""

import numpy as np
import torch

from ..dtypes import CPP_SCALAR_NAMES, TYPE_META_NAMES, compute_dtype, to_numpy_dtype
from ._operands import operand, result_type
from .arithmetic import as_result, elementwise
from .reductions import not_implemented_for
from .registry import aten

def _scalar(value, dtype):
    """A Scalar argument as the kernel reads it: converted to ``dtype``'s compute type (0.5 is 0 for integers,
    and float32 precision for half)."""
    if isinstance(value, complex) and not dtype.is_complex:
        # The kernel converts to its compute type: float for half.
        raise RuntimeError(
            f"value cannot be converted to type {CPP_SCALAR_NAMES[compute_dtype(dtype)]} without overflow"
        )
    return np.asarray(value).astype(to_numpy_dtype(compute_dtype(dtype)))


def _computed(op, dtype, *tensors):
    np_compute = to_numpy_dtype(compute_dtype(dtype))
    return [np.asarray(operand(op, tensor)).astype(np_compute, copy=False) for tensor in tensors]


def add_scaled_product(a, tensor1, tensor2, value):
    return a + value * tensor1 * tensor2


def add_scaled_quotient(a, tensor1, tensor2, value):
    return a + value * tensor1 / tensor2


def interpolate(a, end, weight):
    """``a + weight (end - a)``, taken from ``end``'s side for weights from 0.5 on, as PyTorch does
    so that ``weight == 1`` gives ``end`` exactly."""
    difference = end - a
    return np.where(np.abs(weight) < 0.5, a + weight * difference, end - difference * (1 - weight))


@elementwise(aten.addcmul.default, aten.addcmul.out, aten.addcmul_.default)
def addcmul(self, tensor1, tensor2, *, value=1):
    dtype = result_type(self, tensor1, tensor2)
    if dtype == torch.bool:
        raise not_implemented_for("addcmul_cpu_out", dtype)
    arrays = _computed("addcmul", dtype, self, tensor1, tensor2)
    return as_result(add_scaled_product(*arrays, _scalar(value, dtype)), dtype)


@elementwise(aten.addcdiv.default, aten.addcdiv.out, aten.addcdiv_.default)
def addcdiv(self, tensor1, tensor2, *, value=1):
    dtype = result_type(self, tensor1, tensor2)
    if not (tensor1.dtype.is_floating_point or tensor1.dtype.is_complex) and not (
        tensor2.dtype.is_floating_point or tensor2.dtype.is_complex
    ):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
            "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
            "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
            "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
            "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes."
        )
    arrays = _computed("addcdiv", dtype, self, tensor1, tensor2)
    return as_result(add_scaled_quotient(*arrays, _scalar(value, dtype)), dtype)


def _check_same_dtype(self, name, other):
    if other.dtype != self.dtype:
        raise RuntimeError(
            f"expected dtype {TYPE_META_NAMES[self.dtype]} for `{name}` but got dtype {TYPE_META_NAMES[other.dtype]}"
        )


@elementwise(aten.lerp.Scalar, aten.lerp.Scalar_out, aten.lerp_.Scalar)
def lerp(self, end, weight):
    _check_same_dtype(self, "end", end)
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise not_implemented_for("lerp_kernel_scalar", self.dtype)
    a, b = _computed("lerp", self.dtype, self, end)
    return as_result(interpolate(a, b, _scalar(weight, self.dtype)), self.dtype)


@elementwise(aten.lerp.Tensor, aten.lerp.Tensor_out, aten.lerp_.Tensor)
def lerp_tensor(self, end, weight):
    _check_same_dtype(self, "end", end)
    _check_same_dtype(self, "weight", weight)
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise not_implemented_for("lerp_kernel_tensor", self.dtype)
    return as_result(interpolate(*_computed("lerp", self.dtype, self, end, weight)), self.dtype)
