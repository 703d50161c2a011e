"""``torch.save`` and ``torch.load`` for npy tensors.

Saving reads each npy storage's bytes (through the ``set_`` and ``copy_``
kernels) and tags it ``"npy:0"``. Loading needs a way to make an npy
storage from those bytes: PyTorch's default for PrivateUse1 calls a
generated ``UntypedStorage.npy()`` method that allocates through a C++
allocator, which a Python backend does not have. :func:`restore` builds the
storage from a NumPy copy instead, so ``torch.load`` works with no
``map_location``, with ``map_location="npy"``, and with
``map_location="cpu"`` (which needs nothing from this module).

The pickle itself holds only PyTorch's classes and rebuild functions
(:meth:`backend_pkg.tensor.NpyTensor.__reduce_ex__`), so the default
``torch.load(weights_only=True)`` accepts it. A process that has not
imported backend_pkg loads an npy file with ``map_location="cpu"``; without
it, PyTorch does not know the ``npy:0`` location tag.
"""

import numpy as np
import torch

from .names import DEVICE_NAME
from .tensor import wrap

# Before PyTorch's own PrivateUse1 entry (priority 20), after CPU (10).
PRIORITY = 15


def tag(storage):
    return None


def restore(storage, location):
    """An npy copy of a loaded CPU ``storage`` when ``location`` names the npy device."""
    if not location.startswith(DEVICE_NAME):
        return None
    torch.device(location)  # refuses a malformed location by name
    data = np.frombuffer(bytes(storage), dtype=np.uint8).copy()
    return wrap(data).untyped_storage()


def register():
    torch.serialization.register_package(PRIORITY, tag, restore)
