"""Matrix products (mm, bmm, mv, dot, vdot) and their scale-and-add forms, in NumPy.

NumPy multiplies in the operands' own dtype, so integer products stay
integers and wrap on overflow exactly as PyTorch's do (the low bits of a sum
do not depend on how wide it was accumulated). Half precision is lifted to
float32, PyTorch's accumulation type, and rounded once at the end.

``matmul`` has no kernel here: PyTorch decomposes it, above the backend,
into these ops and views (it folds batch dims into ``mm`` or expands into
``bmm``). ``linear``, which PyTorch decomposes too (with a bias, into
``addmm``), is computed whole where it can be, forward and backward (the
last section).
"""

import math

import numpy as np
import torch

from ..dtypes import SCALAR_TYPE_NAMES, TYPE_META_NAMES
from ..tensor import unwrap, wrap
from ._dtype_errors import not_implemented_for
from ._numpy_errors import quietly
from ._operands import in_compute_dtype
from ._same_dtype import same_dtype_arrays, with_same_dtype_shortcut
from ._whole_ops import composite, differentiable_gradients, plain_npy
from .registry import aten, computed_by, implements, lowers

# Dtypes PyTorch's CPU matrix kernels are not compiled for.
_NO_PRODUCT = (torch.bool, torch.uint16, torch.uint32, torch.uint64)


def _name(tensor):
    return SCALAR_TYPE_NAMES[tensor.dtype]


def _check_product_dtype(op, dtype):
    if dtype in _NO_PRODUCT:
        raise not_implemented_for(op, dtype)


def _scalar(value, np_dtype):
    """A Scalar argument in the computation's dtype: converted as C++ converts it (0.5 -> 0 for ints)."""
    if isinstance(value, complex) and np_dtype.kind != "c":
        raise RuntimeError(f"value cannot be converted to type {np_dtype} without overflow")
    return np.asarray(value).astype(np_dtype)


def _scaled_sum(bias, product, beta, alpha, out_dtype):
    """``beta * bias + alpha * product``, ``bias`` broadcast to the product's shape.

    As in BLAS and PyTorch, ``beta == 0`` ignores ``bias`` altogether, NaN and inf included.
    """
    np_compute = product.dtype
    result = product if alpha == 1 else product * _scalar(alpha, np_compute)
    if beta != 0:
        base = np.asarray(bias, dtype=np_compute)
        result = result + (base if beta == 1 else base * _scalar(beta, np_compute))
    return result.astype(out_dtype, copy=False)


# --- the NumPy functions: products, and products scaled and added -----------


@lowers(aten.mm.default, aten.bmm.default)
def mm(a, b, *, out_dtype):
    """``a @ b`` (matrices, batches of them, or a matrix and a vector), half computed in float32."""
    return np.matmul(*in_compute_dtype(out_dtype, a, b)).astype(out_dtype, copy=False)


@lowers(aten.addmm.default)
def addmm(bias, a, b, *, beta=1, alpha=1, out_dtype):
    """``beta * bias + alpha * (a @ b)``; a linear layer with a bias is ``addmm``."""
    return _scaled_sum(bias, np.matmul(*in_compute_dtype(out_dtype, a, b)), beta, alpha, out_dtype)


def addbmm(bias, a, b, *, beta=1, alpha=1, out_dtype):
    """``addmm`` of the sum of the batches' products."""
    product = np.matmul(*in_compute_dtype(out_dtype, a, b)).sum(axis=0)
    return _scaled_sum(bias, product, beta, alpha, out_dtype)


# --- mm, addmm ------------------------------------------------------------


def _shapes_multiply(mat1, mat2):
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} "
            f"and {mat2.shape[0]}x{mat2.shape[1]})"
        )


def _multipliable_matrices(a, b):
    return a.ndim == 2 and b.ndim == 2 and a.shape[1] == b.shape[0]


def _broadcasts_to(shape, target):
    return len(shape) <= len(target) and all(
        length in (1, wanted) for length, wanted in zip(reversed(shape), reversed(target))
    )


@computed_by(mm)
def mm_kernel(self, mat2):
    if self.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self.dtype != mat2.dtype:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{TYPE_META_NAMES[self.dtype]} != {TYPE_META_NAMES[mat2.dtype]}"
        )
    _shapes_multiply(self, mat2)
    # CPU returns before it picks a loop by dtype (addmm_impl_cpu_): zeros, even of a bool.
    if self.shape[0] * mat2.shape[1] != 0 and self.shape[1] != 0:
        _check_product_dtype("mm", self.dtype)
    return self.dtype


implements(aten.mm.default, out=aten.mm.out)(
    with_same_dtype_shortcut(np.matmul, mm_kernel, accepts=_multipliable_matrices)
)


def _check_addmm_dtypes(self, mat1, mat2):
    for name, other in (("self", self), ("mat1", mat1)):
        if other.dtype != mat2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {_name(other)} and {_name(mat2)}")


