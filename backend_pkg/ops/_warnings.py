"""PyTorch's ``TORCH_WARN_ONCE``, for kernels whose CPU counterpart warns with it.

A warning given with ``TORCH_WARN_ONCE`` reaches Python once per process,
or every time after ``torch.set_warn_always(True)``; ``warnings.warn`` alone
would repeat it on every call where CPU stays quiet.
"""

import warnings

import torch

_given = set()


def warn_once(message, stacklevel):
    """Warn ``message`` as a UserWarning the first time, and later only if warn-always is on."""
    if message in _given and not torch.is_warn_always_enabled():
        return
    _given.add(message)
    warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)
