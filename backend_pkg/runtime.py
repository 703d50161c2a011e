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
"""

import time

import torch

from . import device

QUIET_SECONDS = 0.02

# When C++ last called into the guard. The autograd engine runs npy backward
# work on its own thread, which still calls the guard just after backward()
# returns; see settle_autograd_thread.
_last_guard_call = 0.0


class NpyHooks(torch._C._acc.PrivateUse1Hooks):
    def is_built(self):
        return True

    def is_available(self):
        return device.is_available()

    def has_primary_context(self, device_index):
        return device_index in range(device.device_count())


class NpyDeviceGuard(torch._C._acc.DeviceGuard):
    def type_(self):
        global _last_guard_call
        _last_guard_call = time.monotonic()
        return torch._C._autograd.DeviceType.PrivateUse1


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
    """
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and time.monotonic() - _last_guard_call < quiet:
        time.sleep(quiet / 4)
