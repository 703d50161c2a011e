"""The nn ops training reaches: softmax, activations and their backward, losses.

``F.cross_entropy`` becomes ``_log_softmax`` and ``nll_loss_forward`` (or
``nll_loss2d_forward`` for spatial inputs) and, backward,
``nll_loss_backward`` and ``_log_softmax_backward_data``; ``F.relu``'s
backward is ``threshold_backward``; ``F.mse_loss`` is ``mse_loss`` and
``mse_loss_backward``. Each is computed in NumPy over whole arrays, half
precision in float32 and rounded once. Where PyTorch's CPU kernels round
half-precision intermediates (nll_loss sums, mse_loss differences, the
last-dim log_softmax), half results can differ from CPU's by that rounding;
npy's are the nearer to the exact values.
"""

import math

import numpy as np
import torch

from ..dtypes import SCALAR_TYPE_NAMES, compute_dtype, to_numpy_dtype
from ._numpy_errors import quietly
from ._dims import single_axis
from ._dtype_errors import not_implemented_for
from ._operands import check_broadcastable, computed, in_compute_dtype, numpy_compute_dtype, operand
from ._results import as_result
from ._select import select
from .registry import aten, computed_by, implements, lowers

# at::Reduction: how a loss combines its per-element terms.
_NONE, _MEAN, _SUM = 0, 1, 2


def _computed(op, tensor):
    """``tensor``'s array (a zero-dim CPU tensor's value) in its compute dtype: float32 for half."""
    return np.asarray(operand(op, tensor), dtype=to_numpy_dtype(compute_dtype(tensor.dtype)))


def _check_dtype(expected, tensor):
    """The check PyTorch's kernels make when they read ``tensor`` as ``expected``'s dtype."""
    if tensor.dtype != expected.dtype:
        raise RuntimeError(
            f"expected scalar type {SCALAR_TYPE_NAMES[expected.dtype]} "
            f"but found {SCALAR_TYPE_NAMES[tensor.dtype]}"
        )


# --- softmax and log_softmax ------------------------------------------------


def _softmax_checks(op):
    """The checks of softmax and log_softmax, as CPU makes them."""

    def checks(self, dim, half_to_float):
        shape, dtype = self.shape, self.dtype
        single_axis(op, dim, len(shape))
        if half_to_float:
            # Half in, float out exists only in PyTorch's CUDA kernels.
            raise RuntimeError("softmax with half to float conversion is not supported on CPU or npy")
        # Like CPU, an empty input returns before its dtype is looked at.
        if 0 not in shape and not dtype.is_floating_point:
            raise not_implemented_for(op, dtype)
        return dtype

    checks.__name__ = op
    return checks


def _shifted(array, axis):
    """``array`` minus its max along ``axis``, so that exp cannot overflow.

    A slice that is all -inf becomes nan (-inf minus -inf), as it does in
    PyTorch; an empty slice has -inf as its max.
    """
    return quietly(np.subtract, array, array.max(axis=axis, keepdims=True, initial=-np.inf))


def _softmax_input(op, a, dim, out_dtype):
    """``a`` in ``out_dtype``'s compute dtype (half in float32), and the softmax axis."""
    return a.astype(numpy_compute_dtype(out_dtype), copy=False), single_axis(op, dim, a.ndim)


@lowers(aten._softmax.default)
def softmax(a, dim, half_to_float, *, out_dtype):
    if a.size == 0:
        return np.empty(a.shape, out_dtype)
    x, axis = _softmax_input("softmax", a, dim, out_dtype)
    exp = np.exp(_shifted(x, axis))
    return (exp / exp.sum(axis=axis, keepdims=True)).astype(out_dtype, copy=False)


@lowers(aten._log_softmax.default)
def log_softmax(a, dim, half_to_float, *, out_dtype):
    if a.size == 0:
        return np.empty(a.shape, out_dtype)
    x, axis = _softmax_input("log_softmax", a, dim, out_dtype)
    shifted = _shifted(x, axis)
    return (shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))).astype(out_dtype, copy=False)


implements(aten._softmax.default, out=aten._softmax.out, name="softmax")(
    computed_by(softmax)(_softmax_checks("softmax"))
)
implements(aten._log_softmax.default, out=aten._log_softmax.out, name="log_softmax")(
    computed_by(log_softmax)(_softmax_checks("log_softmax"))
)


