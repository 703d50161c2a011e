"""Convolutions, forward and backward: 1d, 2d and 3d, strided, padded, dilated, grouped, transposed.

PyTorch chooses a convolution's backend in the composite ``aten::_convolution``
(``_select_conv_backend`` in aten/src/ATen/native/Convolution.cpp): CPU and
CUDA tensors go to their own kernels, a device it does not know to
``aten::convolution_overrideable``; ``aten::convolution_backward`` sends the
backward the same way, to ``aten::convolution_backward_overrideable``. By
then the composite has already

* made an unbatched input batched (``batchify``) and turned ``padding="same"``
  or ``"valid"`` into ints (an asymmetric "same" zero-pads the input first,
  with ``constant_pad_nd``);
* checked the shapes: dims, channels against groups, the bias, a kernel
  larger than the padded input;
* viewed a 1d convolution as a 2d one of height 1, so the kernels see 4-d or
  5-d tensors only;
* split a complex convolution into three real ones, and handled inputs with
  no batch or no channels itself.

What reaches the kernels is checked here as CPU's native kernels check it
(kernel sizes, dilation, output padding, dtypes). For float32, CPU runs
oneDNN instead, whose messages for those few bad parameters are oneDNN's
internals; npy gives the native kernels' messages for every dtype.

The arithmetic is im2col: for each kernel offset, the input values it
multiplies are copied into a column matrix, and one matrix product per group
(BLAS for floating point) does the sums. The columns are laid out channels
first, ``(channels * kernel, batch * positions)``, so each group's product is
a single large 2-d product; NumPy runs a stack of products (``matmul`` on 3-d
arrays) far slower than one. The gradient of the input scatters the columns
back (col2im), which is also a transposed convolution's forward.
"""

import itertools
import math
import threading

import numpy as np
import torch

from ..dtypes import SCALAR_TYPE_NAMES
from ._cpu_checks import check_on_cpu
from ._dtype_errors import not_implemented_for
from ._operands import in_compute_dtype
from .registry import aten, computed_by, implements, lowers

# --- the NumPy functions ----------------------------------------------------
# Arrays are (batch, channels, *spatial); a convolution's weight is
# (out_channels, in_channels / groups, *kernel), a transposed convolution's
# (in_channels, out_channels / groups, *kernel).


