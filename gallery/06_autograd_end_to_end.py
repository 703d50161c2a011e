"""
End to end: a gradient computed on the ``npy`` device
=====================================================

This example fits a line ``y = w * x + b`` by gradient descent with every
tensor on the ``npy`` device, a device whose memory is NumPy arrays and whose
kernels are Python functions registered with ``torch.library``. Autograd
needs nothing from the backend beyond those kernels: the backward pass runs
the same registered ops, on the same device.

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
# The parameters are leaves on ``npy`` that require gradients. The forward
# pass uses ``mul``, ``add``, ``sub`` and ``sum``; the backward pass asks the
# backend for ``ones_like``, ``expand``, ``mul``, ``neg`` and ``sum`` again.


def mean_squared_error(w, b, x, y):
    residual = w * x + b - y
    return (residual * residual).sum() * (1.0 / x.numel())


w = torch.zeros((), device="npy", requires_grad=True)
b = torch.zeros((), device="npy", requires_grad=True)
loss = mean_squared_error(w, b, x, y)
loss.backward()
print(loss)
print(w.grad, b.grad)

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
w_cpu, b_cpu, loss_cpu = fit(
    torch.zeros((), requires_grad=True), torch.zeros((), requires_grad=True), x_cpu, y_cpu
)
print(f"npy: w={w.item():.4f} b={b.item():.4f} loss={loss.item():.5f}")
print(f"cpu: w={w_cpu.item():.4f} b={b_cpu.item():.4f} loss={loss_cpu.item():.5f}")
torch.testing.assert_close(w.cpu(), w_cpu.detach())
torch.testing.assert_close(b.cpu(), b_cpu.detach())

# %%
# Next, :ref:`sphx_glr_auto_examples_07_cpp_vs_python.py` compares this route
# with a C++ backend.
