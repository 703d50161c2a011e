"""Losses on the npy device: mean squared error, negative log likelihood, binary cross entropy,
smooth L1 and Huber, CTC, margins.

What PyTorch sends the device, per loss (checked with ``BACKEND_PKG_STRICT=1``
on forward and backward, and against ``native_functions.yaml``):

* ``F.binary_cross_entropy``: ``binary_cross_entropy`` and
  ``binary_cross_entropy_backward``, CPU/CUDA-only kernels with no composite;
* ``F.binary_cross_entropy_with_logits``: ``binary_cross_entropy_with_logits``
  is ``CompositeExplicitAutograd``, so its composite (``log_sigmoid`` and
  arithmetic, ``aten/src/ATen/native/Loss.cpp``) runs at the device's key
  unless the device has a kernel: this one computes it in one pass. Its
  backward is a formula of ``derivatives.yaml`` (``sigmoid`` and arithmetic),
  which the device already has;
* ``F.smooth_l1_loss`` (``beta > 0``): structured ``smooth_l1_loss``, arriving as
  ``.out``, and ``smooth_l1_loss_backward``, whose functional overload is a
  composite over ``.grad_input``. With ``beta == 0`` ``F.smooth_l1_loss`` is
  ``l1_loss``, a composite of arithmetic;
* ``F.huber_loss``: ``huber_loss`` and ``huber_loss_backward`` (functional
  a composite over ``.out``);
* ``F.ctc_loss``: ``ctc_loss`` is ``CompositeImplicitAutograd``; it reaches the
  device as ``_ctc_loss`` (lengths as Python ints, targets made int64) and, in
  the backward, ``_ctc_loss_backward``. The reduction is arithmetic on its result;
* ``F.multi_margin_loss`` and ``F.multilabel_margin_loss``: CPU/CUDA-only
  ``multi_margin_loss`` and ``multilabel_margin_loss_forward`` (which also
  returns the mask of target classes its backward reads) with their backward;
* ``F.kl_div`` is a composite of arithmetic and, with a target of
  probabilities, ``xlogy``; the gradient of ``F.binary_cross_entropy`` for its
  target (``binary_cross_entropy_target_backward`` in
  ``torch/csrc/autograd/FunctionsManual.cpp``) is ``-logit(input)``. These two
  elementwise ops have no other home yet, so they are registered here;
* ``F.mse_loss``: ``mse_loss`` and ``mse_loss_backward``;
* ``F.cross_entropy`` becomes ``_log_softmax`` (:mod:`.activations`) and
  ``nll_loss_forward`` (``nll_loss2d_forward`` for spatial inputs) and,
  backward, ``nll_loss_backward`` and ``_log_softmax_backward_data``. Where
  PyTorch's CPU kernels round half-precision intermediates (nll_loss sums,
  mse_loss differences), half results can differ from CPU's by that rounding;
* ``F.l1_loss`` and ``F.cross_entropy`` with label smoothing or
  probabilities as targets are composites over ops other modules implement.

Each op is one NumPy function of arrays (built from ``*_terms``,
``*_gradient``, :func:`ctc_log_alpha`...), and its eager kernel the checks
PyTorch's CPU kernel makes of the tensors, ``computed_by`` that function;
the backward of the two margin losses, which compiled graphs keep, lower
to theirs. Half precision is computed in float32 and rounded once;
PyTorch's CPU loops for BCE and smooth L1, and the steps of its BCE with
logits composite, round each half-precision step, so half results differ
from CPU's by that rounding (npy's are the nearer to the exact values).
"""

import numpy as np
import torch

from ..dtypes import SCALAR_TYPE_NAMES, compute_dtype, to_numpy_dtype
from ._dtype_errors import check_scalar_type, not_implemented_for
from ._numpy_errors import quietly
from ._operands import broadcast_shapes, computed, operand, promoted_dtype
from ._results import as_result, out_of_self_dtype
from .arithmetic import is_integral, real_float_dtype
from .registry import aten, computed_by, implements, lowers

# at::Reduction: how a loss combines its per-element terms.
_NONE, _MEAN, _SUM = 0, 1, 2


def reduced(terms, reduction):
    """A loss's terms kept (none), averaged (mean; nan for no terms) or added (sum)."""
    if reduction == _NONE:
        return terms
    total = np.sum(terms)
    return total / terms.size if reduction == _MEAN else total


def _mean_scale(reduction, count):
    """The factor a mean puts on each term's gradient."""
    return 1 / count if reduction == _MEAN else 1


def _check_dtypes_match(expected, *tensors):
    """TensorIterator's check for kernels that take all operands in one dtype."""
    for tensor in tensors:
        if tensor is not None and tensor.dtype != expected:
            raise RuntimeError(
                f"Found dtype {SCALAR_TYPE_NAMES[tensor.dtype]} but expected {SCALAR_TYPE_NAMES[expected]}"
            )


def _check_writable_shape(shape, *others):
    """An in-place op's check: the operands broadcast to the shape of the tensor written."""
    shape = tuple(shape)
    broadcast = broadcast_shapes(shape, *(tuple(other) for other in others))
    if broadcast != shape:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape {list(broadcast)}")


def _squeezed(shape):
    return tuple(size for size in shape if size != 1)


# --- binary cross entropy -------------------------------------------------------------


