"""Pooling: max, average, adaptive average and adaptive max, forward and backward.

What PyTorch sends the npy device (checked with ``BACKEND_PKG_STRICT=1``;
the composites are in ATen's ``native_functions.yaml`` and
``MaxPooling.cpp``/``AdaptiveAveragePooling.cpp``/``Pooling.cpp``):

* ``max_pool1d`` becomes ``max_pool1d_with_indices``, a composite that
  unsqueezes to ``max_pool2d_with_indices`` (``.out``: it is structured);
  ``max_pool2d`` goes there too on any device but CPU, and ``max_pool3d`` to
  ``max_pool3d_with_indices``; backward is ``max_pool{2,3}d_with_indices_backward``;
* ``avg_pool1d`` unsqueezes to ``avg_pool2d``; ``avg_pool{2,3}d`` and
  their backward are structured (``.out``, ``.grad_input``);
* ``adaptive_avg_pool{1,2,3}d`` (and ``F.interpolate(mode="area")``) become
  ``mean`` for a 1x1 output and ``_adaptive_avg_pool{2,3}d`` otherwise
  (1d unsqueezes to 2d); backward ``_adaptive_avg_pool{2,3}d_backward``;
* ``adaptive_max_pool{1,2,3}d`` become ``adaptive_max_pool{2,3}d``
  (``.out``) and ``adaptive_max_pool{2,3}d_backward`` (``.grad_input``).

Shapes, checks and messages follow ATen's ``Pool.h`` and the meta
functions of ``DilatedMaxPool{2,3}d.cpp``, ``AveragePool{2,3}d.cpp`` and
``Adaptive*Pooling*.cpp``. The spatial dims are the last two or three; all
dims before them are planes, pooled alike.

Max pooling is not separable: it walks the kernel offsets over a padded
copy of the input, keeping CPU's rule for each window (the first maximum
wins; a NaN wins and the last NaN is kept; a window with nothing above the
lowest value reports its first in-bounds position). Windows side by side
(kernel = stride, no padding, no dilation, no NaN) are one ``argmax``
instead. Indices are flat positions in each input plane, as on CPU. Average pooling is separable: one
:mod:`~backend_pkg.ops._axis_maps` map per axis sums the windows, then the
sum is divided by the window's divisor, as CPU divides.
"""

import itertools
import math
from dataclasses import dataclass

import numpy as np
import torch

from ..dtypes import SCALAR_TYPE_NAMES, TYPE_META_NAMES
from . import _axis_maps as axis_maps
from ._dtype_errors import not_implemented_for
from ._operands import in_compute_dtype
from .registry import aten, computed_by, implements, lowers

_COUNT_WORDS = {2: "two", 3: "three"}
# Spatial dims in the order PyTorch's messages name them.
_DIM_LETTERS = {2: "HW", 3: "THW"}


# --- output sizes and windows of one spatial dim ------------------------------


def _trunc_div(a, b):
    """C++ integer division, which truncates toward zero."""
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def pooled_size(size, kernel, pad, stride, dilation, ceil_mode):
    """ATen's ``pooling_output_shape``, with its checks."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > _trunc_div((kernel - 1) * dilation + 1, 2):
        raise RuntimeError(
            f"pad should be at most half of effective kernel size, but got pad={pad}, "
            f"kernel_size={kernel} and dilation={dilation}"
        )
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    # In ceil mode the last window must still start inside the input or its left padding.
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _window_starts(out, pad, stride):
    return np.arange(out) * stride - pad


def _average_map(size, out, kernel, pad, stride):
    """The 0/1 map summing each window of one dim, and each window's in-bounds and padded counts."""
    starts = _window_starts(out, pad, stride)
    padded_ends = np.minimum(starts + kernel, size + pad)
    positions = starts[:, None] + np.arange(kernel)
    inside = (positions >= 0) & (positions < np.minimum(padded_ends, size)[:, None])
    counted = np.minimum(padded_ends, size) - np.maximum(starts, 0)
    return (np.clip(positions, 0, size - 1), inside), counted, padded_ends - starts


