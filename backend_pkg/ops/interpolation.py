"""Interpolation: ``F.interpolate``'s nearest, nearest-exact, (bi/tri)linear and bicubic modes.

``F.interpolate`` (``torch/nn/functional.py``) picks the aten op from the
mode, the input's dims and ``antialias``, and calls its ``.vec`` overload, a
composite that works out the output size and passes ``output_size`` and
per-dim ``scales`` (``None`` when ``recompute_scale_factor`` is set or a size
was given) to the op itself. The ops are structured, so PyTorch sends npy
their ``.out`` overloads, and ``.grad_input`` for the backward:
``upsample_nearest{1,2,3}d``, ``_upsample_nearest_exact{1,2,3}d``,
``upsample_linear1d``, ``upsample_bilinear2d``, ``upsample_trilinear3d``,
``upsample_bicubic2d``, ``_upsample_bilinear2d_aa``, ``_upsample_bicubic2d_aa``
and each one's ``_backward``. (``mode="area"`` is adaptive average pooling,
in :mod:`~backend_pkg.ops.pooling`.)

Every mode is separable. For floats, each output element along an axis is
a weighted sum of a few input elements of that axis, so one
:mod:`~backend_pkg.ops._axis_maps` map per axis gives the forward (gathers)
and its transpose the backward (sums into the input positions). Source
positions and weights are computed as ``UpSample.h`` and
``cpu/UpSampleKernel.cpp`` compute them, in the same precision, so the same
pixels are picked, including CPU's quirks: legacy nearest ignores the scale
of an unchanged or doubled size only in some kernels (see
:func:`_forward_map`), and linear modes copy an axis whose size stays.
Antialiased modes, and uint8 bilinear/bicubic, resample one axis at a time
as CPU does (PIL's algorithm; uint8 in int16 fixed point with a uint8
rounding after each axis), which npy reproduces exactly.
"""

from typing import Callable, NamedTuple

import numpy as np
import torch

from . import _axis_maps as axis_maps
from ._dtype_errors import not_implemented_for
from ._operands import numpy_compute_dtype
from .registry import aten, computed_by, implements

# The cubic convolution constant: -0.75 as OpenCV, without antialiasing; -0.5 (Keys, as PIL) with it.
_CUBIC_A = -0.75
_KEYS_CUBIC_A = -0.5
_DIM_LETTERS = {1: "W", 2: "HW", 3: "DHW"}


# --- where each output element reads, along one axis ----------------------------------


def _scale(size, out, scale, float_type):
    """ATen's ``compute_scales_value``: input elements per output element."""
    if scale is not None and scale > 0:
        return float_type(1.0 / scale)
    return float_type(size) / float_type(out)


def _area_scale(size, out, align_corners, scale, float_type):
    """ATen's ``area_pixel_compute_scale``."""
    if align_corners:
        return float_type(size - 1) / float_type(out - 1) if out > 1 else float_type(0)
    return _scale(size, out, scale, float_type)


def _source_coordinates(size, out, align_corners, scale, float_type, cubic=False, step=None):
    """ATen's ``area_pixel_compute_source_index`` for every output element
    (``step``, if given, replaces ``area_pixel_compute_scale``'s)."""
    if step is None:
        step = _area_scale(size, out, align_corners, scale, float_type)
    outputs = np.arange(out).astype(float_type)
    if align_corners:
        return step * outputs
    half = float_type(0.5)
    coordinates = step * (outputs + half) - half
    return coordinates if cubic else np.maximum(coordinates, float_type(0))


def nearest_map(size, out, align_corners, scale, float_type, exact=False):
    """``nearest``: the element at ``floor(o * scale)``; ``nearest-exact``: the one nearest
    ``(o + 0.5) * scale - 0.5``.

    As ``HelperInterpNearest`` computes them: the coordinate in the compute
    type, rounded to float32 before the floor (C++ ``floorf``).
    """
    if exact:
        coordinates = _source_coordinates(size, out, False, scale, float_type).astype(np.float64) + 0.5
    else:
        step = _scale(size, out, scale, float_type)
        coordinates = _source_coordinates(size, out, True, scale, float_type, step=step)
    positions = np.floor(coordinates.astype(np.float32)).astype(np.int64)
    return np.minimum(positions, size - 1)[:, None], None


