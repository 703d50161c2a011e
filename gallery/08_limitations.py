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
# Tensor objects made by PyTorch's C++ code
# -----------------------------------------
# A few PyTorch paths make a new Python object over an existing npy storage:
# ``.data`` and views that change the dtype. Such objects are plain
# ``torch.Tensor``, not ``NpyTensor``. Kernels read them correctly, because
# ``unwrap`` works from the storage and the tensor's metadata, but printing
# one takes PyTorch's generic printer, which runs a dozen small ops on it
# (here, partly through the fallback) where ``NpyTensor`` prints a CPU copy:

data = x.data
print(type(data).__name__, data.device)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    print(data)

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
# The autograd engine runs ``npy`` backward work on a thread of its own, which
# calls the (Python) device guard, and so takes the GIL, just after
# ``backward()`` returns. If that call comes while Python is already
# finalizing, CPython ends the thread in a way PyTorch's C++ frames turn into
# ``std::terminate``: the process aborts after a clean run. Short scripts
# calling ``backward()`` did so in 9 of 30 runs on a loaded machine here, and
# with PyTorch's own default guard in 7 of 30. ``backend_pkg`` registers an
# exit handler that waits until the guard has been quiet for 20 ms (0 of 40
# aborts after):
#
# .. literalinclude:: ../../backend_pkg/runtime.py
#    :pyobject: settle_autograd_thread
#
# The proper fix belongs in PyTorch: a guard whose device type is known in
# C++ would not need the GIL at all.
#
# See also the :doc:`../see_also` page.
