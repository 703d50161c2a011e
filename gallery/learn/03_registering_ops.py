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
# ``backend_pkg`` keeps its kernels in one table per dispatch key
# (``KERNELS`` for ``PrivateUse1``; nested tensors and autograd have one
# each), all filled by one decorator, ``implements``, and installed by one
# function (``backend_pkg/ops/registry.py``), with the lookup order written
# down once, in the module's docstring:
#
# .. literalinclude:: ../../../backend_pkg/ops/registry.py
#    :end-before: import functools
#
# .. literalinclude:: ../../../backend_pkg/ops/registry.py
#    :pyobject: implements
#
# .. literalinclude:: ../../../backend_pkg/ops/registry.py
#    :pyobject: install
#
# A kernel receives the op's arguments as the op's schema names them, and
# returns an npy tensor. Most of the package's kernels are two functions: a
# NumPy function on arrays, which computes in the dtype it is given and is
# also what ``torch.compile`` runs (``@lowers``), and PyTorch's checks of the
# tensors, which raise PyTorch's errors and return that dtype.
# ``@computed_by`` makes the pair one kernel, unwrapping the tensors once and
# wrapping the result once; ``@implements(..., pointwise=True)`` registers
# it for the op and derives its ``out=`` and in-place overloads.
# ``add.Tensor`` honours ``alpha`` and PyTorch's type promotion:
#
# .. literalinclude:: ../../../backend_pkg/ops/arithmetic.py
#    :pyobject: _scaled
#
# .. literalinclude:: ../../../backend_pkg/ops/arithmetic.py
#    :pyobject: add
#
# .. literalinclude:: ../../../backend_pkg/ops/arithmetic.py
#    :pyobject: add_kernel

import json

import torch
from _fresh_python import run_code

import backend_pkg

a = torch.tensor([1, 2, 3]).to("npy")
print(torch.add(a, a, alpha=10), torch.add(a, 0.5).dtype)

# %%
# Which decorator when
# --------------------
# Every op of every family is registered with five names of
# ``registry.py``, its whole vocabulary. The first sentence of each one's
# docstring says when to use it; this table is printed from them:

from backend_pkg.ops import registry

for verb in registry.VOCABULARY:
    print(f"{verb.__name__:<22} {registry.when_to_use(verb)}")

# %%
# The lookup order of the registry's docstring is the dispatcher's own
# table, which records, per op and key, what runs there. At the PrivateUse1
# key: ``add.Tensor`` has an npy kernel (step 2), ``kthvalue`` has
# PyTorch's default implementation (step 3), and ``_fft_r2c``, with neither,
# gets the fallback the package registers for every op (step 4):


def privateuse1_entry(op):
    """What the dispatcher's table holds for ``op`` at the PrivateUse1 key, by kind."""
    (line,) = [line for line in torch._C._dispatch_dump_table(op).splitlines() if line.startswith("PrivateUse1:")]
    return line.rsplit("[", 1)[1].rstrip("]")


entries = {op: privateuse1_entry(op) for op in ("aten::add.Tensor", "aten::kthvalue", "aten::_fft_r2c")}
for op, entry in entries.items():
    print(f"{op:18} {entry}")
assert list(entries.values()) == ["kernel", "default backend kernel", "backend fallback"]

# %%
# The key keeps its C++ name
# --------------------------
# Renaming changes the *device* name, not the dispatch key: an ``npy``
# tensor's keys still read ``PrivateUse1``. ``Library.impl`` takes a dispatch
# key name, so it wants ``"PrivateUse1"``; the ``torch.library.impl``
# decorator takes a *device type* and maps ``"npy"`` to the same key
# (``_device_type_to_key`` in ``torch/library.py``):

print(torch._C._dispatch_keys(a))
print(torch._C._dispatch_key_for_device("npy"))

# %%
# Two ways to register
# --------------------
# The decorator form is the one PyTorch's own examples use:
# ``@torch.library.impl("aten::add.Tensor", "npy")``. Without ``lib=``, it
# registers into a ``Library`` that lives as long as the process. This
# process already has an ``add.Tensor`` kernel for npy, so both forms run in
# a fresh one with the device and no kernels: the ``Library`` object form
# for the copies, the decorator form for the addition, each exactly as
# written here.

