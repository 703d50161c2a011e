"""What the C++ runtime asks a PrivateUse1 backend: the hooks and the device guard.

PyTorch's C++ side reaches a backend through two interfaces, and
``torch._C._acc`` lets Python objects implement both:

* ``PrivateUse1Hooks`` answers whether the device is built, available and
  initialised. The autograd engine asks ``has_primary_context`` before it
  runs ``backward()`` on a device, so without hooks backward fails.
* ``DeviceGuard`` tells the dispatcher which device type it is guarding.
  The C++ side fixes the rest: one device (index 0), one default stream,
  events that complete at once. That matches this backend: NumPy computes
  synchronously on the host.

C++ calls into Python at moments Python did not choose: these methods, the
kernels and the fallback. When that happens while a function compiled by
``torch.compile`` runs (the code Dynamo generates asks
``torch.accelerator.current_stream()``, which asks the guard its device
type; an eager ``loss.backward()`` after a graph break runs npy kernels),
Dynamo takes the new frame for user code and compiles it: it warns that it
cannot trace the guard's ``time.monotonic``, and traces the kernels' NumPy
code into graphs of their own. :func:`untraced` marks each such function
for Dynamo to run, never compile.
"""

import threading
import time

import torch

from . import device

QUIET_SECONDS = 0.02

# torch._dynamo.decorators.skip marks a function's code (skip_code in
# torch/_dynamo/eval_frame.py) with FrameExecStrategy(SKIP, DEFAULT): its own
# frame runs uncompiled, the frames it calls may still be compiled. This marks
# both SKIP, and goes through torch._C directly because importing Dynamo would
# add over a second to ``import backend_pkg``.
_eval_frame = torch._C._dynamo.eval_frame
_SKIP_RECURSIVELY = _eval_frame._FrameExecStrategy(_eval_frame._FrameAction.SKIP, _eval_frame._FrameAction.SKIP)

_PRIVATE_USE1 = torch._C._autograd.DeviceType.PrivateUse1
_MAIN_THREAD = threading.main_thread().ident
_thread_id = threading.get_ident

# When a thread other than the main one last called into the guard. The
# autograd engine's npy thread (which runs backward work that
# NpyTensor.backward does not keep on the calling thread) still calls the
# guard just after backward() returns; see settle_autograd_thread.
_last_guard_call = 0.0


def untraced(function):
    """Have Dynamo run ``function``'s frames, and the frames they call, without compiling them."""
    _eval_frame.set_code_exec_strategy(function.__code__, _SKIP_RECURSIVELY)
    return function


class NpyHooks(torch._C._acc.PrivateUse1Hooks):
    @untraced
    def is_built(self):
        return True

    @untraced
    def is_available(self):
        return device.is_available()

    @untraced
    def has_primary_context(self, device_index):
        return device_index in range(device.device_count())


class NpyDeviceGuard(torch._C._acc.DeviceGuard):
    @untraced
    def type_(self):
        # C++ asks this about twice per op that records autograd history, and a few times per
        # node of a backward: every line here counts.
        global _last_guard_call
        if _thread_id() != _MAIN_THREAD:
            _last_guard_call = time.monotonic()
        return _PRIVATE_USE1


def settle_autograd_thread(quiet=QUIET_SECONDS, limit=1.0):
    """Wait, at interpreter exit, until the autograd thread has stopped calling the guard.

    The guard is Python, so each call from the autograd engine's device thread
    takes the GIL. A call that comes once Python is finalizing makes CPython
    end that thread with pthread_exit, whose unwinding through PyTorch's C++
    frames calls std::terminate: the process aborts after a clean run (seen
    in about 1 of 4 short scripts that call backward() on a loaded machine,
    with PyTorch's own default guard as well). Waiting until the guard has
    been quiet for ``quiet`` seconds (at most ``limit``) lets those last calls
    finish first.

    Only calls from threads other than the main one count: ``loss.backward()``
    on npy runs on the calling thread (:meth:`NpyTensor.backward`), so a
    script that trains on its main thread exits without waiting.
    """
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and time.monotonic() - _last_guard_call < quiet:
        time.sleep(quiet / 4)
