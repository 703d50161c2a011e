"""Nested tensors over npy memory, made and read by PyTorch's own metadata-only kernels.

A nested tensor (C++ ``NestedTensorImpl``) is one flat buffer and, kept in
CPU tensors, each component's sizes, strides and offset into it. Its
dispatch key is its buffer's backend under ``NestedTensor``:
``NestedTensorPrivateUse1`` for an npy buffer. Python cannot build one
directly, but the CPU kernels that only assemble or read that metadata
(``_nested_view_from_buffer``; ``_nested_tensor_size``, ``values``) never
touch the buffer's memory, so they serve npy buffers as they are, as
:mod:`backend_pkg.tensor` runs ``set_``'s CPU kernel.

Only what the Transformer's nested path needs is here: nested tensors of
2-D components that share their last size (sequences of tokens), laid out
one after another.
"""

import numpy as np
import torch

from ..tensor import materialized_storage, unwrap, wrap

_VIEW_FROM_BUFFER = torch.ops.aten._nested_view_from_buffer.default._handle
_SIZES = torch.ops.aten._nested_tensor_size.default._handle
_VALUES = torch.ops.aten.values.default._handle
_CPU = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
_NESTED_CPU = torch._C.DispatchKeySet(torch._C.DispatchKey.NestedTensorCPU)


def nested_from_rows(rows, lengths):
    """A nested tensor over a new npy buffer holding ``rows`` (N, D): component ``i`` is
    the next ``lengths[i]`` rows."""
    lengths = np.asarray(lengths, dtype=np.int64)
    width = rows.shape[1]
    buffer = wrap(np.ascontiguousarray(rows).reshape(-1))
    materialized_storage(buffer)  # the C++ constructor checks the buffer's storage size
    sizes = np.stack([lengths, np.full_like(lengths, width)], axis=1)
    strides = np.stack([np.full_like(lengths, width), np.ones_like(lengths)], axis=1)
    offsets = np.concatenate([[0], np.cumsum(lengths * width)[:-1]]).astype(np.int64)
    return _VIEW_FROM_BUFFER.redispatch_boxed(
        _CPU, buffer, torch.from_numpy(sizes), torch.from_numpy(strides), torch.from_numpy(offsets)
    )


def rows_of(nested):
    """The components of a nested tensor made by :func:`nested_from_rows`: all their rows
    (N, D) in order, and each component's length."""
    sizes = _SIZES.redispatch_boxed(_NESTED_CPU, nested).numpy()
    values = unwrap(_VALUES.redispatch_boxed(_NESTED_CPU, nested))
    return values.reshape(-1, sizes[0, 1] if len(sizes) else 0), sizes[:, 0]


def padded(rows, lengths, length, fill):
    """``rows`` regrouped by ``lengths`` as a (B, ``length``, D) array, ``fill`` after each sequence."""
    positions = np.arange(length)
    present = positions < np.asarray(lengths)[:, None]
    result = np.full((len(lengths), length, rows.shape[1]), fill, dtype=rows.dtype)
    result[present] = rows
    return result, present
