"""
Gotchas
=======

What a backend author meets on the Python route, each shown by running it
on ``npy``, with what ``backend_pkg`` does about it. What PyTorch itself
would have to change is in the *PyTorch limits* section
(:ref:`sphx_glr_auto_examples_limits_01_runtime_around_kernels.py` and the
pages after it).
"""

# %%
# One device, index 0
# -------------------
# The C++ side of ``torch._C._acc.DeviceGuard`` reports exactly one device.
# ``backend_pkg`` says so too, and refuses any other index by name:

import json
from pathlib import Path

import torch
from _fresh_python import run_code

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
# inputs (``unwrap``), computes with NumPy and wraps the result (``wrap``),
# and back. Large tensors hide that round trip; loops over tiny tensors do
# not. ``make bench`` measures it on its own, as the *no-op floor*: the same
# ``add`` with the npy kernel replaced by a Python function that returns its
# input, and again with one that returns a new npy tensor. Its last run, the
# one :ref:`sphx_glr_auto_examples_deep_dives_07_performance.py` plots, for
# four-element float32 tensors:

# ``make bench`` writes it in the checkout this backend_pkg is installed from.
BENCHMARKS = Path(backend_pkg.__file__).resolve().parents[1] / "source" / "benchmarks.json"

add = json.loads(BENCHMARKS.read_text())["timings_us"]["small"]["add"]
print(
    f"a small add costs {add['npy']['us']:.1f} µs on npy vs {add['cpu']['us']:.1f} µs on CPU;"
    f" the no-op floor is {add['floor']['us']:.1f} µs, {add['floor_with_result']['us']:.1f} µs with a new"
    f" result, NumPy's add alone {add['numpy']['us']:.1f} µs (source/benchmarks.json, make bench)"
)

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
# .. literalinclude:: ../../../backend_pkg/fallback.py
#    :pyobject: run_on_cpu

import os
import warnings

x = torch.ones(4).to("npy")
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
# Checkpoints name the device
# ---------------------------
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
    print(run_code(LOAD_WITHOUT_BACKEND, check=True).stdout)

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
# Import the backend before the first backward
# --------------------------------------------
# The autograd engine counts the devices it gives threads to at the first
# backward of the process; a device registered later has none, and
# ``torch.autograd.grad`` on it stops at an internal assert
# (:ref:`sphx_glr_auto_examples_limits_02_autograd_engine.py` runs it). Put
# ``import backend_pkg`` (or your backend's import) before any training code.

# sphinx_gallery_thumbnail_path = "../_build/diagrams/memory.png"
