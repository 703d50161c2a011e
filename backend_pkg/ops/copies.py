"""Moving data: between npy tensors, and across the npy/CPU boundary.

npy memory is host memory, so both directions reduce to one host-to-host
copy. Each side is seen as a CPU tensor over its own memory (for npy,
``torch.from_numpy`` of the array: no bytes move) and PyTorch's CPU
``copy_`` does the work. That kernel already implements every rule a copy
must follow (broadcasting the source, dtype conversion, strided and
overlapping destinations, conjugate and negative views), so npy copies
convert exactly as CPU copies do, and always write into fresh memory:
a copy never aliases its source.
"""

import torch

from ..tensor import DEVICE_NAME, unwrap
from .registry import aten, implements


def host_view(tensor):
    """A CPU tensor over ``tensor``'s memory: itself for CPU, its array for npy."""
    if tensor.device.type == DEVICE_NAME:
        return torch.from_numpy(unwrap(tensor))
    if tensor.device.type == "cpu":
        return tensor
    raise RuntimeError(f"npy device: cannot copy between npy and {tensor.device}")


@implements(aten._copy_from.default)
def copy_from(self, dst, non_blocking=False):
    host_view(dst).copy_(host_view(self))
    return dst


@implements(aten._to_copy.default)
def to_copy(
    self,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=None,
    non_blocking=False,
    memory_format=None,
):
    source = host_view(self)
    if device is not None and torch.device(device).type == "cpu":
        return torch.ops.aten._to_copy(
            source,
            dtype=dtype,
            layout=layout,
            device=device,
            pin_memory=pin_memory,
            memory_format=memory_format,
        )
    out = torch.empty_like(
        self,
        dtype=dtype,
        layout=layout,
        device=device,
        pin_memory=pin_memory,
        memory_format=memory_format or torch.preserve_format,
    )
    host_view(out).copy_(source)
    return out


@implements(aten._local_scalar_dense.default)
def local_scalar_dense(self):
    """The value of a one-element tensor as a Python number (``item()``, ``float(t)``)."""
    return unwrap(self).item()
