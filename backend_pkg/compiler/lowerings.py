"""The lowering table: for each aten overload, a NumPy function computing it.

The compiled code calls these on NumPy arrays directly, with the graph's
own arguments: arrays in place of npy tensors, and Python numbers, shapes
and dims as the graph has them (a factory's ``device`` and a reduction's
``dtype`` included, though the arrays make them moot). An implementation
that declares a keyword-only ``out_dtype`` receives the name of the NumPy
dtype (a list of them, for a list result) that PyTorch gives the result,
read from the traced graph, and must return exactly that dtype: NumPy
promotes differently (an int64 array times a Python float is float64 in
NumPy, float32 in PyTorch; a 0-dim float64 operand widens a float32 array
in NumPy, not in PyTorch), so arithmetic is computed in that dtype rather
than in NumPy's choice, and half precision accumulates in float32, as
PyTorch's CPU kernels do.

Results may be views of their inputs wherever NumPy's are: the graphs are
functional, so nothing writes through a view except ``copy_``, which
writes into a graph input on purpose.

The table covers the core ATen ops the ``npy`` backend's decompositions
leave, and a few composite ones (``t``, ``threshold_backward``,
``addcmul``...) that :func:`~backend_pkg.compiler.codegen.compile_graph`
meets in graphs traced with fewer decompositions, or that the foreach
lowerings reuse.
"""

import numpy as np
import torch

aten = torch.ops.aten

LOWERINGS = {}


def lowers(*ops):
    """Register the decorated NumPy function as the lowering of each aten overload in ``ops``."""

    def decorator(implementation):
        for op in ops:
            if op in LOWERINGS:
                raise ValueError(f"npy compiler: {op} already lowers to {LOWERINGS[op].__name__}")
            LOWERINGS[op] = implementation
        return implementation

    return decorator


def _axes(dims, ndim):
    """A reduction's dims as NumPy axes: ``None`` (every axis) for no dims or a 0-dim input."""
    if not dims or ndim == 0:
        return None
    return tuple(dims)


# --- elementwise ------------------------------------------------------------


@lowers(aten.add.Tensor, aten.add.Scalar)
def add(a, b, alpha=1, *, out_dtype):
    return np.add(a, b if alpha == 1 else np.multiply(b, alpha), dtype=out_dtype)


@lowers(aten.sub.Tensor, aten.sub.Scalar)
def sub(a, b, alpha=1, *, out_dtype):
    return np.subtract(a, b if alpha == 1 else np.multiply(b, alpha), dtype=out_dtype)


@lowers(aten.mul.Tensor, aten.mul.Scalar)
def mul(a, b, *, out_dtype):
    return np.multiply(a, b, dtype=out_dtype)


@lowers(aten.div.Tensor, aten.div.Scalar, aten.true_divide.Tensor)
def div(a, b, *, out_dtype):
    return np.true_divide(a, b, dtype=out_dtype)


@lowers(aten.pow.Tensor_Scalar, aten.pow.Tensor_Tensor, aten.pow.Scalar)
def power(a, b, *, out_dtype):
    return np.power(a, b, dtype=out_dtype)


@lowers(aten.maximum.default)
def maximum(a, b, *, out_dtype):
    return np.maximum(a, b, dtype=out_dtype)


@lowers(aten.minimum.default)
def minimum(a, b, *, out_dtype):
    return np.minimum(a, b, dtype=out_dtype)


@lowers(aten.clamp.default)
def clamp(a, min=None, max=None, *, out_dtype):
    return np.clip(a, min, max, dtype=out_dtype)


@lowers(aten.addcmul.default)
def addcmul(a, tensor1, tensor2, value=1, *, out_dtype):
    return np.add(a, np.multiply(np.multiply(tensor1, tensor2, dtype=out_dtype), value), dtype=out_dtype)


@lowers(aten.addcdiv.default)
def addcdiv(a, tensor1, tensor2, value=1, *, out_dtype):
    return np.add(a, np.multiply(np.true_divide(tensor1, tensor2, dtype=out_dtype), value), dtype=out_dtype)


@lowers(aten.lerp.Scalar, aten.lerp.Tensor)
def lerp(a, end, weight, *, out_dtype):
    return np.add(a, np.multiply(weight, np.subtract(end, a, dtype=out_dtype)), dtype=out_dtype)


