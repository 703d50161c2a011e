"""Reflection and replication padding, 1d to 3d, forward and backward.

``F.pad(mode="reflect")`` and ``mode="replicate"`` (and so
``nn.Conv*d(padding_mode=...)``) reach the backend as
``reflection_pad{1,2,3}d`` and ``replication_pad{1,2,3}d``, their backward as
``*_pad{1,2,3}d_backward``. The structured ones among them arrive as their
``.out`` (``.grad_input``) overload, through the functional one's
``CompositeExplicitAutogradNonFunctional`` kernel, unless the functional
overload has a kernel of its own; ``reflection_pad2d``, its backward and the
2d and 3d ``replication_pad`` backwards are not structured and arrive as
themselves (``torch._C._dispatch_dump`` shows which). Both overloads of each
have a kernel here. The other modes need none: ``F.pad``'s composite
(``_pad_enum``, aten/src/ATen/native/PadNd.cpp) does ``"constant"`` with
``constant_pad_nd`` (``empty``, ``fill_`` and a copy into a slice) and
``"circular"`` with slices and ``cat``.

Padding picks, for each output position along each padded dim, the input
position it copies; the dims are independent, so the forward is one gather
with an index per dim, and the backward adds the gradient back along one dim
at a time. Pads may be negative (they crop), as in PyTorch.
"""

import numpy as np
import torch

from ._cpu_checks import check_on_cpu
from ._dtype_errors import not_implemented_for
from ._operands import numpy_compute_dtype
from .registry import aten, computed_by, implements

# --- the NumPy functions ----------------------------------------------------
# ``padding`` is as ``F.pad`` takes it: (before, after) pairs, for the last dim first; the
# padded dims are the last ``len(padding) // 2``.


def reflection_pad(self, padding):
    """``reflection_pad{1,2,3}d``: ``self``'s padded dims extended with their mirror image at
    each edge (the edge itself not repeated)."""
    return _gathered(self, _positions(_reflected, self.shape, padding))


def replication_pad(self, padding):
    """``replication_pad{1,2,3}d``: ``self``'s padded dims extended with copies of their edges."""
    return _gathered(self, _positions(_replicated, self.shape, padding))


def reflection_pad_backward(grad_output, self, padding):
    """``reflection_pad{1,2,3}d_backward``: the gradient of :func:`reflection_pad`."""
    return _pad_backward(_reflected, grad_output, self, padding)


def replication_pad_backward(grad_output, self, padding):
    """``replication_pad{1,2,3}d_backward``: the gradient of :func:`replication_pad`."""
    return _pad_backward(_replicated, grad_output, self, padding)


def _pad_backward(positions_along, grad_output, self, padding):
    """The gradient of ``self`` (half added up in float32), where each value was copied to."""
    grad = grad_output.astype(numpy_compute_dtype(grad_output.dtype), copy=False)
    positions = _positions(positions_along, self.shape, padding)
    return _scattered(grad, self.shape, positions).astype(self.dtype, copy=False)


def _reflected(size, before, after):
    positions = np.abs(np.arange(-before, size + after))
    return np.where(positions >= size, 2 * (size - 1) - positions, positions)


def _replicated(size, before, after):
    return np.clip(np.arange(-before, size + after), 0, size - 1)


def _positions(positions_along, shape, padding):
    """For each padded dim, first to last, the input position each output position copies."""
    dims = len(padding) // 2
    pairs = [(padding[2 * i], padding[2 * i + 1]) for i in reversed(range(dims))]
    return [positions_along(size, before, after) for size, (before, after) in zip(shape[-dims:], pairs)]


def _gathered(array, positions):
    """``array`` with its last ``len(positions)`` dims gathered at ``positions``, in one indexing."""
    return array[(Ellipsis, *np.ix_(*positions))]


def _scattered(grad_output, input_shape, positions):
    """The adjoint of :func:`_gathered`: each gradient added back where its value was copied from.

    The dims are independent, so this goes one dim at a time, adding whole
    slices (``np.add.at`` along the leading axis).
    """
    grad = grad_output
    first = len(input_shape) - len(positions)
    for axis, (size, index) in enumerate(zip(input_shape[first:], positions), start=first):
        folded = np.zeros((*grad.shape[:axis], size, *grad.shape[axis + 1 :]), grad.dtype)
        np.add.at(np.moveaxis(folded, axis, 0), index, np.moveaxis(grad, axis, 0))
        grad = folded
    return grad


# --- the kernels --------------------------------------------------------------

_FORWARD = {"reflection": reflection_pad, "replication": replication_pad}
_BACKWARD = {"reflection": reflection_pad_backward, "replication": replication_pad_backward}