def _adaptive_map(size, out):
    """The 0/1 map summing each adaptive window of one dim, from ``floor(o*n/out)`` to
    ``ceil((o+1)*n/out)``, and the windows' sizes."""
    outputs = np.arange(out)
    starts = outputs * size // out
    ends = -(-(outputs + 1) * size // out)
    # An empty output still gets one (unused) column, so that every map has one.
    widest = int((ends - starts).max(initial=1))
    positions = starts[:, None] + np.arange(widest)
    inside = positions < ends[:, None]
    return (np.minimum(positions, size - 1), inside), ends - starts


def _outer(vectors):
    """The outer product of per-dim vectors: the per-window divisor of a separable pooling."""
    result = np.ones(())
    for vector in vectors:
        result = np.multiply.outer(result, vector)
    return result


def _on_grid(per_dim):
    """Per-dim vectors shaped to broadcast over the output grid (one axis each)."""
    dims = len(per_dim)
    return [vector.reshape((-1,) + (1,) * (dims - axis - 1)) for axis, vector in enumerate(per_dim)]


def _flat_positions(positions, spatial):
    """Flat positions in a plane of shape ``spatial`` from per-dim positions, over the output grid."""
    flat = 0
    for along_dim, size in zip(_on_grid(positions), spatial):
        flat = flat * size + along_dim
    return flat


def _filled(positions, shape):
    """A new C-contiguous int64 array of ``shape`` holding ``positions`` broadcast.

    ``astype`` of a broadcast array would keep its memory order, neither C nor
    Fortran, and ``wrap`` reads such an array as if it were C-ordered.
    """
    result = np.empty(shape, np.int64)
    result[...] = positions
    return result


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _has_nan(x):
    return x.dtype.kind == "f" and bool(np.isnan(x).any())


def _take_larger(best, index, values, positions, nan_possible):
    """CPU's update of a running max: a larger value or any NaN replaces the one kept."""
    take = values > best
    if nan_possible:
        take |= np.isnan(values)
    np.copyto(best, values, where=take)
    np.copyto(index, positions, where=take)


# --- the NumPy functions: arrays (..., *spatial) in and out -------------------


def max_pool(x, kernel, stride, padding, dilation, ceil_mode):
    """Max pooling over the last ``len(kernel)`` axes: the maxima and their flat positions per plane."""
    spatial = x.shape[-len(kernel) :]
    outs = [pooled_size(*dims, ceil_mode) for dims in zip(spatial, kernel, padding, stride, dilation)]
    nan_possible = _has_nan(x)
    if _tiles_the_input(spatial, kernel, stride, padding, dilation, outs) and not nan_possible:
        return _max_pool_tiled(x, kernel, outs)
    lowest = _lowest(x.dtype)
    # Right padding reaches the last window of ceil mode; padded values never win.
    right = [
        max(0, (o - 1) * s + (k - 1) * d + 1 - p - n)
        for n, o, k, p, s, d in zip(spatial, outs, kernel, padding, stride, dilation)
    ]
    lead = [(0, 0)] * (x.ndim - len(kernel))
    padded = np.pad(x, lead + list(zip(padding, right)), constant_values=lowest)
    starts = [_window_starts(o, p, s) for o, p, s in zip(outs, padding, stride)]
    best = np.full(x.shape[: -len(kernel)] + tuple(outs), lowest, x.dtype)
    # Before any value beats the lowest, a window reports its first in-bounds position.
    firsts = [np.where(st < 0, st + d * ((-st + d - 1) // d), st) for st, d in zip(starts, dilation)]
    index = _filled(_flat_positions(firsts, spatial), best.shape)
    for offsets in itertools.product(*(range(k) for k in kernel)):
        window = tuple(slice(j * d, j * d + (o - 1) * s + 1, s) for j, d, o, s in zip(offsets, dilation, outs, stride))
        positions = [st + j * d for st, j, d in zip(starts, offsets, dilation)]
        values = padded[(Ellipsis, *window)]
        _take_larger(best, index, values, _flat_positions(positions, spatial), nan_possible)
    return best, index


def _tiles_the_input(spatial, kernel, stride, padding, dilation, outs):
    """Whether the windows are side by side, unpadded and undilated, all inside the input: a tiling of it
    (the last rows and columns left out when the kernel does not divide the size)."""
    return (
        tuple(stride) == tuple(kernel)
        and not any(padding)
        and all(d == 1 for d in dilation)
        and all(o * k <= n for o, k, n in zip(outs, kernel, spatial))
    )


def _max_pool_tiled(x, kernel, outs):
    """:func:`max_pool` for windows that tile the input, with no NaN in it: the values each kernel offset
    reads copied side by side on a last axis, then one ``argmax`` for all windows, where the general walk
    makes four masked passes per offset (LeNet's 2x2 poolings, measured interleaved: 0.43 of the walk's time
    over 16x6x16x16, 0.42 over 16x16x6x6; moving the window axes last with one reshape copies three times
    slower than these strided copies).
    ``argmax`` keeps the first maximum, as CPU does; a NaN, which CPU keeps the last of, takes the walk."""
    lead = x.shape[: -len(kernel)]
    windows = np.empty((*lead, *outs, math.prod(kernel)), x.dtype)
    for offset, position in enumerate(itertools.product(*map(range, kernel))):
        windows[..., offset] = x[(Ellipsis, *(slice(j, o * k, k) for j, o, k in zip(position, outs, kernel)))]
    which = np.argmax(windows, axis=-1)
    best = windows.reshape(-1, windows.shape[-1])[np.arange(which.size), which.ravel()].reshape(which.shape)
    spatial = x.shape[len(lead) :]
    # A window's start plus the offset's position in the window, both flat positions in the plane.
    in_window = _flat_positions([np.arange(k) for k in kernel], spatial).ravel()
    starts = _flat_positions([np.arange(out) * k for out, k in zip(outs, kernel)], spatial)
    return best, np.take(in_window, which) + starts


def max_pool_backward(grad, indices, input_spatial):
    """Each output's gradient added at its recorded flat position in its plane."""
    spatial_dims = len(input_spatial)
    lead = grad.shape[: grad.ndim - spatial_dims]
    planes, plane_size = math.prod(lead), math.prod(input_spatial)
    flat = indices.reshape(planes, -1) + np.arange(planes)[:, None] * plane_size
    sums = np.bincount(flat.ravel(), weights=grad.ravel(), minlength=planes * plane_size)
    return sums.reshape(lead + tuple(input_spatial))


def _average_geometry(spatial, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """The per-dim window maps of an average pooling, and the divisor of each window."""
    maps, counted, padded = [], [], []
    for n, k, s, p in zip(spatial, kernel, stride, padding):
        out = pooled_size(n, k, p, s, 1, ceil_mode)
        window_map, inside_count, padded_count = _average_map(n, out, k, p, s)
        maps.append(window_map)
        counted.append(inside_count)
        padded.append(padded_count)
    if divisor_override is not None:
        return maps, np.asarray(divisor_override)
    return maps, _outer(padded if count_include_pad else counted)


def _divided(total, divisor):
    """``total / divisor`` as CPU divides it: truncating for integers."""
    if total.dtype.kind != "i":
        return total / divisor
    divisor = divisor.astype(np.int64)
    quotient = total // divisor
    # Floor division rounds down; C++ rounds toward zero.
    return np.where((total % divisor != 0) & ((total < 0) != (divisor < 0)), quotient + 1, quotient)


def avg_pool(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Average pooling over the last ``len(kernel)`` axes (integers in, truncated integers out)."""
    maps, divisor = _average_geometry(
        x.shape[-len(kernel) :], kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    )
    return _divided(axis_maps.gather_last(x, maps), divisor)


def avg_pool_backward(grad, input_spatial, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    maps, divisor = _average_geometry(
        input_spatial, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    )
    return axis_maps.scatter_last(grad / divisor.astype(grad.dtype), maps, input_spatial)


def adaptive_avg_pool(x, output_size):
    """Adaptive average pooling of the last ``len(output_size)`` axes."""
    maps, counts = zip(*(_adaptive_map(n, out) for n, out in zip(x.shape[-len(output_size) :], output_size)))
    return axis_maps.gather_last(x, maps) / _outer(counts).astype(x.dtype)


def adaptive_avg_pool_backward(grad, input_spatial):
    output_size = grad.shape[-len(input_spatial) :]
    maps, counts = zip(*(_adaptive_map(n, out) for n, out in zip(input_spatial, output_size)))
    return axis_maps.scatter_last(grad / _outer(counts).astype(grad.dtype), maps, input_spatial)


def adaptive_max_pool(x, output_size):
    """Adaptive max pooling of the last ``len(output_size)`` axes: maxima and flat positions per plane."""
    spatial = x.shape[-len(output_size) :]
    maps = [_adaptive_map(n, out)[0] for n, out in zip(spatial, output_size)]
    planes = x.reshape(x.shape[: -len(spatial)] + (math.prod(spatial),))
    lowest = _lowest(x.dtype)
    best = np.full(planes.shape[:-1] + tuple(output_size), lowest, x.dtype)
    index = _filled(_flat_positions([sources[:, 0] for sources, _ in maps], spatial), best.shape)
    nan_possible = _has_nan(x)
    for offsets in itertools.product(*(range(sources.shape[1]) for sources, _ in maps)):
        positions = _flat_positions([sources[:, j] for (sources, _), j in zip(maps, offsets)], spatial)
        inside = np.ones((), bool)
        for mask in _on_grid([mask[:, j] for (_, mask), j in zip(maps, offsets)]):
            inside = inside & mask
        values = np.where(inside, np.take(planes, positions, axis=-1), lowest).astype(x.dtype, copy=False)
        _take_larger(best, index, values, positions, nan_possible)
    return best, index


# --- checks, as ATen's meta functions make them ---------------------------------


def _expanded(op, name, values, dims, allowed_words, default=None):
    """A pooling int-list argument (one int or one per dim) as one int per dim."""
    if default is not None and len(values) == 0:
        return list(default)
    if len(values) not in (1, dims):
        raise RuntimeError(f"{op}: {name} must {allowed_words}, or a tuple of {_COUNT_WORDS[dims]} ints")
    return list(values) * dims if len(values) == 1 else list(values)


def _pool_arguments(op, dims, kernel_size, stride, padding, dilation=None, either="either "):
    kernel = _expanded(op, "kernel_size", kernel_size, dims, f"{either}be a single int")
    stride = _expanded(op, "stride", stride, dims, f"{either}be omitted, a single int", default=kernel)
    padding = _expanded(op, "padding", padding, dims, f"{either}be a single int")
    if dilation is None:
        return kernel, stride, padding, [1] * dims
    dilation = _expanded(op, "dilation", dilation, dims, "be either a single int")
    return kernel, stride, padding, dilation


def _named(prefix, values, dims, separator=" "):
    """``kH: 2 kW: 3``: per-dim values labelled as PyTorch's messages label them."""
    return separator.join(f"{prefix}{letter}: {value}" for letter, value in zip(_DIM_LETTERS[dims], values))


def _check_positive(kernel, stride, dilation):
    dims = len(kernel)
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got {_named('k', kernel, dims)}")
    if min(stride) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got {_named('d', stride, dims)}")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got {_named('dilation', dilation, dims)}")


def _output_sizes(spatial, kernel, stride, padding, dilation, ceil_mode):
    return [pooled_size(*dims, ceil_mode) for dims in zip(spatial, kernel, padding, stride, dilation)]


def _check_pool2d(self, kernel, stride, padding, dilation, outs):
    """ATen's ``pool2d_shape_check``."""
    _check_positive(kernel, stride, dilation)
    shape = self.shape
    valid = shape[1] != 0 and shape[2] != 0
    if not ((self.dim() == 3 and shape[0] != 0 and valid) or (self.dim() == 4 and valid and shape[3] != 0)):
        raise RuntimeError(
            f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:{list(shape)}"
        )
    (k_h, k_w), (p_h, p_w) = kernel, padding
    if k_w // 2 < p_w or k_h // 2 < p_h:
        raise RuntimeError(
            "pad should be smaller than or equal to half of kernel size, but got "
            f"padW = {p_w}, padH = {p_h}, kW = {k_w}, kH = {k_h}"
        )
    if min(outs) < 1:
        _output_too_small(self, outs)


def _check_pool3d(fn_name, self, kernel, stride, padding, dilation, outs, check_input_size=False):
    """ATen's ``pool3d_shape_check``."""
    _check_positive(kernel, stride, dilation)
    for dim, size in enumerate(self.shape):
        if size <= 0 and not (self.dim() == 5 and dim == 0):
            raise RuntimeError(
                f"{fn_name}: Expected input's non-batch dimensions to have positive length, but input "
                f"has a shape of {list(self.shape)} and non-batch dimension {size} has length zero!"
            )
    spatial = self.shape[-3:]
    if check_input_size and any(n < k for n, k in zip(spatial, kernel)):
        raise RuntimeError(
            f"input image (T: {spatial[0]} H: {spatial[1]} W: {spatial[2]}) smaller than kernel size "
            f"(kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})"
        )
    (k_t, k_h, k_w), (p_t, p_h, p_w) = kernel, padding
    if k_t // 2 < p_t or k_w // 2 < p_w or k_h // 2 < p_h:
        raise RuntimeError(
            "pad should be smaller than or equal to half of kernel size, but got "
            f"kT: {k_t} kW: {k_w} kH: {k_h} padT: {p_t} padW: {p_w} padH: {p_h}"
        )
    if min(outs) < 1:
        _output_too_small(self, outs)


def _output_too_small(self, outs):
    planes = self.shape[-len(outs) - 1]
    given = "x".join(str(n) for n in (planes, *self.shape[-len(outs) :]))
    calculated = "x".join(str(n) for n in (planes, *outs))
    raise RuntimeError(f"Given input size: ({given}). Calculated output size: ({calculated}). Output size is too small")


def _check_dims(self, dims, message):
    if self.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(message)


# How each backward words a gradient whose dtype is not the input's.
_GRAD_OUTPUT = "expected dtype {expected} for `gradOutput` but got dtype {got}"
_GRAD_OUTPUT_SNAKE = "expected dtype {expected} for `grad_output` but got dtype {got}"
_SCALAR_TYPE = "expected scalar type {expected} but found {got}"


def _check_grad(grad_output, self, template=_GRAD_OUTPUT):
    if grad_output.dtype != self.dtype:
        names = SCALAR_TYPE_NAMES if template == _SCALAR_TYPE else TYPE_META_NAMES
        expected, got = (names.get(t.dtype, str(t.dtype)) for t in (self, grad_output))
        raise RuntimeError(template.format(expected=expected, got=got))


def _check_dim_size(tensor, ndim, dim, size):
    """ATen's ``check_dim_size``."""
    if tensor.dim() != ndim or tensor.shape[dim] != size:
        raise RuntimeError(
            f"Expected a tensor of dimension {ndim} and tensor.size[{dim}] == {size} but got: "
            f"dimension {tensor.dim()} and tensor.size[{dim}] = {tensor.shape[dim]}"
        )


def _check_sizes(tensor, self, outs, first_dim):
    """``check_dim_size`` of ``tensor``'s planes and spatial dims against the forward's output."""
    ndim = self.dim()
    for dim in range(first_dim, ndim):
        expected = outs[dim - ndim + len(outs)] if dim >= ndim - len(outs) else self.shape[dim]
        _check_dim_size(tensor, ndim, dim, expected)


def _check_same_planes(op, grad_output, self, dims):
    """CPU reads a gradient with other batch or plane sizes than the input out of bounds; npy refuses it."""
    planes = self.dim() - dims
    if grad_output.dim() != self.dim() or grad_output.shape[:planes] != self.shape[:planes]:
        raise RuntimeError(
            f"{op}: grad_output of shape {list(grad_output.shape)} does not fit an input of shape {list(self.shape)}"
        )


def _refuse(op, self, allowed):
    if not allowed(self.dtype):
        raise not_implemented_for(op, self.dtype)


def _maxable(dtype):
    return dtype != torch.bool and not dtype.is_complex


def _floating(dtype):
    return dtype.is_floating_point


# --- the ops, on arrays: for ``dims`` (2 or 3) spatial dims, results in the input's dtype ---


def _max_pool(dims, self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    arguments = _pool_arguments(f"max_pool{dims}d", dims, kernel_size, stride, padding, dilation)
    return max_pool(self, *arguments, ceil_mode)


def _max_pool_backward(dims, grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    (grad,) = in_compute_dtype(self.dtype, grad_output)
    return max_pool_backward(grad, indices, self.shape[-dims:]).astype(self.dtype, copy=False)


def _avg_arguments(dims, kernel_size, stride, padding):
    """Kernel, stride and padding, one int per dim."""
    either = "" if dims == 3 else "either "
    return _pool_arguments(f"avg_pool{dims}d", dims, kernel_size, stride, padding, either=either)[:3]


def _avg_pool(
    dims, self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True, divisor_override=None
):
    (x,) = in_compute_dtype(self.dtype, self)
    arguments = _avg_arguments(dims, kernel_size, stride, padding)
    return avg_pool(x, *arguments, ceil_mode, count_include_pad, divisor_override).astype(self.dtype, copy=False)


def _avg_pool_backward(
    dims, grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    (grad,) = in_compute_dtype(self.dtype, grad_output)
    arguments = _avg_arguments(dims, kernel_size, stride, padding)
    result = avg_pool_backward(grad, self.shape[-dims:], *arguments, ceil_mode, count_include_pad, divisor_override)
    return result.astype(self.dtype, copy=False)


def _adaptive_avg_pool(dims, self, output_size):
    (x,) = in_compute_dtype(self.dtype, self)
    return adaptive_avg_pool(x, list(output_size)).astype(self.dtype, copy=False)


def _adaptive_avg_pool_backward(dims, grad_output, self):
    (grad,) = in_compute_dtype(self.dtype, grad_output)
    return adaptive_avg_pool_backward(grad, self.shape[-dims:]).astype(self.dtype, copy=False)


def _adaptive_max_pool(dims, self, output_size):
    return adaptive_max_pool(self, list(output_size))


def _adaptive_max_pool_backward(dims, grad_output, self, indices):
    (grad,) = in_compute_dtype(self.dtype, grad_output)
    return max_pool_backward(grad, indices, self.shape[-dims:]).astype(self.dtype, copy=False)


# --- max pooling checks ---------------------------------------------------------------


def _max_pool_arguments(op, dims, self, kernel_size, stride, padding, dilation, ceil_mode):
    """The expanded arguments and output sizes of a max pooling, checked as ATen's meta checks them."""
    kernel, stride, padding, dilation = _pool_arguments(op, dims, kernel_size, stride, padding, dilation)
    _check_dims(self, dims, f"non-empty {dims + 1}D or {dims + 2}D (batch mode) tensor expected for input")
    outs = _output_sizes(self.shape[-dims:], kernel, stride, padding, dilation, ceil_mode)
    if dims == 2:
        _check_pool2d(self, kernel, stride, padding, dilation, outs)
    else:
        fn_name = "max_pool3d_with_indices_out_cpu_template()"
        _check_pool3d(fn_name, self, kernel, stride, padding, dilation, outs)
    return kernel, stride, padding, dilation, outs


def _max_pool_checks(dims, self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    op = f"max_pool{dims}d"
    _max_pool_arguments(op, dims, self, kernel_size, stride, padding, dilation, ceil_mode)
    _refuse(op, self, _maxable)
    return self.dtype, torch.int64


def _max_pool_backward_checks(dims, grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    op = f"max_pool{dims}d"
    _check_grad(grad_output, self)
    if dims == 2:
        *_, outs = _max_pool_arguments(op, dims, self, kernel_size, stride, padding, dilation, ceil_mode)
        # max_pool2d_backward_shape_check: planes and sizes of both, then batch sizes.
        for tensor in (grad_output, indices):
            _check_sizes(tensor, self, outs, self.dim() - 3)
        for tensor in (grad_output, indices) if self.dim() == 4 else ():
            _check_dim_size(tensor, 4, 0, self.shape[0])
    else:
        # max_pool3d_backward_shape_check checks the indices against the gradient's sizes.
        outs = list(grad_output.shape[-3:])
        arguments = _pool_arguments(op, dims, kernel_size, stride, padding, dilation)
        _check_dims(self, dims, "non-empty 4D or 5D (batch mode) tensor expected for input")
        _check_pool3d("max_pool3d_with_indices_backward_out_cpu_template()", self, *arguments, outs)
        for tensor in (grad_output, indices):
            _check_sizes(tensor, self, outs, self.dim() - 4)
    _check_same_planes(op, grad_output, self, dims)
    _refuse(f"{op}_backward", self, _floating)


# --- average pooling checks ----------------------------------------------------------

# Per dims: the dtypes CPU averages, and the names its dtype dispatch gives the forward and backward.
_AVG_POOL_DTYPES = {
    2: (torch.float16, torch.float32, torch.float64, torch.int64),
    3: (torch.float32, torch.float64, torch.int64),
}
_AVG_POOL_KERNEL_NAMES = {
    2: ("avg_pool2d", "avg_pool2d_backward"),
    3: ("avg_pool3d_out_frame", "avg_pool3d_backward_out_frame"),
}


def _avg_pool_arguments(dims, self, kernel_size, stride, padding, ceil_mode, divisor_override):
    """The output sizes of an average pooling, checked as ATen's meta checks them."""
    kernel, stride, padding = _avg_arguments(dims, kernel_size, stride, padding)
    dilation = [1] * dims
    if divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if dims == 2:
        _check_size_exists(self, -3)
        outs = _output_sizes(self.shape[-2:], kernel, stride, padding, dilation, ceil_mode)
        _check_pool2d(self, kernel, stride, padding, dilation, outs)
    else:
        _check_dims(self, 3, "non-empty 4D or 5D (batch mode) tensor expected for input")
        outs = _output_sizes(self.shape[-3:], kernel, stride, padding, dilation, ceil_mode)
        _check_pool3d("avg_pool3d()", self, kernel, stride, padding, dilation, outs, check_input_size=True)
    return outs


def _check_size_exists(self, dim):
    """The IndexError of ``self.size(dim)`` on a tensor with too few dims."""
    rank = max(self.dim(), 1)
    if not -rank <= dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})")


def _avg_pool_checks(
    dims, self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True, divisor_override=None
):
    _avg_pool_arguments(dims, self, kernel_size, stride, padding, ceil_mode, divisor_override)
    if self.dtype not in _AVG_POOL_DTYPES[dims]:
        raise not_implemented_for(_AVG_POOL_KERNEL_NAMES[dims][0], self.dtype)


def _avg_pool_backward_checks(
    dims, grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    _check_grad(grad_output, self, _GRAD_OUTPUT if dims == 2 else _SCALAR_TYPE)
    outs = _avg_pool_arguments(dims, self, kernel_size, stride, padding, ceil_mode, divisor_override)
    _check_sizes(grad_output, self, outs, self.dim() - dims - 1)
    _check_same_planes(f"avg_pool{dims}d_backward", grad_output, self, dims)
    if self.dtype not in _AVG_POOL_DTYPES[dims]:
        raise not_implemented_for(_AVG_POOL_KERNEL_NAMES[dims][1], self.dtype)


# --- adaptive pooling checks -------------------------------------------------------


@dataclass(frozen=True)
class _AdaptiveWords:
    """How CPU's adaptive pooling of one kind (``avg``, ``max``) words its errors: the two
    kinds check the same things in the same order, each in its own words."""

    output_size: str  # output_size of the wrong length: {name}, {dims}
    rank: str  # an input of neither rank: {name}, {batched}, {unbatched}, {shape}
    negative_size: str  # a negative output size: {size}, {shape} (the output's)
    # For these spatial dims (2d average) only the spatial dims must be non-empty; else all but the first.
    spatial_only: tuple
    kernels: dict  # spatial dims -> the kernel its dtype error names


_ADAPTIVE_WORDS = {
    "avg": _AdaptiveWords(
        output_size="{name}: output_size must be {dims}",
        rank="{name}(): Expected {unbatched}D or {batched}D tensor, but got {shape}",
        negative_size="numel: integer multiplication overflow",
        spatial_only=(2,),
        kernels={2: "adaptive_avg_pool2d", 3: "adaptive_avg_pool3d_cpu"},
    ),
    "max": _AdaptiveWords(
        output_size="{name}(): internal error: output_size.size() must be {dims}",
        rank="{name}(): Expected {unbatched}D or {batched}D tensor, but got: {shape}",
        negative_size="Trying to create tensor with negative dimension {size}: {shape}",
        spatial_only=(),
        kernels={2: "adaptive_max_pool2d", 3: "adaptive_max_pool3d_cpu"},
    ),
}


def _check_adaptive(kind, dims, self, output_size):
    words, name = _ADAPTIVE_WORDS[kind], f"adaptive_{kind}_pool{dims}d"
    if len(output_size) != dims:
        raise RuntimeError(words.output_size.format(name=name, dims=dims))
    if self.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(words.rank.format(name=name, unbatched=dims + 1, batched=dims + 2, shape=list(self.shape)))
    first_checked = self.dim() - dims if dims in words.spatial_only else 1
    for dim in range(first_checked, self.dim()):
        if self.shape[dim] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input has "
                f"sizes {list(self.shape)} with dimension {dim} being empty"
            )
    if min(output_size) < 0:
        shape = list(self.shape[:-dims]) + list(output_size)
        raise RuntimeError(words.negative_size.format(size=min(output_size), shape=shape))
    _refuse(words.kernels[dims], self, _floating)


def _adaptive_avg_pool_checks(dims, self, output_size):
    _check_adaptive("avg", dims, self, output_size)


_ADAPTIVE_AVG_GRAD_DTYPE = {
    2: "adaptive_avg_pool2d_backward_out_cpu_template: E" + _GRAD_OUTPUT_SNAKE[1:],
    3: _SCALAR_TYPE,
}


def _adaptive_avg_pool_backward_checks(dims, grad_output, self):
    _check_grad(grad_output, self, _ADAPTIVE_AVG_GRAD_DTYPE[dims])
    _check_same_planes(f"adaptive_avg_pool{dims}d_backward", grad_output, self, dims)
    _refuse(_ADAPTIVE_WORDS["avg"].kernels[dims] + "_backward", self, _floating)


def _adaptive_max_pool_checks(dims, self, output_size):
    _check_adaptive("max", dims, self, output_size)
    return self.dtype, torch.int64


def _adaptive_max_pool_backward_checks(dims, grad_output, self, indices):
    _check_grad(grad_output, self, _GRAD_OUTPUT_SNAKE if dims == 2 else _GRAD_OUTPUT)
    if grad_output.shape != indices.shape:
        name = "`grad_output`" if dims == 2 else "`gradOutput`"
        raise RuntimeError(f"expected sizes {list(indices.shape)} for {name} but got sizes {list(grad_output.shape)}")
    _check_same_planes(f"adaptive_max_pool{dims}d_backward", grad_output, self, dims)
    _refuse(_ADAPTIVE_WORDS["max"].kernels[dims] + "_backward", self, _floating)


# --- registration: each op for 2 and 3 spatial dims, its out= overload derived ---------
#
# The max and average poolings (and their backward) are what ``torch.compile``'s
# graphs hold of a pooling: they lower to the same functions.


def _in_dims(function, dims, name):
    """``function`` for ``dims`` spatial dims, named ``name``: a function of the op's arguments."""

    def in_dims(*args, **kwargs):
        return function(dims, *args, **kwargs)

    in_dims.__name__ = in_dims.__qualname__ = name
    return in_dims


def _pooling(name, function, checks, dims):
    """The eager kernel of a pooling op (``name``) for ``dims`` spatial dims; its ``numpy_function``
    is what the op lowers to."""
    return computed_by(_in_dims(function, dims, name))(_in_dims(checks, dims, f"{name}_kernel"))


# Each op's overloads, written out: name, NumPy function and checks, spatial dims, the overload and
# its out=, and whether the compiler lowers the overload to the NumPy function.
_POOLING_OVERLOADS = (
    (
        "max_pool2d_with_indices",
        _max_pool,
        _max_pool_checks,
        2,
        aten.max_pool2d_with_indices.default,
        aten.max_pool2d_with_indices.out,
        True,
    ),
    (
        "max_pool2d_with_indices_backward",
        _max_pool_backward,
        _max_pool_backward_checks,
        2,
        aten.max_pool2d_with_indices_backward.default,
        aten.max_pool2d_with_indices_backward.grad_input,
        True,
    ),
    ("avg_pool2d", _avg_pool, _avg_pool_checks, 2, aten.avg_pool2d.default, aten.avg_pool2d.out, True),
    (
        "avg_pool2d_backward",
        _avg_pool_backward,
        _avg_pool_backward_checks,
        2,
        aten.avg_pool2d_backward.default,
        aten.avg_pool2d_backward.grad_input,
        True,
    ),
    (
        "adaptive_avg_pool2d",
        _adaptive_avg_pool,
        _adaptive_avg_pool_checks,
        2,
        aten._adaptive_avg_pool2d.default,
        aten._adaptive_avg_pool2d.out,
        False,
    ),
    (
        "adaptive_avg_pool2d_backward",
        _adaptive_avg_pool_backward,
        _adaptive_avg_pool_backward_checks,
        2,
        aten._adaptive_avg_pool2d_backward.default,
        aten._adaptive_avg_pool2d_backward.out,
        False,
    ),
    (
        "adaptive_max_pool2d",
        _adaptive_max_pool,
        _adaptive_max_pool_checks,
        2,
        aten.adaptive_max_pool2d.default,
        aten.adaptive_max_pool2d.out,
        False,
    ),
    (
        "adaptive_max_pool2d_backward",
        _adaptive_max_pool_backward,
        _adaptive_max_pool_backward_checks,
        2,
        aten.adaptive_max_pool2d_backward.default,
        aten.adaptive_max_pool2d_backward.grad_input,
        False,
    ),
    (
        "max_pool3d_with_indices",
        _max_pool,
        _max_pool_checks,
        3,
        aten.max_pool3d_with_indices.default,
        aten.max_pool3d_with_indices.out,
        True,
    ),
    (
        "max_pool3d_with_indices_backward",
        _max_pool_backward,
        _max_pool_backward_checks,
        3,
        aten.max_pool3d_with_indices_backward.default,
        aten.max_pool3d_with_indices_backward.grad_input,
        True,
    ),
    ("avg_pool3d", _avg_pool, _avg_pool_checks, 3, aten.avg_pool3d.default, aten.avg_pool3d.out, True),
    (
        "avg_pool3d_backward",
        _avg_pool_backward,
        _avg_pool_backward_checks,
        3,
        aten.avg_pool3d_backward.default,
        aten.avg_pool3d_backward.grad_input,
        True,
    ),
    (
        "adaptive_avg_pool3d",
        _adaptive_avg_pool,
        _adaptive_avg_pool_checks,
        3,
        aten._adaptive_avg_pool3d.default,
        aten._adaptive_avg_pool3d.out,
        False,
    ),
    (
        "adaptive_avg_pool3d_backward",
        _adaptive_avg_pool_backward,
        _adaptive_avg_pool_backward_checks,
        3,
        aten._adaptive_avg_pool3d_backward.default,
        aten._adaptive_avg_pool3d_backward.out,
        False,
    ),
    (
        "adaptive_max_pool3d",
        _adaptive_max_pool,
        _adaptive_max_pool_checks,
        3,
        aten.adaptive_max_pool3d.default,
        aten.adaptive_max_pool3d.out,
        False,
    ),
    (
        "adaptive_max_pool3d_backward",
        _adaptive_max_pool_backward,
        _adaptive_max_pool_backward_checks,
        3,
        aten.adaptive_max_pool3d_backward.default,
        aten.adaptive_max_pool3d_backward.grad_input,
        False,
    ),
)
for _name, _function, _checks, _dims, _op, _out, _lowered in _POOLING_OVERLOADS:
    _kernel = _pooling(_name, _function, _checks, _dims)
    if _lowered:
        lowers(_op)(_kernel.numpy_function)
    implements(_op, out=_out)(_kernel)
