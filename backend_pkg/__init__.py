"""A PyTorch device backed by NumPy, registered entirely from Python.

``import backend_pkg`` makes the ``npy`` device (set ``BACKEND_PKG_NO_SETUP=1``
to import without registering anything, then call ``backend_pkg.setup()``)::

    import torch
    import backend_pkg

    x = torch.ones(3).to("npy")
"""

import os

from .backend import setup
from .dtypes import SUPPORTED_DTYPES
from .names import DEVICE_NAME
from .ops import registered_ops
from .tensor import NpyTensor, unwrap, wrap

if os.environ.get("BACKEND_PKG_NO_SETUP") != "1":
    setup()

__all__ = ["DEVICE_NAME", "NpyTensor", "SUPPORTED_DTYPES", "registered_ops", "setup", "unwrap", "wrap"]