def bce_terms(x, y):
    """``-(y log x + (1 - y) log(1 - x))``, each log clamped at -100 as PyTorch does (so 0 log 0 is 0)."""
    return (y - 1) * np.maximum(np.log1p(-x), -100) - y * np.maximum(np.log(x), -100)


def bce_gradient(grad, x, y):
    """``(x - y) / (x (1 - x))``, the denominator kept from 0 by PyTorch's epsilon 1e-12."""
    return grad * (x - y) / np.maximum((1 - x) * x, 1e-12)


def _check_bce(op, first, self, target, weight):
    """A BCE kernel's checks, as CPU makes them; its dtype is ``first``'s.

    CPU squeezes input and target before its elementwise loop, so their
    shapes need only agree without size-1 dims.
    """
    _check_dtypes_match(first.dtype, self, target)
    if not first.dtype.is_floating_point:
        raise not_implemented_for(op, first.dtype)
    _check_writable_shape(_squeezed(self.shape), _squeezed(target.shape))
    if weight is not None:
        _check_writable_shape(self.shape, weight.shape)
    return first.dtype


def _bce_arrays(a, target, weight, out_dtype):
    """Input, target (its size-1 dims squeezed, as CPU's loop reads it) and weight in ``out_dtype``'s compute dtype."""
    x, y = computed(out_dtype, a, target, exact=True)
    y = np.broadcast_to(y.reshape(_squeezed(y.shape)), _squeezed(x.shape)).reshape(x.shape)
    w = None if weight is None else computed(out_dtype, weight, exact=True)[0]
    return x, y, w


