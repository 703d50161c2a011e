"""Activation functions and their backward ops, softmax and log_softmax among them.

What PyTorch sends the npy device for each (checked with
``BACKEND_PKG_STRICT=1`` on ``nn.Module`` forward and backward, and in
``native_functions.yaml``):

* structured ops (``leaky_relu``, ``silu``, ``elu``, ``softplus``,
  ``hardsigmoid``, ``mish``, ``glu``, ``softshrink``, ``hardshrink``,
  ``threshold`` and their backward) arrive as their ``.out`` overload: for a
  backend without a functional or in-place kernel, the dispatcher's
  ``CompositeExplicitAutogradNonFunctional`` versions allocate and call it.
  The functional and in-place overloads are registered too, so those calls
  skip the allocation and an ``inplace=True`` module writes into its input
  with :func:`~._results.write_in_place`;
* ``hardtanh`` (so ``relu6``) and ``hardswish`` are not structured: their
  functional and in-place overloads arrive as they are;
* ``selu`` and ``celu`` are composites of ``elu`` (``elu`` takes a scale and
  an input scale for them); ``relu6`` of ``hardtanh``; ``log_sigmoid`` of
  ``log_sigmoid_forward``, whose second result is a buffer its backward
  reads; ``prelu`` of ``_prelu_kernel``, after PyTorch reshapes the weight
  to broadcast over the channel dim;
* ``rrelu`` is a composite of ``rrelu_with_noise``, which while training
  draws each negative element's slope from ``torch.npy``'s generator (so not
  the numbers CPU draws) and keeps them in ``noise`` for its backward, a
  composite;
* ``silu_backward`` and ``mish_backward`` are ``CompositeImplicitAutograd``
  on a device without a kernel of its own (``math_silu_backward`` and
  ``math_mish_backward`` in ``aten/src/ATen/native/Activation.cpp``): they
  reach npy as ``sigmoid``, ``mul`` and friends, which round each step in
  half precision where CPU's own kernels round once. No kernel is registered
  for them: one would hide the composite, which the project rules out
  (``tests/ops/test_registry.py::test_no_kernel_hides_a_composite``).

Each op is one NumPy function of arrays (:func:`leaky_relu`...), which the
eager kernel (the checks PyTorch's CPU kernel makes, ``computed_by`` the
function) and, for the ops that reach compiled graphs (``leaky_relu``,
``elu``, ``hardtanh``, the shrinks' backward), ``torch.compile``'s lowering
run. Half precision is computed in float32 and rounded once, as CPU's
vectorized kernels do; Python scalars enter the arithmetic in the compute
dtype, as CPU converts them.
"""

import math

import numpy as np
import torch

from .. import device
from ..dtypes import SCALAR_TYPE_NAMES, compute_dtype
from ._cpu_checks import check_on_cpu
from ._dims import single_axis, wrap_dim
from ._dtype_errors import check_scalar_type, not_implemented_for
from ._numpy_errors import quietly
from ._operands import check_broadcastable, computed, in_compute_dtype, numpy_compute_dtype, promoted_dtype
from ._select import select
from .arithmetic import check_convertible
from .random import check_generator
from .registry import aten, computed_by, implements, lowers
from .unary import clamp, clamp_dtype, exact_erf

# --- the dtypes the NumPy functions compute in ------------------------------------


def floating(op, self, *, complex_ok=False):
    """``self``'s dtype; CPU's activation kernels exist for floating dtypes only (silu's for complex ones too)."""
    dtype = self.dtype
    if not (dtype.is_floating_point or (complex_ok and dtype.is_complex)):
        raise not_implemented_for(op, dtype)
    return dtype


def floating_promoted(op, grad_output, self, *, refused_as=None):
    """A backward's dtype: its two operands promoted, floating (refused naming ``refused_as``, or ``op``)."""
    dtype = self.dtype
    if grad_output.dtype != dtype:
        dtype = torch.result_type(grad_output, self)
    if not dtype.is_floating_point:
        raise not_implemented_for(refused_as or op, dtype)
    return dtype


