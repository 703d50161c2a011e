"""
Around the kernels
==================

Pinned memory, synchronization, memory statistics, generators and autocast:
what PyTorch 2.13 lets a Python backend provide, what it blocks, and for
each block a ready-to-file report with the change that would lift it.
"""

import torch

import backend_pkg

# %%
# What real programs touch around the kernels
# -------------------------------------------
# Programs written for CUDA reach past the ops: pinned memory, device-wide
# synchronization, memory statistics, generators, autocast. PyTorch 2.13
# lets a Python backend provide some of these and blocks others. Each
# call below runs here, on ``npy``; a blocked one prints PyTorch's error.


def attempt(label, call):
    try:
        print(f"{label}: {call()}")
    except (RuntimeError, NotImplementedError) as error:
        print(f"{label}: {type(error).__name__}: {str(error).splitlines()[0]}")


batch = torch.ones(3)
weights = torch.ones(256, 256).to("npy")  # 256 KiB of float32
attempt("Tensor.pin_memory().is_pinned()", lambda: batch.pin_memory().is_pinned())
attempt("torch.empty(3, pin_memory=True)", lambda: torch.empty(3, pin_memory=True))
attempt("torch.npy.synchronize()", torch.npy.synchronize)
attempt("torch.accelerator.synchronize()", torch.accelerator.synchronize)
attempt("torch.npy.memory_allocated()", torch.npy.memory_allocated)
attempt("torch.accelerator.memory_allocated()", torch.accelerator.memory_allocated)
attempt("torch.Generator(device='npy')", lambda: torch.Generator(device="npy"))
with torch.autocast("npy", dtype=torch.float16):
    attempt("linear under torch.autocast('npy')", lambda: torch.nn.functional.linear(weights, weights).dtype)

# %%
# What works, and how:
#
# * ``Tensor.pin_memory()``, and so ``DataLoader(pin_memory=True)`` with
#   or without workers: PyTorch's ``_pin_memory`` kernel asks the hooks for
#   a pinned allocator, which Python hooks cannot give, so
#   :mod:`backend_pkg.pinned` registers a kernel at the ``BackendSelect``
#   key of ``aten::_pin_memory`` and ``aten::is_pinned`` that sends npy's
#   pinning to npy's own kernel (a host copy marked pinned: npy memory is
#   host memory). Factory functions with ``pin_memory=True`` allocate
#   through the hooks directly and stay blocked.
# * ``torch.npy.synchronize()`` and the memory statistics of the device
#   module (``torch.npy.memory_allocated()``, ``max_memory_allocated()``,
#   ``reset_peak_memory_stats()``, ``memory_stats()``), which count the bytes
#   of the NumPy arrays that own npy storages, from the first query on.
# * ``torch.autocast("npy", dtype=torch.float16)``: PyTorch registers no
#   kernel at all at the ``AutocastPrivateUse1`` key, so
#   :mod:`backend_pkg.autocast` registers the fallthrough and CPU autocast's
#   policy for the ops that have one; ``torch.amp.GradScaler("npy")`` runs
#   on npy kernels for its two ops.
# * ``torch.manual_seed`` seeds npy, and ``torch.npy.get_rng_state()`` /
#   ``set_rng_state()`` let ``torch.random.fork_rng`` and
#   ``torch.utils.checkpoint`` restore npy's generator.
#
# What is blocked, where, and the change that would lift it: these
# ready-to-file issue texts. The same errors come from a bare backend
# registered with ``_setup_privateuseone_for_python_backend("foo")`` and
# nothing else, run here in a fresh process:

from _fresh_python import run_code

BARE_BACKEND = """
import torch
from torch.utils.backend_registration import _setup_privateuseone_for_python_backend
_setup_privateuseone_for_python_backend("foo")
for call in ("torch.empty(3, pin_memory=True)", "torch.accelerator.synchronize()",
             "torch.accelerator.memory_allocated()", "torch.Generator(device='foo')"):
    try:
        eval(call)
    except Exception as error:
        print(call, "->", type(error).__name__, str(error).splitlines()[0][:110])
"""
print(run_code(BARE_BACKEND, check=True).stdout)

