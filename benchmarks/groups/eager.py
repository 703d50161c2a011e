"""``eager``: the training step of a deeper MLP (``Linear(32, 64)``, ``ReLU``, ``Linear(64, 64)``,
``ReLU``, ``Linear(64, 10)``, batch 16, cross-entropy, SGD), eager on ``npy`` and on CPU: where a
Python backend's cost per op shows most."""

import torch
import torch.nn.functional as F

import backend_pkg
from benchmarks.timing import as_timer, measure

TITLE = "eager: a deeper MLP's training step, npy and CPU"
OWN_SETTINGS = None
EAGER_MLP_SIZES = (32, 64, 64, 10)
EAGER_MLP_BATCH = 16


def eager_train_step(device):
    """One training step of the :data:`EAGER_MLP_SIZES` MLP on ``device``: forward, cross-entropy,
    backward, SGD step, zero_grad."""
    torch.manual_seed(0)
    layers = []
    for inputs, outputs in zip(EAGER_MLP_SIZES, EAGER_MLP_SIZES[1:]):
        layers += [torch.nn.Linear(inputs, outputs), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1]).to(device)
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(EAGER_MLP_BATCH, EAGER_MLP_SIZES[0], generator=generator).to(device)
    y = torch.randint(0, EAGER_MLP_SIZES[-1], (EAGER_MLP_BATCH,), generator=generator).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()

    return step


def measure_group(settings, quick):
    works = {device: as_timer(eager_train_step(device)) for device in (backend_pkg.DEVICE_NAME, "cpu")}
    return {"mlp_train_step": measure(works, settings)}, {}


def describe():
    return {
        "mlp_train_step": {
            "model": ", ".join(f"Linear({a}, {b})" for a, b in zip(EAGER_MLP_SIZES, EAGER_MLP_SIZES[1:]))
            + " with ReLU between, float32",
            "batch": EAGER_MLP_BATCH,
            "step": "cross_entropy(model(x), y).backward(); SGD step; zero_grad()",
        },
    }
