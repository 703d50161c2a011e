"""What ``torch.compile``'s tracing needs from the npy device, installed once per process.

Dynamo, AOTAutograd and Inductor trace with *fake* tensors: tensors with a
device and metadata but no memory, whose ops run PyTorch's meta kernels. A
Python backend whose tensors are a subclass (:class:`~backend_pkg.NpyTensor`)
and whose kernels are Python meets assumptions PyTorch makes of C++
backends; three are answered here:

1. ``FakeTensor.__new__`` calls ``Tensor._make_subclass``, which detaches
   the meta tensor it wraps. A meta tensor made by a view of an npy fake
   tensor carries the npy dispatch keys, so that ``detach`` reaches npy's
   Python ``detach`` kernel; and no Python kernel can serve it, because
   ``_make_subclass`` refuses a tensor that already has a Python object
   ("Creating a new Tensor subclass FakeTensor but the raw Tensor object is
   already associated to a python object", ``THPVariable_NewWithVar`` in
   ``torch/csrc/autograd/python_variable.cpp``), and every tensor a Python
   kernel returns has one. For C++ backends ``detach`` is the composite C++
   kernel, which only copies metadata. :func:`_construct_fakes_on_meta` runs
   the construction of npy fake tensors with the Meta key in front, as
   FakeTensor runs every other op on its meta tensors
   (``in_kernel_invocation_manager`` in ``torch/_subclasses/fake_tensor.py``).
2. At its first call, an AOTAutograd-compiled function checks custom ops
   for aliasing under a dispatch mode that gives up on every tensor
   subclass it does not know (``_AnalyzeCustomOpInputOutputMode`` in
   ``torch/_functorch/_aot_autograd/runtime_wrappers.py``), so each call
   of an op on an NpyTensor fails there. npy defines no custom ops; the
   check (``torch._functorch.config.check_custom_op_aliasing``) is turned off.
3. The compiled backward accepts a tangent whose class differs from the
   traced one only through its ``__coerce_same_metadata_as_tangent__``
   (``process_runtime_tangent`` in the same file), which
   :class:`~backend_pkg.NpyTensor` defines.

The others are answered where they arise: Dynamo must not compile the
Python functions C++ calls (:func:`backend_pkg.runtime.untraced`); a real
npy tensor made *during* tracing (``torch.tensor(data, device="npy")`` in a
compiled function) is a plain ``torch.Tensor`` object, which fake tensors
accept (:func:`backend_pkg.ops.factories.new_tensor`); Inductor's code
generation for npy is registered through the device module
(:mod:`backend_pkg.compiler.inductor`).

1 and 2 still change PyTorch for the whole process at ``import backend_pkg``.
The upstream changes that would remove them: ``FakeTensor.__new__`` building
its tensor with the Meta key in front, as it runs every op on its meta
tensors (then a Python backend's ``detach`` is never asked to detach a meta
tensor); and ``_AnalyzeCustomOpInputOutputMode`` skipping the check for a
graph without custom ops.
"""

import functools

import torch
from torch._subclasses.fake_tensor import FakeTensor

_NPY_KEY = torch._C.DispatchKey.PrivateUse1
_installed = False


def install():
    """Make npy tensors traceable by ``torch.compile``; does nothing the second time."""
    global _installed
    if _installed:
        return
    FakeTensor.__new__ = staticmethod(_construct_fakes_on_meta(FakeTensor.__new__))
    # Imported here: torch._functorch.config is not loaded by ``import torch``.
    import torch._functorch.config

    torch._functorch.config.check_custom_op_aliasing = False
    _installed = True


def _carries_npy_keys(values):
    return any(isinstance(value, torch.Tensor) and torch._C._dispatch_keys(value).has(_NPY_KEY) for value in values)


def _construct_fakes_on_meta(fake_tensor_new):
    """``FakeTensor.__new__``, with the meta tensor of an npy fake tensor detached by the Meta kernel."""

    @functools.wraps(fake_tensor_new)
    def new(cls, *args, **kwargs):
        if not _carries_npy_keys([*args, *kwargs.values()]):
            return fake_tensor_new(cls, *args, **kwargs)
        with torch._C._PreserveDispatchKeyGuard():
            torch._C._set_meta_in_tls_dispatch_include(True)
            return fake_tensor_new(cls, *args, **kwargs)

    return new
