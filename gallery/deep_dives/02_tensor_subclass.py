"""
The tensor subclass
===================

An ``npy`` tensor is a PyTorch tensor whose memory is a NumPy array. This
page builds one by hand from the pieces PyTorch provides, shows two ways to
get it wrong by running them, and then shows how ``backend_pkg`` does it.
"""

# %%
# An empty shell on the device
# ----------------------------
# ``torch._C._acc.create_empty_tensor(shape, dtype)`` makes a tensor on the
# PrivateUse1 device with sizes, contiguous strides and a dtype, but no
# memory: its storage holds zero bytes at address 0.

import numpy as np
import torch

import backend_pkg

shell = torch._C._acc.create_empty_tensor((2, 3), torch.float32)
print(type(shell).__name__, shell.device, shell.dtype, tuple(shell.shape), shell.stride())
print("storage bytes:", shell.untyped_storage().nbytes(), "| data_ptr:", shell.data_ptr())

# %%
# The ``__class__`` swap
# ----------------------
# A backend needs somewhere to keep its own data, and a type to recognise
# its tensors by. Assigning ``__class__`` turns the shell into an instance
# of a ``torch.Tensor`` subclass without copying anything.


class NaiveTensor(torch.Tensor):
    pass


shell.__class__ = NaiveTensor
print(type(shell).__name__, shell.device)

# %%
# Mistake 1: CPU results that keep the subclass
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A ``torch.Tensor`` subclass inherits ``__torch_function__``, which wraps
# every result of every torch function into the subclass, including results
# that live on the CPU. Here a tensor made by ``backend_pkg`` is given the
# naive class, then copied back to the CPU:

naive = torch.arange(3.0).to("npy")
naive.__class__ = NaiveTensor
back = naive.cpu()
print(type(back).__name__, back.device)

# %%
# A CPU tensor claiming to be a device tensor breaks any code that dispatches
# on the type (``isinstance(t, NaiveTensor)`` now means nothing). The fix is
# one line in the subclass: turn ``__torch_function__`` off, so each result
# keeps the type its kernel gave it.
#
# .. literalinclude:: ../../../backend_pkg/tensor.py
#    :pyobject: NpyTensor
#    :lines: 1-10

x = torch.arange(3.0).to("npy")
print(type(x).__name__, type(x.cpu()).__name__)
assert type(x.cpu()) is torch.Tensor

# %%
# Mistake 2: a dtype label that is not the data's
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The tensor's dtype must be the array's dtype. The example this site started
# from labelled every result ``float32``; any copy then reads the bytes of,
# say, ``int64`` data as ``float32``. This is what those bytes mean as float32:

data = np.arange(3, dtype=np.int64)
print(torch.from_numpy(data).view(torch.float32))

# %%
# ``backend_pkg`` reads the dtype off the array, through one table that maps
# each torch dtype to a NumPy dtype (and refuses the dtypes NumPy lacks):

print(backend_pkg.wrap(data).dtype)
print(backend_pkg.wrap(np.ones(2, dtype=np.float16)).dtype)
try:
    torch.ones(2, dtype=torch.bfloat16).to("npy")
except TypeError as error:
    print("TypeError:", error)

# %%
# Wrap and unwrap
# ---------------
# Kernels turn NumPy results into tensors with ``wrap`` and read their inputs
# with ``unwrap``. ``wrap`` gives the shell a *storage* that describes the
# array's memory and keeps the array alive, then copies the array's strides
# and offset into the tensor, so ``stride()``, ``is_contiguous()`` and
# ``data_ptr()`` tell the truth:
#
# .. literalinclude:: ../../../backend_pkg/tensor.py
#    :pyobject: wrap
#
# ``unwrap`` rebuilds the NumPy view from the storage and the tensor's own
# metadata. It is a view, never a copy:
#
# .. literalinclude:: ../../../backend_pkg/tensor.py
#    :pyobject: unwrap

m = torch.arange(12.0).reshape(3, 4).to("npy")
column = m[:, 1]
print(column.stride(), column.storage_offset(), column.is_contiguous())
print(backend_pkg.unwrap(column), backend_pkg.unwrap(column).strides)
print("shares memory with m:", np.shares_memory(backend_pkg.unwrap(column), backend_pkg.unwrap(m)))

