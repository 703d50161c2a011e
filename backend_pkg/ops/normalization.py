"""Normalization layers: batch norm, layer norm, group norm and weight norm, forward and backward.

What PyTorch sends an accelerator (checked in ``native_functions.yaml`` and
``derivatives.yaml``, installed under ``torchgen/packaged``):

* ``F.batch_norm`` (``nn.BatchNorm1d/2d/3d``) is ``batch_norm``, a
  CompositeImplicitAutograd op: ``_batch_norm_impl_index`` checks the
  parameter sizes, answers an empty input itself, and calls
  ``native_batch_norm``, whose autograd formula calls
  ``native_batch_norm_backward``. ``F.instance_norm`` (``nn.InstanceNorm*d``)
  is composite too: it views ``(N, C, ...)`` as one sample of ``N * C``
  channels and runs ``batch_norm`` on that, so it reaches the same two ops.
* ``F.layer_norm`` reaches ``native_layer_norm`` and ``F.group_norm``
  ``native_group_norm``. Both have a CompositeExplicitAutograd kernel for
  devices without their own (``math_native_layer_norm`` runs through
  ``native_batch_norm``, ``math_group_norm`` through ``var_mean``), but
  their backward ops have only device kernels, and a fused forward is
  faster, so npy registers all four, as CPU and CUDA do.
* ``_native_batch_norm_legit`` (and ``.no_stats``), ``_batch_norm_with_update``,
  ``_batch_norm_no_update`` and ``batch_norm_backward`` are the batch norms
  that ``torch.export`` and AOTAutograd decompositions call; they are the
  same computation under other signatures.

Each op is a NumPy function over whole arrays plus a kernel that checks its
inputs as PyTorch's CPU kernel does. Half precision is computed in float32.
CPU takes the per-channel tensors (weight, bias, running statistics) in the
input's dtype, or all in float32 for a half input (autocast's mix); the
statistics it returns have that parameter dtype, and batch norm normalizes
with them once rounded to it.
"""

import math

import numpy as np
import torch

from ..dtypes import SCALAR_TYPE_NAMES
from ._cpu_checks import check_on_cpu
from ._dtype_errors import not_implemented_for
from ._operands import in_compute_dtype
from .registry import aten, computed_by, implements, lowers

# --- the NumPy functions ------------------------------------------------------
#
# Batch norm works on ``x`` viewed as (N, C, L): one row of L values per sample
# and channel. Layer and group norm work on rows of values, one row per mean.
# (Sizes are spelled out, not -1, which NumPy cannot infer for empty arrays.)


def _by_channel(array):
    """``array`` (N, C, *) as (N, C, L); a view when its layout allows."""
    return array.reshape(array.shape[0], array.shape[1], math.prod(array.shape[2:]))


def _channel_sums(rows):
    return rows.sum(axis=-1).sum(axis=0)


def _channel_dots(a, b):
    """The sum over N and L of ``a * b``, per channel (``vecdot`` runs as BLAS dot products)."""
    return np.vecdot(a, b).sum(axis=0)


def batch_inverse_std(variance, eps):
    """1 / sqrt(variance + eps) of the batch variance, 0 where both are 0 (CPU's ``InvStd``)."""
    shifted = variance + eps
    return np.where(shifted == 0, 0, 1 / np.sqrt(shifted)).astype(variance.dtype, copy=False)


def running_inverse_std(running_var, eps):
    """1 / sqrt(running_var + eps), which evaluation normalizes with (inf where both are 0)."""
    return 1 / np.sqrt(running_var + eps)


def batch_statistics(x):
    """Per-channel mean, biased variance (which normalizes) and unbiased variance
    (which the running variance averages) of ``x`` (N, C, *)."""
    rows = _by_channel(x)
    count = rows.shape[0] * rows.shape[2]
    mean = _channel_sums(rows) / count
    centered = rows - mean[:, None]
    squares = _channel_dots(centered, centered)
    return mean, squares / count, squares / (count - 1)


def running_average(running, batch_value, momentum):
    """The running statistic after one training step."""
    return momentum * batch_value + (1 - momentum) * running


