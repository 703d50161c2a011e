"""
Parameters, tensor objects and storages
=======================================

What PyTorch's C++ code makes for the device, or asks the backend about:
parameters in ``Module.to``, plain tensor objects over npy storages,
storages from the device's (missing) C++ allocator. Each is run here.
"""

import copy
import warnings

import torch
from _fresh_python import run_code

import backend_pkg

x = torch.ones(4).to("npy")

# %%
# ``Module.to`` keeps parameters only where the backend says so
# -------------------------------------------------------------
# Moving a module from the CPU to CUDA keeps each parameter object and
# changes its memory (``param.data = moved``, in ``Module._apply``). That
# happens only where the op ``_has_compatible_shallow_copy_type`` allows it:
# c10's rule (``has_compatible_shallow_copy_type`` in
# ``c10/core/TensorImpl.h``) names the dense backends it knows and leaves
# PrivateUse1 to a kernel of the backend's. A backend without one gets a new
# parameter per module: weights two modules share come apart, each half then
# trains on its own part of the gradient, and an optimizer made before the
# move keeps the CPU parameters, silently. npy registers the kernel with
# CUDA's rule (``backend_pkg/parameters.py``; the template's is on
# :ref:`sphx_glr_auto_examples_learn_02_write_your_own_backend.py`), so all
# three ways of putting a tied model on the device keep the tie:


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
print(
    "npy's answer for a CPU and an npy tensor:",
    torch._has_compatible_shallow_copy_type(torch.ones(1), torch.ones(1, device="npy")),
)

# %%
# The moved object becomes an :class:`~backend_pkg.NpyTensor` marked
# ``_is_param``, as ``nn.Parameter(npy_tensor)`` makes, so it keeps npy's
# speed; a user's ``nn.Parameter`` subclass and lazy parameters keep their
# class and take a slower path.
#
# New parameter objects over npy memory
# -------------------------------------
# ``Tensor._make_subclass`` and ``as_subclass`` (``THPVariable_make_subclass``
# and ``THPVariable_as_subclass`` in ``torch/csrc/autograd/python_variable.cpp``)
# detach or alias their argument and give the result the class asked for;
# ``check_tensor_subclass`` there refuses when the result already has a Python
# object of another class, which every Python kernel's result has. npy
# registers no ``detach`` or ``alias`` kernel, so PyTorch's C++ ones run and
# their results have no Python object yet: the parameter classes, and the
# lazy modules and ``UninitializedParameter`` built on them, work on npy as
# on CPU:

for name, make in {
    "Tensor._make_subclass(nn.Parameter, x)": lambda x: torch.Tensor._make_subclass(torch.nn.Parameter, x, True),
    "x.as_subclass(nn.Parameter)": lambda x: x.as_subclass(torch.nn.Parameter),
    "UninitializedParameter(device=...)": lambda x: torch.nn.UninitializedParameter(device=x.device),
    "LazyLinear(3, device=...).weight": lambda x: torch.nn.LazyLinear(3, device=x.device).weight,
}.items():
    made = {device: make(torch.ones(2, device=device)) for device in ("cpu", "npy")}
    print(f"{name:40}", "  ".join(f"{device}: {type(t).__name__} on {t.device}" for device, t in made.items()))

# %%
# The price is on the gradients: ``AccumulateGrad`` stores the tensor the
# backward computed as its ``detach`` when it can (otherwise a copy, made by
# npy's kernels: when its layout differs from the parameter's, for one;
# ``torch/csrc/autograd/functions/accumulate_grad.h``), so ``.grad`` is
# mostly a plain ``torch.Tensor`` object made by C++ (``detached`` in
# ``backend_pkg/tensor.py`` says what npy does about that; the dropdown on
# :ref:`sphx_glr_auto_examples_deep_dives_07_performance.py` has the
# upstream change that would give it npy's class):

layer = torch.nn.Linear(3, 2, device="npy")
layer(torch.ones(4, 3, device="npy")).sum().backward()
for name, parameter in layer.named_parameters():
    print(f"{name}: {type(parameter).__name__}, its .grad: {type(parameter.grad).__name__} on {parameter.grad.device}")

# %%
# .. dropdown:: Upstream: the shallow-copy rule for a Python backend
#
#    pytorch/pytorch#116255 (open) reports the untied weights for
#    PrivateUse1; pytorch/pytorch#96026, which added PrivateUse1 to c10's
#    list, was closed after review said the rule is safe only for a device
#    whose tensors are plain ``TensorImpl`` objects, and
#    pytorch/pytorch#155215 (closed) discussed it again;
#    pytorch/pytorch#196978 (open) adds PrivateUse1 to c10's list for every
#    backend. A Python backend's tensors are plain ``TensorImpl`` objects
#    (``torch._C._acc.create_empty_tensor``), so the narrower change is for
#    ``_setup_privateuseone_for_python_backend`` to register CUDA's answer
#    for its device at ``AutogradPrivateUse1``, which every Python backend
#    then gets without writing the kernel, while C++ backends with a
#    ``TensorImpl`` subclass keep answering for themselves.