def _check_in_unit_interval(x, y):
    if not np.all((x >= 0) & (x <= 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not np.all((y >= 0) & (y <= 1)):
        raise RuntimeError("all elements of target should be between 0 and 1")


def binary_cross_entropy(a, target, weight=None, reduction=_MEAN, *, out_dtype):
    x, y, w = _bce_arrays(a, target, weight, out_dtype)
    _check_in_unit_interval(x, y)
    terms = bce_terms(x, y)
    if w is not None:
        terms = terms * w
    return reduced(terms, reduction).astype(out_dtype, copy=False)


@implements(aten.binary_cross_entropy.default, out=aten.binary_cross_entropy.out, check_out=out_of_self_dtype)
@computed_by(binary_cross_entropy)
def binary_cross_entropy_kernel(self, target, weight=None, reduction=_MEAN):
    return _check_bce("binary_cross_entropy", self, self, target, weight)


def binary_cross_entropy_backward(grad_output, a, target, weight=None, reduction=_MEAN, *, out_dtype):
    x, y, w = _bce_arrays(a, target, weight, out_dtype)
    (grad,) = computed(out_dtype, grad_output, exact=True)
    slope = bce_gradient(grad, x, y) * _mean_scale(reduction, x.size)
    if w is not None:
        slope = slope * w
    return slope.astype(out_dtype, copy=False)


@implements(aten.binary_cross_entropy_backward.default, out=aten.binary_cross_entropy_backward.grad_input)
@computed_by(binary_cross_entropy_backward)
def binary_cross_entropy_backward_kernel(grad_output, self, target, weight=None, reduction=_MEAN):
    # CPU's grad_input is made like grad_output: the other operands must have its dtype.
    return _check_bce("binary_cross_entropy_backward", grad_output, self, target, weight)


def bce_with_logits_terms(x, y, pos_weight=None):
    """``(1 - y) x - (1 + (p - 1) y) log_sigmoid(x)``, PyTorch's form (``p`` is ``pos_weight``).

    ``log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|))`` cannot overflow.
    """
    log_sigmoid = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    if pos_weight is not None:
        log_sigmoid = log_sigmoid * ((pos_weight - 1) * y + 1)
    return (1 - y) * x - log_sigmoid


def _check_bce_with_logits(self, target, weight, pos_weight):
    """The checks the steps of PyTorch's composite make: the loss is written into a
    tensor like ``1 - target``, so everything must broadcast (and cast) to the target."""
    if not self.dtype.is_floating_point:
        raise not_implemented_for("log_sigmoid", self.dtype)
    if pos_weight is not None:
        _check_writable_shape(self.shape, broadcast_shapes(tuple(pos_weight.shape), tuple(target.shape)))
    _check_writable_shape(target.shape, self.shape)
    if weight is not None:
        _check_writable_shape(target.shape, weight.shape)
    loss_dtype = torch.result_type(target, 1)
    computed_dtype = torch.result_type(torch.empty(0, dtype=loss_dtype), self)
    if not torch.can_cast(computed_dtype, loss_dtype):
        raise RuntimeError(
            f"result type {SCALAR_TYPE_NAMES[computed_dtype]} can't be cast to the desired output type "
            f"{SCALAR_TYPE_NAMES[loss_dtype]}"
        )
    return loss_dtype


def binary_cross_entropy_with_logits(a, target, weight=None, pos_weight=None, reduction=_MEAN, *, out_dtype):
    """Computed in the loss's dtype promoted with the input's (floating, so NumPy promotes as PyTorch)."""
    common = np.promote_types(out_dtype, a.dtype)
    x, y = computed(common, a, target, exact=True)
    p = None if pos_weight is None else computed(common, pos_weight, exact=True)[0]
    terms = bce_with_logits_terms(x, y, p)
    if weight is not None:
        terms = terms * computed(common, weight, exact=True)[0]
    return reduced(terms, reduction).astype(out_dtype, copy=False)


@implements(aten.binary_cross_entropy_with_logits.default, out=aten.binary_cross_entropy_with_logits.out)
@computed_by(binary_cross_entropy_with_logits)
def binary_cross_entropy_with_logits_kernel(self, target, weight=None, pos_weight=None, reduction=_MEAN):
    return _check_bce_with_logits(self, target, weight, pos_weight)


# --- smooth L1 and Huber --------------------------------------------------------------


def smooth_l1_terms(x, y, beta):
    """``|x - y|`` beyond ``beta``, ``(x - y)**2 / (2 beta)`` within it."""
    distance = np.abs(x - y)
    return np.where(distance < beta, 0.5 * distance * distance / beta, distance - 0.5 * beta)


def smooth_l1_gradient(grad, x, y, beta):
    """The difference over ``beta``, clipped to [-1, 1]; l1_loss's sign (0 at 0) for ``beta == 0``."""
    difference = x - y
    if beta <= 0:
        return np.sign(difference) * grad
    return np.clip(difference / beta, -1, 1) * grad


def huber_terms(x, y, delta):
    """``(x - y)**2 / 2`` within ``delta``, ``delta (|x - y| - delta / 2)`` beyond it."""
    distance = np.abs(x - y)
    return np.where(distance < delta, 0.5 * distance * distance, delta * (distance - 0.5 * delta))


def huber_gradient(grad, x, y, delta):
    """The difference clipped to [-delta, delta]."""
    return np.clip(x - y, -delta, delta) * grad


def _check_distance(op, self, target, *others):
    """Input and target promote together, and broadcast with ``others``, as PyTorch's
    TensorIterator does; the losses of distances exist for floating dtypes."""
    broadcast_shapes(tuple(self.shape), tuple(target.shape), *(tuple(other.shape) for other in others))
    dtype = torch.result_type(self, target)
    if not dtype.is_floating_point:
        raise not_implemented_for(op, dtype)
    return dtype


def smooth_l1_loss(a, target, reduction=_MEAN, beta=1.0, *, out_dtype):
    x, y = computed(out_dtype, a, target, exact=True)
    return reduced(smooth_l1_terms(x, y, beta), reduction).astype(out_dtype, copy=False)


@implements(aten.smooth_l1_loss.default, out=aten.smooth_l1_loss.out)
@computed_by(smooth_l1_loss)
def smooth_l1_loss_kernel(self, target, reduction=_MEAN, beta=1.0):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _check_distance("smooth_l1_cpu", self, target)


# The backward of smooth L1 and both of Huber give the input's dtype, computed in the
# dtype input and target promote to (``common_dtype``).


def _distance_loss_backward(name, gradient):
    """The backward of a distance loss whose elementwise gradient is ``gradient(grad, x, y, parameter)``."""

    def backward(grad_output, a, target, reduction, parameter, *, common_dtype):
        x, y = computed(common_dtype, a, target, exact=True)
        (grad,) = computed(common_dtype, grad_output, exact=True)
        return gradient(grad * _mean_scale(reduction, x.size), x, y, parameter).astype(a.dtype, copy=False)

    backward.__name__ = backward.__qualname__ = name
    return backward


smooth_l1_loss_backward = _distance_loss_backward("smooth_l1_loss_backward", smooth_l1_gradient)


@implements(aten.smooth_l1_loss_backward.default, out=aten.smooth_l1_loss_backward.grad_input)
@computed_by(smooth_l1_loss_backward)
def smooth_l1_loss_backward_kernel(grad_output, self, target, reduction, beta):
    return _check_distance("smooth_l1_backward_cpu", self, target, grad_output)


def huber_loss(a, target, reduction=_MEAN, delta=1.0, *, common_dtype):
    x, y = computed(common_dtype, a, target, exact=True)
    return reduced(huber_terms(x, y, delta), reduction).astype(a.dtype, copy=False)


@implements(aten.huber_loss.default, out=aten.huber_loss.out)
@computed_by(huber_loss)
def huber_loss_kernel(self, target, reduction=_MEAN, delta=1.0):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    return _check_distance("huber_cpu", self, target)


huber_loss_backward = _distance_loss_backward("huber_loss_backward", huber_gradient)


@implements(aten.huber_loss_backward.default, out=aten.huber_loss_backward.out)
@computed_by(huber_loss_backward)
def huber_loss_backward_kernel(grad_output, self, target, reduction, delta):
    # CPU's backward loop takes every operand in the input's dtype.
    _check_dtypes_match(self.dtype, target, grad_output)
    return _check_distance("huber_backward_cpu", self, target, grad_output)


# --- multi-class margin losses ---------------------------------------------------------------
#
# Both take scores (N, C), or (C,) for one sample, and count, for each sample,
# the classes that come within a margin of a target class's score, divided by C.


def _check_margin_input(self):
    if not (self.dim() == 0 or (self.dim() <= 2 and self.shape[-1] != 0)):
        raise RuntimeError(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: {list(self.shape)}"
        )


def _check_margin_dtypes(op, self, target):
    if self.dtype not in (torch.float32, torch.float64):  # CPU's kernels: float and double only
        raise not_implemented_for(op, self.dtype)
    if target.dtype != torch.int64:
        raise RuntimeError(f"expected scalar type Long but found {SCALAR_TYPE_NAMES[target.dtype]}")


def _rows(array, classes):
    """A margin loss's input or target as rows ``(N, C)`` (one row for a single sample)."""
    return array.reshape(-1, classes)


def _classes(a):
    return a.shape[-1] if a.ndim else 1


def _check_margin_grad(grad_output, reduction, self):
    """Per-sample gradients (reduction none, batched) must be one per sample."""
    samples = self.shape[0] if self.dim() == 2 else 1
    if reduction == _NONE and self.dim() == 2 and grad_output.shape != (samples,):
        raise RuntimeError(
            f"Expected a tensor of dimension 1 and tensor.size[0] == {samples} but got: dimension "
            f"{grad_output.dim()} and tensor.size[0] = {grad_output.shape[0] if grad_output.dim() else 1}"
        )


def _margin_gradient(slope, grad_output, reduction):
    """The slopes ``(N, C)`` over the C classes (and the N samples for a mean), times the incoming gradient."""
    (grad,) = computed(slope.dtype, grad_output, exact=True)
    per_sample = grad.reshape(-1, 1) if reduction == _NONE and grad.ndim else grad.reshape(())
    return slope * (1 / (slope.size if reduction == _MEAN else slope.shape[1])) * per_sample


def multi_margin_slopes(x, labels, p, margin, weight):
    """Each score's hinge ``margin - x[label] + x[c]`` where positive (squared for p = 2),
    and its slope, 0 at the label's own column; each row scaled by its label's weight."""
    rows = np.arange(x.shape[0])
    z = margin - x[rows, labels][:, None] + x
    active = z > 0
    active[rows, labels] = False
    scale = np.ones(x.shape[0], x.dtype) if weight is None else weight[labels]
    hinge = np.where(active, z if p == 1 else z * z, 0) * scale[:, None]
    slope = np.where(active, 1 if p == 1 else 2 * z, 0) * scale[:, None]
    return hinge, slope


def _check_multi_margin(op, self, target, p, weight):
    _check_margin_input(self)
    if int(p) not in (1, 2):
        raise RuntimeError("only p == 1 and p == 2 supported")
    samples = self.shape[0] if self.dim() == 2 else 1
    if target.dim() > 1 or target.numel() != samples:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples "
            f"(batch size). Expected target size [{samples}], but got {list(target.shape)}. "
            f"Input has shape {list(self.shape)}."
        )
    classes = self.shape[-1] if self.dim() else 1
    if weight is not None and (weight.dim() > 1 or weight.numel() != classes):
        raise RuntimeError(f"inconsistent weight size, expected {classes} but got {list(weight.shape)}")
    _check_margin_dtypes(op, self, target)
    if weight is not None and weight.dtype != self.dtype:
        raise RuntimeError(
            f"expected scalar type {SCALAR_TYPE_NAMES[self.dtype]} but found {SCALAR_TYPE_NAMES[weight.dtype]}"
        )
    return self.dtype


def _multi_margin_slopes(a, target, p, margin, weight):
    """The hinges and slopes of :func:`multi_margin_slopes` for the op's arrays, and the labels."""
    x = _rows(a, _classes(a))
    labels = target.reshape(-1).astype(np.int64)
    if np.any((labels < 0) | (labels >= x.shape[1])):
        raise RuntimeError("target out of range")
    w = None if weight is None else weight.reshape(-1)
    return (*multi_margin_slopes(x, labels, int(p), x.dtype.type(margin), w), labels)


def multi_margin_loss(a, target, p=1, margin=1, weight=None, reduction=_MEAN, *, out_dtype):
    hinge, _, _ = _multi_margin_slopes(a, target, p, margin, weight)
    losses = np.sum(hinge, axis=1) / hinge.shape[1]
    output = losses.reshape(target.shape) if reduction == _NONE else reduced(losses, reduction)
    return output.astype(out_dtype, copy=False)


@implements(aten.multi_margin_loss.default, out=aten.multi_margin_loss.out, check_out=out_of_self_dtype)
@computed_by(multi_margin_loss)
def multi_margin_loss_kernel(self, target, p=1, margin=1, weight=None, reduction=_MEAN):
    return _check_multi_margin("multi_margin_loss_cpu_kernel", self, target, p, weight)


@lowers(aten.multi_margin_loss_backward.default)
def multi_margin_loss_backward(grad_output, a, target, p, margin, weight=None, reduction=_MEAN, *, out_dtype):
    _, slope, labels = _multi_margin_slopes(a, target, p, margin, weight)
    slope[np.arange(slope.shape[0]), labels] = -np.sum(slope, axis=1)
    return _margin_gradient(slope, grad_output, reduction).reshape(a.shape).astype(out_dtype, copy=False)


@implements(aten.multi_margin_loss_backward.default, out=aten.multi_margin_loss_backward.grad_input)
@computed_by(multi_margin_loss_backward)
def multi_margin_loss_backward_kernel(grad_output, self, target, p, margin, weight=None, reduction=_MEAN):
    dtype = _check_multi_margin("multi_margin_loss_backward_cpu_kernel", self, target, p, weight)
    _check_dtypes_match(dtype, grad_output)
    _check_margin_grad(grad_output, reduction, self)
    return dtype


def listed_labels(labels):
    """Which of each row's label slots count: those before its first -1."""
    return np.cumprod(labels != -1, axis=1).astype(bool)


def target_classes(labels, listed):
    """Each row's mask of the classes its listed labels name."""
    is_target = np.zeros(labels.shape, dtype=bool)
    rows = np.broadcast_to(np.arange(labels.shape[0])[:, None], labels.shape)
    is_target[rows[listed], labels[listed]] = True
    return is_target


def multilabel_margin_slopes(x, labels, listed, is_target):
    """For each listed label j and non-target class k of a row: the hinge ``1 - x[j] + x[k]``
    where positive, ``(N, L, C)``, and whether it is active."""
    picked = np.take_along_axis(x, np.where(listed, labels, 0), axis=1)
    z = 1 - picked[:, :, None] + x[:, None, :]
    active = (z > 0) & listed[:, :, None] & ~is_target[:, None, :]
    return np.where(active, z, 0), active


def _check_multilabel(op, self, target):
    _check_margin_input(self)
    if target.shape != self.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(self.shape)}")
    _check_margin_dtypes(op, self, target)
    return self.dtype


