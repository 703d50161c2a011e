"""
Registering ops
===============

A kernel is a Python function registered with ``torch.library`` for the
``PrivateUse1`` dispatch key. This page shows the registration API, then
finds by experiment which ops a backend needs for the basic things users
do, by asking the dispatcher.
"""

# %%
# One kernel
# ----------
# ``backend_pkg`` keeps its kernels in one table, filled by one decorator and
# installed by one function, with the lookup order written down once:
#
# .. literalinclude:: ../../backend_pkg/ops/registry.py
#
# A kernel receives the op's arguments as the op's schema names them, and
# returns ``wrap``-ped NumPy results. ``add.Tensor`` honours ``alpha`` and
# PyTorch's type promotion:
#
# .. literalinclude:: ../../backend_pkg/ops/arithmetic.py
#    :pyobject: _combine_scaled

import json
import subprocess
import sys
import textwrap

import torch

import backend_pkg

a = torch.tensor([1, 2, 3]).to("npy")
print(torch.add(a, a, alpha=10), torch.add(a, 0.5).dtype)

# %%
# The key keeps its C++ name
# --------------------------
# Renaming changes the *device* name, not the dispatch key: an ``npy``
# tensor's keys still read ``PrivateUse1``. ``Library.impl`` takes a dispatch
# key name, so it wants ``"PrivateUse1"``; the ``torch.library.impl``
# decorator takes a *device type* and maps ``"npy"`` to the same key.

print(torch._C._dispatch_keys(a))
print(torch._C._dispatch_key_for_device("npy"))

# %%
# Which ops does a backend need?
# ------------------------------
# Start with the device registered and *no* kernels, try a step a user
# takes, and read which op the dispatcher could not find. Register the
# package's kernel for exactly that op and try again, until the step works.
# Kernel registrations are global to a process, so the experiment runs in a
# fresh one (``BACKEND_PKG_NO_SETUP=1`` imports the package without
# registering anything).

EXPERIMENT = r'''
import json, os, re
os.environ["BACKEND_PKG_NO_SETUP"] = "1"
import torch
import backend_pkg

backend_pkg.backend.register_device()
kernels = {op.name(): kernel for op, kernel in backend_pkg.ops.KERNELS.items()}
library = torch.library.Library("aten", "IMPL")

def kernels_needed(step):
    needed = []
    while True:
        try:
            step()
            return needed
        except NotImplementedError as error:
            op = re.search(r"Could not run '([\w:.]+)'", str(error)).group(1)
            library.impl(op, kernels[op], "PrivateUse1")
            needed.append(op)

state = {}
steps = {
    "x = torch.ones(2, 3).to('npy')": lambda: state.update(x=torch.ones(2, 3).to("npy")),
    "x.cpu()": lambda: state["x"].cpu(),
    "x + x": lambda: state["x"] + state["x"],
    "x * 2": lambda: state["x"] * 2,
    "x.sum()": lambda: state["x"].sum(),
    "print(x)": lambda: repr(state["x"]),
    "x.requires_grad_(); (x * 2).sum().backward()":
        lambda: (state["x"].requires_grad_() * 2).sum().backward(),
}
print(json.dumps({name: kernels_needed(step) for name, step in steps.items()}))
'''

run = subprocess.run([sys.executable, "-c", EXPERIMENT], capture_output=True, text=True, check=True)
found = json.loads(run.stdout)
for step, ops in found.items():
    print(f"{step:45} needs {', '.join(ops) or 'nothing new'}")

# %%
# Reading the result
# ------------------
# * ``.to('npy')`` allocates on the device with ``empty_strided`` (PyTorch
#   keeps the source's strides) and fills it with ``_copy_from``, the one op
#   every cross-device copy becomes.
# * ``.cpu()`` needs nothing new: it allocates on the CPU and ends in the
#   same ``_copy_from``.
# * ``x + x`` asked for ``empty.memory_format`` and ``add.out``, not
#   ``add.Tensor``: with no functional kernel, PyTorch allocates the output
#   and calls the ``out=`` variant. ``x * 2`` and ``x.sum()`` follow the same
#   rule.
# * ``print(x)`` needs nothing new: ``NpyTensor.__repr__`` formats a CPU copy.
# * ``backward()`` seeds the gradient with ``fill_`` and hands it back to
#   ``x`` through ``as_strided``, the view op autograd replays views with.
#
# So the example this site started from (eleven ops: ``empty.memory_format``,
# ``empty_strided``, ``_copy_from``, ``detach``, ``view``, ``as_strided``,
# ``ones_like``, ``expand``, ``sum``, ``add.Tensor``, ``mul.Tensor``) was
# neither the minimum nor the set this path asks for. ``backend_pkg``
# registers both the functional and the ``out=`` forms, and more:

assert list(found.values()) == [
    ["aten::empty_strided", "aten::_copy_from"],
    [],
    ["aten::empty.memory_format", "aten::add.out"],
    ["aten::mul.out"],
    ["aten::sum.IntList_out"],
    [],
    ["aten::fill_.Scalar", "aten::as_strided"],
], "the dispatcher asks for other ops now: update the reading above"
families = {}
for op, kernel in backend_pkg.ops.KERNELS.items():
    families.setdefault(kernel.__module__.rsplit(".", 1)[-1], []).append(op.name().removeprefix("aten::"))
print(len(backend_pkg.registered_ops()), "kernels, by family:")
for family, names in sorted(families.items()):
    print(textwrap.fill(f"{family} ({len(names)}): {', '.join(sorted(names))}", 88, subsequent_indent="    "))

# %%
# Next, :ref:`sphx_glr_auto_examples_05_hooks_and_device_guard.py`: what the
# C++ runtime asks of the backend besides kernels.