def check_same_dtype_as_self(self, *others):
    """Some CPU backwards require ``self``'s dtype of every operand: the first of ``others`` of another is refused."""
    for other in others:
        if other.dtype != self.dtype:
            raise RuntimeError(
                f"Found dtype {SCALAR_TYPE_NAMES[other.dtype]} but expected {SCALAR_TYPE_NAMES[self.dtype]}"
            )


def _scalar(value, array):
    """A Scalar argument as the array's dtype, as CPU's kernels convert it before computing."""
    return array.dtype.type(value)


def _forward_input(a, out_dtype):
    (x,) = computed(out_dtype, a)
    return x


def _gradient_inputs(grad_output, a, out_dtype):
    """A backward's arrays in the compute dtype of the promoted ``out_dtype``."""
    return computed(out_dtype, grad_output, a, exact=True)


# --- leaky_relu -------------------------------------------------------------------


@lowers(aten.leaky_relu.default)
def leaky_relu(a, negative_slope=0.01, *, out_dtype):
    x = _forward_input(a, out_dtype)
    return select(x > 0, x, x * _scalar(negative_slope, x)).astype(out_dtype, copy=False)


def leaky_relu_backward(grad_output, a, negative_slope, self_is_result, *, out_dtype):
    grad, x = _gradient_inputs(grad_output, a, out_dtype)
    return select(x > 0, grad, grad * _scalar(negative_slope, x)).astype(out_dtype, copy=False)


@implements(aten.leaky_relu_backward.default, out=aten.leaky_relu_backward.grad_input)
@computed_by(leaky_relu_backward)
def leaky_relu_backward_kernel(grad_output, self, negative_slope, self_is_result):
    # After leaky_relu_, autograd has only the result: with a negative slope
    # its sign no longer tells which side of 0 the input was on.
    if self_is_result and negative_slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which is not "
            "supported. This is caused by calling in-place forward function with a negative slope, "
            "please call out-of-place version instead. File an issue at "
            "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
            "backward calculation with negative slope"
        )
    return floating_promoted("leaky_relu_backward_cpu", grad_output, self)


# --- silu and mish ---------------------------------------------------------------------


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def silu(a, *, out_dtype):
    x = _forward_input(a, out_dtype)
    return (x / (1 + np.exp(-x))).astype(out_dtype, copy=False)


def mish(a, *, out_dtype):
    x = _forward_input(a, out_dtype)
    return (x * np.tanh(np.log1p(np.exp(x)))).astype(out_dtype, copy=False)


# --- elu, and selu and celu through it ------------------------------------------------


@lowers(aten.elu.default)
def elu(a, alpha=1, scale=1, input_scale=1, *, out_dtype):
    x = _forward_input(a, out_dtype)
    alpha, scale, input_scale = (_scalar(value, x) for value in (alpha, scale, input_scale))
    return select(x <= 0, np.expm1(x * input_scale) * (alpha * scale), x * scale).astype(out_dtype, copy=False)


def elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result, *, out_dtype):
    """With ``is_result``, ``self_or_result`` is elu's output: below 0 the slope is
    ``input_scale * (out + alpha * scale)``."""
    grad, x = _gradient_inputs(grad_output, self_or_result, out_dtype)
    alpha, scale, input_scale = (_scalar(value, x) for value in (alpha, scale, input_scale))
    if is_result:
        negative_slope = input_scale * (x + alpha * scale)
    else:
        negative_slope = input_scale * (alpha * scale) * np.exp(x * input_scale)
    return select(x <= 0, grad * negative_slope, grad * scale).astype(out_dtype, copy=False)