def batch_norm(x, weight, bias, mean, invstd):
    """``(x - mean) * invstd * weight + bias``, the per-channel values (C,) broadcast along dim 1."""
    scale = invstd if weight is None else invstd * weight
    shift = -mean * scale if bias is None else bias - mean * scale
    rows = _by_channel(x)
    out = rows * scale[:, None]
    out += shift[:, None]
    return out.reshape(x.shape)


def batch_norm_backward(grad, x, weight, mean, invstd, training):
    """The gradients of :func:`batch_norm` with respect to x, weight and bias.

    In training, ``mean`` and ``invstd`` came from ``x`` itself, so the
    gradient flows through them too.
    """
    grad_rows, rows = _by_channel(grad), _by_channel(x)
    count = rows.shape[0] * rows.shape[2]
    grad_sum = _channel_sums(grad_rows)
    centered = rows - mean[:, None]
    dot = _channel_dots(centered, grad_rows)
    scale = invstd if weight is None else invstd * weight
    grad_input = grad_rows * scale[:, None]
    if training:
        centered *= (-dot * invstd * invstd / count * scale)[:, None]
        grad_input += centered
        grad_input -= (grad_sum / count * scale)[:, None]
    return grad_input.reshape(x.shape), dot * invstd, grad_sum


def _row_statistics(rows, eps):
    """The rows centered, and the mean and 1 / std of each (for an empty row 0 and nan, as on CPU)."""
    count = rows.shape[-1]
    mean = rows.sum(axis=-1) / max(count, 1)
    centered = rows - mean[..., None]
    variance = np.vecdot(centered, centered) / count
    return centered, mean, 1 / np.sqrt(variance + eps)


def _row_coefficients(grad_x_sums, grad_sums, mean, rstd, count):
    """b and c of the input gradient ``grad * rstd + x * b + c`` of a normalization over ``count``
    values, from the sums over those values of ``grad`` and ``grad * x`` (CPU's formula)."""
    x_coefficient = (grad_sums * mean - grad_x_sums) * rstd**3 / count
    return x_coefficient, -x_coefficient * mean - grad_sums * rstd / count


def layer_norm(x, normalized_ndim, weight, bias, eps):
    """Normalize over the last ``normalized_ndim`` dims; the mean and 1 / std keep those dims as 1s."""
    stats_shape = x.shape[: x.ndim - normalized_ndim] + (1,) * normalized_ndim
    count = math.prod(x.shape[x.ndim - normalized_ndim :])
    rows = x.reshape(math.prod(stats_shape), count)
    # Each row's statistics as a column, computed in place: one NumPy call per step, no temporaries.
    mean = np.add.reduce(rows, 1, None, None, True)
    mean /= max(count, 1)
    out = rows - mean
    rstd = np.vecdot(out, out)[:, None]
    rstd /= count
    rstd += eps
    np.sqrt(rstd, out=rstd)
    np.divide(1, rstd, out=rstd)
    out *= rstd
    if weight is not None:
        out *= weight.reshape(-1)
    if bias is not None:
        out += bias.reshape(-1)
    return out.reshape(x.shape), mean.reshape(stats_shape), rstd.reshape(stats_shape)


def layer_norm_backward(grad, x, normalized_ndim, mean, rstd, weight):
    """The gradients of :func:`layer_norm` with respect to x, weight and bias.

    As CPU does, the input gradient is ``grad * weight * rstd + x * b + c``,
    with b and c per row from the row sums of ``grad * weight`` and of its
    product with ``x``.
    """
    param_shape = x.shape[x.ndim - normalized_ndim :]
    shape = (mean.size, math.prod(param_shape))
    rows, grad_rows = x.reshape(shape), grad.reshape(shape)
    mean, rstd = mean.reshape(-1, 1), rstd.reshape(-1, 1)  # a column: one value per row
    scaled = grad_rows if weight is None else grad_rows * weight.reshape(-1)
    sums = np.vecdot(scaled, rows)[:, None], np.add.reduce(scaled, 1, None, None, True)
    x_coefficient, constant = _row_coefficients(*sums, mean, rstd, shape[1])
    grad_input = scaled * rstd
    buffer = np.multiply(rows, x_coefficient)
    grad_input += buffer
    grad_input += constant
    weighted = np.subtract(rows, mean, out=buffer)
    weighted *= grad_rows
    grad_weight = rstd.T @ weighted  # the sum over rows of grad * (x - mean) * rstd
    grad_bias = grad_rows.sum(axis=0)
    return grad_input.reshape(x.shape), grad_weight.reshape(param_shape), grad_bias.reshape(param_shape)