TWO_FORMS = r"""
import os
os.environ["BACKEND_PKG_NO_SETUP"] = "1"
import torch
import backend_pkg
from backend_pkg import unwrap, wrap

backend_pkg.backend.register_device()
aten = torch.ops.aten

# The Library object form: a dispatch key, and the registration lives as long as `library`.
library = torch.library.Library("aten", "IMPL")
for op in (aten.empty_strided.default, aten._copy_from.default):
    library.impl(op, backend_pkg.ops.KERNELS[op], "PrivateUse1")

# The decorator form: a device type.
@torch.library.impl("aten::add.Tensor", "npy")
def add(self, other, alpha=1):
    print("add kernel called with", type(self).__name__, "and", type(other).__name__)
    return wrap(unwrap(self) + alpha * unwrap(other))

x = torch.tensor([1.0, 2.0]).to("npy")
print(x + x)
"""
print(run_code(TWO_FORMS, check=True).stdout)

# %%
# No ``__torch_dispatch__``
# -------------------------
# The kernel above received ``NpyTensor`` objects, and ``NpyTensor`` defines
# no ``__torch_dispatch__``. It needs none: the dispatcher picks a kernel by
# the tensor's dispatch keys, and an npy tensor's keys are those of the
# PrivateUse1 device, above. A subclass that *defines*
# ``__torch_dispatch__`` gets the ``Python`` key as well, which sends every
# op to that method before any kernel; this is how a wrapper subclass on a
# CPU or CUDA tensor works, and what a PrivateUse1 device does not need.


class Intercepting(torch.Tensor):
    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


python_key = torch._C.DispatchKey.Python
print("NpyTensor defines __torch_dispatch__:", "__torch_dispatch__" in vars(backend_pkg.NpyTensor))
print("npy tensor has the Python key:", torch._C._dispatch_keys(a).has(python_key))
intercepting = torch.Tensor._make_subclass(Intercepting, torch.ones(2))
print("a __torch_dispatch__ subclass has it:", torch._C._dispatch_keys(intercepting).has(python_key))

# %%
# The npy tensor is not made by ``Tensor._make_wrapper_subclass``, PyTorch's
# usual constructor for subclasses that hold their own data: that one
# insists on ``__torch_dispatch__``, on npy as on CPU. ``backend_pkg``
# makes a PrivateUse1 tensor with ``torch._C._acc.create_empty_tensor`` and
# gives it the ``NpyTensor`` class
# (:ref:`sphx_glr_auto_examples_deep_dives_02_tensor_subclass.py`).


class Plain(torch.Tensor):
    pass


try:
    torch.Tensor._make_wrapper_subclass(Plain, (2,), device="npy")
except TypeError as error:
    print("TypeError:", error)
else:
    raise AssertionError("_make_wrapper_subclass accepted a subclass without __torch_dispatch__")

# %%
# Which ops does a backend need?
# ------------------------------
# Start with the device registered and *no* kernels, try a step a user
# takes, and read which op the dispatcher could not find. Register the
# package's kernel for exactly that op and try again, until the step works.
# Kernel registrations are global to a process, so the experiment runs in a
# fresh one (``BACKEND_PKG_NO_SETUP=1`` imports the package without
# registering anything).

EXPERIMENT = r"""
import contextlib, json, os, re
os.environ["BACKEND_PKG_NO_SETUP"] = "1"
import torch
from torch.utils._python_dispatch import TorchDispatchMode
import backend_pkg

backend_pkg.backend.register_device()
kernels = {op.name(): kernel for op, kernel in backend_pkg.ops.KERNELS.items()}
library = torch.library.Library("aten", "IMPL")


class LastCall(TorchDispatchMode):
    # The last aten op the step called, as autograd passed it down; the ops
    # that op's default implementation calls in turn do not come back here.
    called = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.called = func.name()
        return func(*args, **(kwargs or {}))


def kernels_needed(step, traced):
    needed = []
    while True:
        watch = LastCall()
        try:
            with watch if traced else contextlib.nullcontext():
                step()
            return needed
        except NotImplementedError as error:
            op = re.search(r"Could not run '([\w:.]+)'", str(error)).group(1)
            library.impl(op, kernels[op], "PrivateUse1")
            needed.append([op, watch.called])

state = {}
steps = {
    "x = torch.ones(2, 3).to('npy')": lambda: state.update(x=torch.ones(2, 3).to("npy")),
    "x.cpu()": lambda: state["x"].cpu(),
    "x + x": lambda: state["x"] + state["x"],
    "x * 2": lambda: state["x"] * 2,
    "x.sum()": lambda: state["x"].sum(),
    "print(x)": lambda: repr(state["x"]),
    "x.expand(2, 3)": lambda: state["x"].expand(2, 3),
    "x.requires_grad_(); (x * 2).sum().backward()":
        lambda: (state["x"].requires_grad_() * 2).sum().backward(),
    "torch.autograd.backward((x * 2).sum())": lambda: torch.autograd.backward((state["x"] * 2).sum()),
}
# A dispatch mode in the autograd engine's thread aborts the process when a kernel is missing, so
# backward runs unwatched.
print(json.dumps({name: kernels_needed(step, traced="backward" not in name) for name, step in steps.items()}))
"""

