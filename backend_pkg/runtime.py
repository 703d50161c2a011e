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

import torch

from . import device


class NpyHooks(torch._C._acc.PrivateUse1Hooks):
    def is_built(self):
        return True

    def is_available(self):
        return device.is_available()

    def has_primary_context(self, device_index):
        return device_index in range(device.device_count())


class NpyDeviceGuard(torch._C._acc.DeviceGuard):
    def type_(self):
        return torch._C._autograd.DeviceType.PrivateUse1