def _output_shape(shape, padding, dims):
    """The padded dims' sizes, first to last."""
    return [shape[-1 - i] + padding[2 * i] + padding[2 * i + 1] for i in reversed(range(dims))]


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
    if kind == "reflection":
        _check_reflection_pads(self, padding, dims)
    if min(_output_shape(self.shape, padding, dims)) < 1:
        # Which empty or negative outputs CPU refuses, and in which words, changed in torch 2.14
        # (pad_shape_check, aten/src/ATen/native/Padding.h): the CPU answers for itself.
        check_on_cpu(getattr(aten, op).default, self, padding)
    if self.dtype in (torch.bool, torch.uint16, torch.uint32, torch.uint64):
        raise not_implemented_for(op, self.dtype)


def _check_reflection_pads(self, padding, dims):
    """A reflection cannot reach past the other edge: each pad must be smaller than its dim."""
    for i in range(dims):
        before, after, size = padding[2 * i], padding[2 * i + 1], self.shape[-1 - i]
        if before >= size or after >= size:
            raise RuntimeError(
                f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input dimension, "
                f"but got: padding ({before}, {after}) at dimension {self.dim() - 1 - i} of input "
                f"{list(self.shape)}"
            )


def _check_grad_output(kind, grad_output, self, padding, dims):
    """CPU's check of ``grad_output``'s padded dims, last first, each kernel wording it its own way."""
    name = "grad_output" if kind == "reflection" and dims != 2 else "gradOutput"
    comma = "" if (kind, dims) == ("replication", 1) else ","
    expected = _output_shape(self.shape, padding, dims)
    labels = ("depth", "height", "width")[-dims:]
    for label, want, got in reversed(list(zip(labels, expected, grad_output.shape[-dims:]))):
        if want != got:
            raise RuntimeError(f"{name} {label} unexpected. Expected: {want}{comma} Got: {got}")


def _kernels(kind, dims):
    """The kernels of ``{kind}_pad{dims}d`` and of its backward. (``torch.compile`` meets neither:
    PyTorch's core decompositions turn them into indexing.)"""
    op = f"{kind}_pad{dims}d"

    def pad_checks(self, padding):
        _check_input(op, kind, self, padding, dims)

    def pad_backward_checks(grad_output, self, padding):
        _check_grad_output(kind, grad_output, self, padding, dims)

    pad_checks.__name__ = pad_checks.__qualname__ = f"{op}_kernel"
    pad_backward_checks.__name__ = pad_backward_checks.__qualname__ = f"{op}_backward_kernel"
    forward = computed_by(_FORWARD[kind], name=op)(pad_checks)
    return forward, computed_by(_BACKWARD[kind], name=f"{op}_backward")(pad_backward_checks)


# Each op's overloads, written out: kind, dims, the forward and its out=, the backward and its out=.
_PADDING_OVERLOADS = (
    (
        "reflection",
        1,
        aten.reflection_pad1d.default,
        aten.reflection_pad1d.out,
        aten.reflection_pad1d_backward.default,
        aten.reflection_pad1d_backward.grad_input,
    ),
    (
        "reflection",
        2,
        aten.reflection_pad2d.default,
        aten.reflection_pad2d.out,
        aten.reflection_pad2d_backward.default,
        aten.reflection_pad2d_backward.grad_input,
    ),
    (
        "reflection",
        3,
        aten.reflection_pad3d.default,
        aten.reflection_pad3d.out,
        aten.reflection_pad3d_backward.default,
        aten.reflection_pad3d_backward.grad_input,
    ),
    (
        "replication",
        1,
        aten.replication_pad1d.default,
        aten.replication_pad1d.out,
        aten.replication_pad1d_backward.default,
        aten.replication_pad1d_backward.grad_input,
    ),
    (
        "replication",
        2,
        aten.replication_pad2d.default,
        aten.replication_pad2d.out,
        aten.replication_pad2d_backward.default,
        aten.replication_pad2d_backward.grad_input,
    ),
    (
        "replication",
        3,
        aten.replication_pad3d.default,
        aten.replication_pad3d.out,
        aten.replication_pad3d_backward.default,
        aten.replication_pad3d_backward.grad_input,
    ),
)
for _kind, _dims, _forward, _forward_out, _backward, _backward_out in _PADDING_OVERLOADS:
    _forward_kernel, _backward_kernel = _kernels(_kind, _dims)
    implements(_forward, out=_forward_out)(_forward_kernel)
    implements(_backward, out=_backward_out)(_backward_kernel)