def shortcut_nearest_map(size, out, align_corners, scale, float_type):
    """``nearest`` as ATen's ``nearest_idx`` computes it: an unchanged size copies and a
    doubled size repeats each element, whatever the scale; other sizes as :func:`nearest_map`."""
    if out == size:
        return np.arange(out)[:, None], None
    if out == 2 * size:
        return (np.arange(out) >> 1)[:, None], None
    return nearest_map(size, out, align_corners, scale, float_type)


def nearest_exact_map(size, out, align_corners, scale, float_type):
    return nearest_map(size, out, align_corners, scale, float_type, exact=True)


def linear_map(size, out, align_corners, scale, float_type):
    """The two neighbours of each output's source coordinate, weighted by distance
    (``compute_source_index_and_lambda``, which copies an axis whose size does not change,
    whatever the scale)."""
    if out == size:
        return np.arange(out)[:, None], np.ones((out, 1), float_type)
    coordinates = _source_coordinates(size, out, align_corners, scale, float_type)
    lower = np.minimum(np.floor(coordinates.astype(np.float32)).astype(np.int64), size - 1)
    upper_weight = np.clip(coordinates - lower.astype(float_type), 0, 1).astype(float_type)
    upper = lower + (lower < size - 1)
    sources = np.stack([lower, upper], axis=1)
    weights = np.stack([float_type(1) - upper_weight, upper_weight], axis=1)
    return sources, weights


def _cubic_near(x, a=_CUBIC_A):
    """The cubic convolution kernel for ``|x| <= 1``."""
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic_far(x, a=_CUBIC_A):
    """The cubic convolution kernel for ``1 < |x| < 2``."""
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def cubic_map(size, out, align_corners, scale, float_type):
    """Four neighbours around each source coordinate (clamped at the edges), cubic-convolution weighted."""
    coordinates = _source_coordinates(size, out, align_corners, scale, float_type, cubic=True)
    start = np.floor(coordinates.astype(np.float32)).astype(np.int64)
    t = (coordinates - start.astype(float_type)).astype(float_type)
    one = float_type(1)
    weights = np.stack([_cubic_far(t + one), _cubic_near(t), _cubic_near(one - t), _cubic_far(one - t + one)], axis=1)
    sources = np.clip(start[:, None] + np.arange(-1, 3), 0, size - 1)
    return sources, weights.astype(float_type)


def _maps(builder, input_spatial, output_size, align_corners, scales, float_type):
    return [
        builder(size, out, align_corners, scale, float_type)
        for size, out, scale in zip(input_spatial, output_size, scales)
    ]


def upsample(x, output_size, builder, align_corners=False, scales=None, float_type=np.float32):
    """``x`` resampled to ``output_size`` along its last axes, reading where ``builder``'s maps say."""
    scales = scales or [None] * len(output_size)
    maps = _maps(builder, x.shape[-len(output_size) :], output_size, align_corners, scales, float_type)
    return axis_maps.gather_last(x, maps)


def upsample_backward(grad, input_spatial, builder, align_corners=False, scales=None, float_type=np.float32):
    """The gradient of :func:`upsample` with respect to its input, of spatial shape ``input_spatial``."""
    scales = scales or [None] * len(input_spatial)
    output_size = grad.shape[-len(input_spatial) :]
    maps = _maps(builder, input_spatial, output_size, align_corners, scales, float_type)
    return axis_maps.scatter_last(grad, maps, input_spatial)


# --- the separable kernels: antialiasing, and uint8 bilinear/bicubic ------------------------
#
# CPU resamples these one axis at a time, the last axis first, skipping axes
# whose size stays (``separable_upsample_generic_Nd_kernel_impl``). Each
# output element is a window of input elements weighted by a filter
# (``HelperInterpBase``); uint8 weights become int16 fixed point and each
# pass rounds to uint8, as PIL does.


def triangle_filter(x):
    x = np.abs(x)
    return np.where(x < 1, 1 - x, 0)


def keys_cubic_filter(x, a=_KEYS_CUBIC_A):
    x = np.abs(x)
    return np.where(x < 1, _cubic_near(x, a), np.where(x < 2, _cubic_far(x, a), 0))


def opencv_cubic_filter(x):
    return keys_cubic_filter(x, _CUBIC_A)


