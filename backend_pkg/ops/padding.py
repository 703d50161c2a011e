"""Reflection and replication padding, 1d to 3d, forward and backward.

``F.pad(mode="reflect")`` and ``mode="replicate"`` (and so
``nn.Conv*d(padding_mode=...)``) reach the backend as
``reflection_pad{1,2,3}d`` and ``replication_pad{1,2,3}d``, their backward as
``*_pad{1,2,3}d_backward``. Most are structured ops, which arrive as their
``.out`` overloads unless the functional one has a kernel too;
``reflection_pad2d`` is not structured and arrives as itself
(aten/src/ATen/native/native_functions.yaml). Both overloads of each have a
kernel here. The other modes need none: ``F.pad``'s composite
(``_pad_enum``, aten/src/ATen/native/PadNd.cpp) does ``"constant"`` with
``constant_pad_nd`` (itself ``empty`` + ``fill_`` + a slice ``copy_``) and
``"circular"`` with slices and ``cat``.

Padding picks, for each output position along each padded dim, the input
position it copies; the dims are independent, so the forward is one gather
with an index per dim, and the backward adds the gradient back along one dim
at a time. Pads may be negative (they crop), as in PyTorch.
"""

import numpy as np
import torch

from ..dtypes import compute_dtype, to_numpy_dtype
from ..tensor import unwrap
from ._results import as_result, write_out
from .reductions import not_implemented_for
from .registry import aten, implements

# --- the NumPy functions ----------------------------------------------------


def reflected_positions(size, before, after):
    """The input position each output position copies, reflecting at the edges (edges not repeated)."""
    positions = np.abs(np.arange(-before, size + after))
    return np.where(positions >= size, 2 * (size - 1) - positions, positions)


def replicated_positions(size, before, after):
    """The input position each output position copies, repeating the edge values."""
    return np.clip(np.arange(-before, size + after), 0, size - 1)


def padded(array, positions):
    """``array`` with its last ``len(positions)`` dims gathered at ``positions`` (one index array per dim)."""
    return array[(Ellipsis, *np.ix_(*positions))]


def padded_grad(grad_output, input_shape, positions):
    """The gradient of :func:`padded`: each output gradient added back to the input it was copied from."""
    grad = grad_output
    first = len(input_shape) - len(positions)
    for axis, (size, index) in enumerate(zip(input_shape[first:], positions), start=first):
        folded = np.zeros((*grad.shape[:axis], size, *grad.shape[axis + 1 :]), grad.dtype)
        np.add.at(np.moveaxis(folded, axis, 0), index, np.moveaxis(grad, axis, 0))
        grad = folded
    return grad


# --- the kernels --------------------------------------------------------------

_POSITIONS = {"reflection": reflected_positions, "replication": replicated_positions}
_LABELS = ("D", "H", "W")


def _pairs(padding, dims):
    """``padding`` (last dim first, as ``F.pad`` takes it) as (before, after) pairs, first dim first."""
    return [(padding[2 * i], padding[2 * i + 1]) for i in reversed(range(dims))]


def _check_input(op, kind, self, padding, dims):
    """The checks of CPU's padding kernels, in their order (aten/src/ATen/native/Padding.h)."""
    if len(padding) != 2 * dims:
        but = f", but got: {len(padding)}" if kind == "reflection" else ""
        raise RuntimeError(f"padding size is expected to be {2 * dims}{but}")
    batched = self.dim() == dims + 2
    if not (batched or self.dim() == dims + 1) or 0 in self.shape[int(batched) :]:
        raise RuntimeError(
            f"Expected {dims + 1}D or {dims + 2}D (batch mode) tensor with possibly 0 batch size and other "
            f"non-zero dimensions for input, but got: {list(self.shape)}"
        )
    spatial = self.shape[-dims:]
    if kind == "reflection":
        for i in range(dims):
            before, after, size = padding[2 * i], padding[2 * i + 1], spatial[-1 - i]
            if before >= size or after >= size:
                raise RuntimeError(
                    f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                    "input dimension, "
                    f"but got: padding ({before}, {after}) at dimension {self.dim() - 1 - i} of input "
                    f"{list(self.shape)}"
                )
    output = _output_shape(spatial, padding, dims)
    # Too small only if every padded dim is: CPU lets some (not all) be empty.
    if max(output) < 1:
        raise RuntimeError(_too_small(kind, spatial, output))
    if self.dtype == torch.bool or self.dtype in (torch.uint16, torch.uint32, torch.uint64):
        raise not_implemented_for(op, self.dtype)


