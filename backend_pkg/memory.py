"""How much memory npy tensors hold: ``torch.npy.memory_allocated()`` and friends.

``torch.accelerator.memory_allocated()`` and the rest of
``torch.accelerator.memory`` ask the device's C++ allocator, which must be a
``c10::DeviceAllocator`` (c10/core/CachingDeviceAllocator.h,
``getDeviceAllocator``); a Python backend has none to give, so they fail
with an internal assert. The device module offers the same numbers under
the names ``torch.cuda`` uses (:mod:`backend_pkg.device`).

npy memory is the NumPy arrays that own the bytes of npy storages, their
*roots* (:func:`storage_root` finds the root of any view). Each root counts once, from the moment
a storage takes it until NumPy frees it, which a weak reference reports.
npy caches nothing, so memory reserved is memory allocated.

Counting costs about 0.45 µs per new storage, a sixth of a small op
(a 3-element add: 2.84 µs, 3.31 µs counting), so it starts only when a
program first asks: the first call of any of these functions turns it on, after
counting the roots alive at that moment. Peaks are therefore peaks since
counting started; a program measuring one resets it first
(``torch.npy.reset_peak_memory_stats()``), as it does on CUDA.
"""

import gc
import weakref

import numpy as np
import torch

# Read by backend_pkg.tensor each time a storage takes a root.
counting = False

# id(root) -> the weak reference that reports it freed, for every root counted.
# No lock: with the GIL, each counter update below is one uninterrupted
# read-modify-write (CPython switches threads only at calls and loops), and a
# callback that runs inside count() (a collection during _Root()) runs between them.
_roots = {}
_allocated = 0
_peak = 0
_allocations = 0
_frees = 0


class _Root(weakref.ref):
    __slots__ = ("key", "nbytes")


def _free(ref):
    global _allocated, _frees
    del _roots[ref.key]
    _allocated -= ref.nbytes
    _frees += 1


def count(root):
    """Count ``root``'s bytes until NumPy frees it (once, however many storages share it)."""
    global _allocated, _peak, _allocations
    key = id(root)
    if key in _roots:
        return
    ref = _roots[key] = _Root(root, _free)
    ref.key = key
    ref.nbytes = nbytes = root.nbytes
    _allocated += nbytes
    _allocations += 1
    if _allocated > _peak:
        _peak = _allocated


def _start_counting():
    """Count every root a live npy storage holds, then each new one as it comes."""
    global counting
    if counting:
        return
    counting = True
    # By type: isinstance would read each object's __class__, which some objects warn on.
    for obj in gc.get_objects():
        root = getattr(obj, "_npy_root", None) if issubclass(type(obj), torch.UntypedStorage) else None
        if root is not None:
            # A slice of a storage has for root a view of its whole storage's root.
            count(storage_root(root))


def storage_root(array):
    """The array that owns the memory ``array`` looks into.

    NumPy's stride tricks put a non-array holder between a view and its
    base, so the chain of ``.base`` is followed through anything that has one.
    """
    root = array
    holder = array.base
    while holder is not None:
        if isinstance(holder, np.ndarray):
            root = holder
        holder = getattr(holder, "base", None)
    return root


def allocated():
    _start_counting()
    return _allocated


def peak():
    _start_counting()
    return _peak


def reset_peak():
    global _peak
    _start_counting()
    _peak = _allocated


def stats():
    """The counters of ``torch.cuda.memory_stats()`` that npy has, under the same names."""
    _start_counting()
    return {
        "allocated_bytes.all.current": _allocated,
        "allocated_bytes.all.peak": _peak,
        "allocation.all.allocated": _allocations,
        "allocation.all.current": len(_roots),
        "allocation.all.freed": _frees,
        "reserved_bytes.all.current": _allocated,
        "reserved_bytes.all.peak": _peak,
    }