def antialias_window(size, out, align_corners, scale, float_type, filter_fn, interp_size):
    """``_compute_indices_min_size_weights_aa``: each output's window, its normalized weights,
    and the largest weight. Downscaling widens the filter by the scale, which is the antialiasing."""
    step = _area_scale(size, out, align_corners, scale, float_type)
    support = float_type(interp_size * 0.5 * step if step >= 1 else interp_size * 0.5)
    widest = int(np.ceil(support)) * 2 + 1
    inverse = float_type(1.0 / step if step >= 1 else 1.0)
    centers = (np.float64(step) * (np.arange(out) + 0.5)).astype(float_type)
    # static_cast<int64_t> truncates toward zero.
    starts = np.maximum(np.trunc((centers - support).astype(np.float64) + 0.5).astype(np.int64), 0)
    ends = np.minimum(np.trunc((centers + support).astype(np.float64) + 0.5).astype(np.int64), size)
    counts = np.clip(ends - starts, 0, widest)
    offsets = np.arange(widest)
    distances = ((starts[:, None] + offsets - centers[:, None]).astype(np.float64) + 0.5) * inverse
    inside = offsets < counts[:, None]
    weights = np.where(inside, filter_fn(distances.astype(float_type)), 0).astype(float_type)
    totals = np.cumsum(weights, axis=1, dtype=float_type)[:, -1:]  # C++ adds left to right
    weights = np.where(totals != 0, weights / np.where(totals != 0, totals, 1), weights).astype(float_type)
    sources = np.minimum(starts[:, None] + offsets, size - 1)
    return sources, weights, max(float(weights.max(initial=0)), 0.0)


