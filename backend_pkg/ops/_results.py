"""Writing results into existing tensors: in-place ops and ``out=`` arguments.

An npy kernel computes its result into fresh NumPy memory, then these
helpers store it under PyTorch's rules, with PyTorch's error messages.
"""

import warnings

import numpy as np
import torch

from ..dtypes import SCALAR_TYPE_NAMES, to_numpy_dtype
from ..names import DEVICE_NAME
from ..tensor import unwrap, wrap
from ._dtype_errors import scalar_type_name


def as_result(array, dtype):
    """A new npy tensor of ``dtype`` holding ``array``, computed wider and rounded once here."""
    array, np_dtype = np.asarray(array), to_numpy_dtype(dtype)
    if array.dtype == np_dtype:
        return wrap(array)  # nothing to round: no need for errstate's microsecond
    with np.errstate(over="ignore"):  # too large for ``dtype`` rounds to inf, silently as in PyTorch
        return wrap(array.astype(np_dtype, copy=False))


def check_castable(op, result, target):
    if not torch.can_cast(result.dtype, target.dtype):
        raise RuntimeError(
            f"result type {SCALAR_TYPE_NAMES[result.dtype]} can't be cast to the desired output type "
            f"{SCALAR_TYPE_NAMES[target.dtype]}"
        )


def _check_writable_once(target):
    """PyTorch's ``assert_no_internal_overlap``: an empty tensor has no elements to share."""
    array = getattr(target, "_npy_array", None)
    if array is not None and 0 not in array.strides:  # the kept view answers in a tenth of the time
        return
    if target.numel() and any(step == 0 and length > 1 for step, length in zip(target.stride(), target.shape)):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers "
            "to a single memory location. Please clone() the tensor before performing the operation."
        )


def _is_dense(tensor):
    """Whether ``tensor``'s elements fill a block of memory, each once, in some dim order."""
    expected = 1
    for length, step in sorted(
        (pair for pair in zip(tensor.shape, tensor.stride()) if pair[0] != 1), key=lambda pair: pair[1]
    ):
        if step != expected:
            return False
        expected *= length
    return True


def _byte_range(tensor):
    """The bytes ``tensor`` covers, if its elements are packed without gaps or repeats, else None."""
    if not _is_dense(tensor):
        return None  # PyTorch's "too hard" case: it does not refuse what it cannot tell
    start = unwrap(tensor).ctypes.data
    return start, start + tensor.numel() * tensor.element_size()


def _extents_meet(written, read):
    """Whether two tensors' memory extents meet: NumPy's bounds check, well under a microsecond. Tensors
    that keep their NumPy views (the common case) answer without reading a device or a size."""
    arrays = [getattr(tensor, "_npy_array", None) for tensor in (written, read)]
    if arrays[0] is None or arrays[1] is None:
        if written.numel() == 0 or read.numel() == 0 or read.device != written.device:
            return False
        arrays = [unwrap(written), unwrap(read)]
    return np.may_share_memory(*arrays, max_work=0)


def _overlap(written, read):
    """PyTorch's ``get_overlap_status``: "full", "partial" or None."""
    if written is read:
        return "full"
    if not _extents_meet(written, read):
        return None  # apart: the common case
    a, b = _byte_range(written), _byte_range(read)
    if a is None or b is None:
        return None
    if a == b:
        return "full" if written.stride() == read.stride() else "partial"
    return "partial" if a[0] < b[1] and b[0] < a[1] else None


def check_apart(out, *inputs, partial=()):
    """PyTorch's checks before an op writes ``out`` while reading ``inputs``: ``out`` holds no
    element twice (``assert_no_internal_overlap``), shares no memory with an input
    (``assert_no_overlap``), and shares with one of ``partial`` all of it or none
    (``assert_no_partial_overlap``)."""
    _check_writable_once(out)
    check_no_overlap(out, *inputs, partial=partial)


def check_no_overlap(out, *inputs, partial=()):
    """:func:`check_apart` without its first check, for the ops that write an expanded ``out``
    (see :func:`warn_if_expanded`)."""
    refusals = [(value, ("full", "partial")) for value in inputs] + [(value, ("partial",)) for value in partial]
    for value, refused in refusals:
        if isinstance(value, torch.Tensor) and _overlap(out, value) in refused:
            raise RuntimeError(
                "unsupported operation: some elements of the input tensor and the written-to "
                "tensor refer to a single memory location. Please clone() the tensor before "
                "performing the operation."
            )


def check_out_dtype(out, self):
    """The reductions whose ``out=`` must have the input's dtype, amax and amin, check it first."""
    if out.dtype != self.dtype:
        raise RuntimeError(
            "Expected the dtype for input and out to match, but got "
            f"{SCALAR_TYPE_NAMES[self.dtype]} for input's dtype and {SCALAR_TYPE_NAMES[out.dtype]} "
            "for out's dtype."
        )


def warn_if_expanded(op, self, example):
    """The deprecation warning CPU's masked_fill_ and index_put_ give for an expanded ``self``,
    which they still write, element by element: those kernels write only the elements they
    select, straight into ``self``. ``example`` is the indexing that reaches the op, as the
    warning words it."""
    if self.numel() and any(step == 0 and length > 1 for step, length in zip(self.stride(), self.shape)):
        warnings.warn(
            f"Use of {op} on expanded tensors is deprecated. Please clone() the tensor before "
            f"performing this operation. This also applies to advanced indexing e.g. {example}",
            UserWarning,
            stacklevel=3,
        )


def write_in_place(op, self, result):
    """Store ``result`` into ``self``, the tensor an in-place op modifies."""
    check_castable(op, result, self)
    _check_writable_once(self)
    if result.shape != self.shape:
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(result.shape)}"
        )
    unwrap(self)[...] = unwrap(result)
    return self


def write_out(op, out, result, *, reads=(), partial=()):
    """Store ``result`` into an ``out=`` tensor, resizing it as PyTorch does.

    ``reads`` and ``partial`` are the inputs an op checks ``out`` against once
    resized (see :func:`check_apart`); an op without such checks names none.
    """
    if out.device.type != DEVICE_NAME:
        raise RuntimeError(f"{op}: Expected out tensor to have device {DEVICE_NAME}:0, but got {out.device} instead")
    check_castable(op, result, out)
    if out.shape != result.shape:
        if out.numel() != 0:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).",
                UserWarning,
                stacklevel=2,
            )
        out.resize_(result.shape)
    check_apart(out, *reads, partial=partial)
    unwrap(out)[...] = unwrap(result)
    return out


def write_pair(op, outs, results):
    """Store the results of an op of several results into its ``out=`` tensors; an ``out``
    whose result the op did not compute (None, as attention weights not asked for) is left as it is."""
    return tuple(out if result is None else write_out(op, out, result) for out, result in zip(outs, results))


def check_dtype_of_out(out, expected):
    """PyTorch's refusal of an ``out=`` whose dtype is not ``expected``.

    PyTorch's ops that do not promote (``neg``, ``floor``, ``hardtanh``...)
    refuse any other ``out`` dtype, even one the result casts to.
    """
    if out.dtype != expected:
        raise RuntimeError(f"Found dtype {scalar_type_name(out.dtype)} but expected {scalar_type_name(expected)}")


def out_of_self_dtype(out, self, *args, **kwargs):
    """A ``check_out`` refusing an ``out`` whose dtype is not ``self``'s."""
    check_dtype_of_out(out, self.dtype)