@computed_by(addmm)
def _addmm_kernel(self, mat1, mat2, *, beta=1, alpha=1):
    _check_addmm_dtypes(self, mat1, mat2)
    for name, matrix in (("mat1", mat1), ("mat2", mat2)):
        if matrix.dim() != 2:
            raise RuntimeError(f"{name} must be a matrix, got {matrix.dim()}-D tensor")
    _shapes_multiply(mat1, mat2)
    self.expand(mat1.shape[0], mat2.shape[1])  # for PyTorch's error
    _check_product_dtype("addmm", mat1.dtype)
    return self.dtype


@implements(aten.addmm.default, out=aten.addmm.out)
def addmm_kernel(self, mat1, mat2, *, beta=1, alpha=1):
    """``addmm``, with a shortcut for the linear layer's case: one dtype, beta and alpha 1."""
    arrays = same_dtype_arrays(self, mat1, mat2) if beta == 1 and alpha == 1 else None
    if arrays is not None:
        base, a, b = arrays
        if _multipliable_matrices(a, b) and _broadcasts_to(base.shape, (a.shape[0], b.shape[1])):
            product = np.matmul(a, b)
            return wrap(quietly(np.add, product, base, out=product))  # the product is fresh memory
    return _addmm_kernel(self, mat1, mat2, beta=beta, alpha=alpha)


# --- bmm, baddbmm, addbmm ---------------------------------------------------


def _check_batches(batch1, batch2, *, dtypes=True):
    for name, batch in (("batch1", batch1), ("batch2", batch2)):
        if batch.dim() != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if dtypes and batch1.dtype != batch2.dtype:
        raise RuntimeError(f"expected scalar type {_name(batch1)} but found {_name(batch2)}")


def _check_bmm_sizes(batch1, batch2):
    expected = [batch1.shape[0], batch1.shape[2]]
    if list(batch2.shape[:2]) != expected:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: {expected} "
            f"but got: {list(batch2.shape[:2])}."
        )


@implements(aten.bmm.default, out=aten.bmm.out)
@computed_by(mm, name="bmm")
def bmm_kernel(self, mat2):
    _check_batches(self, mat2, dtypes=False)
    _check_bmm_sizes(self, mat2)
    shape = (self.shape[0], self.shape[1], mat2.shape[2])
    if 0 in shape or self.shape[2] == 0:
        # CPU reads the dtypes only when it multiplies, so an empty product, or one over an
        # empty contraction, is zeros of mat2's dtype (bmm's meta function allocates with
        # batch2's options), whatever self's dtype.
        return mat2.dtype
    _check_product_dtype("bmm", self.dtype)  # CPU picks its loop by self's dtype before it compares the two
    _check_batches(self, mat2)
    return self.dtype


@implements(aten.baddbmm.default, out=aten.baddbmm.out)
@computed_by(addmm, name="baddbmm")
def baddbmm_kernel(self, batch1, batch2, *, beta=1, alpha=1):
    _check_batches(batch1, batch2)
    if self.dtype != batch1.dtype:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {self.dtype}, batch1: {batch1.dtype}, batch2: {batch2.dtype}"
        )
    self.expand(batch1.shape[0], batch1.shape[1], batch2.shape[2])  # for PyTorch's error
    _check_bmm_sizes(batch1, batch2)
    _check_product_dtype("baddbmm", batch1.dtype)
    return self.dtype


@implements(aten.addbmm.default, out=aten.addbmm.out)
@computed_by(addbmm)
def addbmm_kernel(self, batch1, batch2, *, beta=1, alpha=1):
    for name, batch in (("batch1", batch1), ("batch2", batch2)):
        if batch.dim() != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(
            f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and {batch2.shape[0]}"
        )
    self.expand(batch1.shape[1], batch2.shape[2])  # for PyTorch's error
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} "
            f"and {batch2.shape[1]}x{batch2.shape[2]})"
        )
    _check_addmm_dtypes(self, batch1, batch2)
    _check_product_dtype("addbmm", batch1.dtype)
    return self.dtype


# --- mv, addmv, dot ---------------------------------------------------------


def _check_addmv(self_dtype, self_shape, mat, vec):
    """PyTorch's addmv checks; mv runs them with a ``self`` made like ``vec``, as its composite does."""
    if len(self_shape) > 1 or mat.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {len(self_shape)}, {mat.dim()}, {vec.dim()}")
    numel = math.prod(self_shape)
    if mat.shape[1] != vec.shape[0] or numel not in (mat.shape[0], 1):
        size = self_shape[0] if self_shape else numel
        raise RuntimeError(
            f"size mismatch, got input ({size}), mat ({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})"
        )
    if not self_dtype == mat.dtype == vec.dtype:
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{SCALAR_TYPE_NAMES[self_dtype]}, {_name(mat)}, and {_name(vec)}"
        )