def convolution(x, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """``convolution_overrideable``: ``x`` convolved with ``weight`` (a cross-correlation), plus ``bias``."""
    if transposed:
        output_shape = transposed_convolution_output_shape(
            x.shape[2:], weight.shape[2:], stride, padding, dilation, output_padding
        )
        output = _input_grad(x, weight, output_shape, stride, padding, dilation, groups)
    else:
        output_shape = convolution_output_shape(x.shape[2:], weight.shape[2:], stride, padding, dilation)
        direct = _depthwise if _is_depthwise(x, weight, groups) else _direct
        output = direct(x, weight, output_shape, stride, padding, dilation, groups)
    if bias is not None:
        output += bias.reshape(-1, *[1] * (output.ndim - 2))
    return output


def convolution_backward(
    grad_output, x, weight, stride, padding, dilation, transposed, output_padding, groups, output_mask
):
    """``convolution_backward_overrideable``: the gradients of :func:`convolution` ``output_mask`` asks for.

    A transposed convolution is the gradient of a convolution with respect
    to its input, so its own gradients swap the roles: its input's is a
    convolution of ``grad_output``, and its weight meets ``grad_output``
    where a convolution's weight meets the input.
    """
    grad_input = grad_weight = grad_bias = None
    depthwise = not transposed and _is_depthwise(x, weight, groups)
    if output_mask[0]:
        if transposed:
            grad_input = _direct(grad_output, weight, x.shape[2:], stride, padding, dilation, groups)
        else:
            input_grad = _depthwise_input_grad if depthwise else _input_grad
            grad_input = input_grad(grad_output, weight, x.shape[2:], stride, padding, dilation, groups)
    if output_mask[1]:
        source, target = (grad_output, x) if transposed else (x, grad_output)
        weight_grad = _depthwise_weight_grad if depthwise else _weight_grad
        grad_weight = weight_grad(source, target, weight.shape[2:], stride, padding, dilation, groups)
    if output_mask[2]:
        # Summed where it lies: copied channels first, it took twice as long (0.14 ms against 0.07, 8x32x32x32).
        grad_bias = np.sum(grad_output, axis=(0, *range(2, grad_output.ndim)))
    return grad_input, grad_weight, grad_bias


def convolution_output_shape(input_shape, kernel_shape, stride, padding, dilation):
    """The spatial shape of a convolution's output: where the dilated kernel fits in the padded input."""
    return tuple(
        (size + 2 * p - d * (k - 1) - 1) // s + 1
        for size, k, s, p, d in zip(input_shape, kernel_shape, stride, padding, dilation)
    )


def transposed_convolution_output_shape(input_shape, kernel_shape, stride, padding, dilation, output_padding):
    """The spatial shape of a transposed convolution's output: the input shape it is the gradient of,
    plus ``output_padding`` (which tells apart the input shapes a stride maps to one output shape)."""
    return tuple(
        (size - 1) * s - 2 * p + d * (k - 1) + 1 + extra
        for size, k, s, p, d, extra in zip(input_shape, kernel_shape, stride, padding, dilation, output_padding)
    )


class _Workspace(threading.local):
    """Memory for a kernel's temporaries, kept from call to call: one buffer per slot and thread.

    The columns of a 3x3 convolution over 8x64x56x56 float32 take 58 MB, and
    fresh memory of that size costs its page faults at every call: about
    as long again as filling it. The column matrix, the zero-padded input
    and the values on a stride-1 grid never outlive the function that made
    them, and no function holds two of one slot, so one buffer per slot
    serves them all, as a cuDNN workspace does. (Per thread: the autograd
    engine runs npy's backward on a thread of its own.)
    """

    def __init__(self):
        self.buffers = {}

    def array(self, slot, shape, dtype):
        """An uninitialized array of ``shape`` and ``dtype`` over ``slot``'s buffer, grown if need be."""
        nbytes = math.prod(shape) * np.dtype(dtype).itemsize
        buffer = self.buffers.get(slot)
        if buffer is None or buffer.nbytes < nbytes:
            buffer = self.buffers[slot] = np.empty(nbytes, np.uint8)
        return buffer[:nbytes].view(dtype).reshape(shape)

    def zeros(self, slot, shape, dtype):
        array = self.array(slot, shape, dtype)
        array.fill(0)
        return array


_workspace = _Workspace()


def _direct(x, weight, output_shape, stride, padding, dilation, groups):
    """The convolution of ``x`` with ``weight``, at the first ``output_shape`` positions."""
    if _columns_on_grid(weight.shape[2:], stride):
        grid, columns = _grid_columns(x, weight.shape[2:], output_shape, padding, dilation, groups)
        spatial, outputs = grid.shape, grid.outputs
    else:
        columns = _grouped_columns(x, weight.shape[2:], output_shape, stride, padding, dilation, groups)
        spatial, outputs = output_shape, ()
    weights = _grouped_weight(weight, groups)
    output = np.empty((groups, weights.shape[1], columns.shape[2]), x.dtype)
    for group, (w, c) in enumerate(zip(weights, columns)):
        np.matmul(w, c, out=output[group])
    return _to_batch_first(output.reshape(weight.shape[0], x.shape[0], *spatial)[outputs])


def _columns_on_grid(kernel_shape, stride):
    """Whether im2col is :func:`_grid_columns`: a 3d convolution at stride 1."""
    return len(kernel_shape) == 3 and all(s == 1 for s in stride)


def _grid_columns(x, kernel_shape, output_shape, padding, dilation, groups):
    """im2col on the stride-1 grid of :class:`_StrideOneGrid`: ``(grid, columns)``, the columns as
    (groups, in_channels / groups * kernel size, batch * grid length).

    A kernel offset's columns are one slice of each channel's and sample's flattened padded input,
    copied whole, where :func:`_columns` copies rows as short as the output's, three dims deep for
    a 3d kernel; the grid's extra positions make the product longer. For 3x3x3 over 4x8x16x16x16
    (measured on one thread) the copy took a quarter of the time (0.32 ms against 1.25) and the
    product a third more (2.0 ms against 1.5): the forward and the weight's gradient 5 to 9% less.
    The product is what BLAS's threads share, so with two the saving is the larger part.
    """
    grid = _StrideOneGrid(x.shape[2:], kernel_shape, output_shape, (1,) * len(kernel_shape), padding, dilation)
    flat = grid.flat_padded(np.swapaxes(x, 0, 1))
    columns = _workspace.array("columns", (x.shape[1], len(grid.shifts), x.shape[0], grid.length), x.dtype)
    for offset, shift in enumerate(grid.shifts):
        columns[:, offset] = flat[:, :, shift : shift + grid.length]
    return grid, columns.reshape(groups, -1, x.shape[0] * grid.length)


def _input_grad(grad_output, weight, input_shape, stride, padding, dilation, groups):
    """The gradient of :func:`_direct` with respect to ``x``, of spatial shape ``input_shape``:
    the transposed convolution of ``grad_output``."""
    if all(s == 1 for s in stride):
        return _input_grad_on_grid(grad_output, weight, input_shape, padding, dilation, groups)
    batch, kernel_shape = grad_output.shape[0], weight.shape[2:]
    columns = _grouped_products(_channels_first(grad_output, groups), weight, groups)
    columns = columns.reshape(-1, *kernel_shape, batch, *grad_output.shape[2:])
    return _to_batch_first(_scatter_columns(columns, input_shape, stride, padding, dilation))


def _grouped_products(grads, weight, groups):
    """The columns of an input gradient: each group's weight, transposed, times its ``grads``
    (groups, out_channels / groups, positions), in the workspace."""
    weights = _grouped_weight(weight, groups)
    columns = _workspace.array("columns", (groups, weights.shape[2], grads.shape[2]), grads.dtype)
    for group, (w, g) in enumerate(zip(weights, grads)):
        np.matmul(w.T, g, out=columns[group])
    return columns


def _input_grad_on_grid(grad_output, weight, input_shape, padding, dilation, groups):
    """:func:`_input_grad` at stride 1, with the columns on the stride-1 grid of :class:`_StrideOneGrid`:
    adding a kernel offset's columns back is then one slice of each channel's flattened padded input,
    where col2im adds row by row (short rows for a small 3d input: for a 3x3x3 kernel over 4x8x16x16x16,
    col2im took three times as long as the product)."""
    kernel_shape = weight.shape[2:]
    grid = _StrideOneGrid(input_shape, kernel_shape, grad_output.shape[2:], (1,) * len(kernel_shape), padding, dilation)
    grads = grid.flat_grid(np.swapaxes(grad_output, 0, 1))  # (out_channels, batch, grid length)
    columns = _grouped_products(grads.reshape(groups, grads.shape[0] // groups, -1), weight, groups)
    columns = columns.reshape(-1, len(grid.shifts), *grads.shape[1:])  # (channels, offsets, batch, length)
    shape = (columns.shape[0], grads.shape[1], math.prod(grid.padded) + grid.tail)
    flat = _workspace.zeros("padded", shape, grad_output.dtype)
    for offset, shift in enumerate(grid.shifts):
        flat[:, :, shift : shift + grid.length] += columns[:, offset]
    return _to_batch_first(grid.unflattened(flat)[grid.interior])


def _weight_grad(x, grad_output, kernel_shape, stride, padding, dilation, groups):
    """The gradient of :func:`_direct` with respect to its weight, of spatial shape ``kernel_shape``."""
    if _columns_on_grid(kernel_shape, stride):
        grid, columns = _grid_columns(x, kernel_shape, grad_output.shape[2:], padding, dilation, groups)
        grads = grid.flat_grid(np.swapaxes(grad_output, 0, 1)).reshape(groups, grad_output.shape[1] // groups, -1)
    else:
        columns = _grouped_columns(x, kernel_shape, grad_output.shape[2:], stride, padding, dilation, groups)
        grads = _channels_first(grad_output, groups)
    weight = np.empty((groups, grads.shape[1], columns.shape[1]), x.dtype)
    for group, (g, c) in enumerate(zip(grads, columns)):
        np.matmul(g, c.T, out=weight[group])
    return weight.reshape(-1, x.shape[1] // groups, *kernel_shape)


def _is_depthwise(x, weight, groups):
    """Whether each output channel reads one input channel, its own: ``groups`` equal to the channels
    on both sides (a multiplier above one is left to im2col)."""
    return groups > 1 and groups == x.shape[1] == weight.shape[0]


# A depthwise convolution multiplies each channel by its own few weights: im2col over the whole
# batch would copy every input value once per kernel offset, for a product of one row per channel.
# Instead each kernel offset reads the padded input, shifted, times that offset's weight per channel.
# With each channel's padded input flattened, a shift is a plain slice of it, so every NumPy call
# runs along whole rows of memory. The outputs are computed on the stride-1 grid of the padded
# input: its rows are as long as the padded ones (the extra positions are computed and dropped, or
# zero in a gradient), and a strided convolution computes every position then keeps one per stride.


class _StrideOneGrid:
    """Where a convolution's kernel offsets read the flattened padded input: the output positions,
    stride 1, in rows as long as the padded input's. Its arrays keep their first two dims (batch and
    channels, in either order) and flatten the spatial ones."""

    def __init__(self, input_shape, kernel_shape, output_shape, stride, padding, dilation):
        self.padded = tuple(size + 2 * pad for size, pad in zip(input_shape, padding))
        self.shape = ((output_shape[0] - 1) * stride[0] + 1, *self.padded[1:])
        self.length = math.prod(self.shape)
        row_steps = [math.prod(self.padded[dim + 1 :]) for dim in range(len(self.padded))]
        self.kernel_shape = tuple(kernel_shape)
        # How far the window moves, in the flattened padded input, per step of each kernel dim.
        self.kernel_steps = [d * step for d, step in zip(dilation, row_steps)]
        self.shifts = [
            sum(k * step for k, step in zip(offset, self.kernel_steps))
            for offset in itertools.product(*map(range, kernel_shape))
        ]
        # The last offsets read past the padded input's end, by at most this many (dropped) values.
        self.tail = max(0, max(self.shifts) + self.length - math.prod(self.padded))
        self.outputs = (
            slice(None),
            slice(None),
            *(slice(0, (size - 1) * s + 1, s) for size, s in zip(output_shape, stride)),
        )
        self.interior = _interior(padding, input_shape)

    def flat_padded(self, x):
        """``x`` zero-padded and flattened, (batch, C, padded size + tail), in the workspace."""
        flat = _workspace.zeros("padded", (*x.shape[:2], math.prod(self.padded) + self.tail), x.dtype)
        self.unflattened(flat)[self.interior] = x
        return flat

    def windows(self, flat):
        """``flat`` (from :meth:`flat_padded`) viewed, not copied, as the window each kernel offset reads:
        (batch, C, *kernel, grid length), the offsets in :attr:`shifts` order."""
        shape = (*flat.shape[:2], *self.kernel_shape, self.length)
        strides = (*flat.strides[:2], *(step * flat.itemsize for step in self.kernel_steps), flat.itemsize)
        return np.lib.stride_tricks.as_strided(flat, shape, strides, writeable=False)

    def unflattened(self, flat):
        return flat[:, :, : math.prod(self.padded)].reshape(*flat.shape[:2], *self.padded)

    def flat_grid(self, grad_output):
        """``grad_output`` placed on the grid, zero elsewhere: (batch, C, grid length), in the workspace."""
        grid = _workspace.zeros("grid", (*grad_output.shape[:2], *self.shape), grad_output.dtype)
        grid[self.outputs] = grad_output
        return grid.reshape(*grad_output.shape[:2], self.length)


def _offset_weights(weight):
    """A depthwise ``weight`` (C, 1, *kernel) as one (C, 1) column per kernel offset, in :attr:`shifts` order."""
    return np.moveaxis(weight.reshape(weight.shape[0], -1), 1, 0)[..., None]


def _depthwise(x, weight, output_shape, stride, padding, dilation, groups):
    """:func:`_direct` for a depthwise ``weight`` (C, 1, *kernel): sample by sample, the windows each
    kernel offset reads (C, offsets, grid length) are copied side by side, then one stack of
    (1, offsets) by (offsets, grid length) products sums them per channel. The windows fit in the
    processor's cache, where NumPy multiplying and adding offset by offset passes over the output
    twice per offset (measured: half the time, for 3x3 over 8x32x32x32). A sample's windows are one
    copy from :meth:`_StrideOneGrid.windows`: a copy per offset made the forward 1.3 times as long
    (0.92 ms against 0.70, the same case, one process)."""
    grid = _StrideOneGrid(x.shape[2:], weight.shape[2:], output_shape, stride, padding, dilation)
    windows = grid.windows(grid.flat_padded(x))
    # Fresh memory for the output too would make two large allocations per call, whose pages fault
    # again whenever malloc has handed them back to the system: measured in the bench's depthwise step
    # (8x32x32x32, one process), 940 page faults per step against 60, and 1.9 times the time.
    output = _workspace.array("grid", (*x.shape[:2], 1, grid.length), x.dtype)
    weights = np.ascontiguousarray(weight.reshape(weight.shape[0], 1, -1))  # for BLAS: a flipped kernel
    columns = _workspace.array("columns", windows.shape[1:], x.dtype)
    for sample in range(x.shape[0]):
        np.copyto(columns, windows[sample])
        np.matmul(weights, columns.reshape(x.shape[1], -1, grid.length), out=output[sample])
    return output.reshape(*x.shape[:2], *grid.shape)[grid.outputs].copy()  # out of the workspace


def _depthwise_input_grad(grad_output, weight, input_shape, stride, padding, dilation, groups):
    """:func:`_input_grad` for a depthwise ``weight``: at stride 1, the convolution of ``grad_output``
    with the flipped kernel, padded so the kernel reaches every input position; otherwise each offset's
    product added back where it was read."""
    reach = [d * (k - 1) for k, d in zip(weight.shape[2:], dilation)]
    if all(s == 1 for s in stride) and all(p <= r for p, r in zip(padding, reach)):
        flipped = np.flip(weight, axis=tuple(range(2, weight.ndim)))
        padding = [r - p for r, p in zip(reach, padding)]
        return _depthwise(grad_output, flipped, input_shape, stride, padding, dilation, groups)
    grid = _StrideOneGrid(input_shape, weight.shape[2:], grad_output.shape[2:], stride, padding, dilation)
    grads = grid.flat_grid(grad_output)
    shape = (*grad_output.shape[:2], math.prod(grid.padded) + grid.tail)
    flat = _workspace.array("padded", shape, grad_output.dtype)
    product = _workspace.array("columns", grads.shape, grad_output.dtype)
    columns = _offset_weights(weight)

    flat.fill(0)
    for shift, column in zip(grid.shifts, columns):
        np.multiply(grads, column, out=product)
        flat[:, :, shift : shift + grid.length] += product
    return grid.unflattened(flat)[grid.interior].copy()  # out of the workspace


def _depthwise_weight_grad(x, grad_output, kernel_shape, stride, padding, dilation, groups):
    """:func:`_weight_grad` for a depthwise weight: per channel and offset, the input the offset read
    times ``grad_output``, summed over the batch and the positions.

    One ``np.vecdot`` over :meth:`_StrideOneGrid.windows` makes a dot product per sample, channel and
    offset, whose two rows the processor's cache holds for the channel's every offset; an ``einsum``
    per offset over the whole batch took twice as long (0.91 ms against 0.45 for 3x3 over
    8x32x32x32, one process), einsum's own loop being the slower, and the batch's rows passing
    through the cache once per offset.
    """
    grid = _StrideOneGrid(x.shape[2:], kernel_shape, grad_output.shape[2:], stride, padding, dilation)
    grads, windows = grid.flat_grid(grad_output), grid.windows(grid.flat_padded(x))
    grads = grads.reshape(*grads.shape[:2], *[1] * len(kernel_shape), grid.length)
    return np.vecdot(grads, windows).sum(axis=0).reshape(x.shape[1], 1, *kernel_shape)


def _grouped_weight(weight, groups):
    """``weight`` as (groups, out_channels / groups, in_channels / groups * kernel size)."""
    return weight.reshape(groups, weight.shape[0] // groups, -1)


def _channels_first(array, groups):
    """``array`` (batch, channels, *spatial) as (groups, channels / groups, batch * positions), contiguous."""
    channels = np.ascontiguousarray(np.swapaxes(array, 0, 1))
    return channels.reshape(groups, array.shape[1] // groups, -1)


def _to_batch_first(array):
    """(channels, batch, *spatial) as a new contiguous (batch, channels, *spatial) array, always a copy:
    ``array`` may be workspace memory."""
    return np.swapaxes(array, 0, 1).copy()


def _grouped_columns(x, kernel_shape, output_shape, stride, padding, dilation, groups):
    """:func:`_columns` as (groups, in_channels / groups * kernel size, batch * positions)."""
    columns = _columns(x, kernel_shape, output_shape, stride, padding, dilation)
    return columns.reshape(groups, -1, x.shape[0] * math.prod(output_shape))


def _taps(offset, dilation, stride, count):
    """The padded-input positions kernel offset ``offset`` meets at ``count`` outputs (along one dim)."""
    start = offset * dilation
    return slice(start, start + (count - 1) * stride + 1, stride)


def _columns(x, kernel_shape, output_shape, stride, padding, dilation):
    """im2col: ``columns[c, *k, n, *o]`` is the padded input that kernel offset ``k`` meets at output ``o``.

    One strided copy per kernel offset, whose fastest axis is the output's: much faster than copying a
    ``sliding_window_view``, whose fastest axis is the kernel's. Small columns are one copy of the same
    order, from :func:`_offset_windows`: there the calls cost more than their copies. Measured against
    a copy per offset: 0.6 of the time for LeNet's 5x5 kernels over 16x1x16x16 and 16x6x8x8, 0.87 to
    0.96 up to :data:`_ONE_COPY_LIMIT` values, 1.05 to 1.14 above (8x64x56x56, 3x3 at stride 1 and 2).
    """
    padded = _zero_padded(np.swapaxes(x, 0, 1), padding)
    columns = _workspace.array("columns", (x.shape[1], *kernel_shape, x.shape[0], *output_shape), x.dtype)
    if columns.size <= _ONE_COPY_LIMIT:
        np.copyto(columns, _offset_windows(padded, kernel_shape, output_shape, stride, dilation))
        return columns
    for offset in itertools.product(*map(range, kernel_shape)):
        taps = map(_taps, offset, dilation, stride, output_shape)
        columns[(slice(None), *offset)] = padded[(slice(None), slice(None), *taps)]
    return columns


# The most values im2col copies in one call (see :func:`_columns`).
_ONE_COPY_LIMIT = 2**20


def _offset_windows(padded, kernel_shape, output_shape, stride, dilation):
    """``padded`` (channels, batch, *spatial) viewed, not copied, as the columns of :func:`_columns`:
    (channels, *kernel, batch, *output), a kernel offset's axis stepping ``dilation`` along the input and an
    output's ``stride``."""
    spatial_strides = padded.strides[2:]
    shape = (padded.shape[0], *kernel_shape, padded.shape[1], *output_shape)
    strides = (
        padded.strides[0],
        *(step * d for step, d in zip(spatial_strides, dilation)),
        padded.strides[1],
        *(step * s for step, s in zip(spatial_strides, stride)),
    )
    return np.lib.stride_tricks.as_strided(padded, shape, strides, writeable=False)


def _scatter_columns(columns, input_shape, stride, padding, dilation):
    """col2im, the adjoint of :func:`_columns`: each column value added back where it was read.

    ``columns`` is (channels, *kernel, batch, *output); the result is
    (channels, batch, *input_shape), a view of workspace memory.
    """
    channels, batch = columns.shape[0], columns.shape[1 + len(input_shape)]
    kernel_shape = columns.shape[1 : 1 + len(input_shape)]
    output_shape = columns.shape[2 + len(input_shape) :]
    padded_shape = [size + 2 * pad for size, pad in zip(input_shape, padding)]
    padded = _workspace.zeros("padded", (channels, batch, *padded_shape), columns.dtype)
    for offset in itertools.product(*map(range, kernel_shape)):
        taps = map(_taps, offset, dilation, stride, output_shape)
        padded[(slice(None), slice(None), *taps)] += columns[(slice(None), *offset)]
    return padded[_interior(padding, input_shape)]


def _zero_padded(array, padding):
    """``array`` with ``padding`` zeros on both sides of each spatial dim (its last ones),
    in the workspace."""
    if not any(padding):
        return array
    spatial = array.shape[2:]
    padded_shape = (*array.shape[:2], *(size + 2 * pad for size, pad in zip(spatial, padding)))
    padded = _workspace.zeros("padded", padded_shape, array.dtype)
    padded[_interior(padding, spatial)] = array
    return padded


def _interior(padding, spatial_shape):
    """Where the values sit in their zero-padded copy: an index of it."""
    return (slice(None), slice(None), *(slice(pad, pad + size) for pad, size in zip(padding, spatial_shape)))


# --- the ops, on arrays: the result has the input's dtype, computed in float32 for half ---


@lowers(aten.convolution.default)
def convolution_overrideable(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    x, w, b = in_compute_dtype(input.dtype, input, weight, bias)
    output = convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups)
    return output.astype(input.dtype, copy=False)


def convolution_backward_overrideable(
    grad_output, input, weight, stride, padding, dilation, transposed, output_padding, groups, output_mask
):
    grad, x, w = in_compute_dtype(input.dtype, grad_output, input, weight)
    grads = convolution_backward(grad, x, w, stride, padding, dilation, transposed, output_padding, groups, output_mask)
    return tuple(None if array is None else array.astype(input.dtype, copy=False) for array in grads)


@lowers(aten.convolution_backward.default)
def convolution_backward_with_bias_sizes(grad_output, input, weight, bias_sizes, *arguments):
    """``convolution_backward``, which the graphs of ``torch.compile`` hold: the same, told the bias's shape."""
    return convolution_backward_overrideable(grad_output, input, weight, *arguments)


# --- checks, as CPU's kernels make them -----------------------------------------

# What CPU's kernels are compiled for: every floating type and int64 on each path,
# the other integers only on the plain (not transposed, not dilated) ones.
_ALWAYS = (torch.float16, torch.float32, torch.float64, torch.int64)
_PLAIN_ONLY = (torch.int8, torch.int16, torch.int32, torch.uint8)

_DIM_NAMES = {2: ("height", "width"), 3: ("depth", "height", "width")}

_EMPTY_TRANSPOSED_WEIGHT = {
    2: "non-empty 2D or 4D weight tensor expected, but got: ",
    3: "non-empty 5D (n_output_plane x n_input_plane x kernel_depth x kernel_height x kernel_width) "
    "tensor expected for weight, but got: ",
}


def _legacy_type(dtype):
    """How CPU messages name a tensor type: ``torch.FloatTensor``."""
    return f"torch.{SCALAR_TYPE_NAMES[dtype]}Tensor"


def _named(label, values, separator=" "):
    """``values`` per spatial dim, as CPU's messages list them: ``label_height: 1 label_width: 2``."""
    return separator.join(f"{label}_{name}: {value}" for name, value in zip(_DIM_NAMES[len(values)], values))


def _by(sizes):
    """Sizes as CPU's messages list them: ``6 x 6``."""
    return " x ".join(map(str, sizes))


def _check_bias_type_for_onednn(input, bias):
    """CPU runs float32 convolutions with oneDNN, which first checks the bias's dtype."""
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(
            f"Input type ({_legacy_type(input.dtype)}) and bias type ({_legacy_type(bias.dtype)}) "
            f"should be the same or input should be a MKLDNN tensor and bias is a dense tensor"
        )


def _check_direct(kernel_shape, dilation):
    """The checks of CPU's convolution kernels (slow_conv2d, slow_conv3d, slow_conv_dilated)."""
    dilated = any(d != 1 for d in dilation)
    if min(kernel_shape) <= 0:
        if dilated:
            raise RuntimeError(f"kernel size should be greater than zero, but got {list(kernel_shape)}")
        if len(kernel_shape) == 3:
            raise RuntimeError(f"kernel size should be greater than zero, but got: {_by(kernel_shape)} (TxHxW)")
        raise RuntimeError(f"kernel size should be greater than zero, but got {_named('kernel', kernel_shape)}")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")


def _check_transposed(input, weight, stride, padding, dilation, output_padding):
    """The checks of CPU's slow_conv_transpose2d and slow_conv_transpose3d kernels."""
    kernel_shape = weight.shape[2:]
    if len(kernel_shape) == 2 and min(kernel_shape) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got {_named('kernel', kernel_shape)}")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got {_named('dilation', dilation, ', ')}")
    if any(extra >= s and extra >= d for extra, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"{_named('output_padding', output_padding)} {_named('stride', stride)} "
            f"{_named('dilation', dilation)}"
        )
    if weight.numel() == 0:
        raise RuntimeError(_EMPTY_TRANSPOSED_WEIGHT[len(kernel_shape)] + str(list(weight.shape)))
    input_shape = input.shape[2:]
    output_shape = transposed_convolution_output_shape(
        input_shape, kernel_shape, stride, padding, dilation, output_padding
    )
    if min(output_shape) < 1:
        raise RuntimeError(
            f"Given input size per channel: ({_by(input_shape)}). "
            f"Calculated output size per channel: ({_by(output_shape)}). Output size is too small"
        )


def _check_dtypes(input, transposed, dilation):
    """The dtypes CPU's kernels refuse."""
    dtype = input.dtype
    dilated = any(d != 1 for d in dilation)
    if dtype not in _ALWAYS and (dtype not in _PLAIN_ONLY or transposed or dilated):
        raise not_implemented_for("convolution_overrideable", dtype)


def _convolution_checks(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """CPU's checks of a convolution's arguments, in CPU's order."""
    if weight.dtype != input.dtype:
        # Refused on the CPU, in the words of the backend it picks for the input's dtype on this
        # machine: oneDNN's for float32, and for float16 where the processor has avx_ne_convert or
        # avx512_fp16 (mkldnn_fp16_device_check, aten/src/ATen/native/mkldnn/Utils.h); the
        # direct kernels' otherwise.
        check_on_cpu(
            aten.convolution.default, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
        )
    if input.dtype == torch.float32:
        _check_bias_type_for_onednn(input, bias)
    if transposed:
        _check_transposed(input, weight, stride, padding, dilation, output_padding)
    else:
        _check_direct(weight.shape[2:], dilation)
    _check_dtypes(input, transposed, dilation)
    if bias is not None:  # it is added (as ``add_`` would add it) into a result of the input's dtype
        result_type = torch.promote_types(input.dtype, bias.dtype)
        if not torch.can_cast(result_type, input.dtype):
            raise RuntimeError(
                f"result type {SCALAR_TYPE_NAMES[result_type]} can't be cast to the desired output type "
                f"{SCALAR_TYPE_NAMES[input.dtype]}"
            )


def _output_shape(x, weight, stride, padding, dilation, transposed, output_padding, groups):
    """The shape of the forward's result."""
    if transposed:
        spatial = transposed_convolution_output_shape(
            x.shape[2:], weight.shape[2:], stride, padding, dilation, output_padding
        )
        return (x.shape[0], weight.shape[1] * groups, *spatial)
    return (
        x.shape[0],
        weight.shape[0],
        *convolution_output_shape(x.shape[2:], weight.shape[2:], stride, padding, dilation),
    )


def _check_grad_output(grad_output, input, expected_shape, groups):
    """CPU's checks of ``grad_output`` against the forward's input and output.

    CPU checks each group's slice of the channels, and words it so.
    """
    if grad_output.dtype != input.dtype:
        raise RuntimeError(
            f"expected scalar type {SCALAR_TYPE_NAMES[input.dtype]} but found {SCALAR_TYPE_NAMES[grad_output.dtype]}"
        )
    if tuple(grad_output.shape) == tuple(expected_shape):
        return
    dim = next(dim for dim, size in enumerate(expected_shape) if grad_output.shape[dim] != size)
    expected, got = expected_shape[dim], grad_output.shape[dim]
    if dim == 1:
        expected, got = expected // groups, got // groups
    raise RuntimeError(
        f"Expected a tensor of dimension {len(expected_shape)} and tensor.size[{dim}] == {expected} but got: "
        f"dimension {grad_output.dim()} and tensor.size[{dim}] = {got}"
    )


def _convolution_backward_checks(
    grad_output, input, weight, stride, padding, dilation, transposed, output_padding, groups, output_mask
):
    _convolution_checks(input, weight, None, stride, padding, dilation, transposed, output_padding, groups)
    expected_shape = _output_shape(input, weight, stride, padding, dilation, transposed, output_padding, groups)
    _check_grad_output(grad_output, input, expected_shape, groups)


implements(aten.convolution_overrideable.default)(computed_by(convolution_overrideable)(_convolution_checks))
implements(aten.convolution_backward_overrideable.default)(
    computed_by(convolution_backward_overrideable)(_convolution_backward_checks)
)
