"""Allocation: the kernels every other op relies on to make an npy tensor."""

import numpy as np
import torch

from ..device import set_device
from ..dtypes import to_numpy_dtype
from ..names import DEVICE_NAME
from ..tensor import rebind, storage_array, unwrap, wrap, wrap_new
from ._layout import allocate_strided, contiguous_strides, storage_extent, strides_for
from .arithmetic import check_convertible
from .indexing import fill_value
from .registry import aten, implements

# The devices a factory is asked for nearly always: the npy device, without an index or with its only one.
# Named by the key's own name, as this module may be imported before the backend is renamed; a device
# is its type and index, whatever the name (``torch.device("npy") == torch.device("privateuseone")``).
_THE_DEVICE = frozenset({torch.device("privateuseone"), torch.device("privateuseone", 0)})


def check_factory_options(op, layout, device, pin_memory):
    """PyTorch's checks of a factory's options; ``device`` is the ``torch.device`` (or None) that the
    dispatcher hands every kernel.

    The one device is recognised by a set lookup (a tenth of a µs): reading
    ``device.type`` costs 0.3, and building ``torch.device`` objects to check
    the index cost 3 of the 9 µs of ``torch.empty(..., device="npy")``.
    """
    if layout not in (None, torch.strided):
        raise RuntimeError(f"npy device: {op} supports only torch.strided layout, got {layout}")
    if pin_memory:
        raise RuntimeError(f"npy device: {op} cannot pin memory; npy memory is NumPy's")
    if device is None or device in _THE_DEVICE:
        return
    if device.type != DEVICE_NAME:
        raise RuntimeError(f"npy device: {op} was asked for a tensor on {device}")
    set_device(device.index)  # refuses it


_FAKE_MODE = torch._C._TorchDispatchModeKey.FAKE


def new_tensor(array):
    """:func:`wrap`, except while fake tensors trace: then a plain ``torch.Tensor`` object.

    ``torch.tensor(data, device="npy")`` run under ``FakeTensorMode`` (in a
    compiled function, or by Inductor building its pattern library for the
    device, ``_get_sfdp_patterns`` in torch/_inductor/fx_passes/fuse_attention.py)
    makes a real npy tensor, with these kernels, and hands it to the mode
    (``aten.lift_fresh``), which fakes a plain ``torch.Tensor`` but refuses
    every subclass (``_check_for_subclass_arg`` in torch/_subclasses/fake_tensor.py).
    The object's class is all that differs: its storage is npy memory either way.
    """
    return _outside_fake_mode(wrap(array))


def new_allocated_tensor(array):
    """:func:`new_tensor` for an array NumPy has just allocated (``np.empty``, ``np.zeros``), which
    :func:`~backend_pkg.tensor.wrap_new` wraps without ``wrap``'s checks of its layout."""
    return _outside_fake_mode(wrap_new(array))


def _outside_fake_mode(tensor):
    if torch._C._get_dispatch_mode(_FAKE_MODE) is not None:
        tensor.__class__ = torch.Tensor
    return tensor


@implements(aten.empty_strided.default)
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    check_factory_options("empty_strided", layout, device, pin_memory)
    return _new_strided_tensor(size, stride, dtype)


@implements(aten.empty.memory_format)
def empty(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    check_factory_options("empty", layout, device, pin_memory)
    if memory_format in (None, torch.contiguous_format, torch.preserve_format):
        return new_allocated_tensor(np.empty(tuple(size), to_numpy_dtype(dtype)))
    return _new_strided_tensor(size, strides_for(size, memory_format), dtype)


def _new_strided_tensor(size, stride, dtype):
    array = allocate_strided(size, stride, dtype)
    # Mostly a new C-ordered array (a contiguous layout with elements), which needs none of wrap's checks;
    # otherwise a strided view of new memory.
    return new_allocated_tensor(array) if array.base is None else new_tensor(array)


@implements(aten._efficientzerotensor.default)
def efficient_zero_tensor(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    """The zeros autograd makes for a gradient it knows is zero (``sgn`` of a real tensor).

    PyTorch's CPU kernel returns a ZeroTensor, a tensor without memory that
    ops see as zeros (``_efficientzerotensor`` in
    aten/src/ATen/native/TensorFactories.cpp builds it with a C++ allocator
    and dispatch key set), which the CPU fallback cannot hand over as NumPy
    memory. npy returns real zeros: the same values, without the shortcut.
    """
    check_factory_options("_efficientzerotensor", layout, device, pin_memory)
    return new_allocated_tensor(np.zeros(tuple(size), to_numpy_dtype(dtype)))


@implements(aten.fill_.Scalar)
def fill_(self, value):
    if not isinstance(value, bool):
        check_convertible(value, self.dtype)
    unwrap(self)[...] = fill_value("fill_", value, self.dtype)
    return self


@implements(aten.zero_.default)
def zero_(self):
    """``fill_(self, 0)``, without its checks of the value: zero is every dtype's, and ``ndarray.fill``
    writes it in a third of the instructions of ``fill_``'s checks and item assignment."""
    unwrap(self).fill(0)
    return self


@implements(aten.resize_.default)
def resize_(self, size, *, memory_format=None):
    """Change ``self``'s shape in place, growing its memory (contents kept) if needed."""
    stride = strides_for(size, memory_format or torch.contiguous_format)
    storage = storage_array(self)
    offset = self.storage_offset()
    needed = offset + storage_extent(size, stride)
    if needed > storage.size:
        grown = np.empty(needed, dtype=storage.dtype)
        grown[: storage.size] = storage
        storage = grown
    rebind(
        self,
        np.lib.stride_tricks.as_strided(
            storage[offset:],
            shape=tuple(size),
            strides=tuple(step * storage.itemsize for step in stride),
            writeable=True,
        ),
    )
    return self


@implements(aten.record_stream.default)
def record_stream(self, stream):
    """Nothing to record: CUDA's caching allocator must not reuse ``self``'s memory before
    ``stream``'s queued work ends, but npy work has ended when its kernel returns, and the
    memory goes back to NumPy only when the last tensor using it goes.

    Without this kernel the op reaches the CPU fallback, where it has no kernel: CUDA data
    prefetchers call it on every batch."""


# The memory formats that give a contiguous tensor's "like" the tensor's own strides.
_KEEPS_CONTIGUOUS = (None, torch.preserve_format, torch.contiguous_format)


@implements(aten.ones_like.default)
def ones_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    # The dispatcher passes pin_memory=False where the caller gave none.
    defaults = (dtype, layout, device) == (None,) * 3 and not pin_memory and memory_format in _KEEPS_CONTIGUOUS
    if defaults and self.stride() == contiguous_strides(self.shape):
        # backward()'s seed (torch.autograd's _make_grads asks for preserve_format): the same
        # tensor as below, without a second trip through the dispatcher. (np.ones is Python
        # code around the same two calls, and costs as much as they do.)
        ones = np.empty(tuple(self.shape), to_numpy_dtype(self.dtype))
        ones.fill(1)
        return new_allocated_tensor(ones)
    out = torch.empty_like(
        self,
        dtype=dtype,
        layout=layout,
        device=device,
        pin_memory=pin_memory,
        memory_format=memory_format or torch.preserve_format,
    )
    if out.device.type == DEVICE_NAME:
        unwrap(out)[...] = 1
        return out
    return out.fill_(1)