run = run_code(EXPERIMENT, check=True)
found = json.loads(run.stdout)
for step, needed in found.items():
    ops = [op if called in (None, op) else f"{op} (inside {called})" for op, called in needed]
    print(f"{step:45} needs {', '.join(ops) or 'nothing new'}")

# %%
# Reading the result
# ------------------
# * ``.to('npy')`` allocates on the device with ``empty_strided`` (PyTorch
#   keeps the source's strides) and fills it with ``_copy_from``, the one op
#   every cross-device copy becomes; both are called by ``_to_copy``'s
#   default implementation.
# * ``.cpu()`` needs nothing new: it allocates on the CPU and ends in the
#   same ``_copy_from``.
# * ``x + x`` asked for ``empty.memory_format`` and ``add.out``, not
#   ``add.Tensor``: with no functional kernel, PyTorch allocates the output
#   and calls the ``out=`` variant. ``x * 2`` and ``x.sum()`` follow the same
#   rule.
# * ``print(x)`` needs nothing new: ``NpyTensor.__repr__`` formats a CPU copy.
# * ``expand`` has a default implementation at the PrivateUse1 key
#   (``CompositeExplicitAutograd``), which is a call to ``as_strided``.
# * ``backward()`` needs nothing new: what it runs (page
#   :ref:`sphx_glr_auto_examples_learn_04_autograd_end_to_end.py` traces it:
#   ``mul``, and the ``expand`` that spreads the gradient of ``sum``) was
#   registered by the steps above, and ``NpyTensor.backward`` makes the
#   gradient's seed itself, a NumPy array of ones.
# * ``torch.autograd.backward(loss)`` does not go through that method:
#   PyTorch seeds the gradient with ``ones_like``, whose default is
#   ``empty_like`` and ``fill_``.
#
# So the example this site started from (eleven ops: ``empty.memory_format``,
# ``empty_strided``, ``_copy_from``, ``detach``, ``view``, ``as_strided``,
# ``ones_like``, ``expand``, ``sum``, ``add.Tensor``, ``mul.Tensor``) was
# neither the minimum nor the set this path asks for. ``backend_pkg``
# registers both the functional and the ``out=`` forms, and more: the
# :doc:`../../op_coverage` page lists every kernel, by family.

assert found == {
    "x = torch.ones(2, 3).to('npy')": [
        ["aten::empty_strided", "aten::_to_copy"],
        ["aten::_copy_from", "aten::_to_copy"],
    ],
    "x.cpu()": [],
    "x + x": [["aten::empty.memory_format", "aten::add.Tensor"], ["aten::add.out", "aten::add.Tensor"]],
    "x * 2": [["aten::mul.out", "aten::mul.Tensor"]],
    "x.sum()": [["aten::sum.IntList_out", "aten::sum"]],
    "print(x)": [],
    "x.expand(2, 3)": [["aten::as_strided", "aten::expand"]],
    "x.requires_grad_(); (x * 2).sum().backward()": [],
    "torch.autograd.backward((x * 2).sum())": [["aten::fill_.Scalar", None]],
}, "the dispatcher asks for other ops now: update the reading above"
print(len(backend_pkg.registered_ops()), "kernels")

# %%
# Next, :ref:`sphx_glr_auto_examples_learn_04_autograd_end_to_end.py` trains
# on the device and checks every gradient against CPU.

# sphinx_gallery_thumbnail_path = "../_build/diagrams/dispatch_path.png"