def _by_group(array, groups):
    """``array`` (N, C, L) as (N, groups, values of a group)."""
    batch, channels, length = array.shape
    return array.reshape(batch, groups, channels // groups * length)


def _for_each_channel(values, channels):
    """(N, groups) values repeated for each channel of their group: (N, C)."""
    return np.repeat(values, channels // values.shape[1], axis=1)


def group_norm(x, weight, bias, groups, eps):
    """Normalize ``x`` (N, C, L) by sample and group of channels; mean and 1 / std are (N, groups)."""
    centered, mean, rstd = _row_statistics(_by_group(x, groups), eps)
    scale = _for_each_channel(rstd, x.shape[1])
    if weight is not None:
        scale *= weight
    out = centered.reshape(x.shape)
    out *= scale[..., None]
    if bias is not None:
        out += bias[:, None]
    return out, mean, rstd


def group_norm_backward(grad, x, mean, rstd, weight, groups):
    """The gradients of :func:`group_norm` with respect to x, weight and bias.

    As CPU does, from per-channel sums of ``grad`` and ``grad * x``: the
    input gradient is ``grad * weight * rstd + x * b + c`` with b and c per
    sample and group, so no normalized copy of ``x`` is made.
    """
    batch, channels, length = x.shape
    grad_x_sums, grad_sums = np.vecdot(grad, x), grad.sum(axis=-1)  # (N, C)
    gamma = np.ones(channels, x.dtype) if weight is None else weight
    by_group = (batch, groups, channels // groups)
    grad_x_group = (grad_x_sums * gamma).reshape(by_group).sum(axis=-1)  # (N, groups)
    grad_group = (grad_sums * gamma).reshape(by_group).sum(axis=-1)
    count = by_group[2] * length
    x_coefficient, constant = _row_coefficients(grad_x_group, grad_group, mean, rstd, count)
    rstd_by_channel = _for_each_channel(rstd, channels)
    grad_input = grad * (rstd_by_channel * gamma)[..., None]
    grad_input += x * _for_each_channel(x_coefficient, channels)[..., None]
    grad_input += _for_each_channel(constant, channels)[..., None]
    centered_sums = grad_x_sums - grad_sums * _for_each_channel(mean, channels)
    return grad_input, (centered_sums * rstd_by_channel).sum(axis=0), grad_sums.sum(axis=0)


# --- the ops, on arrays -------------------------------------------------------------
#
# Each takes the op's arguments, arrays for tensors, and the NumPy dtypes of its
# results, ``out_dtype``: the input's, then the per-channel tensors' for the
# statistics (and the parameter gradients). It computes in the compute dtypes
# (float32 for half) and returns C-contiguous arrays: a NumPy result keeps its
# operands' layout (channels-last for a channels-last input), and an npy
# storage's memory must be in C or Fortran order, the order in which the views
# PyTorch makes of it (``detach()``, autograd's saved tensors) read it.


def _per_channel(out_dtype, *arrays):
    """Per-channel arrays as (C,), in ``out_dtype``'s compute dtype: batch norm takes any
    shape with C elements, as ``_batch_norm_impl_index`` checks them."""
    return [None if array is None else array.reshape(-1) for array in in_compute_dtype(out_dtype, *arrays)]


def _rounded(array, dtype):
    """``array`` rounded to ``dtype``, kept in its compute dtype."""
    return array.astype(dtype, copy=False).astype(array.dtype, copy=False)


def _results(arrays, out_dtypes, wanted=(True, True, True)):
    """The results in their dtypes, C-contiguous, and None where not ``wanted``."""
    return tuple(
        _in_dtype_contiguous(array, dtype) if want else None for want, array, dtype in zip(wanted, arrays, out_dtypes)
    )


def _in_dtype_contiguous(array, dtype):
    """``array`` in ``dtype``, C-contiguous; most results already are, and are returned as they are."""
    if array.dtype == dtype and array.flags.c_contiguous:
        return array
    return np.ascontiguousarray(array.astype(dtype, copy=False))


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, *, out_dtype):
    """Output, saved mean and saved 1 / std; in training, the running statistics are updated in place."""
    (x,) = in_compute_dtype(out_dtype[0], input)
    w, b, mean, variance = _per_channel(out_dtype[1], weight, bias, running_mean, running_var)
    if not training:
        out = batch_norm(x, w, b, mean, running_inverse_std(variance, eps))
        return _results((out, np.empty(0), np.empty(0)), out_dtype)
    mean, variance, unbiased = batch_statistics(x)
    # CPU normalizes with the statistics it saves, rounded to their dtype.
    mean, invstd = _rounded(mean, out_dtype[1]), _rounded(batch_inverse_std(variance, eps), out_dtype[1])
    for running, batch_value in [(running_mean, mean), (running_var, unbiased)]:
        if running is not None:
            (previous,) = _per_channel(out_dtype[1], running)
            running[...] = running_average(previous, batch_value, momentum).reshape(running.shape)
    return _results((batch_norm(x, w, b, mean, invstd), mean, invstd), out_dtype)


@lowers(aten._native_batch_norm_legit_functional.default)
def native_batch_norm_functional(input, weight, bias, running_mean, running_var, training, momentum, eps, *, out_dtype):
    """:func:`native_batch_norm` with the running statistics' new values returned, not written
    (the form of batch norm in compiled training graphs)."""
    new_mean, new_var = np.array(running_mean, copy=True), np.array(running_var, copy=True)
    results = native_batch_norm(
        input, weight, bias, new_mean, new_var, training, momentum, eps, out_dtype=out_dtype[:3]
    )
    return (*results, new_mean.astype(out_dtype[3], copy=False), new_var.astype(out_dtype[4], copy=False))


def native_batch_norm_no_stats(input, weight, bias, training, momentum, eps, *, out_dtype):
    return native_batch_norm(input, weight, bias, None, None, training, momentum, eps, out_dtype=out_dtype)


def _with_reserve(results):
    """The results of a batch norm and its reserve: cuDNN's workspace, empty on other devices."""
    return (*results, np.empty(0, np.uint8))


def batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps, *, out_dtype):
    arguments = (input, weight, bias, running_mean, running_var, True, momentum, eps)
    return _with_reserve(native_batch_norm(*arguments, out_dtype=out_dtype[:3]))


def batch_norm_no_update(input, weight, bias, running_mean, running_var, momentum, eps, *, out_dtype):
    arguments = (input, weight, bias, running_mean, running_var, False, momentum, eps)
    return _with_reserve(native_batch_norm(*arguments, out_dtype=out_dtype[:3]))


def native_batch_norm_backward(
    grad_out,
    input,
    weight,
    running_mean,
    running_var,
    save_mean,
    save_invstd,
    train,
    eps,
    output_mask,
    *,
    out_dtype,
):
    grad, x = in_compute_dtype(out_dtype[0], grad_out, input)
    stats = (save_mean, save_invstd) if train else (running_mean, running_var)
    w, mean, spread = _per_channel(out_dtype[1], weight, *stats)
    invstd = spread if train else running_inverse_std(spread, eps)
    grads = batch_norm_backward(grad, x, w, mean, invstd, train)
    return _results(grads, out_dtype, output_mask)


def new_batch_norm_backward(*arguments_then_reserve, out_dtype):
    """``batch_norm_backward``: :func:`native_batch_norm_backward`'s arguments (``update`` for ``train``),
    then cuDNN's ``reserve``, which other devices leave empty."""
    return native_batch_norm_backward(*arguments_then_reserve[:-1], out_dtype=out_dtype)


@lowers(aten.native_layer_norm.default)
def native_layer_norm(input, normalized_shape, weight, bias, eps, *, out_dtype):
    (x,), (w, b) = in_compute_dtype(out_dtype[0], input), in_compute_dtype(out_dtype[1], weight, bias)
    return _results(layer_norm(x, len(normalized_shape), w, b, eps), out_dtype)


def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask, *, out_dtype):
    grad, x = in_compute_dtype(out_dtype[0], grad_out, input)
    mean, rstd, w = in_compute_dtype(out_dtype[1], mean, rstd, weight)
    grads = layer_norm_backward(grad, x, len(normalized_shape), mean, rstd, w)
    return _results(grads, out_dtype, output_mask)


