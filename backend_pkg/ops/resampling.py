"""Resampling: ``F.interpolate``'s nearest, nearest-exact, (bi/tri)linear and bicubic modes.

``F.interpolate`` (``torch/nn/functional.py``) picks the aten op from the
mode and the input's dims and calls its ``.vec`` overload, a composite that
works out the output size and passes ``output_size`` and per-dim ``scales``
(``None`` when ``recompute_scale_factor`` is set, or when a size was given)
to the op itself, which is structured: PyTorch sends npy its ``.out``
overload, and ``.grad_input`` for the backward. The ops are
``upsample_nearest{1,2,3}d``, ``_upsample_nearest_exact{1,2,3}d``,
``upsample_linear1d``, ``upsample_bilinear2d``, ``upsample_trilinear3d``,
``upsample_bicubic2d`` and each one's ``_backward``. (``antialias=True``
reaches ``_upsample_bilinear2d_aa``/``_upsample_bicubic2d_aa``, which npy
does not implement: they fall back to CPU.)

Every mode is separable: each output element along an axis is a weighted
sum of at most four input elements of that axis, so one
:mod:`~backend_pkg.ops._axis_maps` map per axis gives the forward
(gathers) and its transpose the backward (sums into the input positions).
Source positions and weights are computed as ATen's ``UpSample.h`` computes
them, in the same precision: nearest in float32 (``nearest_idx``,
``nearest_exact_idx``), linear and cubic in the input's compute type
(``area_pixel_compute_source_index``, ``guard_index_and_lambda``,
``get_cubic_upsample_coefficients``), so the same pixels are picked.
"""

import numpy as np
import torch

from ..dtypes import compute_dtype, to_numpy_dtype
from ..tensor import unwrap
from . import _axis_maps as axis_maps
from ._results import as_result, write_out
from .reductions import not_implemented_for
from .registry import aten, implements

_CUBIC_A = -0.75  # the cubic convolution constant PyTorch (and OpenCV) use
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
    """``nearest``: the element at ``floor(o * scale)``; ``nearest-exact``: at ``round((o + 0.5) * scale - 0.5)``.

    As ``HelperInterpNearest`` computes them: the coordinate in the compute
    type, rounded to float32 before the floor (C++ ``floorf``).
    """
    if exact:
        coordinates = _source_coordinates(size, out, False, scale, float_type).astype(np.float64) + 0.5
    else:
        coordinates = _source_coordinates(size, out, True, scale, float_type, step=_scale(size, out, scale, float_type))
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


def _cubic_near(x):
    """The cubic convolution kernel for ``|x| <= 1``."""
    return ((_CUBIC_A + 2) * x - (_CUBIC_A + 3)) * x * x + 1


def _cubic_far(x):
    """The cubic convolution kernel for ``1 < |x| < 2``."""
    return ((_CUBIC_A * x - 5 * _CUBIC_A) * x + 8 * _CUBIC_A) * x - 4 * _CUBIC_A


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
        raise RuntimeError(
            f"Non-empty {dims + 2}D data tensor expected but got a tensor with sizes {list(self.shape)}"
        )


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

# Each mode: its axis map, whether it takes align_corners, the dtypes CPU resamples beyond
# floating point, and the name CPU's dtype dispatch gives per dims (for "not implemented for").
_MODES = {
    "nearest": (nearest_map, False, {torch.uint8}),
    "nearest_exact": (nearest_exact_map, False, {torch.uint8}),
    "linear": (linear_map, True, set()),
    "cubic": (cubic_map, True, set()),
}
_DISPATCH_NAMES = {
    ("nearest", 2): "upsample_nearest2d_channels_last",
    ("nearest_exact", 2): "upsample_nearest2d_channels_last",
    ("linear", 2): "upsample_bilinear2d_channels_last",
}
_INDEX_NAMES = {"nearest": "nearest", "nearest_exact": "nearest", "linear": "linear", "cubic": "cubic"}


def _dispatch_name(mode, dims):
    return _DISPATCH_NAMES.get((mode, dims), f"compute_indices_weights_{_INDEX_NAMES[mode]}")


def _float_type(dtype):
    return to_numpy_dtype(compute_dtype(dtype)).type if dtype.is_floating_point else np.float32


def _forward_map(mode, dims, self, output_size):
    """The map of a forward op.

    Legacy nearest takes ``nearest_idx``'s shortcuts where CPU runs its
    channels-last kernel: for channels-last inputs of more than 3 channels,
    and in 2d also whenever the output's height plus width is at most 128
    (``_use_vectorized_kernel_cond_2d``/``_3d`` in ``UpSampleKernel.cpp``).
    Every nearest backward takes them.
    """
    if mode != "nearest":
        return _MODES[mode][0]
    layout = torch.channels_last if dims == 2 else torch.channels_last_3d
    vectorized = dims > 1 and self.is_contiguous(memory_format=layout) and self.shape[1] > 3
    small = dims == 2 and sum(output_size) <= 128
    return shortcut_nearest_map if vectorized or small else nearest_map


