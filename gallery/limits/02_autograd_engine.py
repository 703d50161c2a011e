"""
Autograd's engine and the Python guard
======================================

Three ways the autograd engine's threads meet a device registered from
Python: an exception in a backward hook, a device registered after the
first backward, and the engine's thread at interpreter exit (where the
guard turns out to play no part). Each is run here, with the report to file
upstream.
"""

from _fresh_python import run_code

import backend_pkg

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
    run = run_code(HOOK_RAISES, device)
    print(f"{device}: exit status {run.returncode}; {(run.stdout + run.stderr).strip().splitlines()[-1]}")

# %%
# An error raised by a kernel or by a custom ``autograd.Function``'s
# ``backward`` still arrives as an exception; only hooks are affected.
# ``tests/core/test_autograd.py`` runs both cases and fails the day PyTorch
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
print(run_code(BACKWARD_BEFORE_IMPORT, check=True).stdout)

# %%
# Importing the backend before the first backward avoids it.
#
# .. dropdown:: Issue: a device registered after the first backward gets no autograd thread
#
#    **What fails.** ``Engine::start_device_threads``
#    (``torch/csrc/autograd/engine.cpp``) runs once per process: in 2.13.0
#    and 2.14.1, ``initialize_device_threads_pool`` calls it from the
#    initializer of a function-local ``static``. It sizes
#    ``device_ready_queues_`` from the device guards registered at that
#    moment. A PrivateUse1 guard registered later, as every Python backend's
#    is at import, is never counted, and ``Engine::ready_queue`` asserts
#    ``device_index < device_ready_queues_.size()`` for the new device.
#
#    **Upstream.** pytorch/pytorch#91898 asks for the engine to start each
#    device's threads when it first meets the device; pytorch/pytorch#180742,
#    a pull request that does so (threads started from ``ready_queue``), was
#    closed, and neither 2.13.0 nor 2.14.1 has it: add this case there.
#
#    **Proposed change.** Grow the pool on demand: where ``ready_queue``
#    now asserts, start the threads of the devices counted since (the
#    registered guards' ``deviceCount()``, read again) under a lock that
#    readers of ``device_ready_queues_`` also take; or have
#    ``c10::impl::registerDeviceGuard`` tell the engine, which grows its pool
#    then.

# %%
# The engine's thread at interpreter exit
# ---------------------------------------
# By default the autograd engine runs a device's backward on a thread of its
# own. ``_engine_run_backward`` (``torch/autograd/graph.py``) first stashes a
# ``contextvars`` context in thread-local state (``_stash_obj_in_tls``), which
# the backward's graph task copies. When that thread drops the last reference
# to the graph task after ``backward()`` has returned, it drops the context
# too, and takes the GIL to do it. If the script has ended by then, CPython
# ends the thread with ``pthread_exit`` while Python finalizes, and the
# unwinding through PyTorch's C++ frames calls ``std::terminate``: the
# process aborts after a clean run (``terminate called without an active
# exception``). gdb shows the aborting thread, ``pt_autograd_0``, in
# ``take_gil`` under ``SafePyObject``'s decref in ``~ThreadLocalState``, in
# the graph task's release in ``Engine::thread_main``.
#
# The guard plays no part: the C++ twin of the template
# (:ref:`sphx_glr_auto_examples_deep_dives_08_cpp_vs_python.py`), whose guard
# is C++, aborted in 3 of 20 scripts ending in ``loss.backward()`` beside two
# busy processes here, and the template before it ran its backward on the
# calling thread in 8 of 20. Both ``backend_pkg`` and the template run
# ``loss.backward()`` on the calling thread, as the engine always does for
# CPU tensors (:meth:`backend_pkg.NpyTensor.backward`). ``torch.autograd.grad``
# and ``torch.autograd.backward`` still use the engine's thread, and for
# those ``backend_pkg`` waits at exit until the guard, which that thread
# calls for each node it runs, has been quiet for 20 ms:
#
# .. literalinclude:: ../../../backend_pkg/runtime.py
#    :pyobject: settle_autograd_thread
#
# .. dropdown:: Upstream: the engine's thread drops a Python object after backward() returns
#
#    Any device whose backward runs on an engine thread is exposed by the same
#    mechanism; CUDA's device threads should be too (not run here: this
#    machine has no GPU). pytorch/pytorch#173568 added the stashed context;
#    pytorch/pytorch#180701 (closed) cleared the graph task's
#    reference to it for a deadlock that the same race causes while Python
#    runs; pytorch/pytorch#38228 (open) is the general case of C++ threads
#    calling into Python at exit. The change: release the graph task's
#    thread-local Python objects on the thread that called ``backward()``
#    when the engine returns to it (``THPEngine_run_backward`` in
#    ``torch/csrc/autograd/python_engine.cpp`` takes the GIL back there), so
#    an engine thread never holds the last reference to one.

# sphinx_gallery_thumbnail_path = "../_build/diagrams/autograd.png"
