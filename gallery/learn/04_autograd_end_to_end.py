"""
End to end: a gradient computed on the ``npy`` device
=====================================================

This example fits a line ``y = w * x + b`` by gradient descent with every
tensor on the ``npy`` device, a device whose memory is NumPy arrays and whose
kernels are Python functions registered with ``torch.library``. The
backward pass runs registered ops on the same device, as the forward pass
does; it also asks the hooks and the device guard
(:ref:`sphx_glr_auto_examples_deep_dives_03_hooks_and_device_guard.py` shows backward
failing without hooks), and this page counts those calls too.

The whole run is repeated on CPU, and the two are compared.
"""

# %%
# Set up the device
# -----------------
# Importing ``backend_pkg`` registers the ``npy`` device for this process.
# Importing it again (as every example on this site does) is a no-op.

import torch

import backend_pkg

print(torch.npy.is_available(), torch.npy.device_count())
print(torch.accelerator.current_accelerator())

# %%
# Data on the device
# ------------------
# The data is made on CPU with a fixed seed, then copied to ``npy``. The copy
# is a NumPy array of the same dtype; changing the CPU source afterwards does
# not reach the device.

torch.manual_seed(0)
x_cpu = torch.linspace(-1.0, 1.0, 8)
y_cpu = 3.0 * x_cpu - 0.5 + 0.1 * torch.randn(8)

x = x_cpu.to("npy")
y = y_cpu.to("npy")
print(x)
print(type(backend_pkg.unwrap(x)), backend_pkg.unwrap(x).dtype)

# %%
# One step of autograd
# --------------------
# The parameters are leaves on ``npy`` that require gradients. What each
# pass asks of the backend is recorded while it runs: the aten ops by a
# ``TorchDispatchMode``, which sees every op below autograd (the level where
# the PrivateUse1 kernels are looked up), and the calls into the package's
# hooks and device guard by wrapping the hooks' method and the guard's
# ``type_`` for the duration.

import collections
import contextlib
import inspect

from torch.utils._python_dispatch import TorchDispatchMode

from backend_pkg.runtime import NpyDeviceGuard, NpyHooks


class OpTrace(TorchDispatchMode):
    """The distinct aten ops called while the mode is active, in first-call order."""

    def __init__(self):
        super().__init__()
        self.ops = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.setdefault(func.__name__)
        return func(*args, **(kwargs or {}))


@contextlib.contextmanager
def counting_calls(*methods):
    """Count the calls to each ``(class, name)`` method while the block runs."""
    counts = collections.Counter()
    originals = {(cls, name): getattr(cls, name) for cls, name in methods}

    def counted(label, method):
        def call(self, *args):
            counts[label] += 1
            # The guard's type_ is a built-in callable, not a method: it takes no self.
            return method(self, *args) if inspect.isfunction(method) else method(*args)

        return call

    for (cls, name), method in originals.items():
        setattr(cls, name, counted(f"{cls.__name__}.{name}", method))
    try:
        yield counts
    finally:
        for (cls, name), method in originals.items():
            setattr(cls, name, method)


def mean_squared_error(w, b, x, y):
    residual = w * x + b - y
    return (residual * residual).sum() * (1.0 / x.numel())


w = torch.zeros((), device="npy", requires_grad=True)
b = torch.zeros((), device="npy", requires_grad=True)
with OpTrace() as forward_ops:
    loss = mean_squared_error(w, b, x, y)
runtime = [(NpyHooks, "has_primary_context"), (NpyDeviceGuard, "type_")]
with OpTrace() as backward_ops, counting_calls(*runtime) as runtime_calls:
    loss.backward()
print("forward ops: ", ", ".join(forward_ops.ops))
print("backward ops:", ", ".join(backward_ops.ops))
print("backward's calls into the runtime:", dict(runtime_calls))
assert all(runtime_calls[f"{cls.__name__}.{name}"] for cls, name in runtime)
print(loss)
print(w.grad, b.grad)

# %%
# ``expand`` spreads the gradient of ``sum`` back over its input;
# ``detach`` is how the gradients are stored into ``w.grad`` and ``b.grad``
# (``AccumulateGrad`` in ``torch/csrc/autograd/functions/accumulate_grad.h``).
# The seed gradient of ``loss``, a 0-dim tensor of ones, is not in the list:
# given no gradient, PyTorch makes it with ``torch.ones_like``
# (``_make_grads`` in ``torch/autograd/__init__.py``), a trip through the
# dispatcher into npy's kernel, and ``NpyTensor.backward`` makes the same
# tensor itself first. ``torch.autograd.backward(loss)`` does not go through
# that method, and runs ``ones_like``. The hooks' ``has_primary_context``
# is asked before the engine starts work on the device; the guard's
# ``type_`` on every device-guard operation (the C++ side's ``getDevice``
# asks it, ``torch/csrc/acc/Module.cpp``).

assert {"expand.default", "detach.default"} <= set(backward_ops.ops)
assert "ones_like.default" not in backward_ops.ops

# %%
# The same on CPU
# ---------------
# The gradients agree with the CPU ones to within float32 rounding.

w_cpu = torch.zeros((), requires_grad=True)
b_cpu = torch.zeros((), requires_grad=True)
mean_squared_error(w_cpu, b_cpu, x_cpu, y_cpu).backward()
torch.testing.assert_close(w.grad.cpu(), w_cpu.grad)
torch.testing.assert_close(b.grad.cpu(), b_cpu.grad)
print("gradients match CPU:", w_cpu.grad, b_cpu.grad)

# %%
# Gradient descent
# ----------------
# A few steps of plain gradient descent. Each update runs under
# ``torch.no_grad()`` and makes new leaf tensors on the device.


def fit(w, b, x, y, steps=50, lr=0.5):
    for _ in range(steps):
        loss = mean_squared_error(w, b, x, y)
        w.grad = b.grad = None
        loss.backward()
        with torch.no_grad():
            w = (w - lr * w.grad).requires_grad_()
            b = (b - lr * b.grad).requires_grad_()
    return w, b, loss


w, b, loss = fit(
    torch.zeros((), device="npy", requires_grad=True),
    torch.zeros((), device="npy", requires_grad=True),
    x,
    y,
)
w_cpu, b_cpu, loss_cpu = fit(torch.zeros((), requires_grad=True), torch.zeros((), requires_grad=True), x_cpu, y_cpu)
print(f"npy: w={w.item():.4f} b={b.item():.4f} loss={loss.item():.5f}")
print(f"cpu: w={w_cpu.item():.4f} b={b_cpu.item():.4f} loss={loss_cpu.item():.5f}")
torch.testing.assert_close(w.cpu(), w_cpu.detach())
torch.testing.assert_close(b.cpu(), b_cpu.detach())

# %%
# Next, :ref:`sphx_glr_auto_examples_learn_05_gotchas.py`: what an author
# meets on the way.

# sphinx_gallery_thumbnail_path = "../_build/diagrams/autograd.png"
