"""Turning PrivateUse1 into the npy device, once per process.

Three steps, each safe to repeat: :func:`register_device` makes ``npy`` a
device PyTorch knows, :func:`install_kernels` registers the npy kernels for
it, and :func:`backend_pkg.distributed.register` its collectives backend.
``import backend_pkg`` runs all three, unless the environment variable
``BACKEND_PKG_NO_SETUP=1`` asks it not to (for experiments that take the
registration apart, as the tutorial does). Each step goes through a
registration function of PyTorch's; the package replaces none of PyTorch's
objects.
``torch.compile`` needs nothing more (:mod:`backend_pkg.compiler.tracing`
says what its tracing asks of the device).
"""

import atexit

import torch
from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

from . import autocast, device, distributed, fallback, ops, parameters, pinned, serialization
from .names import DEVICE_NAME
from .runtime import NpyDeviceGuard, NpyHooks, settle_autograd_thread, untraced

# Kernels stay registered while these Library objects live.
_library = None
_fallback_library = None


def _claimed_by():
    """Which backend, if any, this process has already named PrivateUse1 after."""
    name = torch._C._get_privateuse1_backend_name()
    return None if name == "privateuseone" else name


def register_device():
    """Make ``npy`` a device; does nothing if this process already did.

    ``_setup_privateuseone_for_python_backend`` renames PrivateUse1, generates
    the ``Tensor.npy()``/``is_npy`` methods, registers :mod:`backend_pkg.device`
    as ``torch.npy``, then the hooks and the device guard.
    """
    owner = _claimed_by()
    if owner == DEVICE_NAME and getattr(torch, DEVICE_NAME, None) is device:
        return
    if owner not in (None, DEVICE_NAME) or hasattr(torch, DEVICE_NAME):
        raise RuntimeError(
            f"npy device: PrivateUse1 is already the {owner!r} backend in this process; "
            "a process has one PrivateUse1 backend"
        )
    _setup_privateuseone_for_python_backend(
        DEVICE_NAME, backend_module=device, hook=NpyHooks(), device_guard=NpyDeviceGuard()
    )
    atexit.register(settle_autograd_thread)
    serialization.register()


def install_kernels():
    """Register every npy kernel, the CPU fallback for every other op, pinned memory, the
    parameter moves of ``Module.to`` and autocast; does nothing if they are."""
    global _library, _fallback_library
    if _library is None:
        _library = torch.library.Library("aten", "IMPL")
        ops.install(_library)
        pinned.install(_library)
        parameters.install(_library)
        _fallback_library = torch.library.Library("_", "IMPL")
        _fallback_library.fallback(untraced(fallback.run_on_cpu), "PrivateUse1")
        autocast.install(_library, _fallback_library)


def setup():
    register_device()
    install_kernels()
    distributed.register()
