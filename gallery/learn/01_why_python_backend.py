"""
Why a Python backend
====================

PyTorch routes every operator call through its *dispatcher*, which picks a
kernel by *dispatch key*: ``CPU``, ``CUDA``, ``XLA``... One key,
``PrivateUse1``, is reserved for a backend that lives outside PyTorch. A
hardware vendor usually fills it from C++ (see ``torch_openreg``, PyTorch's
reference out-of-tree backend). Since PyTorch 2.10 it can also be filled
entirely from Python, which is what this tutorial teaches.

Choose Python when the device already has a Python API that computes
synchronously (a simulator, NumPy here), when you are prototyping, or when
your kernels are Python anyway. Choose C++ when per-operator overhead
matters more than development speed, or when you need streams, events,
several devices or device generators, which the Python route does not
offer (see :ref:`sphx_glr_auto_examples_learn_05_gotchas.py`).

An asynchronous runtime, such as JAX (which dispatches asynchronously) or
MLX (which evaluates lazily), is not a good fit as it is: the C++ side of
the Python device guard (``PythonDeviceGuard`` in
``torch/csrc/acc/Module.cpp``) reports every stream and every event
complete at once and never waits. That is true of NumPy, whose kernels have
finished when they return; for JAX or MLX it would be true only if every
kernel and copy waited for its result (``block_until_ready``,
``mx.eval``), giving up the overlap those runtimes exist for.
"""

# %%
# The reserved key
# ----------------
# Every PyTorch build has the ``PrivateUse1`` key, with no kernels behind it
# until a backend registers some. A CPU tensor's own keys show which entries
# of the dispatcher's table serve it:

import torch

print(torch._C.DispatchKey.PrivateUse1)
print(torch._C._dispatch_keys(torch.ones(1)))

# %%
# After ``import backend_pkg``, tensors on the new ``npy`` device carry the
# PrivateUse1 key (and its autograd counterpart), so every operator called on
# them is looked up in the PrivateUse1 column of the table:

import backend_pkg

x = torch.ones(2, device="npy")
print(x.device, torch._C._dispatch_keys(x))

# %%
# One call on two such tensors, ``x + y``, from Python into NumPy: the
# dispatcher goes through the keys of both tensors, highest first, and at
# ``PrivateUse1`` runs the Python kernel the package registered with
# ``torch.library`` (``tests/docs/test_diagrams.py`` checks each name and key
# drawn against the code):

from _diagrams import draw

draw("dispatch_path")

# %%
# An event recorded on ``npy`` reports itself complete at once: the guard's
# C++ side answers every ``query`` with ``true``, whatever the device is
# doing.

event = torch.Event(device="npy")
event.record()
print("event complete at once:", event.query())

# %%
# What the Python route costs
# ---------------------------
# Each operator on ``npy`` runs a Python function, so small operations pay
# Python's overhead. Here is one elementwise ``add`` on a four-element tensor,
# on CPU and on ``npy``, as ``make bench`` timed it last: the run
# :ref:`sphx_glr_auto_examples_deep_dives_07_performance.py` plots, read from
# ``source/benchmarks.json`` in the checkout ``backend_pkg`` is installed from.

import json
from pathlib import Path

BENCHMARKS = Path(backend_pkg.__file__).resolve().parents[1] / "source" / "benchmarks.json"
add = json.loads(BENCHMARKS.read_text())["timings_us"]["small"]["add"]
for device in ("cpu", "npy"):
    print(f"{device}: {add[device]['us']:6.1f} µs per add")

# %%
# Next, :ref:`sphx_glr_auto_examples_learn_02_write_your_own_backend.py`
# builds a whole backend of your own, step by step.
