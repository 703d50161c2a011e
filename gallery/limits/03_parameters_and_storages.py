"""
Parameters, tensor objects and storages
=======================================

What PyTorch's C++ code makes for the device without asking the backend:
new parameters in ``Module.to``, plain tensor objects over npy storages,
storages from the device's (missing) C++ allocator. Each is run here.
"""

import copy
import subprocess
import sys
import warnings

import torch

import backend_pkg

x = torch.ones(4).to("npy")

# %%
# ``Module.to("npy")`` makes new parameters
# -----------------------------------------
# Moving a module from the CPU to CUDA keeps each parameter object and
# changes its memory (``param.data = moved``, in ``Module._apply``). That
# happens only where the op ``_has_compatible_shallow_copy_type`` allows it:
# c10's rule (``has_compatible_shallow_copy_type`` in
# ``c10/core/TensorImpl.h``) names the dense backends it knows and leaves
# PrivateUse1 to a kernel of the backend's. npy registers none yet, so each
# module gets a new parameter: weights two modules share come apart, each
# half then trains on its own part of the gradient, and an optimizer made
# before the move keeps the CPU parameters. Made on the device, or moved with
# PyTorch's opt-in to swapping (``swap_tensors``, which keeps every object),
# they stay one. The shallow-copy rule for PrivateUse1 was discussed upstream
# in pytorch/pytorch#155215 (closed);
# :ref:`sphx_glr_auto_examples_learn_02_write_your_own_backend.py` shows the
# template's kernel.


def tied_language_model():
    """An embedding and an output layer sharing one weight, as GPT-style models do."""
    embed, head = torch.nn.Embedding(5, 3), torch.nn.Linear(3, 5, bias=False)
    head.weight = embed.weight
    return torch.nn.Sequential(embed, head)


def is_tied(model):
    return model[1].weight is model[0].weight


print("moved with .to('npy'):", is_tied(tied_language_model().to("npy")))
with torch.device("npy"):
    print("built under torch.device('npy'):", is_tied(tied_language_model()))
torch.__future__.set_swap_module_params_on_conversion(True)
try:
    print("moved with swapping on:", is_tied(tied_language_model().to("npy")))
finally:
    torch.__future__.set_swap_module_params_on_conversion(False)

# %%
# npy's kernel for that op has to keep npy's speed: a moved parameter stays
# PyTorch's ``nn.Parameter`` object, which pickles its ``__dict__`` as its
# state, so the NumPy view an :class:`~backend_pkg.NpyTensor` keeps on
# itself between ops must live elsewhere, where every kernel's shortcut
# finds it. A first attempt, with a table keyed by the object, made the
# eager MLP training step of ``make bench`` about 1.4 times slower (1,222 µs
# against 873 µs per step), and is not in ``backend_pkg``.

# %%
# Tensor objects made by PyTorch's C++ code
# -----------------------------------------
# A few PyTorch paths make a new Python object over an existing npy storage:
# views that change the dtype, and the results autograd saves for backward.
# Such objects are plain ``torch.Tensor``, not ``NpyTensor`` (``.data`` is
# one, see below). Kernels read them correctly, because
# ``unwrap`` works from the storage and the tensor's metadata, but printing
# one takes PyTorch's generic printer, which runs a dozen small ops on it
# (here, partly through the fallback) where ``NpyTensor`` prints a CPU copy:

bits = x.view(torch.int32)
print(type(bits).__name__, bits.device)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    print(bits)

# %%
# Storages made by PyTorch for the device
# ---------------------------------------
# PyTorch makes a new storage on a device through the device's C++
# allocator, and a Python backend has none: on a bare backend the
# constructor ends the process (a negative exit status is the signal,
# here SIGSEGV):

STORAGE_ON_BARE_BACKEND = """
import torch
from torch.utils.backend_registration import _setup_privateuseone_for_python_backend
_setup_privateuseone_for_python_backend("foo")
torch.UntypedStorage(4, device="foo")
"""
run = subprocess.run([sys.executable, "-c", STORAGE_ON_BARE_BACKEND], capture_output=True, text=True)
print("exit status", run.returncode)

# %%
# ``torch.UntypedStorage(n, device="npy")``, ``cpu_storage.to(device="npy")``
# and ``torch.TypedStorage(n, dtype=..., device="npy")`` still do, for
# PyTorch runs them before any npy code. The storages npy makes are
# :class:`backend_pkg.storage.NpyStorage`, which copies itself in NumPy
# memory, so ``clone()``, ``copy.copy``, ``copy.deepcopy`` and ``pickle`` of
# an npy storage work (PyTorch's ``_StorageBase.clone()`` would call that
# constructor), and ``.data`` is an ``NpyTensor``, as every npy kernel's result:

import copy

storage = x.untyped_storage()
print(type(storage).__name__, copy.deepcopy(storage).device, storage.clone().tolist()[:4])
print(type(x.data).__name__, copy.deepcopy(x.data))

# %%
# .. dropdown:: Issue: a storage constructed on a Python-registered device segfaults
#
#    **What fails.** ``torch.UntypedStorage(n, device=...)``, and through it
#    ``storage.clone()``, ``copy.deepcopy`` of a storage or of a tensor, and
#    ``storage.to(device=...)``, end the process with SIGSEGV on a
#    PrivateUse1 device registered from Python.
#
#    **Where.** ``THPStorage_pynew`` (``torch/csrc/Storage.cpp``) takes
#    ``c10::GetAllocator(PrivateUse1)``, which is null: ``torch._C._acc``
#    (``torch/csrc/acc/Module.cpp``) registers hooks and a device guard but
#    no allocator. ``c10::GetAllocator`` (``c10/core/Allocator.cpp``) checks
#    it only with ``TORCH_INTERNAL_ASSERT_DEBUG_ONLY``, so a release build
#    returns the null pointer and ``c10::make_storage_impl``
#    (``c10/core/StorageImpl.cpp``) dereferences it.
#
#    **Proposed change.** Make the check in ``GetAllocator`` a
#    ``TORCH_CHECK`` naming the device type, so the call raises; and have
#    ``torch/csrc/acc`` register a PrivateUse1 allocator for Python backends
#    that raises a clear error, or one that calls an ``allocate(nbytes)``
#    method of the backend's Python module.

# sphinx_gallery_thumbnail_path = "../_build/diagrams/memory.png"
