"""What ``torch.compile``'s tracing needs from the npy device, answered without changing PyTorch.

Dynamo, AOTAutograd and Inductor trace with *fake* tensors: tensors with a
device and metadata but no memory, whose ops run PyTorch's meta kernels. A
Python backend whose tensors are a subclass (:class:`~backend_pkg.NpyTensor`)
and whose kernels are Python meets assumptions PyTorch makes of C++
backends; two are met by what the package leaves out or defines:

1. The fake tensor of a view is made by ``Tensor._make_subclass``. A fake
   npy tensor is a meta tensor given npy's dispatch keys
   (``device_for_backend_keys`` in ``FakeTensor.__new__``,
   ``torch/_subclasses/fake_tensor.py``); the meta kernel of a view gives its
   result its input's keys, npy's, and ``FakeTensor.__new__`` wraps that
   result with ``Tensor._make_subclass``, which detaches it without the Meta
   key in front (``THPVariable_make_subclass`` in
   ``torch/csrc/autograd/python_variable.cpp``): the dispatcher picks the
   ``detach`` kernel of npy's key. npy registers none, so PyTorch's C++
   ``detach`` runs, as for a C++ backend, and its result has no Python
   object yet, which ``_make_subclass`` then creates as a ``FakeTensor``
   (see :func:`backend_pkg.tensor.detached`).
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
(:mod:`backend_pkg.compiler.inductor`); AOTAutograd's first-call check of
custom ops, which refuses every tensor subclass, sees npy tensors as it sees
CPU parameters, asked by that check alone (:mod:`backend_pkg.custom_op_check`).
"""
