"""
Write your own backend
======================

``minimal/python_backend.py`` is a whole backend in one file: its own
device, ``mini``, whose memory is NumPy arrays, with no import of
``backend_pkg``. Copy it, and it is yours. This page builds it region by
region, each region quoted from the file itself, says what to change when
your memory is not NumPy, and ends with the file's checks passing.
"""

# %%
# 1. The name
# -----------
# ``PrivateUse1`` is the dispatch key PyTorch keeps for one out-of-tree
# backend per process; the setup call below renames it to your device's
# name. The name is one constant, and changing it alone renames the device.
# PyTorch renames the key first and checks the name later (the device-string
# parser reads only lower-case letters and ``_``; the setup adds attributes
# such as ``Tensor.is_mini`` and refuses to replace one), so a name it
# refuses would leave the process half set up: ``check_device_name`` refuses
# it before anything changes:
#
# .. literalinclude:: ../../../minimal/python_backend.py
#    :start-after: # LITERALINCLUDE START: DEVICE_NAME
#    :end-before: # LITERALINCLUDE END: DEVICE_NAME
#
# 2. Memory: a tensor over your memory
# ------------------------------------
# A tensor is metadata (sizes, strides, offset, dtype) over a *storage*,
# which holds a data pointer and a byte count. ``wrap`` makes a storage over
# a NumPy array's memory with ``_construct_storage_from_data_pointer`` and
# keeps the array alive on it; ``tensor_over`` makes an empty PrivateUse1
# tensor (``torch._C._acc.create_empty_tensor``), points it at that storage
# with ``set_``'s CPU kernel (which touches no memory), and gives it the
# ``MiniTensor`` class. ``unwrap`` is the reverse: a NumPy view of a tensor's
# memory, from its storage and its own metadata, never a copy:
#
# .. literalinclude:: ../../../minimal/python_backend.py
#    :start-after: # LITERALINCLUDE START: MEMORY
#    :end-before: # LITERALINCLUDE END: MEMORY
#
# (:ref:`sphx_glr_auto_examples_deep_dives_02_tensor_subclass.py` shows the
# two mistakes ``MiniTensor`` avoids, run.)
#
# 3. The runtime: hooks, guard, setup
# -----------------------------------
# Besides kernels, PyTorch's C++ side asks two objects about the device: the
# *hooks* (``backward()`` asks ``has_primary_context`` first) and the *device
# guard* (which device and stream are current; its C++ side answers one
# device, one stream, for every Python guard). One call registers the name,
# the generated ``Tensor.mini()`` methods, a device module (the attribute of
# ``torch`` named after the device; a stand-in when none is given), the hooks
# and the guard. The kernels below go into one ``torch.library.Library``
# through ``kernel``:
#
# .. literalinclude:: ../../../minimal/python_backend.py
#    :start-after: # LITERALINCLUDE START: RUNTIME
#    :end-before: # LITERALINCLUDE END: RUNTIME
#
# What that one call does, in order (drawn from ``backend_pkg``'s setup, the
# same call with the package's own hooks, guard and device module):

from _diagrams import draw

draw("setup")

