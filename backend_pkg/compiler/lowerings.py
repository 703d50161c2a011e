"""The lowering table: for each aten overload, a NumPy function computing it.

The table is :data:`backend_pkg.ops.registry.LOWERINGS`. An op with an npy
kernel is one NumPy function, defined with its kernel in :mod:`backend_pkg.ops`
and registered there with ``@lowers``: eager kernel and compiled code run
the same function (the arithmetic, comparisons, reductions, softmax,
matrix products, normalization, indexing (``index``, ``gather``,
``scatter``, ``index_put``...), ``cat``, the random draws, the activations
and losses that compiled graphs keep). This
module adds the ops whose eager side is PyTorch's own composite or a
metadata change rather than a computation: views, copies, factories, the
checks and sizes of graphs with dynamic shapes, and the foreach ops the
compiled optimizers call.

The compiled code calls these on NumPy arrays directly, with the graph's
own arguments: arrays in place of npy tensors, and Python numbers, shapes
and dims as the graph has them (a factory's ``device`` included, though the
arrays make it moot). A keyword-only ``out_dtype`` receives the name of the
NumPy dtype (a list of them, for a list result) that PyTorch gives the
result, read from the traced graph (see :func:`~backend_pkg.ops.registry.lowers`).

Results may be views of their inputs wherever NumPy's are: the graphs are
functional, so nothing writes through a view except ``copy_``, which
writes into a graph input on purpose.
"""

import numpy as np
import torch

from ..ops.arithmetic import add, div, maximum, minimum, mul, neg, pow, sub
from ..ops.fused_pointwise import addcdiv, addcmul, lerp
from ..ops.registry import LOWERINGS, dtype_keyword, lowers
from ..ops.unary import FLOAT_FUNCTIONS, absolute, relu

aten = torch.ops.aten

# The table, and relu, which the Compiling page shows as a lowering.
__all__ = ["LOWERINGS", "lowers", "relu"]


# --- views and copies -------------------------------------------------------


@lowers(aten.view.default, aten._unsafe_view.default)
def view(a, size):
    return a.reshape(size)


@lowers(aten.permute.default)
def permute(a, dims):
    return a.transpose(dims)


@lowers(aten.t.default)
def t(a):
    return a.T if a.ndim == 2 else a


@lowers(aten.transpose.int)
def transpose(a, dim0, dim1):
    return np.swapaxes(a, dim0, dim1)


@lowers(aten.expand.default)
def expand(a, size, *, implicit=False):
    lead = len(size) - a.ndim
    shape = [a.shape[dim - lead] if length == -1 else length for dim, length in enumerate(size)]
    # np.broadcast_to's result is read-only, which no tensor is: PyTorch warns on reading one as a tensor.
    return np.lib.stride_tricks.as_strided(a, shape, np.broadcast_to(a, shape).strides, writeable=True)


@lowers(aten.unsqueeze.default)
def unsqueeze(a, dim):
    return np.expand_dims(a, dim)


@lowers(aten.squeeze.dims, aten.squeeze.dim, aten.squeeze.default)
def squeeze(a, dims=None):
    """PyTorch leaves a named dim that is not of size 1 alone; NumPy would refuse it."""
    if dims is None:
        return np.squeeze(a)
    if isinstance(dims, int):
        dims = (dims,)
    return np.squeeze(a, axis=tuple(dim for dim in dims if a.ndim and a.shape[dim] == 1))


@lowers(aten.slice.Tensor)
def slice_dim(a, dim=0, start=None, end=None, step=1):
    index = [slice(None)] * a.ndim
    index[dim] = slice(start, end, step)
    return a[tuple(index)]


@lowers(aten.select.int)
def select(a, dim, index):
    """A view, as PyTorch's (``np.take`` would copy, and the result would lose the input's strides)."""
    return a[(slice(None),) * (dim % a.ndim) + (index,)]


@lowers(aten.alias.default)
def alias(a):
    return a


@lowers(aten.clone.default, aten.lift_fresh_copy.default)
def clone(a, *, memory_format=None):
    return np.array(a, copy=True)


@lowers(aten._to_copy.default)
def to_copy(a, *, out_dtype, **_placement):
    """A dtype change on the npy device (the compiler runs a device change eagerly)."""
    return np.array(a, dtype=out_dtype, copy=True)


@lowers(torch.ops.prims.convert_element_type.default)
def convert_element_type(a, dtype, *, out_dtype):
    return a.astype(out_dtype)


@lowers(aten.copy.default)
def copy(destination, source, non_blocking=False, *, out_dtype):
    return np.array(np.broadcast_to(source, destination.shape), dtype=out_dtype, copy=True)