def _multilabel_arrays(a, target):
    """Scores and labels as rows, and which label slots are listed (refusing a listed label out of range)."""
    classes = _classes(a)
    labels = _rows(target, classes).astype(np.int64)
    listed = listed_labels(labels)
    if np.any(listed & ((labels < 0) | (labels >= classes))):
        raise RuntimeError("argument #2 'target' is out of range")
    return _rows(a, classes), labels, listed


def multilabel_margin_loss_forward(a, target, reduction, *, out_dtype):
    """The loss, and the mask of target classes its backward reads (``is_target``)."""
    x, labels, listed = _multilabel_arrays(a, target)
    is_target = target_classes(labels, listed)
    hinge, _ = multilabel_margin_slopes(x, labels, listed, is_target)
    losses = np.sum(hinge, axis=(1, 2)) / x.shape[1]
    output = losses.reshape(a.shape[:-1]) if reduction == _NONE else reduced(losses, reduction)
    return output.astype(out_dtype, copy=False), is_target.reshape(a.shape).astype(out_dtype)


@implements(aten.multilabel_margin_loss_forward.default, out=aten.multilabel_margin_loss_forward.output)
@computed_by(multilabel_margin_loss_forward)
def multilabel_margin_loss_forward_kernel(self, target, reduction):
    return _check_multilabel("multilabel_margin_loss_forward_out_frame", self, target)


