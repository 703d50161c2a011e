"""npy storages: :class:`NpyStorage`, the Python class of every storage npy makes.

An npy storage is a ``torch.UntypedStorage`` over the memory of a NumPy
array, its *root*, which it keeps on its Python object (``_npy_root``, see
:mod:`backend_pkg.tensor`).

PyTorch makes a new storage on a device with ``type(storage)(nbytes,
device=...)``, which allocates through the device's C++ allocator
(``c10::GetAllocator``). A Python backend has none (``torch._C._acc``
registers hooks and a device guard, no allocator), and in a release build
``GetAllocator`` returns a null pointer that ``c10::make_storage_impl``
dereferences: the process dies with a segfault. ``_StorageBase.clone()``
makes its copy that way, and through it ``copy.copy`` and ``copy.deepcopy``
of a storage, ``TypedStorage.clone()``, and ``Tensor.__deepcopy__`` of an
npy tensor whose class is plain ``torch.Tensor``. :class:`NpyStorage` makes
those copies from the root instead. A storage PyTorch makes before any npy
code runs (``torch.UntypedStorage(n, device="npy")``) cannot be helped here.

PyTorch recognizes a storage by its exact class in places
(``torch.is_storage``): ``torch.save`` of an npy storage on its own, rather
than of a tensor over it, goes through :meth:`NpyStorage.__reduce__`, which
``torch.load`` reads only with ``weights_only=False``.
"""

import functools
import io

import numpy as np
import torch

from . import device as device_module
from . import memory

# The PrivateUse1 device keeps this identity through the rename to "npy".
_DEVICE = torch.device("privateuseone", 0)


class NpyStorage(torch.UntypedStorage):
    """A storage on the ``npy`` device: its copies are made in NumPy memory."""

    def clone(self):
        """A copy in new npy memory, whether or not this storage has its data pointer yet
        (see :func:`copy_of`)."""
        return copy_of(self._npy_root)

    def to(self, *, device, non_blocking=False):
        """As ``torch._utils._to``: this storage if ``device`` is its device, else a copy there."""
        device = torch.device(device)
        if device.type != self.device.type:
            return super().to(device=device, non_blocking=non_blocking)
        with device_module.device(device):  # refuses an index npy does not have
            return self if device == self.device else self.clone()

    @classmethod
    def _new_shared(cls, size, *, device="cpu"):
        """A new storage of ``size`` bytes for another process to share (``DataLoader`` workers).

        On a device other than the CPU that is a new storage on it, as for
        CUDA; on the CPU it is PyTorch's, of PyTorch's class.
        """
        device = torch.device(device)
        if device.type != _DEVICE.type:
            return torch.UntypedStorage._new_shared(size, device=device)
        with device_module.device(device):
            return new_storage(np.empty(size, np.uint8))

    def nbytes(self):
        """Its size in bytes, once it has its data pointer (see :func:`materialized`).

        ``torch.save`` reads the size and the pointer from the storage, then
        the bytes in C++: a tensor whose Python object is plain (a gradient
        ``AccumulateGrad`` stored, see :func:`backend_pkg.tensor.detached`)
        reaches it without a kernel of npy's having asked for the pointer.
        """
        return super(NpyStorage, materialized(self)).nbytes()

    def data_ptr(self):
        """The address of its memory, once it has one (see :meth:`nbytes`)."""
        return super(NpyStorage, materialized(self)).data_ptr()

    def __getitem__(self, index):
        """A byte, or for a slice a storage over those bytes of this one's memory.

        PyTorch makes the slice's storage (of this class) from the data
        pointer; its root is the same bytes of this storage's root.
        """
        materialized(self)
        item = super().__getitem__(index)
        if isinstance(index, slice):
            item._npy_root = bytes_of(self._npy_root)[index]
        return item

    def __reduce__(self):
        """Pickle as a CUDA storage pickles: the bytes ``torch.save`` writes for it.

        ``_StorageBase.__reduce__`` saves in the legacy format, whose writer
        (``_write_file``) reads the bytes through a tensor it makes from the
        data pointer, which has no root. The zipfile format reads them
        through the storage itself. ``torch.save`` takes a storage as one
        only if its class is exactly PyTorch's (``torch.is_storage``), so it
        is shown this one as such.
        """
        buffer = io.BytesIO()
        materialized(self)
        self.__class__ = torch.UntypedStorage
        try:
            torch.save(self, buffer)
        finally:
            self.__class__ = NpyStorage
        return torch.storage._load_from_bytes, (buffer.getvalue(),)


def descriptor(root):
    """A storage whose data pointer is ``root``'s memory."""
    return torch._C._construct_storage_from_data_pointer(root.ctypes.data, _DEVICE, root.nbytes)


def new_storage(root):
    """A new npy storage over ``root``, an array that owns its memory."""
    storage = descriptor(root)
    storage.__class__ = NpyStorage
    storage._npy_root = root
    if memory.counting:
        memory.count(root)
    return storage


def copy_of(root):
    """A new npy storage holding a copy of ``root``'s bytes, of PyTorch's own class.

    ``TypedStorage`` wraps the copy it asks for (``clone``, ``copy.copy``,
    ``copy.deepcopy``, and so ``Tensor.__deepcopy__``) only if its class is
    exactly ``torch.UntypedStorage`` (``_new_wrapped_storage``), so the copy
    cannot be an :class:`NpyStorage`; it gets its ``clone`` on the object
    instead, so that a copy of the copy is made here too. The method holds
    the root, not the storage, which would then keep itself alive.
    """
    copied = bytes_of(root).copy()
    storage = descriptor(copied)
    storage._npy_root = copied
    storage.clone = functools.partial(copy_of, copied)
    if memory.counting:
        memory.count(copied)
    return storage


def materialized(storage):
    """``storage``, given its data pointer if it is an npy storage that has none yet.

    The storage object stays the same, so every tensor sharing it sees the
    pointer. PyTorch's C++ code must never meet a storage without one: to
    its ``set_`` an empty storage is one to grow, with an allocator npy lacks.
    """
    root = getattr(storage, "_npy_root", None)
    if root is not None and root.nbytes and torch.UntypedStorage.nbytes(storage) == 0:
        storage._swap_data_ptr_(descriptor(root))
    return storage


def bytes_of(root):
    """``root``'s memory as flat bytes, in memory order, never a copy.

    A root is dense, but not always in C or Fortran order: NumPy lays out a
    ufunc's result as its inputs are laid out, so ``transposed * 2`` owns a
    block ordered like the transposed input. Its axes sorted by stride give
    that block in C order.
    """
    if not root.flags.c_contiguous:
        root = root.transpose(np.argsort(root.strides, kind="stable")[::-1])
    return np.reshape(root, -1, copy=False).view(np.uint8)
