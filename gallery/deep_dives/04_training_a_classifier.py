"""
Training a classifier on ``npy``
================================

A small multilayer perceptron learns to separate three classes of 2-D
points, entirely on the ``npy`` device: ``nn.Module.to("npy")``, the
cross-entropy loss, autograd and ``torch.optim.Adam``. The same run on CPU,
from the same initial weights, gives the same losses and weights.
"""

# %%
# Data and model
# --------------
# A synthetic dataset, made on CPU with a fixed generator, and a model whose
# initial weights come from a fixed seed so both devices start equal.

import warnings

import torch
from _training import plot_losses

import backend_pkg

generator = torch.Generator().manual_seed(1)
points = torch.randn(512, 2, generator=generator)
labels = (2 * points[:, 0] + points[:, 1] ** 2 > 1).long() + (points[:, 1] > 1).long()
print("class counts:", torch.bincount(labels).tolist())


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(2, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32), torch.nn.Tanh(), torch.nn.Linear(32, 3)
    )


# %%
# The training loop
# -----------------
# Nothing in it is specific to the device: the model and the data are moved
# with ``.to(device)`` and the rest is ordinary PyTorch.


def train(device, steps=100):
    model = make_model().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    x, y = points.to(device), labels.to(device)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        accuracy = (model(x).argmax(dim=1) == y).float().mean().item()
    return model, losses, accuracy


# Ops without an npy kernel run on PyTorch's CPU kernels; their one-time
# warnings are not the story here (:ref:`sphx_glr_auto_examples_learn_05_gotchas.py` tells it).
fallbacks_before = backend_pkg.fallback.calls.copy()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    npy_model, npy_losses, npy_accuracy = train("npy")
fallbacks = backend_pkg.fallback.calls - fallbacks_before
cpu_model, cpu_losses, cpu_accuracy = train("cpu")

print(f"npy: final loss {npy_losses[-1]:.4f}, accuracy {npy_accuracy:.3f}")
print(f"cpu: final loss {cpu_losses[-1]:.4f}, accuracy {cpu_accuracy:.3f}")

# %%
# npy against CPU
# ---------------
# The largest difference between the two loss curves and between the final
# weights, in float32:

loss_difference = max(abs(a - b) for a, b in zip(npy_losses, cpu_losses))
weight_difference = max(
    (p.detach().cpu() - q.detach()).abs().max().item() for p, q in zip(npy_model.parameters(), cpu_model.parameters())
)
print(f"max |loss difference|:   {loss_difference:.2e}")
print(f"max |weight difference|: {weight_difference:.2e}")
for p, q in zip(npy_model.parameters(), cpu_model.parameters()):
    torch.testing.assert_close(p.detach().cpu(), q.detach(), atol=1e-5, rtol=1e-4)

# %%
# The two curves lie on top of each other:

plot_losses(cpu_losses, npy_losses)

# %%
# Which ops fell back to CPU kernels
# ----------------------------------
# Every op of this run that has no NumPy kernel yet went through the CPU
# fallback; these are the ones, with their call counts:

print(dict(fallbacks) or "none")