@lowers(aten.native_group_norm.default)
def native_group_norm(input, weight, bias, N, C, HxW, group, eps, *, out_dtype):
    (x,), (w, b) = in_compute_dtype(out_dtype[0], input), in_compute_dtype(out_dtype[1], weight, bias)
    out, mean, rstd = group_norm(x.reshape(N, C, HxW), w, b, group, eps)
    return _results((out.reshape(input.shape), mean, rstd), out_dtype)


def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask, *, out_dtype):
    grad, x = in_compute_dtype(out_dtype[0], grad_out, input)
    mean, rstd, w = in_compute_dtype(out_dtype[1], mean, rstd, weight)
    grad_input, grad_weight, grad_bias = group_norm_backward(
        grad.reshape(N, C, HxW), x.reshape(N, C, HxW), mean.reshape(N, group), rstd.reshape(N, group), w, group
    )
    return _results((grad_input.reshape(input.shape), grad_weight, grad_bias), out_dtype, output_mask)


# --- checks, as PyTorch's CPU kernels make them ---------------------------------
#
# Each returns the dtypes of the op's results: the input's, then the
# per-channel tensors' (the input's, or float32 for autocast's mix of a half
# input and float32 parameters).


def _check_dtypes(dtype, tensors):
    """The error CPU's kernels raise reading the first of ``tensors`` not of ``dtype`` as ``dtype``."""
    for tensor in tensors:
        if tensor is not None and tensor.dtype != dtype:
            expected, found = SCALAR_TYPE_NAMES[dtype], SCALAR_TYPE_NAMES[tensor.dtype]
            raise RuntimeError(f"expected scalar type {expected} but found {found}")