# %%
# (:ref:`sphx_glr_auto_examples_deep_dives_03_hooks_and_device_guard.py`
# runs ``backward()`` without hooks and a copy without a guard.)
#
# 4. Copies
# ---------
# ``tensor.to("mini")`` allocates on the device (``empty_strided``) and
# fills it with ``_copy_from``, the one op every copy between devices
# becomes. Running PyTorch's CPU ``copy_`` over CPU views of both sides gives
# PyTorch's own dtype conversions, into memory the destination owns:
#
# .. literalinclude:: ../../../minimal/python_backend.py
#    :start-after: # LITERALINCLUDE START: COPY
#    :end-before: # LITERALINCLUDE END: COPY
#
# 5. Views
# --------
# A view is a new tensor over its base's storage, with other metadata;
# ``view`` lets the meta device compute the strides (or raise as CPU
# would):
#
# .. literalinclude:: ../../../minimal/python_backend.py
#    :start-after: # LITERALINCLUDE START: VIEWS
#    :end-before: # LITERALINCLUDE END: VIEWS
#
# 6. Kernels
# ----------
# For a *structured* op (``add``, ``add_`` and ``add(out=...)`` all reach
# ``add.out``), register only the ``out=`` form: PyTorch has already given
# ``out`` the result's dtype and shape, type promotion included: ``sin`` of
# an int tensor gets a float ``out``, as on CPU. A kernel that makes its own
# result, as ``relu``'s does, must choose that dtype itself; copying
# ``relu``'s ``self.dtype`` into ``sin`` would give ``tensor([0, 0])``.
#
# .. literalinclude:: ../../../minimal/python_backend.py
#    :start-after: # LITERALINCLUDE START: KERNELS
#    :end-before: # LITERALINCLUDE END: KERNELS
#
# :ref:`sphx_glr_auto_examples_learn_03_registering_ops.py` finds, by
# experiment, which ops a step needs.
#
# 7. Every other op: the CPU fallback
# -----------------------------------
# Your memory is host memory, so an op without a kernel can run PyTorch's
# CPU kernel on CPU views of it. In-place ops write the device's memory
# through those views, and results in new memory are copied to the device.
# An ``out=`` tensor is the exception: the CPU kernel may resize it, and
# NumPy memory cannot grow in place, so it computes into a CPU tensor that is
# copied into the resized ``out`` (``resize_``, among the views above, moves
# a tensor that outgrows its memory to new memory). Each op warns once; the
# strict switch turns the fallback into an error naming the op, to find what
# a workload needs natively:
#
# .. literalinclude:: ../../../minimal/python_backend.py
#    :start-after: # LITERALINCLUDE START: FALLBACK
#    :end-before: # LITERALINCLUDE END: FALLBACK
#
# 8. Parameters that stay themselves
# ----------------------------------
# ``Module.to(device)`` keeps each parameter object only where the op
# ``_has_compatible_shallow_copy_type`` says the CPU tensor and the moved one
# are compatible, and c10 leaves that answer for PrivateUse1 to a kernel of
# the backend's (``has_compatible_shallow_copy_type`` in
# ``c10/core/TensorImpl.h``; upstream, pytorch/pytorch#155215, closed). With
# it, tied weights stay tied and an optimizer built before ``.to()`` trains:
#
# .. literalinclude:: ../../../minimal/python_backend.py
#    :start-after: # LITERALINCLUDE START: PARAMETERS
#    :end-before: # LITERALINCLUDE END: PARAMETERS
#
# 9. A clean exit after backward
# ------------------------------
# PyTorch's autograd engine runs a device's backward on a thread of its own,
# and that thread can drop the last reference to the backward's stashed
# Python context after ``backward()`` has returned; if the script has ended
# by then, taking the GIL during Python's shutdown ends the thread inside
# PyTorch's C++ and the process aborts (``terminate called without an active
# exception``). A script whose last statement was ``loss.backward()`` did so
# in 8 of 20 runs on a busy machine here, until the template's tensors ran
# their backward on the calling thread, as CPU tensors always do
# (:ref:`sphx_glr_auto_examples_limits_02_autograd_engine.py` has the
# backtrace and the upstream change):
#
# .. literalinclude:: ../../../minimal/python_backend.py
#    :start-after: # LITERALINCLUDE START: EXIT
#    :end-before: # LITERALINCLUDE END: EXIT
#
# Memory that is not NumPy
# ------------------------
# Two things tie the template to NumPy, and both are small: ``wrap`` needs a
# *data pointer* and a byte count for the storage, plus an object that keeps
# the memory alive; ``unwrap`` (and so ``_copy_from`` and the fallback)
# needs a *CPU view* of that memory. Any host buffer gives both. Here the
# template's tensor is built over a ``bytearray``, in a fresh process (a
# process has one PrivateUse1 backend, and this one has ``npy``):

# CHECKOUT: the checkout backend_pkg is installed from, where minimal/ lives.
from _fresh_python import CHECKOUT, run_code, run_module

OVER_A_BYTEARRAY = """
import ctypes
import numpy as np
import torch
from minimal import python_backend as mini

memory = bytearray(16)  # your device's memory: here 16 bytes of host memory
address = ctypes.addressof((ctypes.c_char * len(memory)).from_buffer(memory))  # the data pointer
device = torch.device(mini.DEVICE_NAME, 0)
storage = torch._C._construct_storage_from_data_pointer(address, device, len(memory))
storage.root = np.frombuffer(memory, np.float32)  # the CPU view unwrap reads; it keeps memory alive
x = mini.tensor_over(storage, torch.float32, (4,), (1,), 0)
x.copy_(torch.arange(4.0))
print(x * 2)
print("memory now:", bytes(memory[4:8]).hex(), "=", np.frombuffer(memory, np.float32)[1])
"""
done = run_code(OVER_A_BYTEARRAY, check=True, in_checkout=True)
print(done.stdout)

# %%
# A device whose memory the host cannot address has no CPU view: there,
# ``_copy_from`` is where the transfers happen, and every op needs a kernel
# of its own (no CPU fallback).
#
# The checks
# ----------
# ``minimal/checks.py`` holds the checks: copies both ways never alias,
# dtypes kept, printing, a view, each device index it reports and none
# beyond, an MLP training step against CPU with ``assert_close``, a float
# function of an int tensor, ops that only the fallback runs, and a tied
# model trained with an optimizer built before ``.to()``. Then the template's
# own: backward on the calling thread, scripts ending in ``loss.backward()``
# exiting cleanly on a busy machine (50 in ``make test``, 5 here), a copy
# with another ``DEVICE_NAME`` passing every check, refused names, and the
# strict switch. They run in a process of their own; copy them beside your
# backend and run them after each change:

result = run_module("minimal.checks", "python", "--exit-runs", "5", timeout=900)
print(result.stdout)
print(f"minimal/python_backend.py: {len((CHECKOUT / 'minimal/python_backend.py').read_text().splitlines())} lines")

# %%
# Next, :ref:`sphx_glr_auto_examples_learn_03_registering_ops.py`: how to
# register a kernel, and which ones a step needs.

# sphinx_gallery_thumbnail_path = "../_build/diagrams/setup.png"