@lowers(aten.copy_.default)
def copy_(destination, source, non_blocking=False):
    np.copyto(destination, source, casting="unsafe")
    return destination


# --- factories --------------------------------------------------------------
# Factories also receive layout, device and pin_memory: the arrays live on the
# npy device whatever they say, and the dtype arrives as ``out_dtype``.


@lowers(aten.full.default)
def full(size, fill_value, *, out_dtype, **_placement):
    return np.full(size, fill_value, dtype=out_dtype)


@lowers(aten.full_like.default)
def full_like(a, fill_value, *, out_dtype, **_placement):
    return np.full(a.shape, fill_value, dtype=out_dtype)


@lowers(aten.zeros.default)
def zeros(size, *, out_dtype, **_placement):
    return np.zeros(size, dtype=out_dtype)


@lowers(aten.ones.default)
def ones(size, *, out_dtype, **_placement):
    return np.ones(size, dtype=out_dtype)


@lowers(aten.zeros_like.default)
def zeros_like(a, *, out_dtype, **_placement):
    return np.zeros(a.shape, dtype=out_dtype)


@lowers(aten.ones_like.default)
def ones_like(a, *, out_dtype, **_placement):
    return np.ones(a.shape, dtype=out_dtype)


@lowers(aten.empty_like.default)
def empty_like(a, *, out_dtype, **_placement):
    return np.empty(a.shape, dtype=out_dtype)


@lowers(aten.empty.memory_format)
def empty(size, *, out_dtype, **_placement):
    return np.empty(size, dtype=out_dtype)


@lowers(aten.empty_strided.default, aten.empty_permuted.default)
def empty_with_layout(size, strides_or_order, *, out_dtype, **_placement):
    """Uninitialised memory: the strides or physical layout asked for make no difference to values."""
    return np.empty(size, dtype=out_dtype)


@lowers(aten.scalar_tensor.default)
def scalar_tensor(value, *, out_dtype, **_placement):
    return np.array(value, dtype=out_dtype)


# --- checks and shapes, for graphs with dynamic sizes -----------------------


@lowers(aten._assert_async.msg)
def assert_async(condition, assert_msg):
    if not condition:
        raise RuntimeError(assert_msg)


@lowers(aten.sym_size.int)
def sym_size(a, dim):
    return a.shape[dim]


@lowers(aten.sym_numel.default)
def sym_numel(a):
    return a.size


# --- foreach ops (what compiled optimizers call) ----------------------------


def _for_each(lowering):
    """``lowering`` applied tensor by tensor: list arguments are per tensor, the others shared."""

    takes_dtype = dtype_keyword(lowering) == "out_dtype"

    def foreach(*args, out_dtype, **kwargs):
        return [
            lowering(
                *(arg[i] if isinstance(arg, (list, tuple)) else arg for arg in args),
                **kwargs,
                **({"out_dtype": dtype} if takes_dtype else {}),
            )
            for i, dtype in enumerate(out_dtype)
        ]

    foreach.__name__ = f"foreach_{lowering.__name__}"
    return foreach


def _register_foreach():
    """Each foreach op the optimizers call, lowered through its one-tensor lowering."""
    for lowering, name, overloads in [
        (add, "add", ("List", "Scalar", "ScalarList", "Tensor")),
        (sub, "sub", ("List", "Scalar", "ScalarList")),
        (mul, "mul", ("List", "Scalar", "ScalarList", "Tensor")),
        (div, "div", ("List", "Scalar", "ScalarList", "Tensor")),
        (pow, "pow", ("List", "Scalar", "ScalarList", "ScalarAndTensor")),
        (maximum, "maximum", ("List", "Scalar", "ScalarList")),
        (minimum, "minimum", ("List", "Scalar", "ScalarList")),
        (lerp, "lerp", ("List", "Scalar", "ScalarList")),
        (addcmul, "addcmul", ("Scalar", "ScalarList")),
        (addcdiv, "addcdiv", ("Scalar", "ScalarList")),
        (neg, "neg", ("default",)),
        (FLOAT_FUNCTIONS["exp"], "exp", ("default",)),
        (FLOAT_FUNCTIONS["sqrt"], "sqrt", ("default",)),
        (absolute, "abs", ("default",)),
        (FLOAT_FUNCTIONS["reciprocal"], "reciprocal", ("default",)),
    ]:
        packet = getattr(aten, f"_foreach_{name}")
        lowers(*(getattr(packet, overload) for overload in overloads))(_for_each(lowering))


_register_foreach()
