"""
Limitations
===========

What the Python route cannot do, or does not do yet, each one shown by
running it, with what ``backend_pkg`` does about it.
"""

# %%
# One device, index 0
# -------------------
# The C++ side of ``torch._C._acc.DeviceGuard`` reports exactly one device.
# ``backend_pkg`` says so too, and refuses any other index by name:

import json
import timeit
from pathlib import Path

import torch

import backend_pkg

print(torch.npy.device_count(), torch.accelerator.device_count())
try:
    torch.ones(2).to("npy:1")
except RuntimeError as error:
    print("RuntimeError:", error)

# %%
# No streams, no events
# ---------------------
# Every stream is the default stream, and an event is complete as soon as it
# is recorded. For NumPy that is the truth: each kernel has finished when it
# returns, so ``torch.npy.synchronize()`` has nothing to wait for.

print(torch.accelerator.current_stream())
event = torch.Event(device="npy")
event.record()
print("event complete:", event.query())
torch.npy.synchronize()

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

import subprocess
import sys

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
print(subprocess.run([sys.executable, "-c", BARE_BACKEND], capture_output=True, text=True, check=True).stdout)

# %%
# .. dropdown:: Issue: Python PrivateUse1 hooks cannot provide pinned host memory
#
#    **What fails.** Every pinned-memory path asks
#    ``PrivateUse1HooksInterface::getPinnedMemoryAllocator()``, which the
#    Python hooks class does not forward: ``Tensor.pin_memory()``,
#    ``DataLoader(pin_memory=True)`` and ``torch.empty(..., pin_memory=True)``
#    raise. For a backend whose device memory is host memory (NumPy, JAX on
#    CPU, simulators) ordinary host memory is the right answer.
#
#    **Where.** ``torch/csrc/acc/Module.cpp``: ``PythonHooks`` does not
#    override ``getPinnedMemoryAllocator`` or ``isPinnedPtr``;
#    ``aten/src/ATen/detail/PrivateUse1HooksInterface.h`` fails with
#    ``FAIL_PRIVATEUSE1HOOKS_FUNC``. Callers: ``aten/src/ATen/native/Memory.cpp``
#    (``_pin_memory``, ``is_pinned``) and ``aten/src/ATen/EmptyTensor.cpp``
#    (``GetCPUAllocatorMaybePinned``).
#
#    **Proposed change.** Forward ``isPinnedPtr`` to an optional Python
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
#    **Proposed change.** Register the fallthrough for ``AutocastPrivateUse1``
#    there, and let Python reuse a built-in policy: a function in the
#    ``torch.amp`` module that registers an existing device's ``KERNEL_*``
#    wrappers (templates over the device type) for ``PrivateUse1``.
#
# A checkpoint written on ``npy`` holds plain tensors and parameters whose
# storages are tagged ``npy:0``. A process that has not imported
# ``backend_pkg`` loads it with ``map_location="cpu"``; without it,
# ``torch.load`` cannot restore the ``npy:0`` location:

import tempfile

with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "linear.pt"
    torch.save(torch.nn.Linear(2, 2).to("npy").state_dict(), path)
    LOAD_WITHOUT_BACKEND = f"""
import torch
print(torch.load({str(path)!r}, map_location="cpu")["weight"].device)
try:
    torch.load({str(path)!r})
except RuntimeError as error:
    print("RuntimeError:", error)
"""
    print(subprocess.run([sys.executable, "-c", LOAD_WITHOUT_BACKEND], capture_output=True, text=True,
                         check=True).stdout)

# %%
# An exception in a backward hook ends the process
# ------------------------------------------------
# A tensor hook, a module's backward hook or a saved-tensor unpack hook that
# raises during ``backward()`` reaches the caller as that exception on CPU.
# On a device with a Python device guard the process aborts instead. The
# same program, run in a fresh process on each device:

HOOK_RAISES = """
import sys, torch, backend_pkg
x = torch.ones(3, device=sys.argv[1], requires_grad=True)
y = x * 2
y.register_hook(lambda grad: 1 / 0)
try:
    y.sum().backward()
except ZeroDivisionError as error:
    print("ZeroDivisionError:", error)
"""
for device in ("cpu", "npy"):
    run = subprocess.run([sys.executable, "-c", HOOK_RAISES, device], capture_output=True, text=True)
    print(f"{device}: exit status {run.returncode}; {(run.stdout + run.stderr).strip().splitlines()[-1]}")