def _softmax_backward_checks(op):
    """The checks of a softmax backward, as PyTorch's CPU kernels make them."""

    def checks(grad_output, output, dim, input_dtype):
        shape, dtype = grad_output.shape, grad_output.dtype
        if shape != output.shape:
            raise RuntimeError(
                f"Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 "
                f"'output'; but {list(shape)} does not equal {list(output.shape)} "
                f"(while checking arguments for {op})"
            )
        single_axis(op, dim, len(shape))
        if not dtype.is_floating_point:
            raise not_implemented_for(op, dtype)
        _check_dtype(grad_output, output)
        if dtype == torch.float32 and input_dtype == torch.float16:
            # The backward of a half-to-float softmax, which CPU (and npy) cannot run forward.
            raise RuntimeError("expected scalar type Float but found Half")
        return dtype

    checks.__name__ = op
    return checks


def softmax_backward(grad_output, output, dim, input_dtype, *, out_dtype):
    grad, y = in_compute_dtype(out_dtype, grad_output, output)
    axis = single_axis("softmax_backward", dim, grad.ndim)
    return (y * (grad - np.sum(grad * y, axis=axis, keepdims=True))).astype(out_dtype, copy=False)


def log_softmax_backward(grad_output, output, dim, input_dtype, *, out_dtype):
    grad, y = in_compute_dtype(out_dtype, grad_output, output)
    axis = single_axis("log_softmax_backward", dim, grad.ndim)
    return (grad - np.exp(y) * grad.sum(axis=axis, keepdims=True)).astype(out_dtype, copy=False)


implements(aten._softmax_backward_data.default, out=aten._softmax_backward_data.out, name="softmax_backward")(
    computed_by(softmax_backward)(_softmax_backward_checks("softmax_backward"))
)
implements(
    aten._log_softmax_backward_data.default,
    out=aten._log_softmax_backward_data.out,
    name="log_softmax_backward",
)(computed_by(log_softmax_backward)(_softmax_backward_checks("log_softmax_backward")))


# --- activations and their backward -----------------------------------------


@lowers(aten.threshold_backward.default)
def threshold_backward(grad_output, a, threshold, *, out_dtype):
    """The gradient passes where ``a > threshold`` (and where ``a`` is NaN), else 0."""
    grad, x = computed(out_dtype, grad_output, a, exact=True)
    # The threshold is compared in the tensors' dtype, as C++ converts it.
    limit = np.asarray(threshold).astype(out_dtype).astype(x.dtype)
    return select(x <= limit, 0, grad).astype(out_dtype, copy=False)


@implements(aten.threshold_backward.default, out=aten.threshold_backward.grad_input)
@computed_by(threshold_backward)
def threshold_backward_kernel(grad_output, self, threshold):
    check_broadcastable(self, grad_output)  # in the operand order of CPU's kernel
    dtype = self.dtype  # ReLU's backward: one dtype, nothing to promote
    if grad_output.dtype != dtype:
        dtype = torch.result_type(grad_output, self)
    if dtype == torch.bool or dtype.is_complex:
        raise not_implemented_for("threshold_backward", dtype)
    return dtype


def _promoted_dtype(a, b):
    """``torch.result_type(a, b)``, without asking it when the dtypes are one (the usual case)."""
    dtype = a.dtype
    return dtype if b.dtype == dtype else torch.result_type(a, b)


def _differentiable_checks(op):
    """The checks of an activation backward: integers have no gradient kernel."""

    def checks(grad_output, output):
        check_broadcastable(grad_output, output)
        dtype = _promoted_dtype(grad_output, output)
        if not (dtype.is_floating_point or dtype.is_complex):
            raise not_implemented_for(op, dtype)
        return dtype

    checks.__name__ = op
    return checks


def sigmoid_backward(grad_output, output, *, out_dtype):
    grad, y = computed(out_dtype, grad_output, output, exact=True)
    return (grad * np.conj((1 - y) * y)).astype(out_dtype, copy=False)


def tanh_backward(grad_output, output, *, out_dtype):
    grad, y = computed(out_dtype, grad_output, output, exact=True)
    return (grad * np.conj(1 - y * y)).astype(out_dtype, copy=False)