# %%
# The optimizers' ``foreach`` path
# --------------------------------
# An optimizer built without ``foreach=`` asks ``_default_to_fused_or_foreach``
# (``torch/optim/optimizer.py``) whether its parameters take the ``foreach``
# path: a few ``_foreach_*`` ops per step for all the parameters, instead of a
# few ops for each. It accepts npy's device, which
# ``_get_foreach_kernels_supported_devices`` (``torch/utils/_foreach_utils.py``)
# lists, and refuses the parameters' type: ``_foreach_supported_types`` holds
# ``torch.Tensor`` and ``Parameter``, compared with ``type(p) in``, and an npy
# parameter is an ``NpyTensor``:

from torch.optim.optimizer import _default_to_fused_or_foreach, _foreach_supported_types
from torch.utils._foreach_utils import _get_foreach_kernels_supported_devices

parameters = list(torch.nn.Linear(3, 2, device="npy").parameters())
print("devices with foreach kernels:", _get_foreach_kernels_supported_devices())
print(
    "types taken:",
    [kind.__name__ for kind in _foreach_supported_types],
    "an npy parameter:",
    type(parameters[0]).__name__,
)
print("(fused, foreach) for npy parameters:", _default_to_fused_or_foreach(parameters, differentiable=False))

# %%
# So SGD with momentum runs three in-place ops per parameter and step on npy
# (``_single_tensor_sgd`` in ``torch/optim/sgd.py``), each a trip through
# the dispatcher into Python. Passing ``foreach=True`` works, and npy
# registers kernels for the ``_foreach_*`` ops of SGD and of
# ``clip_grad_norm_`` (``backend_pkg/ops/foreach.py``) that call each
# tensor's kernel from one Python loop. ``make bench`` times the zoo's
# Transformer language model both ways, in turns with CPU's step
# (``zoo.transformer_language_model.npy_eager`` and ``npy_eager_foreach`` in
# ``source/benchmarks.json``, the ratio
# ``zoo_transformer_language_model_eager_foreach_npy_vs_cpu``).
#
# What the type check keeps out is a subclass whose ``__torch_function__``
# might treat a ``_foreach_*`` call in its own way. ``Parameter`` turns
# ``__torch_function__`` off with ``torch._C._disabled_torch_function_impl``
# (``torch/nn/parameter.py``), and so does ``NpyTensor``: every op on it,
# a ``_foreach_*`` op included, goes to the dispatcher as a plain tensor's
# does.

for kind in (torch.nn.Parameter, type(parameters[0])):
    print(f"{kind.__name__}.__torch_function__ is _disabled_torch_function_impl:", end=" ")
    print(kind.__torch_function__ is torch._C._disabled_torch_function_impl)

# %%
# .. dropdown:: Upstream: the foreach path for a subclass that turns off ``__torch_function__``
#
#    **What happens.** On a backend whose parameters are a tensor subclass,
#    as npy's are (``NpyTensor``, which keeps the NumPy view of its memory),
#    PyTorch's optimizers never take their ``foreach`` path by default,
#    although the device is one PyTorch lists for it; ``clip_grad_norm_``
#    takes it only for gradients that are plain ``torch.Tensor`` objects.
#
#    **Where.** ``_default_to_fused_or_foreach`` in ``torch/optim/optimizer.py``
#    (``type(p) in _foreach_supported_types``, the list ``[torch.Tensor,
#    Parameter]``) and ``_has_foreach_support`` in
#    ``torch/utils/_foreach_utils.py`` (its own ``_foreach_supported_types``,
#    ``[torch.Tensor]``). ``torch/distributed/tensor/__init__.py`` appends
#    ``DTensor`` to both lists when imported; a backend doing the same would
#    change them for the whole process, for every device.
#
#    **Proposed change.** In both functions, take a tensor also when its type
#    is a ``torch.Tensor`` subclass whose ``__torch_function__`` is
#    ``torch._C._disabled_torch_function_impl``: such a subclass reaches the
#    device's kernels exactly as a plain tensor does, for ``_foreach_*`` ops
#    as for the others. A check by type, as now, in one helper the two
#    functions share; ``Parameter`` then needs no entry of its own. The gain
#    on npy is the bench row above, which sets ``foreach=True`` by hand.

# %%
# Tensor objects made by PyTorch's C++ code
# -----------------------------------------
# A few PyTorch paths make a new Python object over an existing npy storage:
# views that change the dtype, the results autograd saves for backward, and
# the gradients it stores (above).
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
run = run_code(STORAGE_ON_BARE_BACKEND)
print("exit status", run.returncode)

# %%
# ``torch.UntypedStorage(n, device="npy")``, ``cpu_storage.to(device="npy")``
# and ``torch.TypedStorage(n, dtype=..., device="npy")`` still do, for
# PyTorch runs them before any npy code. The storages npy makes are
# :class:`backend_pkg.storage.NpyStorage`, which copies itself in NumPy
# memory, so ``clone()``, ``copy.copy``, ``copy.deepcopy`` and ``pickle`` of
# an npy storage work (PyTorch's ``_StorageBase.clone()`` would call that
# constructor), and ``.data`` is an ``NpyTensor``, as every npy kernel's result:

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
