"""The fused pointwise ops optimizers run: ``addcmul``, ``addcdiv`` and ``lerp``.

Adam's update is ``lerp_`` of the first moment, ``addcmul_`` of the second
and ``addcdiv_`` of the weights; structured in-place ops arrive at the
``.out`` overloads. Each is computed in the order PyTorch's CPU kernels
compute it, in float32 for half, so the rounding matches.

By default PyTorch's optimizers run on npy parameters one tensor at a time
(``_single_tensor_adam``, ...), each calling these in-place ops. An
accelerator's parameters would take the ``foreach`` path, but
``_default_to_fused_or_foreach`` (``torch/optim/optimizer.py``) accepts only
parameters whose ``type`` is in ``_foreach_supported_types``,
``[torch.Tensor, torch.nn.parameter.Parameter]``, and an npy parameter's type
is :class:`~backend_pkg.NpyTensor` (``Parameter`` over a tensor subclass keeps
the subclass, ``torch/nn/parameter.py``); ``clip_grad_norm_``'s default asks
``_has_foreach_support`` (``torch/utils/_foreach_utils.py``), whose list is
``[torch.Tensor]``, of the gradients, and takes the ``foreach`` path: an npy
gradient is a plain ``torch.Tensor`` object (see
:func:`backend_pkg.tensor.detached`). DTensor gets in by appending itself to both lists when
imported; a backend doing so would change PyTorch's state for the whole
process, so npy does not. Passing ``foreach=True`` works: the ``_foreach_*``
ops of clipping and of SGD have npy kernels (:mod:`.foreach`), and the others
(Adam's ``_foreach_lerp_``, ``_foreach_addcmul_``...) run their
CompositeExplicitAutograd kernels, which loop over the tensors in C++ and call
these ops for each.
"""

import numpy as np
import torch

from ..dtypes import CPP_SCALAR_NAMES, TYPE_META_NAMES, compute_dtype
from ._dtype_errors import not_implemented_for
from ._operands import computed, result_type
from .registry import aten, computed_by, implements, lowers


def _check_scalar(value, dtype):
    """A Scalar argument converts to ``dtype``'s compute type (0.5 is 0 for integers, and
    float32 precision for half): a complex one into a real type is refused."""
    if isinstance(value, complex) and not dtype.is_complex:
        raise RuntimeError(
            f"value cannot be converted to type {CPP_SCALAR_NAMES[compute_dtype(dtype)]} without overflow"
        )


@lowers(aten.addcmul.default)
def addcmul(a, tensor1, tensor2, value=1, *, out_dtype):
    x, t1, t2, v = computed(out_dtype, a, tensor1, tensor2, value, exact=True)
    return (x + v * t1 * t2).astype(out_dtype, copy=False)


@lowers(aten.addcdiv.default)
def addcdiv(a, tensor1, tensor2, value=1, *, out_dtype):
    x, t1, t2, v = computed(out_dtype, a, tensor1, tensor2, value, exact=True)
    return (x + v * t1 / t2).astype(out_dtype, copy=False)


@lowers(aten.lerp.Scalar, aten.lerp.Tensor)
def lerp(a, end, weight, *, out_dtype):
    """``a + weight (end - a)``, taken from ``end``'s side for weights from 0.5 on, as PyTorch does
    so that ``weight == 1`` gives ``end`` exactly."""
    x, y, w = computed(out_dtype, a, end, weight, exact=True)
    difference = y - x
    return np.where(np.abs(w) < 0.5, x + w * difference, y - difference * (1 - w)).astype(out_dtype, copy=False)


@implements(aten.addcmul.default, out=aten.addcmul.out, in_place=aten.addcmul_.default, pointwise=True)
@computed_by(addcmul)
def addcmul_kernel(self, tensor1, tensor2, *, value=1):
    dtype = result_type(self, tensor1, tensor2)
    if dtype == torch.bool:
        raise not_implemented_for("addcmul_cpu_out", dtype)
    _check_scalar(value, dtype)
    return dtype


@implements(aten.addcdiv.default, out=aten.addcdiv.out, in_place=aten.addcdiv_.default, pointwise=True)
@computed_by(addcdiv)
def addcdiv_kernel(self, tensor1, tensor2, *, value=1):
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
    _check_scalar(value, dtype)
    return dtype


def _check_same_dtype(self, name, other):
    if other.dtype != self.dtype:
        raise RuntimeError(
            f"expected dtype {TYPE_META_NAMES[self.dtype]} for `{name}` but got dtype {TYPE_META_NAMES[other.dtype]}"
        )


@implements(aten.lerp.Scalar, out=aten.lerp.Scalar_out, in_place=aten.lerp_.Scalar, pointwise=True)
@computed_by(lerp)
def lerp_kernel(self, end, weight):
    _check_same_dtype(self, "end", end)
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise not_implemented_for("lerp_kernel_scalar", self.dtype)
    _check_scalar(weight, self.dtype)
    return self.dtype


@implements(aten.lerp.Tensor, out=aten.lerp.Tensor_out, in_place=aten.lerp_.Tensor, pointwise=True)
@computed_by(lerp)
def lerp_tensor_kernel(self, end, weight):
    _check_same_dtype(self, "end", end)
    _check_same_dtype(self, "weight", weight)
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise not_implemented_for("lerp_kernel_tensor", self.dtype)
    return self.dtype
