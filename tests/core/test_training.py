"""Autograd and training on npy: gradients of the ops training needs, an MLP and a spectral-normed layer
trained like CPU."""

import pytest
import torch
import torch.nn.functional as F
from reference import (
    assert_layer_trains_like_cpu,
    make,
    npy,
)

import backend_pkg

# --- autograd and training --------------------------------------------------------


def gradients(fn, *leaves):
    leaves = [leaf.detach().clone().requires_grad_() for leaf in leaves]
    fn(*leaves).backward()
    return [leaf.grad for leaf in leaves]


TARGET = torch.tensor([0, 3, 1, 4])
WEIGHTS = torch.tensor([1.0, 2.0, 0.5, 1.5, 3.0])
BACKWARD = {
    "softmax": lambda a: (F.softmax(a, 1) * a.detach()).sum(),
    "log_softmax": lambda a: (F.log_softmax(a, 0) * a.detach()).sum(),
    "cross_entropy": lambda a: F.cross_entropy(a, TARGET.to(a.device)),
    "cross_entropy_weight_ignore_sum": lambda a: F.cross_entropy(
        a, TARGET.to(a.device), weight=WEIGHTS.to(a), ignore_index=3, reduction="sum"
    ),
    "nll_loss": lambda a: F.nll_loss(F.log_softmax(a, 1), TARGET.to(a.device), weight=WEIGHTS.to(a)),
    "mse_loss": lambda a: F.mse_loss(
        a, a.detach().flip(1) if a.device.type == "cpu" else npy(a.detach().cpu().flip(1))
    ),
    "mse_loss_sum": lambda a: F.mse_loss(a, torch.ones(4, 5).to(a.device), reduction="sum"),
    "relu": lambda a: (F.relu(a) * a.detach()).sum(),
    "gelu": lambda a: (F.gelu(a) * a.detach()).sum(),
    "gelu_tanh": lambda a: (F.gelu(a, approximate="tanh") * a.detach()).sum(),
    "linear": lambda a: (F.linear(a, a[:3], a[0, :3]) * 0.5).sum(),
    "matmul": lambda a: (a @ a.T).sum(),
    "var": lambda a: a.var(1).sum(),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name", BACKWARD)
def test_gradients_match_cpu(name, dtype):
    a = make((4, 5), dtype)
    (expected,) = gradients(BACKWARD[name], a)
    (actual,) = gradients(BACKWARD[name], npy(a))
    assert actual.device.type == "npy"
    torch.testing.assert_close(actual.cpu(), expected)


def train(device, loss, steps=5):
    """A few SGD steps of a small MLP; the losses and the trained parameters."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).to(device)
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(32, 8, generator=generator)
    if loss is F.cross_entropy:
        y = torch.randint(0, 3, (32,), generator=generator)
    else:
        y = torch.randn(32, 3, generator=generator)
    x, y = x.to(device), y.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        value = loss(model(x), y)
        value.backward()
        optimizer.step()
        losses.append(value.item())
    return losses, [p.detach() for p in model.parameters()]


@pytest.mark.parametrize("loss", [F.cross_entropy, F.mse_loss], ids=["cross_entropy", "mse"])
def test_mlp_trains_like_cpu(loss):
    cpu_losses, cpu_params = train("cpu", loss)
    npy_losses, npy_params = train("npy", loss)
    assert cpu_losses[-1] < cpu_losses[0]  # it does learn
    torch.testing.assert_close(npy_losses, cpu_losses, rtol=0, atol=1e-6)
    for got, want in zip(npy_params, cpu_params):
        assert got.device.type == "npy"
        torch.testing.assert_close(got.cpu(), want)


def test_kernels_are_registered():
    registered = set(backend_pkg.registered_ops())
    for name in (
        "aten::mean.dim",
        "aten::max.dim",
        "aten::var.correction",
        "aten::logsumexp",
        "aten::linalg_vector_norm",
        "aten::mm",
        "aten::addmm",
        "aten::bmm",
        "aten::dot",
        "aten::_log_softmax",
        "aten::nll_loss_forward",
        "aten::nll_loss_backward",
        "aten::threshold_backward",
        "aten::mse_loss_backward",
        "aten::gelu_backward",
    ):
        assert name in registered


@pytest.mark.usefixtures("strict")  # native kernels: no CPU fallback
def test_spectral_norm_trains_like_cpu():
    assert_layer_trains_like_cpu(lambda: torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(4, 3)))
