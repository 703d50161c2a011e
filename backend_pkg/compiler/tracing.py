"""What ``torch.compile``'s tracing needs from the npy device, answered without changing PyTorch.

Dynamo, AOTAutograd and Inductor trace with *fake* tensors: tensors with a
device and metadata but no memory, whose ops run PyTorch's meta kernels. A
Python backend whose tensors are a subclass (:class:`~backend_pkg.NpyTensor`)
and whose kernels are Python meets assumptions PyTorch makes of C++
backends; two are answered here:

1. The fake tensor of a view reaches npy's ``detach`` kernel with a meta
   tensor. A fake npy tensor is a meta tensor given npy's dispatch keys
   (``device_for_backend_keys`` in ``FakeTensor.__new__``,
   ``torch/_subclasses/fake_tensor.py``). FakeTensorMode runs a view op on
   it with the Meta key in front (``in_kernel_invocation_manager``), and the
   view's meta kernel gives the result its input's keys, npy's. Wrapping that
   result, ``FakeTensor.__new__`` calls ``Tensor._make_subclass``, which
   detaches it without the Meta key (``THPVariable_make_subclass`` in
   ``torch/csrc/autograd/python_variable.cpp``): the dispatcher picks npy's
   kernel. For a C++ backend, ``detach`` is the composite C++ kernel, whose
   result has no Python object yet, which ``_make_subclass`` then creates.
   A Python kernel's result always has one, and ``_make_subclass`` takes a
   tensor that already has one only if that object is of the class asked for
   (``check_tensor_subclass`` in the same file). So npy's ``detach`` gives a
   meta tensor back as :func:`fake_tensor_shell`: the Meta kernel's detached
   tensor as a ``FakeTensor`` object, which ``_make_subclass`` adopts (it
   sets its Python dispatch key, as for a new object) and ``FakeTensor.__new__``
   fills in. Only fake tensors give a meta tensor npy's keys, and only
   ``FakeTensor.__new__`` detaches one without the Meta key in front.
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

This module imports nothing of the package's: npy's ``detach`` kernel
(:mod:`backend_pkg.ops.views`) imports it.
"""

import torch
from torch._subclasses.fake_tensor import FakeTensor

_DETACH = torch.ops.aten.detach.default._handle
_META_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.Meta)


def fake_tensor_shell(meta):
    """``meta`` detached by the Meta kernel, as the ``FakeTensor`` object that
    ``FakeTensor.__new__`` is building (see 1 above)."""
    shell = _DETACH.redispatch_boxed(_META_KEYS, meta)
    shell.__class__ = FakeTensor
    return shell