implements(aten.sigmoid_backward.default, out=aten.sigmoid_backward.grad_input)(
    computed_by(sigmoid_backward)(_differentiable_checks("sigmoid_backward"))
)
implements(aten.tanh_backward.default, out=aten.tanh_backward.grad_input)(
    computed_by(tanh_backward)(_differentiable_checks("tanh_backward"))
)


# NumPy has no erf; math.erf is accurate to double precision, so mapping it
# over the elements (in float64) gives gelu to within rounding of the result
# dtype, at Python speed: fine for the sizes npy tensors are for.
_erf_objects = np.frompyfunc(math.erf, 1, 1)

_SQRT_2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_TANH_CUBIC = 0.044715  # the tanh approximation's coefficient of x**3


def _erf(x):
    return np.asarray(_erf_objects(x), dtype=np.float64)


def _gelu_checks(op):
    def checks(*tensors, approximate="none"):
        self = tensors[-1]
        if approximate not in ("none", "tanh"):
            raise RuntimeError("approximate argument must be either none or tanh.")
        if not self.dtype.is_floating_point:
            raise not_implemented_for(op, self.dtype)
        check_broadcastable(*tensors)
        return torch.result_type(*tensors) if len(tensors) > 1 else self.dtype

    checks.__name__ = op
    return checks


@lowers(aten.gelu.default)
def gelu(a, *, approximate="none", out_dtype):
    x = a.astype(np.float64)
    if approximate == "tanh":
        cdf = 0.5 * (1 + np.tanh(_SQRT_2_OVER_PI * (x + _TANH_CUBIC * x**3)))
    else:
        cdf = 0.5 * (1 + _erf(x / _SQRT_2))
    return (x * cdf).astype(out_dtype, copy=False)


def gelu_backward(grad_output, a, *, approximate="none", out_dtype):
    x = a.astype(np.float64)
    grad = grad_output.astype(numpy_compute_dtype(out_dtype), copy=False).astype(np.float64)
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (x + _TANH_CUBIC * x**3)
        tanh = np.tanh(inner)
        inner_slope = _SQRT_2_OVER_PI * (1 + 3 * _TANH_CUBIC * x * x)
        slope = 0.5 * (1 + tanh) + 0.5 * x * (1 - tanh * tanh) * inner_slope
    else:
        pdf = np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        slope = 0.5 * (1 + _erf(x / _SQRT_2)) + x * pdf
    return (grad * slope).astype(out_dtype, copy=False)


implements(aten.gelu.default, out=aten.gelu.out)(computed_by(gelu)(_gelu_checks("gelu")))
implements(aten.gelu_backward.default, out=aten.gelu_backward.grad_input)(
    computed_by(gelu_backward)(_gelu_checks("gelu_backward"))
)


# --- losses -------------------------------------------------------------------


def _reduced_loss(terms, reduction):
    """Combine a loss's terms: none keeps them, mean averages (nan for none), sum adds."""
    if reduction == _NONE:
        return terms
    total = np.sum(terms)
    if reduction == _SUM:
        return total
    with np.errstate(invalid="ignore"):
        return total / terms.size


def mse_loss(a, target, reduction=_MEAN, *, out_dtype):
    x, y = computed(out_dtype, a, target, exact=True)
    return np.asarray(_reduced_loss((x - y) ** 2, reduction)).astype(out_dtype, copy=False)


@implements(aten.mse_loss.default, out=aten.mse_loss.out)
@computed_by(mse_loss)
def mse_loss_kernel(self, target, reduction=_MEAN):
    dtype = _promoted_dtype(self, target)
    if not dtype.is_floating_point:
        raise not_implemented_for("mse_loss", dtype)
    return dtype


def mse_loss_backward(grad_output, a, target, reduction, *, common_dtype):
    # d/dx of (x - y)**2 is 2 (x - y), divided by the number of terms for a mean;
    # the result is self's dtype, as PyTorch computes it into a tensor like self.
    x, y = computed(common_dtype, a, target, exact=True)
    grad = np.asarray(grad_output, dtype=x.dtype)
    scale = np.asarray(2 / a.size if reduction == _MEAN else 2, dtype=x.dtype)
    return ((x - y) * scale * grad).astype(a.dtype, copy=False)


