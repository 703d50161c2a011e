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

C++ calls into Python at moments Python did not choose: the hooks' methods,
the kernels and the fallback. When that happens while a function compiled
by ``torch.compile`` runs (an eager ``loss.backward()`` after a graph break
runs npy kernels), Dynamo takes the new frame for user code and compiles
it: it traces the kernels' NumPy code into graphs of their own.
:func:`untraced` marks each such function for Dynamo to run, never
compile. The guard's answer runs no Python code at all (see
:class:`NpyDeviceGuard`).
"""

import itertools
import sys
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

# The guard's answers: the device type, as many times as C++ asks, from an
# iterator that counts down as it answers (settle_autograd_thread reads the count).
_GUARD_ANSWERS = itertools.repeat(torch._C._autograd.DeviceType.PrivateUse1, sys.maxsize)

# Whether a backward() has started, since settle_autograd_thread last waited, that gives the
# autograd engine's npy thread work: it calls the guard after backward() returns.
_threaded_backward_started = False


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
        # The autograd engine asks this as each backward() starts (GraphTask::stash_current_streams
        # in torch/csrc/autograd/engine.cpp), on the calling thread.
        global _threaded_backward_started
        if torch._C._is_multithreading_enabled():
            _threaded_backward_started = True
        return device_index in range(device.device_count())


class NpyDeviceGuard(torch._C._acc.DeviceGuard):
    """The device guard: it names its device type, ``PrivateUse1``.

    C++ asks about twice per op that records autograd history, and four
    times per node of a backward: ``PythonDeviceGuard`` in
    ``torch/csrc/acc/Module.cpp`` looks up the attribute ``type_`` on this
    object each time and calls it, whatever it is. A Python method would cost
    a frame and a bound method each time; the ``__next__`` of an endless
    :func:`itertools.repeat` returns the answer from C, and counts the calls.
    Under callgrind a call then takes about 3,100 instructions instead of
    4,400 (pybind11's lookup of the override and its conversion of the answer
    are the rest). pybind11 takes a built-in *function* for the C++ method not
    overridden ("Tried to call pure virtual function"); ``__next__`` is a
    ``method-wrapper``, which it calls.
    """

    type_ = _GUARD_ANSWERS.__next__


def guard_calls():
    """How many times the guard has answered."""
    return sys.maxsize - _GUARD_ANSWERS.__length_hint__()


def settle_autograd_thread(quiet=QUIET_SECONDS, limit=1.0):
    """Wait, at interpreter exit, until the autograd thread has gone quiet.

    A backward() whose nodes run on the autograd engine's npy thread can
    leave that thread holding the last reference to the backward's graph
    task after backward() returns. Dropping it drops a Python object too:
    the ``contextvars`` context that ``_engine_run_backward``
    (torch/autograd/graph.py) stashes in the thread-local state the graph
    task copies. If Python is finalizing by then, taking the GIL for that
    decref makes CPython end the thread with pthread_exit, whose unwinding
    through PyTorch's C++ frames calls std::terminate: the process aborts
    after a clean run (gdb shows ``~ThreadLocalState`` on ``pt_autograd_0``).
    The thread calls the guard for each node it runs; once the guard has
    been quiet for ``quiet`` seconds (waiting at most ``limit``), its last
    node is long done and so, in practice, is the release that follows it.

    Only a backward() that gives that thread work makes this wait:
    ``loss.backward()`` on npy runs on the calling thread
    (:meth:`NpyTensor.backward`), so a script that trains with it exits
    without waiting; ``torch.autograd.backward`` and ``torch.autograd.grad``
    use the device thread (the hooks' ``has_primary_context`` notes them).
    """
    global _threaded_backward_started
    if not _threaded_backward_started:
        return
    deadline = time.monotonic() + limit
    calls, quiet_since = guard_calls(), time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - quiet_since < quiet:
        time.sleep(quiet / 4)
        if guard_calls() != calls:
            calls, quiet_since = guard_calls(), time.monotonic()
    _threaded_backward_started = False
