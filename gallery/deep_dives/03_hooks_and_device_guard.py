"""
Hooks and the device guard
==========================

Kernels are not all a backend registers. PyTorch's C++ runtime also asks
two objects about the device: the *hooks* (is the device built, available,
initialised?) and the *device guard* (which device is current, which
stream?). ``torch._C._acc`` lets Python classes play both parts.

.. warning::

   ``backward()`` fails without hooks, and without a device guard no tensor
   reaches the device at all. ``_setup_privateuseone_for_python_backend`` registers
   defaults for both when you pass none; a backend that registers the pieces
   itself must not skip them. Both failures are run below.
"""

# %%
# The hooks
# ---------
# The hooks answer three questions. ``has_primary_context`` is the one that
# matters in practice: the autograd engine asks it before it runs
# ``backward()`` on the device.
#
# .. literalinclude:: ../../../backend_pkg/runtime.py
#    :pyobject: NpyHooks

import torch
from _fresh_python import run_code

import backend_pkg

hooks = backend_pkg.runtime.NpyHooks()
print(hooks.is_built(), hooks.is_available(), hooks.has_primary_context(0), hooks.has_primary_context(1))

# %%
# The device guard
# ----------------
# The guard only names its device type. The C++ side of
# ``torch._C._acc.DeviceGuard`` (``PythonDeviceGuard`` in
# ``torch/csrc/acc/Module.cpp``) fixes the rest: one device, index 0; the
# default stream for every stream; events that are complete as soon as they
# are recorded. :ref:`sphx_glr_auto_examples_learn_05_gotchas.py` runs each.
#
# .. literalinclude:: ../../../backend_pkg/runtime.py
#    :pyobject: NpyDeviceGuard

print(backend_pkg.runtime.NpyDeviceGuard().type_())

# %%
# Each method of the hooks is marked ``@untraced`` (the guard's ``type_``
# runs no Python code). C++ calls these methods, the kernels and the
# fallback at moments Python did not choose, including while a function
# compiled by ``torch.compile`` runs; Dynamo would then try to compile them
# as user code. The mark tells Dynamo to run them, and everything they call,
# as they are
# (:ref:`sphx_glr_auto_examples_deep_dives_05_compiling_for_npy.py` compiles):
#
# .. literalinclude:: ../../../backend_pkg/runtime.py
#    :pyobject: untraced

# %%
# What a backward asks of both, and on which thread it runs:

from _diagrams import draw

draw("autograd")

# %%
# Backward without hooks
# ----------------------
# In a fresh process, register everything by hand except the hooks:
# rename, methods, device module, device guard and the kernels. Forward
# works; backward asks the hooks first and fails.

SETUP_WITHOUT = r"""
import os
os.environ["BACKEND_PKG_NO_SETUP"] = "1"
import torch
import backend_pkg

torch.utils.rename_privateuse1_backend("npy")
torch.utils.generate_methods_for_privateuse1_backend()
torch._register_device_module("npy", backend_pkg.device)
{registration}
backend_pkg.backend.install_kernels()

x = torch.ones(3).to("npy").requires_grad_()
loss = (x * 2).sum()
print("forward:", loss.item())
loss.backward()
print("backward:", x.grad.cpu().tolist())
"""


def run_without(registration):
    code = SETUP_WITHOUT.format(registration=registration)
    done = run_code(code)
    last_words = ("RuntimeError", "terminate called", "  what()")
    print(done.stdout + "\n".join(line for line in done.stderr.splitlines() if line.startswith(last_words)))
    print("exit code:", done.returncode)
    return done


no_hooks = run_without("torch._C._acc.register_python_privateuseone_device_guard(backend_pkg.runtime.NpyDeviceGuard())")
assert "register PrivateUse1HooksInterface" in no_hooks.stderr

# %%
# Without a device guard
# ----------------------
# The same with the hooks and without the guard: the first copy to the
# device fails, because PyTorch's C++ code opens a device guard for the
# target device and finds none registered for PrivateUse1. The message
# blames the build, though the fix is one registration:

no_guard = run_without("torch._C._acc.register_python_privateuseone_hook(backend_pkg.runtime.NpyHooks())")
assert "not linked with support for npy devices" in no_guard.stderr

# %%
# With both, as ``backend_pkg`` registers them, backward works:

x = torch.ones(3, device="npy", requires_grad=True)
(x * 2).sum().backward()
print(x.grad)

# %%
# Next, :ref:`sphx_glr_auto_examples_deep_dives_04_training_a_classifier.py`
# puts the device to work.