# %%
# Views share their base's storage, so writing through a view changes the
# base, as on CPU:

column.fill_(-1.0)
print(m)

# %%
# The whole picture, for a tensor and a view of it: two Python objects, two
# sets of metadata in C++, one storage, and one NumPy array that owns the
# bytes:

from _diagrams import draw

draw("memory")

# %%
# Why a subclass, with its views on the object: measured
# -------------------------------------------------------
# Other designs would do. npy tensors could stay plain ``torch.Tensor``
# objects, with no Python class of their own, or keep their NumPy views on
# their storage instead of on the tensor object. Each changes what a kernel
# pays to find its arrays, and which of PyTorch's object rules a program
# meets. ``benchmarks/object_model.py`` builds a prototype of each as a few
# edits to a copy of ``backend_pkg``, times every design in a process of
# its own, taking turns round by round, and writes
# ``source/object_model.json``, read here (the ratio is against the
# shipped design, turn by turn; each time is a turn's fastest repeat, the
# median over turns):

import json
from pathlib import Path

measurement = json.loads((Path(backend_pkg.__file__).resolve().parents[1] / "source" / "object_model.json").read_text())
print(f"measured {measurement['measured']}, load average {measurement['load_average']} at the start")
designs = measurement["designs"]
cases = list(next(iter(designs.values()))["us"])
for number, (name, row) in enumerate(designs.items(), 1):
    print(f"{number}. {name}")
    for case in cases:
        print(f"  {case:36} {row['us'][case]:9.2f} us  x{row['ratio'][case]:.2f}")

# %%
# and which of the programs that PyTorch's object rules can refuse each
# design lets run:

print(f"{'':48}", "  ".join(f"{number:>3}" for number in range(1, len(designs) + 1)))
for refusal in next(iter(designs.values()))["refusals_lifted"]:
    lifted = ["yes" if row["refusals_lifted"][refusal] else "no" for row in designs.values()]
    print(f"{refusal:48}", "  ".join(f"{answer:>3}" for answer in lifted))

# %%
# The package keeps the subclass with its views on the object: it is the
# fastest of the three on the training steps, eager and compiled. Views per
# storage are slower everywhere: to find an input's NumPy view, a kernel
# asks for the storage and reads four pieces of the tensor's metadata, where
# the shipped design reads one attribute. Plain ``torch.Tensor`` objects
# keep that one read and are a little faster on a single small op (no
# ``__class__`` assignment per result), but slower on the training steps,
# and they lose what only a class can carry: ``NpyTensor.backward``, which runs the
# backward on the calling thread instead of the device's autograd thread;
# ``untyped_storage()`` and ``data_ptr()`` that give a fresh result's
# storage its pointer only when asked; pickling and ``deepcopy`` without
# the cached views; printing from one CPU copy.
#
# What lets the subclass run ``Tensor._make_subclass``, ``as_subclass`` and
# the lazy parameters made on npy is a kernel npy does not register.
# ``_make_subclass`` detaches its argument and ``as_subclass`` aliases it,
# then each gives the result the class asked for, and
# ``check_tensor_subclass`` (``torch/csrc/autograd/python_variable.cpp``)
# refuses when the result already has a Python object of another class. A
# Python kernel's result always has one (an ``NpyTensor``, here), so npy
# leaves ``detach`` and ``alias`` to PyTorch's C++ kernels, whose results
# reach Python with no object yet; ``NpyTensor.detach`` keeps ``x.detach()``
# from Python an ``NpyTensor``. The gradients that ``AccumulateGrad`` stores
# with that C++ ``detach`` are then plain objects, which keep no view: a
# kernel rebuilds a gradient's view each time it reads it (an SGD step reads
# each gradient once).
#
# Parameters are ``NpyTensor`` objects too: ``nn.Parameter(npy_tensor)``
# keeps the class and marks it ``_is_param``, and ``Module.to("npy")``
# gives a moved parameter that class while keeping the object, so tied
# weights stay tied (``backend_pkg/parameters.py``).

# %%
# Next, :ref:`sphx_glr_auto_examples_deep_dives_03_hooks_and_device_guard.py`:
# what the C++ runtime asks of the backend besides kernels.
