"""Turning PrivateUse1 into the npy device, once per process."""

import torch
from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

from . import device, ops
from .runtime import NpyDeviceGuard, NpyHooks
from .tensor import DEVICE_NAME

# Kernels stay registered only while their Library object lives.
_library = None


def _claimed_by():
    """Which backend, if any, this process has already named PrivateUse1 after."""
    name = torch._C._get_privateuse1_backend_name()
    return None if name == "privateuseone" else name


def setup():
    """Make ``npy`` a working device; later calls in the same process do nothing.

    ``_setup_privateuseone_for_python_backend`` renames PrivateUse1, generates
    the ``Tensor.npy()``/``is_npy`` methods, registers :mod:`backend_pkg.device`
    as ``torch.npy``, then the hooks and the device guard; after it the npy
    kernels are registered for the PrivateUse1 dispatch key.
    """
    global _library
    owner = _claimed_by()
    if owner == DEVICE_NAME and hasattr(torch, DEVICE_NAME):
        return
    if owner is not None:
        raise RuntimeError(
            f"npy device: PrivateUse1 is already the {owner!r} backend in this process; "
            "a process has one PrivateUse1 backend"
        )
    _setup_privateuseone_for_python_backend(
        DEVICE_NAME, backend_module=device, hook=NpyHooks(), device_guard=NpyDeviceGuard()
    )
    _library = torch.library.Library("aten", "IMPL")
    ops.install(_library)