@implements(aten.mse_loss_backward.default, out=aten.mse_loss_backward.grad_input)
@computed_by(mse_loss_backward)
def mse_loss_backward_kernel(grad_output, self, target, reduction):
    dtype = _promoted_dtype(self, target)
    if dtype == torch.bool or dtype.is_complex:
        raise not_implemented_for("mse_loss_backward", dtype)
    return dtype


# nll_loss picks, for each sample, minus the input at its target class, scaled
# by that class's weight. Classes run along dim 1 (dim 0 for one unbatched
# sample); samples whose target is ``ignore_index`` count for nothing.


def _check_nll_inputs(self, target, weight):
    # Shapes read once: each read of a tensor subclass's metadata costs about a microsecond.
    shape, target_shape = tuple(self.shape), tuple(target.shape)
    if not 1 <= len(shape) <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if len(target_shape) > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if len(shape) == 1 and len(target_shape) == 1 and target_shape[0] != 1:
        raise ValueError(
            f"For 1D input, 1D target must have size 1, but got target size: {target_shape[0]}"
        )
    if len(shape) == 2 and not target_shape:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if len(shape) == 2 and shape[0] != target_shape[0]:
        raise RuntimeError(f"size mismatch (got input: {list(shape)}, target: {list(target_shape)})")
    classes = shape[-1]
    if weight is not None and (weight.dim() != 1 or weight.numel() != classes):
        raise RuntimeError(
            f"weight tensor should be defined either for all {classes} classes or no classes "
            f"but got weight tensor of shape: {list(weight.shape)}"
        )


