"""The npy tensor: a PyTorch tensor whose device memory is a NumPy array.

``torch._C._acc.create_empty_tensor`` makes a tensor on the PrivateUse1
device with no memory behind it. The backend swaps its ``__class__`` to
:class:`NpyTensor` and hangs the NumPy array on it; kernels registered with
``torch.library`` read the array (:func:`unwrap`) and wrap their results
(:func:`wrap`).

PyTorch must see the layout the array really has: views, ``stride()``,
``storage_offset()`` and ``data_ptr()`` all come from the tensor's own
metadata, which ``create_empty_tensor`` always makes contiguous. :func:`wrap`
therefore points the tensor at a storage descriptor for the array's memory
(no bytes are copied or owned by it) and copies the array's strides and
offset into the tensor.
"""

import numpy as np
import torch

from .dtypes import to_torch_dtype

DEVICE_NAME = "npy"

# set_ has no PrivateUse1 kernel of its own; its CPU kernel only rewrites the
# tensor's metadata, which is exactly what a descriptor-only storage needs.
_SET_STORAGE = torch.ops.aten.set_.source_Storage_storage_offset
_METADATA_ONLY_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
# The PrivateUse1 device keeps this identity through the rename to "npy".
_DEVICE = torch.device("privateuseone", 0)


class NpyTensor(torch.Tensor):
    """A tensor on the ``npy`` device, backed by a NumPy array.

    Instances are only made by :func:`wrap`; kernels reach the array through
    :func:`unwrap`.
    """

    # Results of torch functions keep the class the kernel gave them: npy
    # results are NpyTensors, ``.cpu()`` results are plain CPU tensors.
    __torch_function__ = torch._C._disabled_torch_function_impl

    def __repr__(self, *, tensor_contents=None):
        """Print as a CPU tensor prints, plus ``device='npy:0'``.

        The digits are formatted from a CPU copy, as PyTorch itself does for
        XLA and lazy tensors. PyTorch's printer names any class other than
        ``torch.Tensor`` in its output (``NpyTensor([...])``), so the tensor
        is shown to it as a plain tensor; the printer runs no kernels on it.
        """
        if tensor_contents is None:
            host = self.detach().cpu()
            tensor_contents = torch._tensor_str._tensor_str(host, indent=len("tensor("))
        self.__class__ = torch.Tensor
        try:
            return torch._tensor_str._str(self, tensor_contents=tensor_contents)
        finally:
            self.__class__ = NpyTensor


def _storage_root(array):
    """The array that owns the memory ``array`` looks into."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _has_tensor_layout(array):
    """Whether a tensor can describe ``array``: non-negative strides, in whole elements."""
    itemsize = array.itemsize
    return all(stride >= 0 and stride % itemsize == 0 for stride in array.strides)


def wrap(array):
    """Make an npy tensor that aliases ``array`` (a NumPy array or scalar).

    An array whose layout a tensor cannot describe (negative strides, as from
    ``np.flip``) is copied first.
    """
    array = np.asarray(array)
    if not _has_tensor_layout(array):
        array = np.ascontiguousarray(array)
    root = _storage_root(array)
    if not _has_tensor_layout(root):
        array = root = array.copy()
    itemsize = array.itemsize
    storage = torch._C._construct_storage_from_data_pointer(
        root.ctypes.data, _DEVICE, root.nbytes
    )
    tensor = torch._C._acc.create_empty_tensor(array.shape, to_torch_dtype(array.dtype))
    _SET_STORAGE._handle.redispatch_boxed(
        _METADATA_ONLY_KEYS,
        tensor,
        storage,
        (array.ctypes.data - root.ctypes.data) // itemsize,
        array.shape,
        [stride // itemsize for stride in array.strides],
    )
    tensor.__class__ = NpyTensor
    tensor._array = array
    return tensor


def unwrap(tensor):
    """The NumPy array behind an npy tensor (an alias, not a copy)."""
    try:
        return tensor._array
    except AttributeError:
        raise TypeError(
            f"npy device: expected an npy tensor, got a tensor on {tensor.device}"
        ) from None


def storage_array(tensor):
    """All of an npy tensor's storage, as a flat array of its dtype.

    This is what ``storage_offset`` and strides count from, so ``as_strided``
    resolves against it.
    """
    root = _storage_root(unwrap(tensor))
    return np.lib.stride_tricks.as_strided(
        root, shape=(root.size,), strides=(root.itemsize,), writeable=True
    )

