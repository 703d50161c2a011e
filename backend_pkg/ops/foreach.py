"""The ``_foreach_*`` ops of gradient clipping and of a foreach optimizer: one Python call per list.

A ``_foreach_*`` op has no kernel for a device that registers none but PyTorch's
CompositeExplicitAutograd one (the ``foreach_tensor_*_slow`` kernels of
``aten/src/ATen/native/ForeachOpsKernels.cpp``): a C++ loop that dispatches one op per tensor,
which on npy is one trip from C++ into a Python kernel and back per tensor.
``clip_grad_norm_`` runs ``_foreach_norm`` and ``_foreach_mul_`` over every gradient
(``torch/nn/utils/clip_grad.py``), and SGD with momentum built with ``foreach=True`` runs
``_foreach_mul_`` and two ``_foreach_add_`` per step (``_multi_tensor_sgd``, ``torch/optim/sgd.py``).

Each kernel here runs that same loop in Python: for each tensor, the npy kernel that the
per-tensor op reaches, called directly. A list with a tensor of another device, or a
call PyTorch's loop refuses before it starts (an empty list, lists of different lengths, a
scalar tensor with elements), goes to PyTorch's loop, which raises PyTorch's errors.
"""

import numpy as np
import torch

from ..tensor import is_npy, unwrap, wrap
from .registry import KERNELS, aten, implements

_PYTORCH_LOOP = torch._C.DispatchKey.CompositeExplicitAutograd
_REAL_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _pytorch_loop(op, *args, **kwargs):
    """PyTorch's kernel of ``op`` for a device without one of its own: one dispatched op per tensor."""
    return op._op_dk(_PYTORCH_LOOP, *args, **kwargs)


def _npy_lists(first, *others):
    """Whether the lists are one length, not empty, and hold only npy tensors: the calls
    whose per-tensor ops all reach npy kernels."""
    return (
        bool(first)
        and all(len(other) == len(first) for other in others)
        and all(is_npy(tensor) for tensors in (first, *others) for tensor in tensors)
    )


@implements(aten._foreach_norm.Scalar)
def foreach_norm(self, ord=2, dtype=None):
    """Each tensor's ``linalg_vector_norm`` over all its elements, as a 0-dim tensor."""
    if not _npy_lists(self):
        return _pytorch_loop(aten._foreach_norm.Scalar, self, ord, dtype)
    if ord == 2 and dtype is None:
        return [_euclidean_norm(tensor) for tensor in self]
    norm = KERNELS[aten.linalg_vector_norm.default]
    options = {} if dtype is None else {"dtype": dtype}
    return [norm(tensor, ord, **options) for tensor in self]


def _euclidean_norm(tensor):
    """``tensor``'s 2-norm: of a float32 or float64 tensor with elements, a dot product in its dtype
    (``linalg_vector_norm``'s checks pass, its NumPy path takes four times as long); else its kernel."""
    array = unwrap(tensor)
    if array.dtype not in _REAL_FLOATS or array.size == 0:
        return KERNELS[aten.linalg_vector_norm.default](tensor)
    flat = array.reshape(-1)
    return wrap(np.sqrt(np.vecdot(flat, flat)))


@implements(aten._foreach_mul_.Tensor)
def foreach_mul_tensor_(self, other):
    """Each tensor times one 0-dim tensor, in place: ``clip_grad_norm_``'s scaling."""
    if not (_npy_lists(self) and is_npy(other) and other.dim() == 0):
        return _pytorch_loop(aten._foreach_mul_.Tensor, self, other)
    multiply = KERNELS[aten.mul_.Tensor]
    for tensor in self:
        multiply(tensor, other)


@implements(aten._foreach_mul_.Scalar)
def foreach_mul_scalar_(self, scalar):
    """Each tensor times a number, in place: SGD's momentum buffers times ``momentum``."""
    if not _npy_lists(self):
        return _pytorch_loop(aten._foreach_mul_.Scalar, self, scalar)
    multiply = KERNELS[aten.mul_.Tensor]
    for tensor in self:
        multiply(tensor, scalar)


@implements(aten._foreach_add_.List)
def foreach_add_list_(self, other, *, alpha=1):
    """Each tensor plus ``alpha`` times its partner in ``other``, in place: SGD's buffers and steps."""
    if not _npy_lists(self, other):
        return _pytorch_loop(aten._foreach_add_.List, self, other, alpha=alpha)
    add = KERNELS[aten.add_.Tensor]
    options = {} if alpha == 1 and type(alpha) is int else {"alpha": alpha}
    for tensor, addend in zip(self, other):
        add(tensor, addend, **options)