def _parameter_dtype(input_dtype, parameters, checked_in_order=()):
    """The dtype of the per-channel tensors and statistics, refusing the mixes CPU refuses.

    The first of ``parameters`` given decides: if it has the input's dtype,
    all must (CPU reads them in ``checked_in_order``); if not, all must be
    float32 and the input half (CPU's ``is_mixed_type`` and ``check_mixed_data_type``).
    """
    given = [tensor for tensor in parameters if tensor is not None]
    if given and given[0].dtype != input_dtype:
        if any(tensor.dtype != torch.float32 for tensor in given):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if input_dtype != torch.float16:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return torch.float32
    _check_dtypes(input_dtype, checked_in_order)
    return input_dtype


def _refuse_non_floating(op, tensor):
    if not tensor.dtype.is_floating_point:
        raise not_implemented_for(op, tensor.dtype)


def _check_channel_count(name, channels, tensor):
    """``_batch_norm_impl_index``'s check, made here too for direct calls (CPU's kernel makes none)."""
    if tensor is not None and tensor.numel() != channels:
        raise RuntimeError(f"{name} should contain {channels} elements not {tensor.numel()}")


def _check_grad_shape(grad_output, input):
    if grad_output.shape != input.shape:
        raise RuntimeError(
            f"Expected grad_output of shape {list(input.shape)}, like input, but got {list(grad_output.shape)}"
        )