@lowers(aten.multilabel_margin_loss_backward.default)
def multilabel_margin_loss_backward(grad_output, a, target, reduction, is_target, *, out_dtype):
    """The forward's ``is_target`` says which classes are targets, as in CPU's kernel."""
    x, labels, listed = _multilabel_arrays(a, target)
    targets = _rows(is_target, x.shape[1])
    if not np.all((targets == 0) | (targets == 1)):
        raise RuntimeError("argument #5 'is_target' is out of range")
    _, active = multilabel_margin_slopes(x, labels, listed, targets == 1)
    slope = np.sum(active, axis=1).astype(x.dtype)  # +1 for each active (j, k), at k
    rows = np.broadcast_to(np.arange(x.shape[0])[:, None], labels.shape)
    np.add.at(slope, (rows[listed], labels[listed]), -np.sum(active, axis=2)[listed])  # -1 at j
    return _margin_gradient(slope, grad_output, reduction).reshape(a.shape).astype(out_dtype, copy=False)


@implements(aten.multilabel_margin_loss_backward.default, out=aten.multilabel_margin_loss_backward.grad_input)
@computed_by(multilabel_margin_loss_backward)
def multilabel_margin_loss_backward_kernel(grad_output, self, target, reduction, is_target):
    op = "multilabel_margin_loss_backward_cpu_template"
    if is_target.shape != target.shape:
        raise RuntimeError(
            "Expected tensor for argument #3 'target' to have same size as tensor for argument #5 'is_target'; "
            f"but {list(target.shape)} does not equal {list(is_target.shape)} (while checking arguments for {op})"
        )
    dtype = _check_multilabel(op, self, target)
    _check_dtypes_match(dtype, grad_output)
    _check_margin_grad(grad_output, reduction, self)
    return dtype


# --- xlogy and logit: the elementwise ops kl_div and BCE's gradient reach ------------------


def xlogy(a, other, *, out_dtype):
    """``x log y``, 0 where ``x`` is 0 (unless ``y`` is nan)."""
    x, y = computed(out_dtype, a, other, exact=True)
    return np.where((x == 0) & ~np.isnan(y), 0, x * np.log(y)).astype(out_dtype, copy=False)


@implements(aten.xlogy.Tensor, out=aten.xlogy.OutTensor, in_place=aten.xlogy_.Tensor, pointwise=True)
@computed_by(xlogy)
def xlogy_kernel(self, other):
    """Integers and bools give the default float dtype, as in PyTorch."""
    return real_float_dtype("xlogy", torch.result_type(self, other))