@implements(aten.addmv.default, out=aten.addmv.out)
@computed_by(addmm, name="addmv")
def addmv_kernel(self, mat, vec, *, beta=1, alpha=1):
    _check_addmv(self.dtype, tuple(self.shape), mat, vec)
    self.expand(mat.shape[0])  # for PyTorch's error
    _check_product_dtype("addmv", mat.dtype)
    return self.dtype


@implements(aten.mv.default, out=aten.mv.out)
@computed_by(mm, name="mv")
def mv_kernel(self, vec):
    _check_addmv(vec.dtype, tuple(self.shape[:1]), self, vec)
    _check_product_dtype("mv", self.dtype)
    return vec.dtype


def dot(a, b, *, out_dtype):
    return np.dot(*in_compute_dtype(out_dtype, a, b)).astype(out_dtype, copy=False)


def vdot(a, b, *, out_dtype):
    """The dot product with ``a`` conjugated (``spectral_norm`` calls it); a real ``a`` is ``dot``."""
    return np.vdot(*in_compute_dtype(out_dtype, a, b)).astype(out_dtype, copy=False)


def _check_vectors(self, tensor):
    """The checks ``dot`` and ``vdot`` share, with ``dot``'s messages for both, as on CPU."""
    if self.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.dim()}D and {tensor.dim()}D tensors")
    if self.dtype != tensor.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {_name(self)} and {_name(tensor)}"
        )
    if self.numel() != tensor.numel():
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{self.numel()}] and src "
            f"[{tensor.numel()}] to have the same number of elements, but got "
            f"{self.numel()} and {tensor.numel()} elements respectively"
        )
    _check_product_dtype("dot", self.dtype)
    return self.dtype


implements(aten.dot.default, out=aten.dot.out)(computed_by(dot)(_check_vectors))
implements(aten.vdot.default, out=aten.vdot.out)(computed_by(vdot)(_check_vectors))


# --- linear, whole ----------------------------------------------------------
# F.linear is a composite: t, addmm (or matmul), the views that flatten and unflatten a batch, and
# in the backward mm, t, sum and views again: about ten ops through Python per layer and step.
# For one float dtype and the shapes the composite's fast form takes, one NumPy forward and one
# backward compute the same products, in the same order (see backend_pkg/ops/_whole_ops.py).


def _as_rows(array):
    """(..., features) as a matrix of rows: one matrix product, where NumPy runs a stack of them far slower."""
    return array.reshape(-1, array.shape[-1])


def _linear_forward(x, weight, bias):
    rows, w = _as_rows(unwrap(x)), unwrap(weight)
    output = np.matmul(rows, w.T)
    if bias is not None:
        quietly(np.add, output, unwrap(bias), out=output)  # the product is fresh memory
    return wrap(output.reshape(*x.shape[:-1], w.shape[0]))


class _Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight, bias)
        return _linear_forward(x, weight, bias)

    @staticmethod
    def backward(ctx, grad):
        x, weight, bias = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph: the composite's backward, itself differentiable
            return differentiable_gradients(
                lambda: composite(aten.linear.default, x, weight, bias), (x, weight, bias), grad
            )
        return quietly(
            _linear_backward, ctx.needs_input_grad, unwrap(grad), unwrap(x), unwrap(weight), bias is not None
        )


def _linear_backward(needs_grad, grad, x, weight, has_bias):
    """The gradients of x, the weight and the bias that ``needs_grad`` asks for, as npy tensors."""
    rows = _as_rows(grad)
    grad_x = wrap(np.matmul(rows, weight).reshape(x.shape)) if needs_grad[0] else None
    grad_weight = wrap(np.matmul(rows.T, _as_rows(x))) if needs_grad[1] else None
    grad_bias = wrap(rows.sum(axis=0)) if has_bias and needs_grad[2] else None
    return grad_x, grad_weight, grad_bias


def _takes_whole(x, weight, bias):
    """Whether the NumPy kernel computes this call: anything else, errors included, is the composite's."""
    tensors = (x, weight) if bias is None else (x, weight, bias)
    dtype = x.dtype
    if dtype not in (torch.float32, torch.float64) or not all(
        t.dtype == dtype and (getattr(t, "_npy_array", None) is not None or plain_npy(t)) for t in tensors
    ):  # an object that keeps a NumPy view is plain npy memory: the full check only for the others
        return False
    if x.dim() == 0 or weight.dim() != 2 or x.shape[-1] != weight.shape[1] or 0 in x.shape + weight.shape:
        return False
    return bias is None or tuple(bias.shape) == (weight.shape[0],)


@implements(aten.linear.default, autograd=True)
def linear(input, weight, bias=None):
    if not _takes_whole(input, weight, bias):
        return composite(aten.linear.default, input, weight, bias)
    if torch.is_grad_enabled() and (
        input.requires_grad or weight.requires_grad or (bias is not None and bias.requires_grad)
    ):
        return _Linear.apply(input, weight, bias)
    return _linear_forward(input, weight, bias)  # nothing to record: autograd.Function's own cost spared