# %%
# .. dropdown:: Issue: Python PrivateUse1 hooks cannot provide pinned host memory
#
#    **What fails.** Every pinned-memory path asks
#    ``PrivateUse1HooksInterface::getPinnedMemoryAllocator()``, and nothing of
#    it reaches Python: ``Tensor.pin_memory()``,
#    ``DataLoader(pin_memory=True)`` and ``torch.empty(..., pin_memory=True)``
#    raise, and ``is_pinned()`` answers ``False``. For a backend whose device memory is host memory (NumPy, JAX on
#    CPU, simulators) ordinary host memory is the right answer.
#
#    **Where.** ``torch/csrc/acc/Module.cpp``: ``PythonHooks`` overrides
#    ``getPinnedMemoryAllocator`` and ``isPinnedPtr`` only to call the base
#    class, ``at::PrivateUse1HooksInterface``
#    (``aten/src/ATen/detail/PrivateUse1HooksInterface.h``), whose
#    ``isPinnedPtr`` returns ``false`` and whose ``getPinnedMemoryAllocator``
#    fails with ``FAIL_PRIVATEUSE1HOOKS_FUNC``. Callers: ``aten/src/ATen/native/Memory.cpp``
#    (``_pin_memory``, ``is_pinned``) and ``aten/src/ATen/EmptyTensor.cpp``
#    (``GetCPUAllocatorMaybePinned``).
#
#    **Proposed change.** In ``PythonHooks``, forward ``isPinnedPtr`` to an optional Python
#    method ``is_pinned_ptr(data_ptr) -> bool``, and let
#    ``getPinnedMemoryAllocator`` return an allocator over
#    ``c10::GetCPUAllocator()`` that records the pointers it hands out
#    when the Python hooks declare ``pinned_memory_is_host_memory = True``;
#    keep the error otherwise.
#
# .. dropdown:: Issue: torch.accelerator.synchronize() fails for Python-registered backends
#
#    **What fails.** ``PythonDeviceGuard`` forwards only ``type_`` to Python;
#    ``synchronizeDevice``, ``synchronizeEvent`` and ``elapsedTime`` fall
#    through to ``c10::impl::DeviceGuardImplInterface``, whose defaults
#    raise. The device module's ``synchronize`` is never consulted. Once such
#    a backend is imported, PyTorch's benchmark ``Timer`` fails even for
#    CPU-only code: it calls ``torch.accelerator.synchronize()`` around
#    every measurement.
#
#    **Where.** ``torch/csrc/acc/Module.cpp``, ``PythonDeviceGuard``;
#    ``c10/core/impl/DeviceGuardImplInterface.h``. Reported upstream as
#    pytorch/pytorch#196299 (fix proposed in #196555): add this case there.
#
#    **Proposed change.** Override the three methods in ``PythonDeviceGuard``
#    with optional Python methods (``synchronize_device``,
#    ``synchronize_event``, ``elapsed_time``); since ``synchronizeStream`` is
#    already a no-op there, make ``synchronizeDevice`` and ``synchronizeEvent``
#    no-ops by default too.
#
# .. dropdown:: Issue: torch.accelerator memory functions hit an INTERNAL ASSERT
#
#    **What fails.** Every ``torch.accelerator`` memory function goes
#    through ``c10::getDeviceAllocator``, which asserts that the
#    PrivateUse1 allocator is a ``c10::DeviceAllocator``. A Python backend
#    cannot register one, so user code gets "please report a bug to
#    PyTorch", even when the device module implements ``memory_allocated()``.
#
#    **Where.** ``c10/core/CachingDeviceAllocator.h``, ``getDeviceAllocator``;
#    callers in ``torch/csrc/DeviceAccelerator.cpp``.
#
#    **Proposed change.** Make the failure a ``TORCH_CHECK_NOT_IMPLEMENTED``
#    naming the backend, and have ``torch/accelerator/memory.py`` delegate to
#    the device module's functions of the same names (``memory_stats``,
#    ``memory_allocated``, ``reset_peak_memory_stats``, ``empty_cache``) for a
#    Python-registered backend that defines them, as ``torch.autocast``
#    already consults ``get_amp_supported_dtype``.
#
# .. dropdown:: Issue: Python-registered backends cannot create device generators
#
#    **What fails.** ``torch.Generator(device=...)`` for a PrivateUse1 device
#    calls ``PrivateUse1HooksInterface::getNewGenerator``, which the Python
#    hooks do not forward (nor ``getDefaultGenerator``); ``generator=``
#    arguments on the device are therefore impossible.
#
#    **Where.** ``torch/csrc/acc/Module.cpp`` (``PythonHooks``);
#    ``aten/src/ATen/detail/PrivateUse1HooksInterface.h``;
#    ``torch/csrc/Generator.cpp``.
#
#    **Proposed change.** A ``GeneratorImpl`` in ``torch/csrc/acc`` holding a
#    seed and an offset, like the CPU generator's state, whose ``device()`` is
#    ``PrivateUse1:index``, returned by ``getNewGenerator`` and (one per
#    index) ``getDefaultGenerator``: Python kernels then receive a
#    ``torch.Generator`` of the device and derive their stream from its
#    ``initial_seed()`` and ``get_state()``.
#
# .. dropdown:: Issue: autocast on a Python-registered backend breaks every op
#
#    **What fails.** ``torch.autocast("foo")`` enables the
#    ``AutocastPrivateUse1`` key, but PyTorch registers nothing there, not
#    even the fallthrough the other autocast keys get: every op inside the
#    region fails until the backend registers a whole policy itself, as
#    :mod:`backend_pkg.autocast` does.
#
#    **Where.** ``aten/src/ATen/autocast_mode.cpp``: fallthrough and policy
#    blocks for CPU, CUDA, MPS, XPU, MTIA and MAIA, none for
#    ``AutocastPrivateUse1``.
#
#    **Proposed change.** Not in ``autocast_mode.cpp``: C++ backends
#    register that fallthrough themselves (sophgo's ``torch-tpu`` and
#    ``torch_npu`` do, ``TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m)``), and
#    the dispatcher refuses a second fallback for one key (run below), so
#    every such backend would fail at load. The Python backend's setup is the
#    place: ``_setup_privateuseone_for_python_backend``
#    (``torch/utils/backend_registration.py``) registers the fallthrough for
#    ``AutocastPrivateUse1``, which no C++ backend shares a process with; and
#    a function in the ``torch.amp`` module lets Python reuse a built-in
#    policy, registering an existing device's ``KERNEL_*`` wrappers
#    (templates over the device type) for ``PrivateUse1``.
#
# npy registered that fallthrough at import, so a second registration in
# this process is refused, as a C++ backend's would be after a fallthrough
# in ``autocast_mode.cpp``:

try:
    torch.library.Library("_", "IMPL").fallback(torch.library.fallthrough_kernel, "AutocastPrivateUse1")
except RuntimeError as error:
    print("RuntimeError:", str(error).split(";")[0])
#

# sphinx_gallery_thumbnail_path = "../_build/diagrams/setup.png"