# %%
# An error raised by a kernel or by a custom ``autograd.Function``'s
# ``backward`` still arrives as an exception; only hooks are affected.
# ``tests/test_autograd.py`` runs both cases and fails the day PyTorch
# changes either.
#
# .. dropdown:: Issue: an exception in a backward hook aborts the process on a Python-registered device
#
#    **What fails.** When a tensor hook, a ``Module`` full backward hook or a
#    saved-tensor unpack hook raises during ``backward()`` on a PrivateUse1
#    device registered from Python, the process ends with ``terminate called
#    without an active exception`` (SIGABRT) instead of raising the hook's
#    exception.
#
#    **Where.** A failing hook is turned into a C++ exception with the
#    Python error indicator still set: ``_call_hooks`` in
#    ``torch/csrc/autograd/python_hook.cpp`` throws ``python_error()``, and
#    ``PySavedVariableHooks::call_unpack_hook`` in
#    ``torch/csrc/autograd/python_saved_variable_hooks.cpp`` throws too; the
#    indicator is fetched only later, when the engine's handler calls
#    ``persist()``. On the way there, ``Engine::evaluate_function``
#    (``torch/csrc/autograd/engine.cpp``) unwinds its
#    ``OptionalStreamGuard``, whose destructor calls
#    ``PythonDeviceGuard::exchangeStream``, a ``noexcept`` method that calls
#    ``getDevice()`` and so, through Python, the guard's ``type_``
#    (``torch/csrc/acc/Module.cpp``). That call into Python fails because an
#    exception is pending (a debugger stops at the throw inside
#    ``exchangeStream``), the exception leaves a ``noexcept`` function, and
#    C++ calls ``std::terminate``. A custom ``autograd.Function`` goes
#    through ``throw_python_error()`` in ``python_function.cpp``, which
#    fetches the indicator before throwing, so its errors arrive intact.
#
#    **Proposed change.** Either of two one-line fixes lifts it; both are
#    worth making. In ``torch/csrc/acc/Module.cpp``, ``PythonDeviceGuard``
#    serves only ``PrivateUse1``, so ``type()`` can return
#    ``c10::DeviceType::PrivateUse1`` without calling Python, and no
#    ``noexcept`` member then reaches Python. In ``python_hook.cpp`` and
#    ``python_saved_variable_hooks.cpp``, replace ``throw python_error()``
#    after a failed hook call with ``throw_python_error()``, as
#    ``python_function.cpp`` does, so no C++ code runs with a Python error
#    pending.

# %%
# A backward before the import leaves the device without autograd threads
# ------------------------------------------------------------------------
# The autograd engine counts the devices it gives threads to once, at the
# first backward of the process. A program that runs a CPU backward before
# ``import backend_pkg`` has no thread for npy: ``loss.backward()`` still
# works (``NpyTensor.backward`` runs the graph on the calling thread), but
# ``torch.autograd.grad`` and ``torch.autograd.backward`` stop at an internal
# assert. Run in a fresh process:

BACKWARD_BEFORE_IMPORT = """
import torch
x = torch.ones(2, requires_grad=True)
(x * 2).sum().backward()  # the engine counts devices here: none yet
import backend_pkg
y = torch.ones(2, device="npy", requires_grad=True)
(y * 2).sum().backward()
print("loss.backward():", y.grad)
try:
    torch.autograd.grad((y * 2).sum(), y)
except RuntimeError as error:
    print("torch.autograd.grad:", str(error).split(" at ")[0])
"""
print(subprocess.run([sys.executable, "-c", BACKWARD_BEFORE_IMPORT], capture_output=True, text=True,
                     check=True).stdout)

# %%
# Importing the backend before the first backward avoids it.
#
# .. dropdown:: Issue: a device registered after the first backward gets no autograd thread
#
#    **What fails.** ``Engine::start_device_threads``
#    (``torch/csrc/autograd/engine.cpp``), run once per process through
#    ``initialize_device_threads_pool``'s ``call_once``, sizes
#    ``device_ready_queues_`` from the device guards registered at that
#    moment. A PrivateUse1 guard registered later, as every Python backend's
#    is at import, is never counted, and ``Engine::ready_queue`` asserts
#    ``device_index < device_ready_queues_.size()`` for the new device.
#
#    **Proposed change.** Grow the pool on demand: where ``ready_queue``
#    now asserts, start the threads of the devices counted since (the
#    registered guards' ``deviceCount()``, read again) under a lock that
#    readers of ``device_ready_queues_`` also take; or have
#    ``c10::impl::registerDeviceGuard`` tell the engine, which grows its pool
#    then.

# %%
# Per-op Python overhead
# ----------------------
# Each op goes from the dispatcher into a Python function, which reads its
# inputs (``unwrap``), computes with NumPy and wraps the result (``wrap``).
# Measured on the machine that built this page, for four-element float32
# tensors:


def microseconds(fn, number=3000):
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


x = torch.ones(4).to("npy")
array = backend_pkg.unwrap(x)
result = array + array  # new memory, as a kernel's result is
cpu = torch.ones(4)
print(f"torch add on npy:   {microseconds(lambda: x + x):6.2f} µs")
print(f"  unwrap, per input {microseconds(lambda: backend_pkg.unwrap(x)):6.2f} µs")
print(f"  NumPy add alone   {microseconds(lambda: array + array):6.2f} µs")
print(f"  wrap the result   {microseconds(lambda: backend_pkg.wrap(result)):6.2f} µs")
print(f"torch add on CPU:   {microseconds(lambda: cpu + cpu):6.2f} µs")

