"""What ``torch.compile``'s tracing needs from the npy device, installed once per process.

Dynamo, AOTAutograd and Inductor trace with *fake* tensors: tensors with a
device and metadata but no memory, whose ops run PyTorch's meta kernels. A
Python backend whose tensors are a subclass (:class:`~backend_pkg.NpyTensor`)
and whose kernels are Python meets assumptions PyTorch makes of C++
backends; two are answered here:

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
2. The compiled backward accepts a tangent whose class differs from the
   traced one only through its ``__coerce_same_metadata_as_tangent__``
   (``process_runtime_tangent`` in
   ``torch/_functorch/_aot_autograd/runtime_wrappers.py``), which
   :class:`~backend_pkg.NpyTensor` defines.

The others are answered where they arise: Dynamo must not compile the
Python functions C++ calls (:func:`backend_pkg.runtime.untraced`); a real
npy tensor made *during* tracing (``torch.tensor(data, device="npy")`` in a
compiled function) is a plain ``torch.Tensor`` object, which fake tensors
accept (:func:`backend_pkg.ops.factories.new_tensor`); Inductor's code
generation for npy is registered through the device module
(:mod:`backend_pkg.compiler.inductor`); AOTAutograd's check of custom ops,
which refuses every tensor subclass, is off for the first call of the ``npy``
backend's graphs only (:mod:`backend_pkg.compiler.dynamo_backend`).

1 still changes PyTorch for the whole process at ``import backend_pkg``,
because no hook of PyTorch runs before every place that builds a fake tensor
of an npy meta tensor: FakeTensorMode's own dispatch
(``wrap_meta_outputs_with_default_device_logic``) could be served by a rule
registered with ``register_op_impl`` (``torch/_subclasses/fake_impls.py``),
but AOTAutograd's tracer builds one for every traced value by a direct call
(``snapshot_fake`` in ``torch/fx/experimental/proxy_tensor.py`` calls
``fast_detach`` in ``fake_impls.py``), and Dynamo, which brackets each
compile with callbacks (``torch/_dynamo/callback.py``), is not imported by
``import backend_pkg`` (it takes over a second). The upstream change that
would remove it: ``FakeTensor.__new__`` building its tensor with the Meta key
in front, as FakeTensorMode runs every op on its meta tensors (then a Python
backend's ``detach`` is never asked to detach a meta tensor).
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