def _batch_norm_checks(input, weight, bias, running_mean, running_var, training, momentum=None, eps=None):
    """The checks of CPU's ``batch_norm_cpu``."""
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    if input.dim() < 2:  # CPU asks for the channel count, input.size(1)
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    _refuse_non_floating("batch_norm", input)
    order = (running_mean, running_var, bias) if training else (bias, running_mean, running_var)
    dtype = _parameter_dtype(input.dtype, (weight, bias, running_mean, running_var), order)
    channels = input.shape[1]
    named = [("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)]
    for name, tensor in named:
        _check_channel_count(name, channels, tensor)
    if not training and running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    if training and input.numel() == 0:
        raise RuntimeError(f"input tensor must have at least one element, but got input_sizes = {list(input.shape)}")
    return input.dtype, dtype, dtype


def _batch_norm_functional_checks(input, weight, bias, running_mean, running_var, training, momentum, eps):
    return (
        *_batch_norm_checks(input, weight, bias, running_mean, running_var, training),
        running_mean.dtype,
        running_var.dtype,
    )


def _batch_norm_no_stats_checks(input, weight, bias, training, momentum, eps):
    return _batch_norm_checks(input, weight, bias, None, None, training)


def _batch_norm_with_update_checks(input, weight, bias, running_mean, running_var, momentum, eps):
    return (*_batch_norm_checks(input, weight, bias, running_mean, running_var, True), torch.uint8)


def _batch_norm_no_update_checks(input, weight, bias, running_mean, running_var, momentum, eps):
    return (*_batch_norm_checks(input, weight, bias, running_mean, running_var, False), torch.uint8)


def _batch_norm_backward_checks(
    grad_output, input, weight, running_mean, running_var, save_mean, save_invstd, training, *eps_mask_and_reserve
):
    _refuse_non_floating("batch_norm_backward_cpu", input)
    dtype = _parameter_dtype(input.dtype, (weight, running_mean, running_var, save_mean, save_invstd))
    _check_dtypes(input.dtype, [grad_output])
    _check_dtypes(dtype, (save_mean, save_invstd, running_mean, running_var))
    _check_grad_shape(grad_output, input)
    stats = (save_mean, save_invstd) if training else (running_mean, running_var)
    if any(tensor is None for tensor in stats):  # CPU's kernel crashes
        names = "save_mean and save_invstd" if training else "running_mean and running_var"
        raise RuntimeError(f"batch_norm_backward: {names} must be defined when train={training}")
    for name, tensor in [("weight", weight), *zip(("mean", "invstd"), stats)]:
        _check_channel_count(name, input.shape[1], tensor)
    return input.dtype, dtype, dtype


def _check_layer_norm_inputs(input, normalized_shape, weight, bias):
    """CPU's ``_check_layer_norm_inputs``."""
    # Shapes compare as tuples (a torch.Size is one), the messages show them as lists.
    normalized = tuple(normalized_shape)
    normalized_shape = list(normalized_shape)
    if not normalized_shape:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
            f"element, but got normalized_shape = {normalized_shape}"
        )
    for name, tensor in [("weight", weight), ("bias", bias)]:
        if tensor is not None and tensor.shape != normalized:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                f"{list(tensor.shape)} and normalized_shape = {normalized_shape}"
            )
    shape = input.shape
    if len(shape) < len(normalized) or shape[len(shape) - len(normalized) :] != normalized:
        expected = "".join(f", {size}" for size in normalized_shape)
        raise RuntimeError(
            f"Given normalized_shape={normalized_shape}, expected input with shape [*{expected}], "
            f"but got input of size{list(input.shape)}"
        )


def _check_like(template, wanted):
    """CPU's backward kernels make a parameter gradient like its parameter: none given, they fail."""
    if wanted and template is None:
        raise RuntimeError("tensor does not have a device")


def _layer_norm_checks(input, normalized_shape, weight, bias, eps):
    _check_layer_norm_inputs(input, normalized_shape, weight, bias)
    dtype = _parameter_dtype(input.dtype, (weight, bias), (bias,))
    _refuse_non_floating("LayerNormKernelImpl", input)
    return input.dtype, dtype, dtype