@lowers(aten.neg.default)
def negative(a, *, out_dtype):
    return np.negative(a, dtype=out_dtype)


@lowers(aten.exp.default)
def exp(a, *, out_dtype):
    return np.exp(a, dtype=out_dtype)


@lowers(aten.log.default)
def log(a, *, out_dtype):
    return np.log(a, dtype=out_dtype)


@lowers(aten.sqrt.default)
def sqrt(a, *, out_dtype):
    return np.sqrt(a, dtype=out_dtype)


@lowers(aten.abs.default)
def absolute(a, *, out_dtype):
    return np.absolute(a, dtype=out_dtype)


@lowers(aten.tanh.default)
def tanh(a, *, out_dtype):
    return np.tanh(a, dtype=out_dtype)


@lowers(aten.reciprocal.default)
def reciprocal(a, *, out_dtype):
    return np.reciprocal(a, dtype=out_dtype)


@lowers(aten.rsqrt.default)
def rsqrt(a, *, out_dtype):
    return np.reciprocal(np.sqrt(a, dtype=out_dtype))


@lowers(aten.sigmoid.default)
def sigmoid(a, *, out_dtype):
    return np.reciprocal(np.add(1, np.exp(np.negative(a, dtype=out_dtype))))


@lowers(aten.relu.default)
def relu(a, *, out_dtype):
    # np.maximum keeps NaN, as relu does.
    return np.maximum(a, 0, dtype=out_dtype)


@lowers(aten.threshold_backward.default)
def threshold_backward(grad_output, a, threshold, *, out_dtype):
    return np.where(a <= threshold, 0, grad_output).astype(out_dtype, copy=False)


@lowers(aten.where.self)
def where(condition, a, b, *, out_dtype):
    return np.where(condition, a, b).astype(out_dtype, copy=False)


# Comparisons compute in the operands' promoted dtype, which NumPy picks as
# PyTorch does here (a Python number adapts to the array); only the result is bool.


@lowers(aten.eq.Tensor, aten.eq.Scalar)
def equal(a, b):
    return np.equal(a, b)


@lowers(aten.ne.Tensor, aten.ne.Scalar)
def not_equal(a, b):
    return np.not_equal(a, b)


@lowers(aten.lt.Tensor, aten.lt.Scalar)
def less(a, b):
    return np.less(a, b)


@lowers(aten.le.Tensor, aten.le.Scalar)
def less_equal(a, b):
    return np.less_equal(a, b)


@lowers(aten.gt.Tensor, aten.gt.Scalar)
def greater(a, b):
    return np.greater(a, b)


@lowers(aten.ge.Tensor, aten.ge.Scalar)
def greater_equal(a, b):
    return np.greater_equal(a, b)


@lowers(aten.logical_not.default)
def logical_not(a):
    return np.logical_not(a)


@lowers(aten.any.dims, aten.any.dim)
def any_dims(a, dim=None, keepdim=False):
    return np.any(a, axis=_axes([dim] if isinstance(dim, int) else dim, a.ndim), keepdims=keepdim)


@lowers(aten.any.default)
def any_all(a):
    return np.any(a)


# --- reductions and softmax -------------------------------------------------


def _accumulating(out_dtype):
    """The dtype a reduction or a product accumulates in: float32 for half precision, as on CPU."""
    return "float32" if out_dtype == "float16" else out_dtype


@lowers(aten.sum.dim_IntList)
def sum_dims(a, dim, keepdim=False, *, dtype=None, out_dtype):
    total = np.add.reduce(a, axis=_axes(dim, a.ndim), keepdims=keepdim, dtype=_accumulating(out_dtype))
    return total.astype(out_dtype, copy=False)


@lowers(aten.sum.default)
def sum_all(a, *, dtype=None, out_dtype):
    return np.add.reduce(a, axis=None, dtype=_accumulating(out_dtype)).astype(out_dtype, copy=False)


@lowers(aten.mean.dim)
def mean_dims(a, dim, keepdim=False, *, dtype=None, out_dtype):
    average = np.mean(a, axis=_axes(dim, a.ndim), keepdims=keepdim, dtype=_accumulating(out_dtype))
    return average.astype(out_dtype, copy=False)


