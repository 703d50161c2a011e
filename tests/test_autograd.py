"""Backward on npy gives the CPU gradients."""

import pytest
import torch
from reference import make


def gradients(fn, *leaves):
    leaves = [leaf.detach().clone().requires_grad_() for leaf in leaves]
    fn(*leaves).backward()
    return [leaf.grad for leaf in leaves]


EXPRESSIONS = {
    "add_mul_sum": lambda a, b: (a * b + a).sum(),
    "alpha_and_scalars": lambda a, b: (torch.add(a, b, alpha=-0.5) * 3 - 1).sum(),
    "broadcast": lambda a, b: (a * b[:1]).sum(),
    "reduce_dim_then_broadcast": lambda a, b: (a.sum(0, keepdim=True) * b).sum(),
    "views": lambda a, b: (a.t() * b.t()).reshape(-1)[::2].view(2, 3).sum(),
    "neg_sub": lambda a, b: (-(a - b) * a).sum(dim=1).sum(),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name", EXPRESSIONS)
def test_gradients_match_cpu(name, dtype):
    a, b = make((3, 4), dtype, 1), make((3, 4), dtype, 2)
    fn = EXPRESSIONS[name]
    expected = gradients(fn, a, b)
    actual = gradients(fn, a.to("npy"), b.to("npy"))
    for got, want in zip(actual, expected):
        assert got.device.type == "npy"
        torch.testing.assert_close(got.cpu(), want)


def test_gradient_accumulates_over_two_backward_calls():
    a = torch.ones(3, device="npy", requires_grad=True)
    (a * 2).sum().backward()
    (a * 3).sum().backward()
    torch.testing.assert_close(a.grad.cpu(), torch.full((3,), 5.0))