def _layer_norm_backward_checks(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    _check_layer_norm_inputs(input, normalized_shape, weight, bias)
    _check_like(weight, output_mask[1])
    _check_like(weight if weight is not None else bias, output_mask[2])
    dtype = _parameter_dtype(input.dtype, (weight, bias), (bias,))
    _refuse_non_floating("LayerNormBackwardKernelImpl", input)
    _check_dtypes(input.dtype, [grad_out])
    _check_grad_shape(grad_out, input)
    return input.dtype, dtype, dtype


def _check_group_norm_inputs(input, weight, bias, channels, groups):
    """CPU's ``check_group_norm_inputs`` (whose bias message shows the weight's shape)."""
    if groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {groups}")
    if channels % groups != 0:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input of "
            f"shape {list(input.shape)} and num_groups={groups}"
        )
    weight_shape = list(weight.shape) if weight is not None else [0]
    for name, tensor in [("weight", weight), ("bias", bias)]:
        if tensor is not None and (tensor.dim() != 1 or tensor.numel() != channels):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in input, "
                f"but got {name} of shape {weight_shape} and input of shape {list(input.shape)}"
            )


def _check_group_sizes(input, batch, channels, spatial):
    if input.numel() != batch * channels * spatial:
        raise RuntimeError(
            "Expected X.numel() == N * C * HxW to be true, but got false.  (Could this error message "
            "be improved?  If so, please report an enhancement request to PyTorch.)"
        )


def _group_norm_checks(input, weight, bias, N, C, HxW, group, eps):
    if HxW == 0:  # refused since torch 2.14 ("Expected HxW to be greater than 0"): the CPU answers
        check_on_cpu(aten.native_group_norm.default, input, weight, bias, N, C, HxW, group, eps)
    _check_group_norm_inputs(input, weight, bias, C, group)
    dtype = _parameter_dtype(input.dtype, (weight, bias), (bias,))
    _refuse_non_floating("GroupNormKernelImpl", input)
    _check_group_sizes(input, N, C, HxW)
    return input.dtype, dtype, dtype