def logit(a, eps=None, *, out_dtype):
    """``log(x / (1 - x))``, ``x`` first clamped to ``[eps, 1 - eps]`` if ``eps`` is given (and not negative).

    Clamped as CPU's kernel does, ``x < lo ? lo : (x > hi ? hi : x)``, which differs
    from ``np.clip`` when eps is above 0.5 (torch 2.14's OpInfo samples pass 0.6):
    below ``lo`` gives ``lo``, the rest ``hi``, where ``np.clip`` gives ``hi`` to all.
    """
    (x,) = computed(out_dtype, a, exact=True)
    if eps is not None and eps >= 0:
        low, high = x.dtype.type(eps), x.dtype.type(1 - eps)
        x = np.where(x < low, low, np.where(x > high, high, x))
    return np.log(x / (1 - x)).astype(out_dtype, copy=False)


@implements(aten.logit.default, out=aten.logit.out, in_place=aten.logit_.default, pointwise=True)
@computed_by(logit)
def logit_kernel(self, eps=None):
    """BCE's gradient for its target is ``-logit(input)``; integers give the default float dtype."""
    return real_float_dtype("logit", self.dtype)


# --- CTC -------------------------------------------------------------------------------
#
# Graves et al. 2006: the targets, with a blank before, between and after
# their labels, make the extended sequence l' of length 2L+1. alpha[t, s]
# sums (in log space) the probabilities of the paths that emit l'[:s+1] in
# the first t+1 steps; beta[t, s] those that finish l' from (t, s). One step
# of either recursion is vectorized over the batch and s; the loop is over time.

_NEG_INF = -np.inf


def _log_sum_exp(*terms):
    """log(sum(exp(terms))), elementwise, with CPU's guard: all -inf gives -inf, not nan."""
    peak = np.maximum.reduce(terms)
    peak = np.where(peak == _NEG_INF, 0, peak)
    return np.log(sum(np.exp(term - peak) for term in terms)) + peak


def extended_targets(targets, target_lengths, blank):
    """l' for each sample, ``(N, 2 max(L) + 1)``, blank-padded past ``2 L + 1``.

    ``targets`` is ``(N, S)`` padded, or 1-D with the samples' labels one after another.
    """
    lengths = np.asarray(target_lengths, dtype=np.int64)
    longest = int(lengths.max(initial=0))
    positions = np.arange(longest)
    if targets.ndim == 1:
        starts = np.cumsum(lengths) - lengths
        index = np.minimum(starts[:, None] + positions, max(targets.size - 1, 0))
        labels = targets[index] if targets.size else np.zeros(index.shape, np.int64)
    else:
        labels = targets[:, :longest]
    labels = np.where(positions < lengths[:, None], labels, blank)
    extended = np.full((len(lengths), 2 * longest + 1), blank, dtype=np.int64)
    extended[:, 1::2] = labels
    return extended


def _can_skip(extended):
    """Whether s can be reached from s - 2 (a label different from the one before, across a blank)."""
    skip = np.zeros(extended.shape, dtype=bool)
    skip[:, 2:] = extended[:, 2:] != extended[:, :-2]
    return skip


def _emissions(log_probs, extended):
    """``log_probs[t, b, l'[b, s]]`` as ``(T, N, S)``."""
    return np.take_along_axis(log_probs, np.broadcast_to(extended, (log_probs.shape[0], *extended.shape)), axis=2)


def _shifted_right(array, step):
    """``array[..., s - step]`` at s, -inf where that is before the start."""
    shifted = np.full_like(array, _NEG_INF)
    shifted[..., step:] = array[..., : array.shape[-1] - step]
    return shifted


def _shifted_left(array, step):
    """``array[..., s + step]`` at s, -inf past the end."""
    shifted = np.full_like(array, _NEG_INF)
    shifted[..., : array.shape[-1] - step] = array[..., step:]
    return shifted


def ctc_log_alpha(log_probs, extended, target_lengths):
    """The forward variables, ``(N, T, S)``: -inf where no path can be."""
    emissions = _emissions(log_probs, extended)
    skip = _can_skip(extended)
    log_alpha = np.full((extended.shape[0], log_probs.shape[0], extended.shape[1]), _NEG_INF, log_probs.dtype)
    log_alpha[:, 0, 0] = emissions[0, :, 0]
    has_labels = np.asarray(target_lengths) > 0
    log_alpha[has_labels, 0, 1] = emissions[0, has_labels, 1]
    for t in range(1, log_probs.shape[0]):
        previous = log_alpha[:, t - 1]
        from_skip = np.where(skip, _shifted_right(previous, 2), _NEG_INF)
        log_alpha[:, t] = _log_sum_exp(previous, _shifted_right(previous, 1), from_skip) + emissions[t]
    return log_alpha


def ctc_negative_log_likelihood(log_alpha, input_lengths, target_lengths):
    """Minus the log of the paths' total probability: those ending on the last label or the blank after it."""
    samples = np.arange(log_alpha.shape[0])
    inputs, labels = np.asarray(input_lengths), np.asarray(target_lengths)
    last = log_alpha[samples, np.maximum(inputs - 1, 0)]
    end_blank = last[samples, 2 * labels]
    end_label = np.where(labels > 0, last[samples, np.maximum(2 * labels - 1, 0)], _NEG_INF)
    log_likelihood = _log_sum_exp(end_blank, end_label)
    # No input step: only the empty target has a path (of probability 1).
    log_likelihood = np.where(inputs == 0, np.where(labels == 0, 0, _NEG_INF), log_likelihood)
    return -log_likelihood