def _output_shape(spatial, padding, dims):
    return [size + before + after for size, (before, after) in zip(spatial, _pairs(padding, dims))]


def _too_small(kind, spatial, output):
    """CPU's message for padding that leaves nothing, which its kernels word each their own way."""
    if len(spatial) == 1:
        return f"input (W: {spatial[0]}) is too small. Calculated output W: {output[0]}"
    sizes = f"H: {spatial[-2]}, W: {spatial[-1]}" + (
        " " if kind == "replication" and len(spatial) == 2 else ""
    )
    if len(spatial) == 3:
        sizes = f"D: {spatial[0]} {sizes}"
    calculated = " ".join(f"{label}: {size}" for label, size in zip(_LABELS[-len(spatial) :], output))
    return f"input ({sizes}) is too small. Calculated output {calculated}"


def _positions(kind, shape, padding, dims):
    return [
        _POSITIONS[kind](size, before, after)
        for size, (before, after) in zip(shape[-dims:], _pairs(padding, dims))
    ]


def _pad(kind, dims):
    op = f"{kind}_pad{dims}d"

    def pad(self, padding):
        _check_input(op, kind, self, padding, dims)
        return as_result(padded(unwrap(self), _positions(kind, self.shape, padding, dims)), self.dtype)

    def pad_out(self, padding, *, out):
        return write_out(op, out, pad(self, padding))

    pad.__name__, pad_out.__name__ = op, f"{op}_out"
    return pad, pad_out


def _check_grad_output(kind, grad_output, self, padding, dims):
    """CPU's check of ``grad_output``'s padded dims, last first, each kernel wording it its own way."""
    name = "grad_output" if kind == "reflection" and dims != 2 else "gradOutput"
    comma = "" if (kind, dims) == ("replication", 1) else ","
    expected = _output_shape(self.shape[-dims:], padding, dims)
    for label, want, got in reversed(
        list(zip(("depth", "height", "width")[-dims:], expected, grad_output.shape[-dims:]))
    ):
        if want != got:
            raise RuntimeError(f"{name} {label} unexpected. Expected: {want}{comma} Got: {got}")


def _pad_backward(kind, dims):
    op = f"{kind}_pad{dims}d_backward"

    def pad_backward(grad_output, self, padding):
        _check_grad_output(kind, grad_output, self, padding, dims)
        grad = np.asarray(unwrap(grad_output), dtype=to_numpy_dtype(compute_dtype(grad_output.dtype)))
        positions = _positions(kind, self.shape, padding, dims)
        return as_result(padded_grad(grad, self.shape, positions), self.dtype)

    def pad_backward_out(grad_output, self, padding, *, grad_input):
        return write_out(op, grad_input, pad_backward(grad_output, self, padding))

    pad_backward.__name__, pad_backward_out.__name__ = op, f"{op}_out"
    return pad_backward, pad_backward_out


def _register(kind, dims):
    forward, forward_out = _pad(kind, dims)
    backward, backward_out = _pad_backward(kind, dims)
    forward_op = getattr(aten, f"{kind}_pad{dims}d")
    backward_op = getattr(aten, f"{kind}_pad{dims}d_backward")
    implements(forward_op.default)(forward)
    implements(forward_op.out)(forward_out)
    implements(backward_op.default)(backward)
    implements(backward_op.grad_input)(backward_out)


for _kind in _POSITIONS:
    for _dims in (1, 2, 3):
        _register(_kind, _dims)