# %%
# The rest is the dispatcher's round trip into Python and back, with a new
# tensor to hand over. Large tensors hide it; loops over tiny tensors do not.
# ``make bench`` measures that round trip on its own, as the *no-op floor*:
# the same ``add`` with the npy kernel replaced by a Python function that
# returns its input, and again with one that returns a new npy tensor. What
# it measured last (:ref:`sphx_glr_auto_examples_11_performance.py` has the
# rest, and why a compiled function does not beat CPU eager on a small model):

# ``make bench`` writes it in the checkout this backend_pkg is installed from.
BENCHMARKS = Path(backend_pkg.__file__).resolve().parents[1] / "source" / "benchmarks.json"


add = json.loads(BENCHMARKS.read_text())["timings_us"]["small"]["add"]
print(f"a small add costs {add['npy']['us']:.1f} µs on npy vs {add['cpu']['us']:.1f} µs on CPU;"
      f" the no-op floor is {add['floor']['us']:.1f} µs, {add['floor_with_result']['us']:.1f} µs with a new"
      f" result, NumPy's add alone {add['numpy']['us']:.1f} µs (source/benchmarks.json, make bench)")

# %%
# An experimental, private API
# ----------------------------
# Both entry points start with an underscore, and the setup function says
# so itself:

doc = torch.utils.backend_registration._setup_privateuseone_for_python_backend.__doc__
print(next(line.strip() for line in doc.splitlines() if "WARNING" in line))
print("torch", torch.__version__)

# %%
# ``backend_pkg`` pins the torch release it is tested with
# (``torch==2.13.0``) and its tests exercise every piece of the API it uses.
#
# dtypes NumPy does not have
# --------------------------
# ``bfloat16`` (and float8, and ``complex32``) have no NumPy dtype. The
# package refuses them by name instead of storing something else; converting
# on the way in works:

source = torch.tensor([1.5, -2.25], dtype=torch.bfloat16)
try:
    source.to("npy")
except TypeError as error:
    print("TypeError:", str(error).split(" Supported")[0])
print(source.to("npy", dtype=torch.float32))

# %%
# Ops without a kernel
# --------------------
# An op the package has no NumPy kernel for runs PyTorch's own CPU kernel on
# the npy memory (npy memory is host memory, so nothing is copied), with a
# warning the first time each op does:
#
# .. literalinclude:: ../../backend_pkg/fallback.py
#    :pyobject: run_on_cpu

import os
import warnings

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print(torch.special.erfcx(x))
for warning in caught:  # none if this process already ran erfcx on npy
    print(warning.message)

# %%
# ``BACKEND_PKG_STRICT=1`` turns the fallback into an error naming the op,
# to find out what a workload needs natively; ``backend_pkg.fallback.calls``
# counts what fell back:

os.environ["BACKEND_PKG_STRICT"] = "1"
try:
    torch.special.erfcx(x)
except NotImplementedError as error:
    print("NotImplementedError:", error)
finally:
    del os.environ["BACKEND_PKG_STRICT"]
print(dict(backend_pkg.fallback.calls))

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
# they stay one:


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

# %%
# ``resize_`` moves only the resized tensor
# -----------------------------------------
# On CPU, growing a tensor with ``resize_`` grows its storage in place, so
# every view of that storage sees the new memory. A Python backend cannot
# change the memory behind an existing storage, so ``backend_pkg`` moves the
# resized tensor to a new storage and older views keep the old one:

for device in ("cpu", "npy"):
    base = torch.zeros(2, device=device)
    alias = base[:]
    base.resize_(1000)
    base[0] = 7.0
    print(f"{device}: the alias sees {alias[0].item()}")

# %%
# A Python guard at interpreter exit
# ----------------------------------
# By default the autograd engine runs a device's backward work on a thread of
# its own (``loss.backward()`` on npy keeps it on the calling thread, see
# :meth:`backend_pkg.NpyTensor.backward`; ``torch.autograd.backward`` and
# ``torch.autograd.grad`` do not), which calls the (Python) device guard, and
# so takes the GIL, just after ``backward()`` returns. If that call comes
# while Python is already finalizing, CPython ends the thread in a way
# PyTorch's C++ frames turn into ``std::terminate``: the process aborts after
# a clean run. Short scripts calling ``backward()`` on that thread did so in
# 9 of 30 runs on a loaded machine here, and with PyTorch's own default guard
# in 7 of 30. ``backend_pkg`` registers an
# exit handler that, after a ``backward()`` on that thread, waits until the
# guard has been quiet for 20 ms (0 of 40 aborts after):
#
# .. literalinclude:: ../../backend_pkg/runtime.py
#    :pyobject: settle_autograd_thread
#
# The proper fix belongs in PyTorch: a guard whose device type is known in
# C++ would not need the GIL at all.
#
# See also the :doc:`../see_also` page.

# sphinx_gallery_thumbnail_path = "../_build/diagrams/autograd.png"