def ctc_log_beta(log_probs, extended, input_lengths, target_lengths):
    """The backward variables, ``(N, T, S)``: each sample's recursion starts at its own last step."""
    emissions = _emissions(log_probs, extended)
    skip_from = _shifted_left(_can_skip(extended).astype(log_probs.dtype), 2) > 0
    samples = np.arange(extended.shape[0])
    inputs, labels = np.asarray(input_lengths), np.asarray(target_lengths)
    steps = log_probs.shape[0]
    log_beta = np.full((extended.shape[0], steps, extended.shape[1]), _NEG_INF, log_probs.dtype)
    start = np.full(extended.shape, _NEG_INF, log_probs.dtype)
    last_step = np.maximum(inputs - 1, 0)
    start[samples, 2 * labels] = emissions[last_step, samples, 2 * labels]
    has_labels = labels > 0
    end_label = 2 * labels[has_labels] - 1
    start[has_labels, end_label] = emissions[last_step[has_labels], samples[has_labels], end_label]
    following = np.full(extended.shape, _NEG_INF, log_probs.dtype)
    for t in range(steps - 1, -1, -1):
        from_skip = np.where(skip_from, _shifted_left(following, 2), _NEG_INF)
        recursion = _log_sum_exp(following, _shifted_left(following, 1), from_skip) + emissions[t]
        before_last = np.where((t < inputs - 1)[:, None], recursion, _NEG_INF)
        log_beta[:, t] = following = np.where((t == inputs - 1)[:, None], start, before_last)
    return log_beta


def ctc_gradient(grad, log_probs, extended, input_lengths, nll, log_alpha, log_beta, zero_infinity):
    """d loss / d log_probs, ``(T, N, C)``: ``exp(lp) - (sum over s with l'[s] = c of alpha beta) / (p exp(lp))``.

    The sum over s of each label is a product with a one-hot ``(N, S, C)``
    matrix, each (sample, step) scaled by its largest term first.
    """
    steps, _, classes = log_probs.shape
    log_alpha_beta = log_alpha + log_beta
    peak = np.max(log_alpha_beta, axis=2, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)
    one_hot = (extended[:, :, None] == np.arange(classes)).astype(log_probs.dtype)
    collected = np.log(np.matmul(np.exp(log_alpha_beta - peak), one_hot)) + peak
    log_probs_by_sample = log_probs.transpose(1, 0, 2)
    occupancy = np.exp(collected + nll[:, None, None] - log_probs_by_sample)
    gradient = (np.exp(log_probs_by_sample) - occupancy) * grad[:, None, None]
    inside = np.arange(steps) < np.asarray(input_lengths)[:, None]
    if zero_infinity:
        inside = inside & (nll != np.inf)[:, None]
    return np.where(inside[:, :, None], gradient, 0).transpose(1, 0, 2)


def _check_ctc(log_probs, targets, input_lengths, target_lengths, blank):
    """ctc_loss_allocate_outputs's checks, with its messages (aten/src/ATen/native/LossCTC.cpp)."""
    where = "(while checking arguments for ctc_loss_allocate_outputs)"
    if not log_probs.dtype.is_floating_point or log_probs.dtype == torch.float16:
        raise not_implemented_for("ctc_loss_cpu", log_probs.dtype)
    if targets.dtype not in (torch.int64, torch.int32):
        raise RuntimeError(
            f"Expected tensor for argument #2 'targets' to have scalar type Int; but got "
            f"torch.{SCALAR_TYPE_NAMES[targets.dtype]}Tensor instead {where}"
        )
    if log_probs.dim() != 3:
        raise RuntimeError(
            f"Expected 3-dimensional tensor, but got {log_probs.dim()}-dimensional tensor for "
            f"argument #1 'log_probs' {where}"
        )
    if not 1 <= targets.dim() <= 2:
        raise RuntimeError(
            f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional tensor for argument #2 'targets' {where}"
        )
    steps, batch, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    for length in target_lengths:
        if length < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {length} {where}")
    if targets.dim() == 1:
        _check_ctc_size(targets, 0, sum(target_lengths), where)
    else:
        _check_ctc_size(targets, 0, batch, where)
        longest = max(target_lengths, default=0)
        if targets.shape[1] < longest:
            raise RuntimeError(
                f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                f"{targets.shape[1]} for argument #2 'targets' {where}"
            )
    for length in input_lengths:
        if length < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {length} {where}")
        if length > steps:
            raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got value {length} {where}")


def _check_ctc_size(targets, dim, size, where):
    if targets.shape[dim] != size:
        raise RuntimeError(
            f"Expected tensor to have size {size} at dimension {dim}, but got size {targets.shape[dim]} "
            f"for argument #2 'targets' {where}"
        )


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False, *, out_dtype):
    """The loss of each sample and the forward variables (the backward reads them)."""
    extended = extended_targets(targets.astype(np.int64), target_lengths, blank)
    log_alpha = ctc_log_alpha(log_probs, extended, target_lengths)
    nll = ctc_negative_log_likelihood(log_alpha, input_lengths, target_lengths)
    return nll.astype(out_dtype, copy=False), log_alpha.astype(out_dtype, copy=False)