@lowers(aten.mean.default)
def mean_all(a, *, dtype=None, out_dtype):
    return np.mean(a, dtype=_accumulating(out_dtype)).astype(out_dtype, copy=False)


@lowers(aten.amax.default)
def amax(a, dim=(), keepdim=False):
    return np.maximum.reduce(a, axis=_axes(dim, a.ndim), keepdims=keepdim)


@lowers(aten.amin.default)
def amin(a, dim=(), keepdim=False):
    return np.minimum.reduce(a, axis=_axes(dim, a.ndim), keepdims=keepdim)


@lowers(aten._log_softmax.default)
def log_softmax(a, dim, half_to_float, *, out_dtype):
    axis = None if a.ndim == 0 else dim
    a = a.astype(_accumulating(out_dtype), copy=False)
    shifted = a - np.maximum.reduce(a, axis=axis, keepdims=True)
    return (shifted - np.log(np.add.reduce(np.exp(shifted), axis=axis, keepdims=True))).astype(out_dtype, copy=False)


@lowers(aten._softmax.default)
def softmax(a, dim, half_to_float, *, out_dtype):
    axis = None if a.ndim == 0 else dim
    a = a.astype(_accumulating(out_dtype), copy=False)
    exponentials = np.exp(a - np.maximum.reduce(a, axis=axis, keepdims=True))
    return (exponentials / np.add.reduce(exponentials, axis=axis, keepdims=True)).astype(out_dtype, copy=False)


# --- matrix products --------------------------------------------------------


@lowers(aten.mm.default, aten.bmm.default)
def mm(a, b, *, out_dtype):
    return np.matmul(a, b, dtype=_accumulating(out_dtype)).astype(out_dtype, copy=False)


@lowers(aten.addmm.default)
def addmm(bias, a, b, *, beta=1, alpha=1, out_dtype):
    product = np.matmul(a, b, dtype=_accumulating(out_dtype))
    if alpha != 1:
        product *= alpha
    if beta != 0:  # beta=0 ignores the bias, even its NaNs
        product += bias if beta == 1 else beta * bias
    return product.astype(out_dtype, copy=False)


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
    return np.broadcast_to(a, shape)


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
    return np.take(a, index, axis=dim)


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


# --- gather and scatter -----------------------------------------------------


def _index_region(a, dim, index):
    """The part of ``a`` an index addresses: PyTorch's index may be shorter than
    ``a`` outside ``dim``, where NumPy's along-axis functions want equal sizes."""
    return a[tuple(slice(None) if axis == dim else slice(0, length) for axis, length in enumerate(index.shape))]


@lowers(aten.gather.default)
def gather(a, dim, index, *, sparse_grad=False):
    return np.take_along_axis(_index_region(a, dim, index), index, axis=dim)


@lowers(aten.scatter.value, aten.scatter.src)
def scatter(a, dim, index, value):
    result = np.array(a, copy=True)
    if isinstance(value, np.ndarray):
        value = _index_region(value, dim, index)
    np.put_along_axis(_index_region(result, dim, index), index, value, axis=dim)
    return result


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


@lowers(aten.arange.start_step)
def arange(start, end, step=1, *, out_dtype, **_placement):
    return np.arange(start, end, step, dtype=out_dtype)


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

    def foreach(*args, out_dtype, **kwargs):
        return [
            lowering(*(arg[i] if isinstance(arg, (list, tuple)) else arg for arg in args), out_dtype=dtype, **kwargs)
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
        (power, "pow", ("List", "Scalar", "ScalarList", "ScalarAndTensor")),
        (maximum, "maximum", ("List", "Scalar", "ScalarList")),
        (minimum, "minimum", ("List", "Scalar", "ScalarList")),
        (lerp, "lerp", ("List", "Scalar", "ScalarList")),
        (addcmul, "addcmul", ("Scalar", "ScalarList")),
        (addcdiv, "addcdiv", ("Scalar", "ScalarList")),
        (negative, "neg", ("default",)),
        (exp, "exp", ("default",)),
        (sqrt, "sqrt", ("default",)),
        (absolute, "abs", ("default",)),
        (reciprocal, "reciprocal", ("default",)),
    ]:
        packet = getattr(aten, f"_foreach_{name}")
        lowers(*(getattr(packet, overload) for overload in overloads))(_for_each(lowering))


_register_foreach()