def _backward_map(mode):
    return shortcut_nearest_map if mode == "nearest" else _MODES[mode][0]


def _resample(mode, dims, self, output_size, align_corners, scales):
    _, _, integer_dtypes = _MODES[mode]
    builder = _forward_map(mode, dims, self, output_size)
    _check_input(dims, self, output_size)
    if not (self.dtype.is_floating_point or self.dtype in integer_dtypes):
        raise not_implemented_for(_dispatch_name(mode, dims), self.dtype)
    x = unwrap(self)
    if self.dtype.is_floating_point:
        x = x.astype(to_numpy_dtype(compute_dtype(self.dtype)), copy=False)
    result = upsample(x, list(output_size), builder, align_corners, list(scales), _float_type(self.dtype))
    return as_result(np.ascontiguousarray(result), self.dtype)


def _resample_backward(mode, dims, op, grad_output, output_size, input_size, align_corners, scales):
    builder = _backward_map(mode)
    _check_grad_output(dims, grad_output, output_size, input_size)
    if not grad_output.dtype.is_floating_point:
        raise not_implemented_for(op, grad_output.dtype)
    grad = unwrap(grad_output).astype(to_numpy_dtype(compute_dtype(grad_output.dtype)), copy=False)
    result = upsample_backward(
        grad, list(input_size[2:]), builder, align_corners, list(scales), _float_type(grad_output.dtype)
    )
    return as_result(np.ascontiguousarray(result), grad_output.dtype)


def _scales(dims, scales):
    return list(scales) + [None] * (dims - len(scales))


def _nearest_kernels(mode, dims, name):
    def forward(self, output_size, *scales):
        return _resample(mode, dims, self, output_size, False, _scales(dims, scales))

    def forward_out(self, output_size, *scales, out):
        return write_out(name, out, forward(self, output_size, *scales))

    def backward(grad_output, output_size, input_size, *scales):
        return _resample_backward(
            mode, dims, f"{name}_backward", grad_output, output_size, input_size, False, _scales(dims, scales)
        )

    def backward_out(grad_output, output_size, input_size, *scales, grad_input):
        return write_out(f"{name}_backward", grad_input, backward(grad_output, output_size, input_size, *scales))

    return forward, forward_out, backward, backward_out


def _interpolating_kernels(mode, dims, name):
    def forward(self, output_size, align_corners, *scales):
        return _resample(mode, dims, self, output_size, align_corners, _scales(dims, scales))

    def forward_out(self, output_size, align_corners, *scales, out):
        return write_out(name, out, forward(self, output_size, align_corners, *scales))

    def backward(grad_output, output_size, input_size, align_corners, *scales):
        return _resample_backward(
            mode, dims, f"{name}_backward", grad_output, output_size, input_size, align_corners,
            _scales(dims, scales),
        )

    def backward_out(grad_output, output_size, input_size, align_corners, *scales, grad_input):
        result = backward(grad_output, output_size, input_size, align_corners, *scales)
        return write_out(f"{name}_backward", grad_input, result)

    return forward, forward_out, backward, backward_out


def _register(name, mode, dims):
    """Register the forward, backward and their ``out`` overloads of one ``upsample_*`` op."""
    packet, backward_packet = getattr(aten, name), getattr(aten, f"{name}_backward")
    make = _interpolating_kernels if _MODES[mode][1] else _nearest_kernels
    forward, forward_out, backward, backward_out = make(mode, dims, name.lstrip("_"))
    for kernel, suffix in [(forward, "forward"), (forward_out, "forward_out"), (backward, "backward"), (backward_out, "backward_out")]:
        kernel.__name__ = kernel.__qualname__ = f"{name.lstrip('_')}_{suffix}"
    implements(packet.default)(forward)
    implements(packet.out)(forward_out)
    implements(backward_packet.default)(backward)
    implements(backward_packet.grad_input)(backward_out)


for _name, _mode, _dims in [
    ("upsample_nearest1d", "nearest", 1),
    ("upsample_nearest2d", "nearest", 2),
    ("upsample_nearest3d", "nearest", 3),
    ("_upsample_nearest_exact1d", "nearest_exact", 1),
    ("_upsample_nearest_exact2d", "nearest_exact", 2),
    ("_upsample_nearest_exact3d", "nearest_exact", 3),
    ("upsample_linear1d", "linear", 1),
    ("upsample_bilinear2d", "linear", 2),
    ("upsample_trilinear3d", "linear", 3),
    ("upsample_bicubic2d", "cubic", 2),
]:
    _register(_name, _mode, _dims)
