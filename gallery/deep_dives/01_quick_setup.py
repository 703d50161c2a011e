"""
Quick setup
===========

One function turns ``PrivateUse1`` into a device:
``torch.utils.backend_registration._setup_privateuseone_for_python_backend``.
This page runs it step by step. The function first shipped in PyTorch
2.10.0 (the 2.9.0 and 2.9.1 wheels on PyPI do not have it, 2.10.0 does:
:doc:`../../compatibility` shows the check); the site was built with the torch
version printed below.
"""

# %%
# Before: a fresh process knows no ``npy`` device
# -----------------------------------------------
# Registration happens once per process, and this page's process already
# imported ``backend_pkg``, so "before" is shown in a new interpreter.

import inspect

import torch
from _fresh_python import run_code


def run_in_fresh_python(code):
    """Run ``code`` in a new interpreter; show its output and its last error line."""
    done = run_code(code)
    print(done.stdout + "".join(done.stderr.strip().splitlines(keepends=True)[-1:]))


print("torch", torch.__version__)
run_in_fresh_python(
    """
    import torch
    print(torch._C._get_privateuse1_backend_name())
    print(hasattr(torch, "npy"))
    torch.empty(1, device="npy")
    """
)

# %%
# The function itself
# -------------------
# This is the installed torch's own source, printed at build time. Note its
# warning: the API is experimental, and the order of the calls matters.

from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

print(inspect.getsource(_setup_privateuseone_for_python_backend))

# %%
# ``backend_pkg`` calls it with its own device module, hooks and device guard:
#
# .. literalinclude:: ../../../backend_pkg/backend.py
#    :pyobject: register_device
#
# Then each step, in the order the function runs them.

import backend_pkg

# %%
# 1. Rename
# ~~~~~~~~~
# ``rename_privateuse1_backend("npy")`` makes ``"npy"`` a device string.

print(torch._C._get_privateuse1_backend_name())
print(torch.device("npy"), torch.empty(1, device="npy").device)

# %%
# 2. Generate methods
# ~~~~~~~~~~~~~~~~~~~
# ``generate_methods_for_privateuse1_backend()`` adds the convenience methods
# every built-in device has, named after the backend (storage methods too,
# when asked with ``for_storage=True``; the setup function does not ask):

t = torch.ones(2).npy()
print(t.is_npy, torch.ones(2).is_npy)
print(torch.nn.Linear(2, 2).npy().weight.device)

# %%
# 3. Register the device module
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``torch._register_device_module("npy", module)`` makes ``torch.npy``.
# PyTorch looks functions up on it by name: ``torch.manual_seed`` calls
# ``torch.npy.manual_seed_all``, for example.

print(torch.npy is backend_pkg.device)
print(torch.npy.is_available(), torch.npy.device_count(), torch.npy.current_device())
torch.manual_seed(7)
print(torch.npy.initial_seed())

# %%
# 4. Register the hooks, 5. register the device guard
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Both registrations answer ``False`` when the slot is already taken: the
# first registration in a process wins.

hook_taken = not torch._C._acc.register_python_privateuseone_hook(backend_pkg.runtime.NpyHooks())
guard_taken = not torch._C._acc.register_python_privateuseone_device_guard(backend_pkg.runtime.NpyDeviceGuard())
print("hooks slot taken:", hook_taken, "| guard slot taken:", guard_taken)
assert hook_taken and guard_taken
print(torch.accelerator.current_accelerator(), torch.accelerator.device_count())

# %%
# Once per process
# ----------------
# Calling the setup function a second time fails at step 2: the generated
# methods exist already (step 3 would fail next: a device module is
# registered once). That is why ``backend_pkg.setup()`` checks what is
# already done, and why importing ``backend_pkg`` again is safe.

try:
    _setup_privateuseone_for_python_backend("npy", backend_module=backend_pkg.device)
except RuntimeError as error:
    print("RuntimeError:", error)
    assert "is_npy" in str(error)

backend_pkg.setup()
print("backend_pkg.setup() again: fine")

# %%
# Next, :ref:`sphx_glr_auto_examples_deep_dives_02_tensor_subclass.py` shows what holds
# an ``npy`` tensor's data.

# sphinx_gallery_thumbnail_path = "../_build/diagrams/setup.png"