@implements(aten._ctc_loss.default, out=aten._ctc_loss.out)
@computed_by(ctc_loss, name="_ctc_loss")
def ctc_loss_kernel(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    _check_ctc(log_probs, targets, input_lengths, target_lengths, blank)
    return log_probs.dtype


def ctc_loss_backward(
    grad,
    log_probs,
    targets,
    input_lengths,
    target_lengths,
    neg_log_likelihood,
    log_alpha,
    blank,
    zero_infinity=False,
    *,
    out_dtype,
):
    extended = extended_targets(targets.astype(np.int64), target_lengths, blank)
    log_beta = ctc_log_beta(log_probs, extended, input_lengths, target_lengths)
    (grad, nll) = computed(log_probs.dtype, grad, neg_log_likelihood, exact=True)
    gradient = ctc_gradient(grad, log_probs, extended, input_lengths, nll, log_alpha, log_beta, zero_infinity)
    return gradient.astype(out_dtype, copy=False)


@implements(aten._ctc_loss_backward.default, out=aten._ctc_loss_backward.out)
@computed_by(ctc_loss_backward, name="_ctc_loss_backward")
def ctc_loss_backward_kernel(grad, log_probs, *lengths_and_forward_results):
    """CPU's backward checks only the dtype of ``log_probs``; the lengths were checked forward."""
    if not log_probs.dtype.is_floating_point or log_probs.dtype == torch.float16:
        raise not_implemented_for("ctc_loss_backward_cpu", log_probs.dtype)
    return log_probs.dtype


def _lengths(name, lengths):
    """A lengths tensor (on any device, of any shape) as Python ints, as CPU reads it."""
    if not is_integral(lengths.dtype):
        raise RuntimeError(f"{name} must be integral")
    return lengths.to("cpu", torch.int64).reshape(-1).tolist()


def _length_lists(input_lengths, target_lengths):
    """The ``.Tensor`` overloads' lengths as the lists the ``.default`` overloads take."""
    return _lengths("input_lengths", input_lengths), _lengths("target_lengths", target_lengths)


@implements(aten._ctc_loss.Tensor)
def ctc_loss_of_length_tensors(log_probs, targets, input_lengths, target_lengths, *blank_and_zero_infinity):
    return ctc_loss_kernel(log_probs, targets, *_length_lists(input_lengths, target_lengths), *blank_and_zero_infinity)


@implements(aten._ctc_loss_backward.Tensor)
def ctc_loss_backward_of_length_tensors(grad, log_probs, targets, input_lengths, target_lengths, *forward_results):
    lengths = _length_lists(input_lengths, target_lengths)
    return ctc_loss_backward_kernel(grad, log_probs, targets, *lengths, *forward_results)


# --- mean squared error and negative log likelihood ------------------------------


def _computed(op, tensor):
    """``tensor``'s array (a zero-dim CPU tensor's value) in its compute dtype: float32 for half."""
    return np.asarray(operand(op, tensor), dtype=to_numpy_dtype(compute_dtype(tensor.dtype)))


def mse_loss(a, target, reduction=_MEAN, *, out_dtype):
    x, y = computed(out_dtype, a, target, exact=True)
    return np.asarray(reduced((x - y) ** 2, reduction)).astype(out_dtype, copy=False)


@implements(aten.mse_loss.default, out=aten.mse_loss.out)
@computed_by(mse_loss)
def mse_loss_kernel(self, target, reduction=_MEAN):
    dtype = promoted_dtype(self, target)
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
    dtype = promoted_dtype(self, target)
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
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target_shape[0]}")
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
            f"only batches of spatial targets supported (3D tensors) but got targets of dimension: {target.dim()}"
        )
    if self.dim() != 4:
        raise RuntimeError(
            f"only batches of spatial inputs supported (4D tensors), but got input of dimension: {self.dim()}"
        )
    if weight is not None and weight.numel() != self.shape[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if (self.shape[0], *self.shape[2:]) != tuple(target.shape):
        raise RuntimeError(f"size mismatch (got input: {list(self.shape)} , target: {list(target.shape)}")


def _picked_classes(op, self, target, weight, ignore_index):
    """Each sample's target class (0 where ignored), its weight (0 where ignored; None where
    every sample counts once, the usual case), and the class axis."""
    if target.dtype not in (torch.int64, torch.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {SCALAR_TYPE_NAMES[target.dtype]}")
    if not self.dtype.is_floating_point:
        raise not_implemented_for(op, self.dtype)
    if weight is not None:
        check_scalar_type(self, weight)
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
    check_scalar_type(self, grad_output)
    check_scalar_type(self, total_weight)
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
        raise RuntimeError(f"Expected a single element grad_output tensor, but got: {list(grad_output.shape)}")


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
    return _nll_backward("nll_loss_backward", grad_output, self, target, weight, reduction, ignore_index, total_weight)


@implements(aten.nll_loss2d_backward.default, out=aten.nll_loss2d_backward.grad_input)
def nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    _check_nll2d_inputs(self, target, weight)
    return _nll_backward(
        "nll_loss2d_backward", grad_output, self, target, weight, reduction, ignore_index, total_weight
    )