def _check_nll2d_inputs(self, target, weight):
    if target.dim() != 3:
        raise RuntimeError(
            "only batches of spatial targets supported (3D tensors) but got targets of "
            f"dimension: {target.dim()}"
        )
    if self.dim() != 4:
        raise RuntimeError(
            "only batches of spatial inputs supported (4D tensors), but got input of "
            f"dimension: {self.dim()}"
        )
    if weight is not None and weight.numel() != self.shape[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if (self.shape[0], *self.shape[2:]) != tuple(target.shape):
        raise RuntimeError(
            f"size mismatch (got input: {list(self.shape)} , target: {list(target.shape)}"
        )


def _picked_classes(op, self, target, weight, ignore_index):
    """Each sample's target class (0 where ignored), its weight (0 where ignored; None where
    every sample counts once, the usual case), and the class axis."""
    if target.dtype not in (torch.int64, torch.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {SCALAR_TYPE_NAMES[target.dtype]}"
        )
    if not self.dtype.is_floating_point:
        raise not_implemented_for(op, self.dtype)
    if weight is not None:
        _check_dtype(self, weight)
    x = _computed(op, self)
    classes_axis = 1 if x.ndim > 1 else 0
    classes = x.shape[classes_axis]
    labels = np.asarray(operand(op, target)).astype(np.int64, copy=False)
    if x.ndim == 1:
        labels = labels.reshape(())
    ignored = labels == ignore_index
    # Negative labels, seen as unsigned, are past any class count too.
    out_of_range = (labels.view(np.uint64) >= classes) & ~ignored
    if out_of_range.any():
        raise IndexError(f"Target {labels[out_of_range].flat[0]} is out of bounds.")
    if weight is None and not ignored.any():
        return x, labels, None, classes_axis
    labels = np.where(ignored, 0, labels)
    class_weights = np.ones(classes, x.dtype) if weight is None else _computed(op, weight)
    return x, labels, np.where(ignored, 0, class_weights[labels]), classes_axis


def _classes_last(array, labels, axis):
    """``array`` with its class ``axis`` moved last (a view: writes reach ``array``), and
    ``labels`` as indices into that axis for ``np.take_along_axis``/``np.put_along_axis``."""
    return np.moveaxis(array, axis, -1), labels[..., None]


def _batch_rows(x, labels, axis):
    """For a (batch, classes) ``x``, the index that picks each row's ``labels`` entry, else None.

    Plain indexing costs a fifth of ``np.take_along_axis``'s general case, on a training batch.
    """
    return (np.arange(len(labels)), labels) if x.ndim == 2 and axis == 1 else None


def _nll_forward(op, self, target, weight, reduction, ignore_index):
    x, labels, weights, axis = _picked_classes(op, self, target, weight, ignore_index)
    rows = _batch_rows(x, labels, axis)
    if rows is not None:
        picked = x[rows]
    else:
        by_class, index = _classes_last(x, labels, axis)
        picked = np.take_along_axis(by_class, index, axis=-1)[..., 0]
    losses = -picked if weights is None else -picked * weights
    total_weight = labels.size if weights is None else np.sum(weights)
    if reduction == _NONE and x.ndim > 1:
        # Per-sample losses: PyTorch leaves total_weight at 0 (one sample goes the summing way).
        return as_result(losses, self.dtype), as_result(0, self.dtype)
    output = np.sum(losses)
    if reduction == _MEAN:
        output = quietly(np.divide, output, total_weight)  # all ignored: 0 / 0 = nan, as in PyTorch
    return as_result(output, self.dtype), as_result(total_weight, self.dtype)


def _check_nll_grad(self, target, reduction, grad_output, total_weight):
    _check_dtype(self, grad_output)
    _check_dtype(self, total_weight)
    if total_weight.numel() != 1:
        raise RuntimeError(
            "expected total_weight to be a  single element tensor, got: "
            f"{list(total_weight.shape)} ({total_weight.numel()} elements)"
        )
    batched = self.dim() > 1
    if reduction == _NONE and batched:
        if grad_output.shape != target.shape:
            raise RuntimeError(
                f"Expected a tensor of dimension {target.dim()} and tensor.size[0] == "
                f"{target.shape[0]} but got: dimension {grad_output.dim()} and tensor.size[0] = "
                f"{grad_output.shape[0] if grad_output.dim() else 1}"
            )
    elif grad_output.numel() != 1:
        raise RuntimeError(
            f"Expected a single element grad_output tensor, but got: {list(grad_output.shape)}"
        )


def _nll_backward(op, grad_output, self, target, weight, reduction, ignore_index, total_weight):
    """Minus the class weight times the incoming gradient, at each sample's target class; 0 elsewhere."""
    _check_nll_grad(self, target, reduction, grad_output, total_weight)
    x, labels, weights, axis = _picked_classes(op, self, target, weight, ignore_index)
    grad = _computed(op, grad_output)
    if reduction != _NONE or self.dim() == 1:
        grad = grad.reshape(())
    if reduction == _MEAN:
        grad = quietly(np.divide, grad, _computed(op, total_weight).reshape(()))
    # Ignored samples (weight 0) stay 0 even if grad is inf.
    slope = -grad if weights is None else np.where(weights == 0, 0, quietly(np.multiply, -weights, grad))
    grad_input = np.zeros_like(x)
    rows = _batch_rows(x, labels, axis)
    if rows is not None:
        grad_input[rows] = slope
    else:
        by_class, index = _classes_last(grad_input, labels, axis)
        np.put_along_axis(by_class, index, slope[..., None], axis=-1)
    return as_result(grad_input, self.dtype)


@implements(aten.nll_loss_forward.default, out=aten.nll_loss_forward.output)
def nll_loss_forward(self, target, weight, reduction, ignore_index):
    _check_nll_inputs(self, target, weight)
    return _nll_forward("nll_loss_forward", self, target, weight, reduction, ignore_index)


@implements(aten.nll_loss2d_forward.default, out=aten.nll_loss2d_forward.output)
def nll_loss2d_forward(self, target, weight, reduction, ignore_index):
    _check_nll2d_inputs(self, target, weight)
    return _nll_forward("nll_loss2d_forward", self, target, weight, reduction, ignore_index)


@implements(aten.nll_loss_backward.default, out=aten.nll_loss_backward.grad_input)
def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    _check_nll_inputs(self, target, weight)
    return _nll_backward(
        "nll_loss_backward", grad_output, self, target, weight, reduction, ignore_index, total_weight
    )


@implements(aten.nll_loss2d_backward.default, out=aten.nll_loss2d_backward.grad_input)
def nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    _check_nll2d_inputs(self, target, weight)
    return _nll_backward(
        "nll_loss2d_backward", grad_output, self, target, weight, reduction, ignore_index, total_weight
    )