def _group_norm_backward_checks(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    if grad_out.dtype != input.dtype:
        raise RuntimeError("Expected scalar types of X and dY are same.")
    dtype = _parameter_dtype(input.dtype, (mean, rstd), (rstd,))
    _check_like(weight, output_mask[1] or output_mask[2])
    _refuse_non_floating("GroupNormBackwardKernelImpl", input)
    _check_group_sizes(input, N, C, HxW)
    _check_grad_shape(grad_out, input)
    if mean.numel() != N * group or rstd.numel() != N * group:
        raise RuntimeError(
            "Expected mean.numel() == N * group to be true, but got false.  (Could this error message "
            "be improved?  If so, please report an enhancement request to PyTorch.)"
        )
    return input.dtype, dtype, dtype


# --- weight norm: w = g * v / ||v||, one norm per slice along the first or last dim -----------
#
# ``torch.nn.utils.parametrizations.weight_norm`` (and the older ``weight_norm``)
# call ``_weight_norm``, a composite that sends a contiguous ``v`` to this fused
# pair when ``dim`` is the first or last dim. The norms are float32 for half, as CPU keeps them.


def _weight_norm_axes(v, dim):
    """The axes each norm sums over: every axis but ``dim`` (none of a zero-dim ``v``)."""
    return tuple(axis for axis in range(v.ndim) if axis != dim)


def weight_norm_interface(v, g, dim=0, *, out_dtype):
    x, gain = in_compute_dtype(out_dtype[0], v, g)
    norm = np.sqrt(np.sum(x * x, axis=_weight_norm_axes(v, dim), keepdims=True))
    w = x * (gain.reshape(norm.shape) / norm)
    return w.astype(out_dtype[0], copy=False), norm.reshape(g.shape).astype(out_dtype[1], copy=False)


def weight_norm_interface_backward(grad_w, saved_v, saved_g, saved_norms, dim, *, out_dtype):
    grad, x, gain, norms = in_compute_dtype(out_dtype[0], grad_w, saved_v, saved_g, saved_norms)
    sums = np.sum(grad * x, axis=_weight_norm_axes(saved_v, dim), keepdims=True)
    norm, gain = norms.reshape(sums.shape), gain.reshape(sums.shape)
    grad_v = (gain / norm) * (grad - x * (sums / (norm * norm)))
    return grad_v.astype(out_dtype[0], copy=False), (sums / norm).reshape(saved_g.shape).astype(out_dtype[1])


def _weight_norm_norms_dtype(dtype):
    """What CPU keeps the norms in: float32 for half, else the weight's dtype."""
    return torch.float32 if dtype == torch.float16 else dtype


def _check_weight_norm(op, v, dim, others):
    """CPU's checks: first or last dim, a floating ``v``, then each of ``others`` (tensor, dtype) in it."""
    if not (dim == 0 or dim == v.dim() - 1):
        last = "saved_v" if op.endswith("backward_kernel") else "v"
        raise RuntimeError(
            f"dim == 0 || dim == {last}.dim() - 1 INTERNAL ASSERT FAILED, please report a bug to "
            "PyTorch. fused kernels can only be applied for first or last dim"
        )
    if not v.dtype.is_floating_point:
        raise not_implemented_for(op, v.dtype)
    for tensor, dtype in others:
        if tensor.dtype != dtype:
            raise RuntimeError(
                f"expected scalar type {SCALAR_TYPE_NAMES[dtype]} but found {SCALAR_TYPE_NAMES[tensor.dtype]}"
            )


def _weight_norm_checks(v, g, dim=0):
    _check_weight_norm("weight_norm_kernel", v, dim, [(g, v.dtype)])
    return v.dtype, _weight_norm_norms_dtype(g.dtype)


def _weight_norm_backward_checks(grad_w, saved_v, saved_g, saved_norms, dim):
    for name, tensor in (("saved_v", saved_v), ("saved_g", saved_g), ("saved_norm", saved_norms)):
        if not tensor.is_contiguous():
            raise RuntimeError(f"{name} must be contiguous")
    dtype = saved_v.dtype
    _check_weight_norm(
        "weight_norm_backward_kernel",
        saved_v,
        dim,
        [(grad_w, dtype), (saved_g, dtype), (saved_norms, _weight_norm_norms_dtype(dtype))],
    )
    return dtype, saved_g.dtype


# --- the kernels: the checks, then the op on arrays ----------------------------------

for _ops, _function, _checks in [
    (
        (aten.native_batch_norm.default, aten._native_batch_norm_legit.default),
        native_batch_norm,
        _batch_norm_checks,
    ),
    ((aten._native_batch_norm_legit.no_stats,), native_batch_norm_no_stats, _batch_norm_no_stats_checks),
    (
        (aten._native_batch_norm_legit_functional.default,),
        native_batch_norm_functional,
        _batch_norm_functional_checks,
    ),
    ((aten._batch_norm_with_update.default,), batch_norm_with_update, _batch_norm_with_update_checks),
    # Its CompositeExplicitAutograd kernel calls CPU's batch_norm_cpu, which refuses npy tensors.
    ((aten._batch_norm_no_update.default,), batch_norm_no_update, _batch_norm_no_update_checks),
    ((aten.native_batch_norm_backward.default,), native_batch_norm_backward, _batch_norm_backward_checks),
    ((aten.batch_norm_backward.default,), new_batch_norm_backward, _batch_norm_backward_checks),
    ((aten.native_layer_norm.default,), native_layer_norm, _layer_norm_checks),
    ((aten.native_layer_norm_backward.default,), native_layer_norm_backward, _layer_norm_backward_checks),
    ((aten.native_group_norm.default,), native_group_norm, _group_norm_checks),
    ((aten.native_group_norm_backward.default,), native_group_norm_backward, _group_norm_backward_checks),
    ((aten._weight_norm_interface.default,), weight_norm_interface, _weight_norm_checks),
    (
        (aten._weight_norm_interface_backward.default,),
        weight_norm_interface_backward,
        _weight_norm_backward_checks,
    ),
]:
    implements(*_ops)(computed_by(_function)(_checks))
