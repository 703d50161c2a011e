"""Activation functions and their backward ops.

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
  (``tests/test_elementwise.py::test_no_kernel_hides_a_composite``).

Each op is a NumPy function of arrays (:func:`leaky_relu_values`...) and a
kernel that checks its inputs as PyTorch's CPU kernel does. Half precision
is computed in float32 and rounded once, as CPU's vectorized kernels do;
Python scalars enter the arithmetic in the compute dtype, as CPU converts them.
"""

import numpy as np
import torch

from .. import device
from ..dtypes import SCALAR_TYPE_NAMES, compute_dtype, to_numpy_dtype
from ..tensor import unwrap
from ._dims import wrap_dim
from ._dtype_errors import not_implemented_for
from ._cpu_checks import check_on_cpu
from ._numpy_errors import quietly
from ._operands import promoted
from ._out_variants import with_out
from ._results import as_result
from ._select import select
from .arithmetic import OUT_OF_SELF_DTYPE, elementwise
from .registry import aten, implements
from .sampling import _check_generator as check_generator
from .unary import clamp_kernel

# --- registering an op with its out= and in-place overloads ----------------------------


def activation(name, *, in_place=True, check_out=OUT_OF_SELF_DTYPE):
    """Register the decorated kernel for ``aten.<name>``, its ``.out`` and (if any) ``aten.<name>_``.

    The ``out=`` and in-place kernels store the functional result (see
    :func:`~.arithmetic.elementwise`), so each op is written once. Most
    activations, like PyTorch's unary ops, write only into an ``out`` of the
    input's dtype.
    """
    packet = getattr(aten, name)
    in_place_op = getattr(aten, f"{name}_").default if in_place else None
    return elementwise(packet.default, packet.out, in_place_op, check_out=check_out)


# --- reading inputs -------------------------------------------------------------


def _floating_input(op, self, *, complex_ok=False):
    """``self``'s array in its compute dtype; CPU's activation kernels exist for floating
    dtypes only (silu's for complex ones too)."""
    if not (self.dtype.is_floating_point or (complex_ok and self.dtype.is_complex)):
        raise not_implemented_for(op, self.dtype)
    return unwrap(self).astype(to_numpy_dtype(compute_dtype(self.dtype)), copy=False)


def _gradient_inputs(op, grad_output, self):
    """A backward's arrays, promoted together, and their (floating) dtype."""
    (grad, x), dtype = promoted(op, grad_output, self)
    if not dtype.is_floating_point:
        raise not_implemented_for(op, dtype)
    return grad, x, dtype


def _scalar(value, array):
    """A Scalar argument as the array's dtype, as CPU's kernels convert it before computing."""
    return array.dtype.type(value)


# --- leaky_relu -------------------------------------------------------------------


def leaky_relu_values(x, negative_slope):
    return select(x > 0, x, x * negative_slope)


def leaky_relu_gradient(grad, x, negative_slope):
    return select(x > 0, grad, grad * negative_slope)


@activation("leaky_relu")
def leaky_relu(self, negative_slope=0.01):
    x = _floating_input("leaky_relu", self)
    return as_result(leaky_relu_values(x, _scalar(negative_slope, x)), self.dtype)


@with_out("leaky_relu_backward", "grad_input")
def leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
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
    grad, x, dtype = _gradient_inputs("leaky_relu_backward", grad_output, self)
    return as_result(leaky_relu_gradient(grad, x, _scalar(negative_slope, x)), dtype)


# --- silu and mish ---------------------------------------------------------------------


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def silu_values(x):
    return x / (1 + np.exp(-x))


def mish_values(x):
    return x * np.tanh(np.log1p(np.exp(x)))


@activation("silu")
def silu(self):
    return as_result(silu_values(_floating_input("silu", self, complex_ok=True)), self.dtype)


@activation("mish")
def mish(self):
    return as_result(mish_values(_floating_input("mish", self)), self.dtype)


# --- elu, and selu and celu through it ------------------------------------------------


def elu_values(x, alpha, scale, input_scale):
    return select(x <= 0, np.expm1(x * input_scale) * (alpha * scale), x * scale)


def elu_gradient(grad, x, alpha, scale, input_scale, is_result):
    """With ``is_result``, ``x`` is elu's output: below 0 the slope is ``input_scale * (out + alpha * scale)``."""
    if is_result:
        negative_slope = input_scale * (x + alpha * scale)
    else:
        negative_slope = input_scale * (alpha * scale) * np.exp(x * input_scale)
    return select(x <= 0, grad * negative_slope, grad * scale)