def folded_window(size, out, align_corners, scale, filter_fn, interp_size):
    """``_compute_indices_min_size_weights`` (uint8 without antialiasing), in float64: the
    ``interp_size`` neighbours of the source coordinate, those past an edge folded onto the edge
    element; and the largest weight seen while folding."""
    coordinates = _source_coordinates(size, out, align_corners, scale, np.float64, cubic=interp_size > 2)
    nearest = np.minimum(np.floor(coordinates.astype(np.float32)).astype(np.int64), size - 1)
    fraction = np.clip(coordinates - nearest, 0, 1)
    offsets = np.arange(interp_size)
    unfolded = nearest[:, None] - interp_size // 2 + 1 + offsets
    raw = filter_fn((offsets + 1 - interp_size // 2).astype(np.float64) - fraction[:, None])
    firsts = np.maximum(unfolded[:, 0], 0)
    slots = np.clip(unfolded, 0, size - 1) - firsts[:, None]
    weights = np.zeros((out, interp_size))
    np.add.at(weights, (np.arange(out)[:, None], slots), raw)  # in order, as C++ adds
    sources = np.minimum(firsts[:, None] + offsets, size - 1)
    return sources, weights, max(float(_running_slot_sums(raw, slots).max(initial=0)), 0.0)


def _running_slot_sums(raw, slots):
    """Each weight's slot total so far: neighbours folded into one slot are consecutive."""
    totals = np.cumsum(raw, axis=1)
    run_starts = np.diff(slots, axis=1, prepend=-1) != 0
    first_of_run = np.maximum.accumulate(np.where(run_starts, np.arange(raw.shape[1]), 0), axis=1)
    before_run = np.take_along_axis(totals - raw, first_of_run, axis=1)
    return totals - before_run


def fixed_point(weights, largest):
    """Weights as int16 fixed point with as many fraction bits as the largest allows
    (``_compute_index_ranges_int16_weights``), and that number of bits."""
    precision = next((bits for bits in range(22) if int(0.5 + largest * (1 << (bits + 1))) >= 1 << 15), 22)
    scaled = weights * (1 << precision)
    return np.trunc(scaled + np.where(scaled < 0, -0.5, 0.5)).astype(np.int64), precision


def fixed_point_pass(x, axis, sources, weights, precision):
    """One uint8 pass: integer products, rounded by adding half, shifted back, clamped."""
    total = np.int64(1 << (precision - 1))
    for column in range(sources.shape[1]):
        total = total + np.take(x, sources[:, column], axis=axis).astype(np.int64) * axis_maps.along(
            weights[:, column], axis
        )
    return np.clip(total >> precision, 0, 255).astype(np.uint8)


def _separably(x, output_size, scales, axis_pass):
    """``x`` resampled by ``axis_pass(x, axis, size, out, scale)`` along each of its last axes
    whose size changes, the last axis first (a copy if none does)."""
    result = x.copy()
    for axis in range(-1, -len(output_size) - 1, -1):
        size, out = result.shape[axis], output_size[axis]
        if size != out:
            result = axis_pass(result, axis, size, out, scales[axis])
    return result


def antialiased(x, output_size, filter_fn, interp_size, align_corners=False, scales=None, float_type=np.float32):
    """Antialiased resampling of floats: each axis's windows, weighted in ``float_type``."""
    scales = scales or [None] * len(output_size)

    def axis_pass(array, axis, size, out, scale):
        window = antialias_window(size, out, align_corners, scale, float_type, filter_fn, interp_size)
        return axis_maps.gather(array, axis, *window[:2])

    return _separably(x, output_size, scales, axis_pass)


def antialiased_backward(
    grad, input_spatial, filter_fn, interp_size, align_corners=False, scales=None, float_type=np.float32
):
    """The gradient of :func:`antialiased` with respect to its input."""
    scales = scales or [None] * len(input_spatial)
    output_size = grad.shape[-len(input_spatial) :]
    maps = [
        antialias_window(size, out, align_corners, scale, float_type, filter_fn, interp_size)[:2]
        for size, out, scale in zip(input_spatial, output_size, scales)
    ]
    return axis_maps.scatter_last(grad, maps, input_spatial)


def fixed_point_resample(x, output_size, filter_fn, interp_size, antialias, align_corners=False, scales=None):
    """uint8 bilinear or bicubic resampling, as CPU's (and PIL's) integer passes compute it."""
    scales = scales or [None] * len(output_size)

    def axis_pass(array, axis, size, out, scale):
        if antialias:
            window = antialias_window(size, out, align_corners, scale, np.float64, filter_fn, interp_size)
        else:
            window = folded_window(size, out, align_corners, scale, filter_fn, interp_size)
        sources, weights, largest = window
        return fixed_point_pass(array, axis, sources, *fixed_point(weights, largest))

    return _separably(x, output_size, scales, axis_pass)


# --- checks, as ATen's upsample meta functions make them --------------------------------


def _labelled(dims, sizes):
    return ", ".join(f"{letter}: {size}" for letter, size in zip(_DIM_LETTERS[dims], sizes))


def _full_output_size(dims, input_size, output_size):
    """ATen's ``upsample_{1,2,3}d_common_check``: the output's full shape."""
    if len(output_size) != dims:
        raise RuntimeError(f"It is expected output_size equals to {dims}, but got size {len(output_size)}")
    if len(input_size) != dims + 2:
        raise RuntimeError(f"It is expected input_size equals to {dims + 2}, but got size {len(input_size)}")
    spatial = input_size[2:]
    if min(spatial) <= 0 or min(output_size) <= 0:
        joiner = " and output" if dims == 1 else " output"
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input ({_labelled(dims, spatial)})"
            f"{joiner} ({_labelled(dims, output_size)})"
        )
    return list(input_size[:2]) + list(output_size)


def _check_input(dims, self, output_size):
    _full_output_size(dims, list(self.shape), output_size)
    if 0 in self.shape[1:]:
        raise RuntimeError(f"Non-empty {dims + 2}D data tensor expected but got a tensor with sizes {list(self.shape)}")


def _check_grad_output(dims, grad_output, output_size, input_size):
    expected = _full_output_size(dims, list(input_size), output_size)
    if dims == 1:
        for dim, size in enumerate(expected):
            if grad_output.dim() != 3 or grad_output.shape[dim] != size:
                raise RuntimeError(
                    f"Expected a tensor of dimension 3 and tensor.size[{dim}] == {size} but got: dimension "
                    f"{grad_output.dim()} and tensor.size[{dim}] = {grad_output.shape[dim]}"
                )
        return
    if grad_output.dim() != dims + 2:
        raise RuntimeError(
            f"Expected grad_output to be a tensor of dimension {dims + 2} but got: dimension {grad_output.dim()}"
        )
    for dim, size in enumerate(expected):
        if grad_output.shape[dim] != size:
            raise RuntimeError(
                f"Expected grad_output to have the same shape as output; output.size({dim}) = {size} "
                f"but got grad_output.size({dim}) = {grad_output.shape[dim]}"
            )


# --- the kernels ---------------------------------------------------------------------------


class _Mode(NamedTuple):
    """How one ``F.interpolate`` mode reads its input, and which dtypes CPU lets it read."""

    map: Callable | None  # the per-axis map of its float kernels; None for the antialiased modes
    filter: Callable | None  # the filter of its separable kernels (antialiasing, uint8), and its width
    interp_size: int
    takes_align_corners: bool
    resamples_uint8: bool
    dispatch_name: str  # what CPU's "not implemented for" messages call it


_MODES = {
    "nearest": _Mode(nearest_map, None, 1, False, True, "compute_indices_weights_nearest"),
    "nearest-exact": _Mode(nearest_exact_map, None, 1, False, True, "compute_indices_weights_nearest"),
    "linear": _Mode(linear_map, None, 2, True, False, "compute_indices_weights_linear"),
    "bilinear": _Mode(linear_map, triangle_filter, 2, True, True, "upsample_bilinear2d_channels_last"),
    "trilinear": _Mode(linear_map, None, 2, True, False, "compute_indices_weights_linear"),
    "bicubic": _Mode(cubic_map, opencv_cubic_filter, 4, True, True, "compute_indices_weights_cubic"),
    "bilinear-antialias": _Mode(None, triangle_filter, 2, True, True, "compute_index_ranges_weights"),
    "bicubic-antialias": _Mode(None, keys_cubic_filter, 4, True, True, "compute_index_ranges_weights"),
}


def _forward_map(mode, dims, x, output_size):
    """The map of a forward op.

    Legacy nearest takes ``nearest_idx``'s shortcuts where CPU runs its
    channels-last kernel: for channels-last inputs of more than 3 channels,
    and in 2d also whenever the output's height plus width is at most 128
    (``_use_vectorized_kernel_cond_2d``/``_3d`` in ``UpSampleKernel.cpp``).
    Every nearest backward takes them.
    """
    if mode != "nearest":
        return _MODES[mode].map
    vectorized = dims > 1 and _is_channels_last(x) and x.shape[1] > 3
    small = dims == 2 and sum(output_size) <= 128
    return shortcut_nearest_map if vectorized or small else nearest_map


def _is_channels_last(x):
    """``is_contiguous(memory_format=torch.channels_last)`` (or ``channels_last_3d``) of the tensor
    whose array is ``x``: channels, then the spatial dims last to first, then the batch, each
    as far apart as the ones before it span (a dim of size 1 may have any stride)."""
    expected = x.itemsize
    for dim in (1, *range(x.ndim - 1, 1, -1), 0):
        if x.shape[dim] != 1:
            if x.strides[dim] != expected:
                return False
            expected *= x.shape[dim]
    return True


def _backward_map(mode):
    return shortcut_nearest_map if mode == "nearest" else _MODES[mode].map


def _float_type(dtype):
    """The precision CPU computes coordinates and weights in: the input's compute type (a NumPy dtype's)."""
    return numpy_compute_dtype(dtype).type if dtype.kind == "f" else np.float32


def _refuses(spec, dtype):
    if spec.map is None:  # the antialiased kernels have no half version
        return dtype not in (torch.float32, torch.float64, torch.uint8)
    return not (dtype.is_floating_point or (dtype == torch.uint8 and spec.resamples_uint8))


def _resample(mode, dims, x, output_size, align_corners, scales):
    """The forward op on arrays: ``x`` resampled to ``output_size``, in its dtype."""
    spec, output_size = _MODES[mode], list(output_size)
    if x.dtype == np.uint8 and spec.filter is not None:
        antialias = spec.map is None
        return fixed_point_resample(x, output_size, spec.filter, spec.interp_size, antialias, align_corners, scales)
    float_type = _float_type(x.dtype)
    computed = x.astype(numpy_compute_dtype(x.dtype), copy=False) if x.dtype.kind == "f" else x
    if spec.map is None:
        result = antialiased(computed, output_size, spec.filter, spec.interp_size, align_corners, scales, float_type)
    else:
        builder = _forward_map(mode, dims, x, output_size)
        result = upsample(computed, output_size, builder, align_corners, scales, float_type)
    return np.ascontiguousarray(result.astype(x.dtype, copy=False))


def _resample_backward(mode, grad_output, input_size, align_corners, scales):
    """The backward op on arrays: the gradient of the input, of shape ``input_size``."""
    spec, input_spatial = _MODES[mode], list(input_size[2:])
    float_type = _float_type(grad_output.dtype)
    grad = grad_output.astype(numpy_compute_dtype(grad_output.dtype), copy=False)
    if spec.map is None:
        result = antialiased_backward(
            grad, input_spatial, spec.filter, spec.interp_size, align_corners, scales, float_type
        )
    else:
        builder = _backward_map(mode)
        result = upsample_backward(grad, input_spatial, builder, align_corners, scales, float_type)
    return np.ascontiguousarray(result.astype(grad_output.dtype, copy=False))


def _functions(mode, dims, name):
    """The forward and backward of one ``upsample_*`` op on arrays, and their checks. Modes with
    ``align_corners`` take it between the sizes and the scales; the scales may be left out."""
    spec = _MODES[mode]

    def split(args):
        if not spec.takes_align_corners:
            args = (False, *args)
        return args[0], list(args[1:]) + [None] * (dims - len(args[1:]))

    def forward(self, output_size, *args):
        return _resample(mode, dims, self, output_size, *split(args))

    def forward_checks(self, output_size, *args):
        _check_input(dims, self, list(output_size))
        if _refuses(spec, self.dtype):
            raise not_implemented_for(spec.dispatch_name, self.dtype)

    def backward(grad_output, output_size, input_size, *args):
        return _resample_backward(mode, grad_output, input_size, *split(args))

    def backward_checks(grad_output, output_size, input_size, *args):
        _check_grad_output(dims, grad_output, output_size, input_size)
        if not grad_output.dtype.is_floating_point or (spec.map is None and grad_output.dtype == torch.float16):
            raise not_implemented_for(f"{name}_backward", grad_output.dtype)

    return forward, forward_checks, backward, backward_checks


def _kernels(name, mode, dims):
    """The kernels of one ``upsample_*`` op (``name``, without its leading underscore) and of its backward."""
    forward, forward_checks, backward, backward_checks = _functions(mode, dims, name)
    for function, suffix in [
        (forward, ""),
        (forward_checks, "_kernel"),
        (backward, "_backward"),
        (backward_checks, "_backward_kernel"),
    ]:
        function.__name__ = function.__qualname__ = name + suffix
    return computed_by(forward)(forward_checks), computed_by(backward)(backward_checks)


_upsample_nearest1d, _upsample_nearest1d_backward = _kernels("upsample_nearest1d", "nearest", 1)
implements(
    aten.upsample_nearest1d.default,
    out=aten.upsample_nearest1d.out,
    name="upsample_nearest1d",
)(_upsample_nearest1d)
implements(
    aten.upsample_nearest1d_backward.default,
    out=aten.upsample_nearest1d_backward.grad_input,
    name="upsample_nearest1d_backward",
)(_upsample_nearest1d_backward)
_upsample_nearest2d, _upsample_nearest2d_backward = _kernels("upsample_nearest2d", "nearest", 2)
implements(
    aten.upsample_nearest2d.default,
    out=aten.upsample_nearest2d.out,
    name="upsample_nearest2d",
)(_upsample_nearest2d)
implements(
    aten.upsample_nearest2d_backward.default,
    out=aten.upsample_nearest2d_backward.grad_input,
    name="upsample_nearest2d_backward",
)(_upsample_nearest2d_backward)
_upsample_nearest3d, _upsample_nearest3d_backward = _kernels("upsample_nearest3d", "nearest", 3)
implements(
    aten.upsample_nearest3d.default,
    out=aten.upsample_nearest3d.out,
    name="upsample_nearest3d",
)(_upsample_nearest3d)
implements(
    aten.upsample_nearest3d_backward.default,
    out=aten.upsample_nearest3d_backward.grad_input,
    name="upsample_nearest3d_backward",
)(_upsample_nearest3d_backward)
_upsample_nearest_exact1d, _upsample_nearest_exact1d_backward = _kernels("upsample_nearest_exact1d", "nearest-exact", 1)
implements(
    aten._upsample_nearest_exact1d.default,
    out=aten._upsample_nearest_exact1d.out,
    name="upsample_nearest_exact1d",
)(_upsample_nearest_exact1d)
implements(
    aten._upsample_nearest_exact1d_backward.default,
    out=aten._upsample_nearest_exact1d_backward.grad_input,
    name="upsample_nearest_exact1d_backward",
)(_upsample_nearest_exact1d_backward)
_upsample_nearest_exact2d, _upsample_nearest_exact2d_backward = _kernels("upsample_nearest_exact2d", "nearest-exact", 2)
implements(
    aten._upsample_nearest_exact2d.default,
    out=aten._upsample_nearest_exact2d.out,
    name="upsample_nearest_exact2d",
)(_upsample_nearest_exact2d)
implements(
    aten._upsample_nearest_exact2d_backward.default,
    out=aten._upsample_nearest_exact2d_backward.grad_input,
    name="upsample_nearest_exact2d_backward",
)(_upsample_nearest_exact2d_backward)
_upsample_nearest_exact3d, _upsample_nearest_exact3d_backward = _kernels("upsample_nearest_exact3d", "nearest-exact", 3)
implements(
    aten._upsample_nearest_exact3d.default,
    out=aten._upsample_nearest_exact3d.out,
    name="upsample_nearest_exact3d",
)(_upsample_nearest_exact3d)
implements(
    aten._upsample_nearest_exact3d_backward.default,
    out=aten._upsample_nearest_exact3d_backward.grad_input,
    name="upsample_nearest_exact3d_backward",
)(_upsample_nearest_exact3d_backward)
_upsample_linear1d, _upsample_linear1d_backward = _kernels("upsample_linear1d", "linear", 1)
implements(aten.upsample_linear1d.default, out=aten.upsample_linear1d.out, name="upsample_linear1d")(_upsample_linear1d)
implements(
    aten.upsample_linear1d_backward.default,
    out=aten.upsample_linear1d_backward.grad_input,
    name="upsample_linear1d_backward",
)(_upsample_linear1d_backward)
_upsample_bilinear2d, _upsample_bilinear2d_backward = _kernels("upsample_bilinear2d", "bilinear", 2)
implements(
    aten.upsample_bilinear2d.default,
    out=aten.upsample_bilinear2d.out,
    name="upsample_bilinear2d",
)(_upsample_bilinear2d)
implements(
    aten.upsample_bilinear2d_backward.default,
    out=aten.upsample_bilinear2d_backward.grad_input,
    name="upsample_bilinear2d_backward",
)(_upsample_bilinear2d_backward)
_upsample_trilinear3d, _upsample_trilinear3d_backward = _kernels("upsample_trilinear3d", "trilinear", 3)
implements(
    aten.upsample_trilinear3d.default,
    out=aten.upsample_trilinear3d.out,
    name="upsample_trilinear3d",
)(_upsample_trilinear3d)
implements(
    aten.upsample_trilinear3d_backward.default,
    out=aten.upsample_trilinear3d_backward.grad_input,
    name="upsample_trilinear3d_backward",
)(_upsample_trilinear3d_backward)
_upsample_bicubic2d, _upsample_bicubic2d_backward = _kernels("upsample_bicubic2d", "bicubic", 2)
implements(
    aten.upsample_bicubic2d.default,
    out=aten.upsample_bicubic2d.out,
    name="upsample_bicubic2d",
)(_upsample_bicubic2d)
implements(
    aten.upsample_bicubic2d_backward.default,
    out=aten.upsample_bicubic2d_backward.grad_input,
    name="upsample_bicubic2d_backward",
)(_upsample_bicubic2d_backward)
_upsample_bilinear2d_aa, _upsample_bilinear2d_aa_backward = _kernels("upsample_bilinear2d_aa", "bilinear-antialias", 2)
implements(
    aten._upsample_bilinear2d_aa.default,
    out=aten._upsample_bilinear2d_aa.out,
    name="upsample_bilinear2d_aa",
)(_upsample_bilinear2d_aa)
implements(
    aten._upsample_bilinear2d_aa_backward.default,
    out=aten._upsample_bilinear2d_aa_backward.grad_input,
    name="upsample_bilinear2d_aa_backward",
)(_upsample_bilinear2d_aa_backward)
_upsample_bicubic2d_aa, _upsample_bicubic2d_aa_backward = _kernels("upsample_bicubic2d_aa", "bicubic-antialias", 2)
implements(
    aten._upsample_bicubic2d_aa.default,
    out=aten._upsample_bicubic2d_aa.out,
    name="upsample_bicubic2d_aa",
)(_upsample_bicubic2d_aa)
implements(
    aten._upsample_bicubic2d_aa_backward.default,
    out=aten._upsample_bicubic2d_aa_backward.grad_input,
    name="upsample_bicubic2d_aa_backward",
)(_upsample_bicubic2d_aa_backward)
