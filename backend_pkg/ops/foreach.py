"""The ``_foreach_*`` ops of gradient clipping and of a foreach optimizer: one Python call per list.

A ``_foreach_*`` op has no kernel for a device that registers none but PyTorch's
CompositeExplicitAutograd one (the ``foreach_tensor_*_slow`` kernels of
``aten/src/ATen/native/ForeachOpsKernels.cpp``): a C++ loop that dispatches one op per tensor,
which on npy is one trip from C++ into a Python kernel and back per tensor.
``clip_grad_norm_`` runs ``_foreach_norm`` and ``_foreach_mul_`` over every gradient
(``torch/nn/utils/clip_grad.py``), and SGD with momentum built with ``foreach=True`` runs
``_foreach_mul_`` and two ``_foreach_add_`` per step (``_multi_tensor_sgd``, ``torch/optim/sgd.py``).

Each kernel here takes the list in one call. Float32 and float64 tensors that the per-tensor
in-place ops would compute by their NumPy shortcut (one dtype, every element written once, the
operands apart in memory) are computed so, one NumPy call each, after the whole list is checked;
other lists run that same loop in Python: for each tensor, the npy kernel that the per-tensor op
reaches, called directly. A list with a tensor of another device, or a call PyTorch's loop refuses
before it starts (an empty list, lists of different lengths, a scalar tensor with elements), goes to
PyTorch's loop, which raises PyTorch's errors.
"""

import numpy as np
import torch

from ..tensor import is_npy, unwrap, wrap
from ._numpy_errors import quietly
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


def _writable_floats(tensors):
    """The NumPy views of ``tensors`` if each is float32 or float64 and holds each of its elements
    once (no stride 0, where PyTorch refuses to write), else None."""
    arrays = [unwrap(tensor) for tensor in tensors]
    return arrays if all(array.dtype in _REAL_FLOATS and 0 not in array.strides for array in arrays) else None


def _float_pairs(self, other):
    """``(self's view, other's view)`` pairs when :func:`_writable_floats` takes ``self`` and each of
    ``other`` has its partner's dtype and shape and lies apart from it in memory; else None.

    Such pairs are where ``add_``'s own kernel takes its NumPy shortcut
    (:func:`~._same_dtype.in_place_with_same_dtype_shortcut`); here every pair is checked before
    any is written, so a list that fails the checks goes to that kernel whole."""
    targets = _writable_floats(self)
    if targets is None:
        return None
    sources = [unwrap(tensor) for tensor in other]
    apart = all(
        b.dtype is a.dtype and b.shape == a.shape and not np.may_share_memory(a, b) for a, b in zip(targets, sources)
    )
    return list(zip(targets, sources)) if apart else None


def _add_all(pairs, alpha):
    """``a += alpha * b`` for each pair, ``alpha`` cast to their dtype (no product for 1)."""
    for a, b in pairs:
        np.add(a, b if alpha == 1 else b * a.dtype.type(alpha), out=a)


def _multiply_all(pairs):
    for a, b in pairs:
        np.multiply(a, b, out=a)


def _scale_all(arrays, number):
    """Each array times ``number``, cast to its dtype as PyTorch casts a Scalar."""
    for array in arrays:
        np.multiply(array, array.dtype.type(number), out=array)


@implements(aten._foreach_mul_.Tensor)
def foreach_mul_tensor_(self, other):
    """Each tensor times one 0-dim tensor, in place: ``clip_grad_norm_``'s scaling."""
    if not (_npy_lists(self) and is_npy(other) and other.dim() == 0):
        return _pytorch_loop(aten._foreach_mul_.Tensor, self, other)
    targets, factor = _writable_floats(self), unwrap(other)
    if targets is not None and all(factor.dtype is a.dtype and not np.may_share_memory(a, factor) for a in targets):
        return quietly(_multiply_all, [(a, factor) for a in targets])
    multiply = KERNELS[aten.mul_.Tensor]
    for tensor in self:
        multiply(tensor, other)


@implements(aten._foreach_mul_.Scalar)
def foreach_mul_scalar_(self, scalar):
    """Each tensor times a number, in place: SGD's momentum buffers times ``momentum``."""
    if not _npy_lists(self):
        return _pytorch_loop(aten._foreach_mul_.Scalar, self, scalar)
    targets = _writable_floats(self) if type(scalar) in (int, float) else None
    if targets is not None:
        return quietly(_scale_all, targets, scalar)
    multiply = KERNELS[aten.mul_.Tensor]
    for tensor in self:
        multiply(tensor, scalar)


@implements(aten._foreach_add_.List)
def foreach_add_list_(self, other, *, alpha=1):
    """Each tensor plus ``alpha`` times its partner in ``other``, in place: SGD's buffers and steps."""
    if not _npy_lists(self, other):
        return _pytorch_loop(aten._foreach_add_.List, self, other, alpha=alpha)
    pairs = _float_pairs(self, other) if type(alpha) in (int, float) else None
    if pairs is not None:
        return quietly(_add_all, pairs, alpha)
    add = KERNELS[aten.add_.Tensor]
    options = {} if alpha == 1 and type(alpha) is int else {"alpha": alpha}
    for tensor, addend in zip(self, other):
        add(tensor, addend, **options)