@implements(aten.elu_backward.default, out=aten.elu_backward.grad_input)
@computed_by(elu_backward)
def elu_backward_kernel(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    # elu_ with a negative alpha maps negative inputs to positive outputs; the result cannot be inverted.
    if is_result and alpha < 0:
        raise RuntimeError(
            "In-place elu backward calculation is triggered with a negative slope which is not "
            "supported. This is caused by calling in-place forward function with a negative slope, "
            "please call out-of-place version instead."
        )
    return floating_promoted("elu_backward_cpu", grad_output, self_or_result)


# --- hardtanh (relu6), hardsigmoid, hardswish --------------------------------------------


@lowers(aten.hardtanh.default)
def hardtanh(a, min_val=-1, max_val=1, *, out_dtype):
    """A clamp, which CPU's hardtanh is; integer tensors clamp to the limits truncated to integers."""
    if np.dtype(out_dtype).kind not in "fc":
        min_val, max_val = int(min_val), int(max_val)
    return clamp(a, min_val, max_val, out_dtype=out_dtype)


@implements(aten.hardtanh.default, out=aten.hardtanh.out, in_place=aten.hardtanh_.default, pointwise="exact_dtype")
@computed_by(hardtanh)
def hardtanh_kernel(self, min_val=-1, max_val=1):
    if self.dtype == torch.bool:
        check_on_cpu(aten.hardtanh.default, self, min_val, max_val)  # "Bool inputs not supported..."
    if self.dtype.is_floating_point or self.dtype.is_complex:
        return clamp_dtype(self, min_val, max_val)
    low, high = int(min_val), int(max_val)
    if self.dtype == torch.uint8 and (low < 0 or high < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return clamp_dtype(self, low, high)


def hardtanh_backward(grad_output, a, min_val, max_val, *, out_dtype):
    grad, x = _gradient_inputs(grad_output, a, out_dtype)
    outside = (x <= _scalar(min_val, x)) | (x >= _scalar(max_val, x))
    return select(outside, 0, grad).astype(out_dtype, copy=False)


def hardsigmoid(a, *, out_dtype):
    x = _forward_input(a, out_dtype)
    return (np.clip(x + 3, 0, 6) / 6).astype(out_dtype, copy=False)


def hardsigmoid_backward(grad_output, a, *, out_dtype):
    grad, x = _gradient_inputs(grad_output, a, out_dtype)
    return select((x > -3) & (x < 3), grad / 6, 0).astype(out_dtype, copy=False)


def hardswish(a, *, out_dtype):
    x = _forward_input(a, out_dtype)
    return (x * np.clip(x + 3, 0, 6) / 6).astype(out_dtype, copy=False)


def hardswish_backward(grad_output, a, *, out_dtype):
    """0 up to -3, ``x/3 + 1/2`` between, 1 from 3 on (CPU's choice at the two kinks)."""
    grad, x = _gradient_inputs(grad_output, a, out_dtype)
    return select(x <= -3, 0, select(x < 3, grad * (x / 3 + 0.5), grad)).astype(out_dtype, copy=False)


# --- softplus ----------------------------------------------------------------------------


def softplus(a, beta=1, threshold=20, *, out_dtype):
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x`` passes ``threshold``."""
    x = _forward_input(a, out_dtype)
    beta, threshold = _scalar(beta, x), _scalar(threshold, x)
    scaled = x * beta
    return select(scaled > threshold, x, np.log1p(np.exp(scaled)) / beta).astype(out_dtype, copy=False)


def softplus_backward(grad_output, a, beta, threshold, *, out_dtype):
    grad, x = _gradient_inputs(grad_output, a, out_dtype)
    scaled = x * _scalar(beta, x)
    exp = np.exp(scaled)
    return select(scaled > _scalar(threshold, x), grad, grad * exp / (exp + 1)).astype(out_dtype, copy=False)


# --- log_sigmoid ---------------------------------------------------------------------------


def log_sigmoid_forward(a, *, out_dtype):
    """``log(sigmoid(x))`` as ``min(x, 0) - log1p(exp(-|x|))``, and the buffer ``exp(-|x|)``.

    The form cannot overflow; CPU keeps the same buffer for the backward.
    """
    x = _forward_input(a, out_dtype)
    buffer = np.exp(-np.abs(x))
    output = np.minimum(x, 0) - np.log1p(buffer)
    return output.astype(out_dtype, copy=False), buffer.astype(out_dtype, copy=False)


def log_sigmoid_backward(grad_output, a, buffer, *, out_dtype):
    """``1 - sigmoid(x)``, from the buffer: ``1 - b/(1+b)`` below 0, ``b/(1+b)`` above."""
    grad, x = _gradient_inputs(grad_output, a, out_dtype)
    (b,) = computed(x.dtype, buffer, exact=True)
    negative = x < 0
    return ((negative - select(negative, 1, -1) * (b / (1 + b))) * grad).astype(out_dtype, copy=False)


def _check_log_sigmoid_out(out, self):
    if out.dtype != self.dtype:
        raise RuntimeError(
            f"expected scalar type {SCALAR_TYPE_NAMES[self.dtype]} but found {SCALAR_TYPE_NAMES[out.dtype]}"
        )


@implements(aten.log_sigmoid_forward.default, out=aten.log_sigmoid_forward.output, check_out=_check_log_sigmoid_out)
@computed_by(log_sigmoid_forward)
def log_sigmoid_forward_kernel(self):
    return floating("log_sigmoid", self)


@implements(aten.log_sigmoid_backward.default, out=aten.log_sigmoid_backward.grad_input)
@computed_by(log_sigmoid_backward)
def log_sigmoid_backward_kernel(grad_output, self, buffer):
    check_same_dtype_as_self(self, buffer, grad_output)
    return floating("log_sigmoid_backward_cpu", self)


# --- glu ---------------------------------------------------------------------------------


def _glu_axis(self, dim):
    """The NumPy axis glu halves ``self`` along, checked as CPU checks it."""
    if self.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    axis = wrap_dim(dim, self.dim())
    if self.shape[axis] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {axis} is size {self.shape[axis]}")
    return axis


def glu(a, dim=-1, *, out_dtype):
    first, gate = np.split(_forward_input(a, out_dtype), 2, axis=dim)
    return (first * _sigmoid(gate)).astype(out_dtype, copy=False)


def glu_backward(grad_output, a, dim, *, out_dtype):
    first, second = np.split(_forward_input(a, out_dtype), 2, axis=dim)
    (grad,) = computed(first.dtype, grad_output, exact=True)
    gate = _sigmoid(second)
    gradient = np.concatenate([grad * gate, grad * first * gate * (1 - gate)], axis=dim)
    return gradient.astype(out_dtype, copy=False)


@implements(aten.glu.default, out=aten.glu.out, pointwise=True)
@computed_by(glu)
def glu_kernel(self, dim=-1):
    _glu_axis(self, dim)
    return floating("glu", self)


@implements(aten.glu_backward.default, out=aten.glu_backward.grad_input)
@computed_by(glu_backward)
def glu_backward_kernel(grad_output, self, dim):
    _glu_axis(self, dim)
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        # CPU's kernel first writes the sigmoid of self's second half into a tensor of self's dtype.
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type {SCALAR_TYPE_NAMES[self.dtype]}"
        )
    check_same_dtype_as_self(self, grad_output)
    return floating("glu_backward_cpu", self)


# --- prelu ----------------------------------------------------------------------------------


def prelu(a, weight, *, out_dtype):
    x, w = computed(out_dtype, a, weight, exact=True)
    return select(x > 0, x, w * x).astype(out_dtype, copy=False)


def prelu_backward(grad_output, a, weight, *, out_dtype):
    """The gradients of input and weight, both of the broadcast shape (autograd sums the weight's)."""
    x, w = computed(out_dtype, a, weight, exact=True)
    (grad,) = computed(x.dtype, grad_output, exact=True)
    positive = x > 0
    grad_input, grad_weight = select(positive, grad, w * grad), select(positive, 0, x * grad)
    return grad_input.astype(out_dtype, copy=False), grad_weight.astype(out_dtype, copy=False)


@implements(aten._prelu_kernel.default)
@computed_by(prelu, name="_prelu_kernel")
def prelu_kernel(self, weight):
    return floating_promoted("_prelu_kernel", weight, self, refused_as="prelu")


@implements(aten._prelu_kernel_backward.default)
@computed_by(prelu_backward, name="_prelu_kernel_backward")
def prelu_backward_kernel(grad_output, self, weight):
    check_same_dtype_as_self(self, weight, grad_output)
    return floating("prelu_backward_cpu", self)


# --- threshold, softshrink, hardshrink -------------------------------------------------------

# The integer types CPU's threshold kernel has a loop for.
_THRESHOLD_INTEGER_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _scalar_as(value, np_dtype):
    """A Scalar converted to ``np_dtype`` as C++ converts it for a kernel: floats truncate
    into integer types (:func:`~.arithmetic.check_convertible` has refused out-of-range values;
    unsigned types take ``-max..-1`` too, wrapped), floating types take anything
    (overflowing to inf)."""
    if np_dtype.kind == "f":
        return np.asarray(value, dtype=np.float64).astype(np_dtype)
    return np.asarray(int(value)).astype(np_dtype)


def threshold(a, threshold, value, *, out_dtype):
    """``value`` where ``a <= threshold``; compared and replaced in ``a``'s own dtype, integers included."""
    np_dtype = np.dtype(out_dtype)
    limit, replacement = _scalar_as(threshold, np_dtype), _scalar_as(value, np_dtype)
    return select(a <= limit, replacement, a).astype(out_dtype, copy=False)


@implements(aten.threshold.default, out=aten.threshold.out, in_place=aten.threshold_.default, pointwise=True)
@computed_by(threshold)
def threshold_kernel(self, threshold, value):
    if self.dtype not in _THRESHOLD_INTEGER_DTYPES and not self.dtype.is_floating_point:
        raise not_implemented_for("threshold_cpu", self.dtype)
    # CPU's kernel reads the threshold in the compute type (float for half), the value in self's.
    check_convertible(threshold, compute_dtype(self.dtype))
    check_convertible(value, self.dtype)
    return self.dtype


def softshrink(a, lambd=0.5, *, out_dtype):
    """``x`` moved ``lambd`` toward 0, and 0 within ``lambd`` of it (``x * 0``: nan stays nan)."""
    x = _forward_input(a, out_dtype)
    lambd = _scalar(lambd, x)
    return select(x > lambd, x - lambd, select(x < -lambd, x + lambd, x * 0)).astype(out_dtype, copy=False)


def hardshrink(a, lambd=0.5, *, out_dtype):
    x = _forward_input(a, out_dtype)
    lambd = _scalar(lambd, x)
    return select((x >= -lambd) & (x <= lambd), 0, x).astype(out_dtype, copy=False)


@lowers(aten.softshrink_backward.default, aten.hardshrink_backward.default)
def shrink_backward(grad_output, a, lambd, *, out_dtype):
    grad, x = _gradient_inputs(grad_output, a, out_dtype)
    lambd = _scalar(lambd, x)
    return select((x >= -lambd) & (x <= lambd), 0, grad).astype(out_dtype, copy=False)


@implements(aten.softshrink.default, out=aten.softshrink.out, pointwise="exact_dtype")
@computed_by(softshrink)
def softshrink_kernel(self, lambd=0.5):
    dtype = floating("softshrink_check", self)
    if lambd < 0:
        raise RuntimeError(
            f"lambda must be in range [0, {torch.finfo(dtype).max:g}] for input dtype "
            f"{SCALAR_TYPE_NAMES[dtype]}, but found {lambd:g}"
        )
    return dtype


# --- the kernels whose one check is CPU's dtype rule -------------------------------------------

# The kernels CPU's refusal of a dtype names, where they are not the op: a backward's as CPU's reads, ``_cpu``
# included (CPU's hardtanh_backward is its hardshrink_backward loop, and both shrinks share one backward).
_REFUSED_AS = {
    aten.hardshrink.default: "hardshrink_cpu",
    aten.hardtanh_backward.default: "hardshrink_backward_cpu",
    aten.hardswish_backward.default: "hardswish_backward_cpu",
    aten.softplus_backward.default: "softplus_backward_cpu",
    aten.softshrink_backward.default: "shrink_backward_cpu",
    aten.hardshrink_backward.default: "shrink_backward_cpu",
}


def _floating_checks(op, *, complex_ok=False):
    """The checks of ``op``'s kernel: ``self`` floating (:func:`floating`)."""

    refused_as = _REFUSED_AS.get(op, op._opname)

    def checks(self, *scalars):
        return floating(refused_as, self, complex_ok=complex_ok)

    checks.__name__ = checks.__qualname__ = f"{op._opname}_kernel"
    return checks


def _backward_checks(op):
    """The checks of ``op``'s kernel, a backward: its operands promoted, floating (:func:`floating_promoted`)."""

    refused_as = _REFUSED_AS.get(op, op._opname)

    def checks(grad_output, self, *saved_and_scalars):
        return floating_promoted(refused_as, grad_output, self)

    checks.__name__ = checks.__qualname__ = f"{op._opname}_kernel"
    return checks


# Each activation: its NumPy function, then its overloads written out (the functional one, its out= and its
# in-place overloads). Their out= keeps self's dtype, as CPU's does.
for _function, _op, _out, _in_place in [
    (leaky_relu, aten.leaky_relu.default, aten.leaky_relu.out, aten.leaky_relu_.default),
    (elu, aten.elu.default, aten.elu.out, aten.elu_.default),
    (mish, aten.mish.default, aten.mish.out, aten.mish_.default),
    (hardsigmoid, aten.hardsigmoid.default, aten.hardsigmoid.out, aten.hardsigmoid_.default),
    (hardswish, aten.hardswish.default, aten.hardswish.out, aten.hardswish_.default),
    (softplus, aten.softplus.default, aten.softplus.out, None),
    (hardshrink, aten.hardshrink.default, aten.hardshrink.out, None),
]:
    _checks = _floating_checks(_op)
    implements(_op, out=_out, in_place=_in_place, pointwise="exact_dtype")(computed_by(_function)(_checks))
# silu's CPU kernel computes complex numbers too.
_silu_checks = _floating_checks(aten.silu.default, complex_ok=True)
implements(aten.silu.default, out=aten.silu.out, in_place=aten.silu_.default, pointwise="exact_dtype")(
    computed_by(silu)(_silu_checks)
)

# Each backward: its NumPy function, then its overloads written out (the functional one and its out=).
for _function, _op, _out in [
    (hardtanh_backward, aten.hardtanh_backward.default, aten.hardtanh_backward.grad_input),
    (hardsigmoid_backward, aten.hardsigmoid_backward.default, aten.hardsigmoid_backward.grad_input),
    (hardswish_backward, aten.hardswish_backward.default, aten.hardswish_backward.out),
    (softplus_backward, aten.softplus_backward.default, aten.softplus_backward.grad_input),
    (shrink_backward, aten.softshrink_backward.default, aten.softshrink_backward.grad_input),
    (shrink_backward, aten.hardshrink_backward.default, aten.hardshrink_backward.grad_input),
]:
    implements(_op, out=_out)(computed_by(_function, name=_op._opname)(_backward_checks(_op)))


# --- rrelu ------------------------------------------------------------------------------------


def rrelu_slopes(x, lower, upper, draw_uniform):
    """Training rrelu's slope of each element: 1 above 0, drawn from ``[lower, upper)`` at or below it."""
    return select(x <= 0, draw_uniform(lower, upper, x.shape), 1).astype(x.dtype)


def rrelu_with_noise(a, noise, lower=0.125, upper=1 / 3, training=False, generator=None, *, out_dtype):
    """leaky_relu with random slopes while training, written into ``noise`` for the backward
    (``rrelu_with_noise_backward``, a composite, multiplies by it); with the mean slope otherwise."""
    if not training:
        return leaky_relu(a, (lower + upper) / 2, out_dtype=out_dtype)
    slopes = rrelu_slopes(a, lower, upper, device.generator.uniform)
    noise[...] = slopes
    return (a * slopes).astype(out_dtype, copy=False)


@implements(
    aten.rrelu_with_noise.default,
    out=aten.rrelu_with_noise.out,
    in_place=aten.rrelu_with_noise_.default,
    pointwise="exact_dtype",
)
@computed_by(rrelu_with_noise)
def rrelu_with_noise_kernel(self, noise, lower=0.125, upper=1 / 3, training=False, generator=None):
    if self.shape != noise.shape:
        raise RuntimeError(
            "noise tensor shape must match self tensor shape. Got self.shape = "
            f"{list(self.shape)} noise.shape = {list(noise.shape)}"
        )
    if not training:
        return floating("leaky_relu", self)
    check_generator("rrelu_with_noise", generator)
    if self.dtype not in (torch.float32, torch.float64):  # CPU draws for float and double only
        raise not_implemented_for("rrelu_with_noise_out_cpu", self.dtype)
    if noise.dtype != self.dtype:
        raise RuntimeError(
            f"expected scalar type {SCALAR_TYPE_NAMES[self.dtype]} but found {SCALAR_TYPE_NAMES[noise.dtype]}"
        )
    if lower > upper:
        raise RuntimeError(
            "Expected from <= to to be true, but got false.  (Could this error message be improved?  "
            "If so, please report an enhancement request to PyTorch.)"
        )
    return self.dtype


# --- softmax and log_softmax ------------------------------------------------
# Computed over whole arrays, half precision in float32 and rounded once; where
# PyTorch's CPU kernel rounds half-precision intermediates (the last-dim
# log_softmax), half results can differ from CPU's by that rounding, npy's
# being the nearer to the exact values.


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

    checks.__name__ = checks.__qualname__ = op
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
        check_scalar_type(grad_output, output)
        if dtype == torch.float32 and input_dtype == torch.float16:
            # The backward of a half-to-float softmax, which CPU (and npy) cannot run forward.
            raise RuntimeError("expected scalar type Float but found Half")
        return dtype

    checks.__name__ = checks.__qualname__ = op
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


# --- relu's, sigmoid's and tanh's backward, gelu ------------------------------


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
        raise not_implemented_for("threshold_cpu", dtype)  # CPU computes it with threshold's kernel
    return dtype


def _differentiable_checks(op):
    """The checks of an activation backward: integers have no gradient kernel."""

    def checks(grad_output, output):
        check_broadcastable(grad_output, output)
        dtype = promoted_dtype(grad_output, output)
        if not (dtype.is_floating_point or dtype.is_complex):
            raise not_implemented_for(f"{op}_cpu", dtype)  # CPU's kernel, named after the op
        return dtype

    checks.__name__ = checks.__qualname__ = op
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


_SQRT_2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_TANH_CUBIC = 0.044715  # the tanh approximation's coefficient of x**3


def _gelu_checks(op):
    def checks(*tensors, approximate="none"):
        self = tensors[-1]
        if approximate not in ("none", "tanh"):
            raise RuntimeError("approximate argument must be either none or tanh.")
        if not self.dtype.is_floating_point:
            raise not_implemented_for(op, self.dtype)
        check_broadcastable(*tensors)
        return torch.result_type(*tensors) if len(tensors) > 1 else self.dtype

    checks.__name__ = checks.__qualname__ = op
    return checks


@lowers(aten.gelu.default)
def gelu(a, *, approximate="none", out_dtype):
    x = a.astype(np.float64)
    if approximate == "tanh":
        cdf = 0.5 * (1 + np.tanh(_SQRT_2_OVER_PI * (x + _TANH_CUBIC * x**3)))
    else:
        cdf = 0.5 * (1 + exact_erf(x / _SQRT_2))
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
        slope = 0.5 * (1 + exact_erf(x / _SQRT_2)) + x * pdf
    return (grad * slope).astype(out_dtype, copy=False)


implements(aten.gelu.default, out=aten.gelu.out)(computed_by(gelu)(_gelu_checks("gelu")))
implements(aten.gelu_backward.default, out=aten.gelu_backward.grad_input)(
    computed_by(gelu_backward)(_gelu_checks("gelu_backward"))
)