@activation("elu")
def elu(self, alpha=1, scale=1, input_scale=1):
    x = _floating_input("elu", self)
    return as_result(elu_values(x, *(_scalar(value, x) for value in (alpha, scale, input_scale))), self.dtype)


@with_out("elu_backward", "grad_input")
def elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    # elu_ with a negative alpha maps negative inputs to positive outputs; the result cannot be inverted.
    if is_result and alpha < 0:
        raise RuntimeError(
            "In-place elu backward calculation is triggered with a negative slope which is not "
            "supported. This is caused by calling in-place forward function with a negative slope, "
            "please call out-of-place version instead."
        )
    grad, x, dtype = _gradient_inputs("elu_backward", grad_output, self_or_result)
    alpha, scale, input_scale = (_scalar(value, x) for value in (alpha, scale, input_scale))
    return as_result(elu_gradient(grad, x, alpha, scale, input_scale, is_result), dtype)


# --- hardtanh (relu6), hardsigmoid, hardswish --------------------------------------------


@activation("hardtanh")
def hardtanh(self, min_val=-1, max_val=1):
    """A clamp, which CPU's hardtanh is; integer tensors clamp to the limits truncated to integers."""
    if self.dtype == torch.bool:
        check_on_cpu(aten.hardtanh.default, self, min_val, max_val)  # "Bool inputs not supported..."
    if self.dtype.is_floating_point or self.dtype.is_complex:
        return clamp_kernel(self, min_val, max_val)
    low, high = int(min_val), int(max_val)
    if self.dtype == torch.uint8 and (low < 0 or high < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return clamp_kernel(self, low, high)


def hardtanh_gradient(grad, x, min_val, max_val):
    return select((x <= min_val) | (x >= max_val), 0, grad)


@with_out("hardtanh_backward", "grad_input")
def hardtanh_backward(grad_output, self, min_val, max_val):
    # CPU's hardtanh_backward is its hardshrink_backward loop, and refuses dtypes by that name.
    grad, x, dtype = _gradient_inputs("hardshrink_backward", grad_output, self)
    return as_result(hardtanh_gradient(grad, x, _scalar(min_val, x), _scalar(max_val, x)), dtype)


def hardsigmoid_values(x):
    return np.clip(x + 3, 0, 6) / 6


def hardsigmoid_gradient(grad, x):
    return select((x > -3) & (x < 3), grad / 6, 0)


def hardswish_values(x):
    return x * np.clip(x + 3, 0, 6) / 6


def hardswish_gradient(grad, x):
    """0 up to -3, ``x/3 + 1/2`` between, 1 from 3 on (CPU's choice at the two kinks)."""
    return select(x <= -3, 0, select(x < 3, grad * (x / 3 + 0.5), grad))


@activation("hardsigmoid")
def hardsigmoid(self):
    return as_result(hardsigmoid_values(_floating_input("hardsigmoid", self)), self.dtype)


@with_out("hardsigmoid_backward", "grad_input")
def hardsigmoid_backward(grad_output, self):
    grad, x, dtype = _gradient_inputs("hardsigmoid_backward", grad_output, self)
    return as_result(hardsigmoid_gradient(grad, x), dtype)


@activation("hardswish")
def hardswish(self):
    return as_result(hardswish_values(_floating_input("hardswish", self)), self.dtype)


@with_out("hardswish_backward")
def hardswish_backward(grad_output, self):
    grad, x, dtype = _gradient_inputs("hardswish_backward", grad_output, self)
    return as_result(hardswish_gradient(grad, x), dtype)


# --- softplus ----------------------------------------------------------------------------


def softplus_values(x, beta, threshold):
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x`` passes ``threshold``."""
    scaled = x * beta
    return select(scaled > threshold, x, np.log1p(np.exp(scaled)) / beta)


def softplus_gradient(grad, x, beta, threshold):
    scaled = x * beta
    exp = np.exp(scaled)
    return select(scaled > threshold, grad, grad * exp / (exp + 1))


@activation("softplus", in_place=False)
def softplus(self, beta=1, threshold=20):
    x = _floating_input("softplus", self)
    return as_result(softplus_values(x, _scalar(beta, x), _scalar(threshold, x)), self.dtype)


@with_out("softplus_backward", "grad_input")
def softplus_backward(grad_output, self, beta, threshold):
    grad, x, dtype = _gradient_inputs("softplus_backward", grad_output, self)
    return as_result(softplus_gradient(grad, x, _scalar(beta, x), _scalar(threshold, x)), dtype)


# --- log_sigmoid ---------------------------------------------------------------------------


def log_sigmoid_values(x):
    """``log(sigmoid(x))`` as ``min(x, 0) - log1p(exp(-|x|))``, and the buffer ``exp(-|x|)``.

    The form cannot overflow; CPU keeps the same buffer for the backward.
    """
    buffer = np.exp(-np.abs(x))
    return np.minimum(x, 0) - np.log1p(buffer), buffer


def log_sigmoid_gradient(grad, x, buffer):
    """``1 - sigmoid(x)``, from the buffer: ``1 - b/(1+b)`` below 0, ``b/(1+b)`` above."""
    negative = x < 0
    return (negative - select(negative, 1, -1) * (buffer / (1 + buffer))) * grad


def _check_log_sigmoid_out(out, self):
    if out.dtype != self.dtype:
        raise RuntimeError(
            f"expected scalar type {SCALAR_TYPE_NAMES[self.dtype]} but found {SCALAR_TYPE_NAMES[out.dtype]}"
        )


@with_out("log_sigmoid_forward", "output", check_out=_check_log_sigmoid_out)
def log_sigmoid_forward(self):
    output, buffer = log_sigmoid_values(_floating_input("log_sigmoid", self))
    return as_result(output, self.dtype), as_result(buffer, self.dtype)


@with_out("log_sigmoid_backward", "grad_input")
def log_sigmoid_backward(grad_output, self, buffer):
    grad, x, dtype = _gradient_inputs("log_sigmoid_backward", grad_output, self)
    return as_result(log_sigmoid_gradient(grad, x, unwrap(buffer).astype(x.dtype, copy=False)), dtype)


# --- glu ---------------------------------------------------------------------------------


def _glu_halves(op, self, dim):
    """The two halves of ``self`` along ``dim`` (compute dtype), and the NumPy axis."""
    if self.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    axis = wrap_dim(dim, self.dim())
    if self.shape[axis] % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {axis} is size {self.shape[axis]}"
        )
    a, b = np.split(_floating_input(op, self), 2, axis=axis)
    return a, b, axis


def glu_values(a, b):
    return a * _sigmoid(b)


def glu_gradient(grad, a, b, axis):
    gate = _sigmoid(b)
    return np.concatenate([grad * gate, grad * a * gate * (1 - gate)], axis=axis)


@activation("glu", in_place=False, check_out=None)
def glu(self, dim=-1):
    a, b, _ = _glu_halves("glu", self, dim)
    return as_result(glu_values(a, b), self.dtype)


@with_out("glu_backward", "grad_input")
def glu_backward(grad_output, self, dim):
    a, b, axis = _glu_halves("glu_backward", self, dim)
    grad = unwrap(grad_output).astype(a.dtype, copy=False)
    return as_result(glu_gradient(grad, a, b, axis), self.dtype)


# --- prelu ----------------------------------------------------------------------------------


def prelu_values(x, weight):
    return select(x > 0, x, weight * x)


def prelu_gradients(grad, x, weight):
    """The gradients of input and weight, both of the broadcast shape (autograd sums the weight's)."""
    positive = x > 0
    return select(positive, grad, weight * grad), select(positive, 0, x * grad)


def _prelu_inputs(op, self, weight):
    (x, w), dtype = promoted(op, self, weight)
    if not dtype.is_floating_point:
        raise not_implemented_for("prelu", dtype)
    return x, w, dtype


@implements(aten._prelu_kernel.default)
def prelu_kernel(self, weight):
    x, w, dtype = _prelu_inputs("_prelu_kernel", self, weight)
    return as_result(quietly(prelu_values, x, w), dtype)


@implements(aten._prelu_kernel_backward.default)
def prelu_kernel_backward(grad_output, self, weight):
    x, w, dtype = _prelu_inputs("_prelu_kernel_backward", self, weight)
    grad = unwrap(grad_output).astype(x.dtype, copy=False)
    grad_input, grad_weight = quietly(prelu_gradients, grad, x, w)
    return as_result(grad_input, dtype), as_result(grad_weight, dtype)


# --- threshold, softshrink, hardshrink -------------------------------------------------------

# c10's names for the integer types its checked Scalar conversion refuses to overflow.
_C_INTEGER_TYPES = {
    torch.uint8: "uint8_t",
    torch.int8: "int8_t",
    torch.int16: "int16_t",
    torch.int32: "int",
    torch.int64: "int64_t",
}


def _scalar_as(value, dtype):
    """A Scalar converted to ``dtype`` as C++ converts it for a kernel: floats truncate
    into integer types, out-of-range values are refused (unsigned types take
    ``-max..-1`` too, wrapped), floating types take anything (overflowing to inf)."""
    np_dtype = to_numpy_dtype(dtype)
    if dtype.is_floating_point:
        with np.errstate(over="ignore"):
            return np.asarray(value, dtype=np.float64).astype(np_dtype)
    info = torch.iinfo(dtype)
    low = -info.max if info.min == 0 else info.min
    if not low <= value <= info.max:
        raise RuntimeError(f"value cannot be converted to type {_C_INTEGER_TYPES[dtype]} without overflow")
    return np.asarray(int(value)).astype(np_dtype)


def threshold_values(x, threshold, value):
    return select(x <= threshold, value, x)


@activation("threshold", check_out=None)
def threshold(self, threshold, value):
    """``value`` where ``self <= threshold``; compared and replaced in ``self``'s own dtype, integers included."""
    if self.dtype not in _C_INTEGER_TYPES and not self.dtype.is_floating_point:
        raise not_implemented_for("threshold_cpu", self.dtype)
    limit, replacement = _scalar_as(threshold, self.dtype), _scalar_as(value, self.dtype)
    return as_result(threshold_values(unwrap(self), limit, replacement), self.dtype)


def softshrink_values(x, lambd):
    """``x`` moved ``lambd`` toward 0, and 0 within ``lambd`` of it (``x * 0``: nan stays nan)."""
    return select(x > lambd, x - lambd, select(x < -lambd, x + lambd, x * 0))


def hardshrink_values(x, lambd):
    return select((x >= -lambd) & (x <= lambd), 0, x)


def shrink_gradient(grad, x, lambd):
    return select((x >= -lambd) & (x <= lambd), 0, grad)


@activation("softshrink", in_place=False)
def softshrink(self, lambd=0.5):
    x = _floating_input("softshrink_check", self)
    if lambd < 0:
        raise RuntimeError(
            f"lambda must be in range [0, {torch.finfo(self.dtype).max:g}] for input dtype "
            f"{SCALAR_TYPE_NAMES[self.dtype]}, but found {lambd:g}"
        )
    return as_result(softshrink_values(x, _scalar(lambd, x)), self.dtype)


@activation("hardshrink", in_place=False)
def hardshrink(self, lambd=0.5):
    x = _floating_input("hardshrink_cpu", self)
    return as_result(hardshrink_values(x, _scalar(lambd, x)), self.dtype)


@with_out("softshrink_backward", "grad_input")
def softshrink_backward(grad_output, self, lambd):
    grad, x, dtype = _gradient_inputs("shrink_backward_cpu", grad_output, self)
    return as_result(shrink_gradient(grad, x, _scalar(lambd, x)), dtype)


@with_out("hardshrink_backward", "grad_input")
def hardshrink_backward(grad_output, self, lambd):
    grad, x, dtype = _gradient_inputs("hardshrink_backward_cpu", grad_output, self)
    return as_result(shrink_gradient(grad, x, _scalar(lambd, x)), dtype)


# --- rrelu ------------------------------------------------------------------------------------


def rrelu_slopes(x, lower, upper, draw_uniform):
    """Training rrelu's slope of each element: 1 above 0, drawn from ``[lower, upper)`` at or below it."""
    return select(x <= 0, draw_uniform(lower, upper, x.shape), 1).astype(x.dtype)


@activation("rrelu_with_noise")
def rrelu_with_noise(self, noise, lower=0.125, upper=1 / 3, training=False, generator=None):
    """leaky_relu with random slopes while training, written into ``noise`` for the backward
    (``rrelu_with_noise_backward``, a composite, multiplies by it); with the mean slope otherwise."""
    if self.shape != noise.shape:
        raise RuntimeError(
            "noise tensor shape must match self tensor shape. Got self.shape = "
            f"{list(self.shape)} noise.shape = {list(noise.shape)}"
        )
    if not training:
        return leaky_relu(self, (lower + upper) / 2)
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
    x = unwrap(self)
    slopes = rrelu_slopes(x, lower, upper, device.generator.uniform)
    unwrap(noise)[...] = slopes
    return as_result(x * slopes, self.dtype)
