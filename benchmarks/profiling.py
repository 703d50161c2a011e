"""Where the time of an eager npy step goes: npy kernels and the rest.

:func:`step_parts` runs a step, given as named phases (forward, backward,
optimizer...), many times and splits each phase's time into:

* ``kernels``: time inside the npy kernels (the Python functions of
  :data:`backend_pkg.ops.KERNELS`), per aten op, with the calls per step.
  Each kernel is wrapped in a timer for the measurement, through a
  ``torch.library`` registration over the usual one that is taken out
  again afterwards; a kernel that an outer kernel calls counts in the outer one;
* ``rest``: everything else: PyTorch's dispatcher and autograd engine in
  C++, the Python of ``torch.nn`` and ``torch.optim``, crossing from C++
  into each Python kernel and back, the device guard's calls (counted in
  ``guard_calls``: C++ asks it around ops that record autograd history and
  around each node of a backward; its answer runs no Python code, see
  :class:`backend_pkg.runtime.NpyDeviceGuard`, so what a call costs is
  pybind11's work to find and call it), and the ops that run on the CPU
  fallback (counted in ``fallback_calls``).

Noise on a shared machine only ever adds time, so every number is the
fastest seen: a phase's time over the steps, a kernel's time per step over
the steps (the sum of those minima is a little below any one step's).
"""

import contextlib
import gc
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field

import torch

from backend_pkg import fallback, runtime
from backend_pkg.ops import KERNELS

_clock = time.perf_counter_ns


@dataclass
class PhaseParts:
    """One phase of a step, in microseconds per step."""

    total_us: float
    kernel_us: dict = field(default_factory=dict)  # aten op -> µs per step in its npy kernel
    kernel_calls: Counter = field(default_factory=Counter)  # aten op -> calls per step
    guard_calls: int = 0
    fallback_calls: Counter = field(default_factory=Counter)  # ops run by PyTorch's CPU kernel

    @property
    def kernels_us(self):
        return sum(self.kernel_us.values())

    @property
    def rest_us(self):
        return self.total_us - self.kernels_us


@contextlib.contextmanager
def _timed_kernels(record):
    """Every npy kernel wrapped in a timer that adds ``op -> [calls, ns]`` into ``record()``."""
    depth = 0

    def timed(op, kernel):
        def run(*args, **kwargs):
            nonlocal depth
            if depth:
                return kernel(*args, **kwargs)
            depth += 1
            start = _clock()
            try:
                return kernel(*args, **kwargs)
            finally:
                elapsed = _clock() - start
                depth -= 1
                entry = record().setdefault(op, [0, 0])
                entry[0] += 1
                entry[1] += elapsed

        return runtime.untraced(run)

    library = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():
        # Replacing the registered kernels, for a while, is the point here.
        warnings.filterwarnings("ignore", message="(?s).*Overriding a previously registered kernel")
        for op, kernel in KERNELS.items():
            library.impl(op, timed(op.name(), kernel), "PrivateUse1")
    try:
        yield
    finally:
        library._destroy()


def _phase_times(phases, steps):
    """Each phase's fastest time over ``steps`` steps, in µs."""
    fastest = dict.fromkeys(phases, float("inf"))
    for _ in range(steps):
        for name, phase in phases.items():
            start = _clock()
            phase()
            fastest[name] = min(fastest[name], (_clock() - start) / 1e3)
    return fastest


def step_parts(phases, steps=200, warmup=5):
    """Split each of ``phases`` (name -> callable, run in order as one step) into its parts.

    Returns name -> :class:`PhaseParts`. Garbage collection is off while it
    measures, as it is in :mod:`timeit`.
    """
    for _ in range(warmup):
        for phase in phases.values():
            phase()
    collecting = gc.isenabled()
    gc.disable()
    try:
        totals = _phase_times(phases, steps)
        parts = {name: PhaseParts(total_us=total) for name, total in totals.items()}
        _add_counts(phases, parts)
        _add_kernel_times(phases, parts, steps)
    finally:
        if collecting:
            gc.enable()
    return parts


def _add_counts(phases, parts):
    """Guard and fallback calls of one step, per phase."""
    for name, phase in phases.items():
        before, guard_before = Counter(fallback.calls), runtime.guard_calls()
        phase()
        parts[name].guard_calls = runtime.guard_calls() - guard_before
        parts[name].fallback_calls = Counter(fallback.calls) - before


def _add_kernel_times(phases, parts, steps):
    """Each kernel's calls and fastest time per step, per phase."""
    current = {}
    fastest = {name: {} for name in phases}
    with _timed_kernels(lambda: current):
        for _ in range(steps):
            for name, phase in phases.items():
                current.clear()
                phase()
                for op, (calls, ns) in current.items():
                    parts[name].kernel_calls[op] = calls
                    fastest[name][op] = min(fastest[name].get(op, float("inf")), ns / 1e3)
    for name, kernel_us in fastest.items():
        parts[name].kernel_us = kernel_us
