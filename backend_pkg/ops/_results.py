"""Writing results into existing tensors: in-place ops and ``out=`` arguments.

An npy kernel computes its result into fresh NumPy memory, then these
helpers store it under PyTorch's rules, with PyTorch's error messages.
"""

import warnings

import numpy as np
import torch

from ..dtypes import SCALAR_TYPE_NAMES, to_numpy_dtype
from ..tensor import DEVICE_NAME, unwrap, wrap


def as_result(array, dtype):
    """A new npy tensor of ``dtype`` holding ``array``, computed wider and rounded once here."""
    with np.errstate(over="ignore"):  # too large for ``dtype`` rounds to inf, silently as in PyTorch
        return wrap(np.asarray(array).astype(to_numpy_dtype(dtype), copy=False))


def _check_castable(op, result, target):
    if not torch.can_cast(result.dtype, target.dtype):
        raise RuntimeError(
            f"result type {SCALAR_TYPE_NAMES[result.dtype]} can't be cast to the desired output type "
            f"{SCALAR_TYPE_NAMES[target.dtype]}"
        )


def _check_writable_once(op, target):
    if any(step == 0 and length > 1 for step, length in zip(target.stride(), target.shape)):
        raise RuntimeError(
            f"{op}: unsupported operation: more than one element of the written-to tensor refers "
            "to a single memory location. Please clone() the tensor before performing the operation."
        )


def write_in_place(op, self, result):
    """Store ``result`` into ``self``, the tensor an in-place op modifies."""
    _check_castable(op, result, self)
    _check_writable_once(op, self)
    if result.shape != self.shape:
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    unwrap(self)[...] = unwrap(result)
    return self


def write_out(op, out, result):
    """Store ``result`` into an ``out=`` tensor, resizing it as PyTorch does."""
    if out.device.type != DEVICE_NAME:
        raise RuntimeError(
            f"{op}: Expected out tensor to have device {DEVICE_NAME}:0, but got {out.device} instead"
        )
    _check_castable(op, result, out)
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
    _check_writable_once(op, out)
    unwrap(out)[...] = unwrap(result)
    return out
