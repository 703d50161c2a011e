"""A PyTorch device backed by NumPy, registered entirely from Python.

``import backend_pkg`` makes the ``npy`` device::

    import torch
    import backend_pkg

    x = torch.ones(3).to("npy")
"""

from . import backend
from .dtypes import SUPPORTED_DTYPES
from .ops import registered_ops
from .tensor import DEVICE_NAME, NpyTensor, unwrap, wrap

backend.setup()

__all__ = ["DEVICE_NAME", "NpyTensor", "SUPPORTED_DTYPES", "registered_ops", "unwrap", "wrap"]
