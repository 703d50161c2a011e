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
# Next, :ref:`sphx_glr_auto_examples_deep_dives_03_hooks_and_device_guard.py`:
# what the C++ runtime asks of the backend besides kernels.
