"""The ``_foreach_*`` ops of gradient clipping and of SGD with ``foreach=True``: npy against CPU, errors
included, and one npy kernel call per list rather than one dispatched op per tensor."""

import pytest
import torch
from reference import assert_like_cpu, make

from backend_pkg.ops import KERNELS

aten = torch.ops.aten


def _pair(dtype, seed=0):
    """Two tensors of different shapes, as a model's parameters are."""
    return make((3, 4), dtype, seed), make((5,), dtype, seed + 1)


def _in_place(foreach_op, a, b, *args, **kwargs):
    """``foreach_op`` applied in place to clones of ``a`` and ``b``; the clones."""
    tensors = [a.clone(), b.clone()]
    foreach_op(tensors, *args, **kwargs)
    return tuple(tensors)


# Each of a, b (the list) and c, d (a second list).
FOREACH = {
    "norm": lambda a, b, c, d: tuple(torch._foreach_norm([a, b])),
    "norm 1 in float64": lambda a, b, c, d: tuple(torch._foreach_norm([a, b], 1, dtype=torch.float64)),
    "norm inf": lambda a, b, c, d: tuple(torch._foreach_norm([a, b], float("inf"))),
    "norm of views": lambda a, b, c, d: tuple(torch._foreach_norm([a.t(), b[1::2]])),
    "norm of infinities": lambda a, b, c, d: tuple(torch._foreach_norm([a / 0, b * 1e15])),
    "mul_ tensor": lambda a, b, c, d: _in_place(torch._foreach_mul_, a, b, c[0, 0]),
    "mul_ number": lambda a, b, c, d: _in_place(torch._foreach_mul_, a, b, 0.9),
    "mul_ integer": lambda a, b, c, d: _in_place(torch._foreach_mul_, a, b, 3),
    "add_ list": lambda a, b, c, d: _in_place(torch._foreach_add_, a, b, [c, d]),
    "add_ list, alpha": lambda a, b, c, d: _in_place(torch._foreach_add_, a, b, [c, d], alpha=-0.05),
    "add_ list, integer alpha": lambda a, b, c, d: _in_place(torch._foreach_add_, a, b, [c, d], alpha=2),
}


@pytest.mark.parametrize("name", FOREACH)
def test_foreach_like_cpu(name, dtype, strict):
    assert_like_cpu(FOREACH[name], *_pair(dtype), *_pair(dtype, seed=2))


ERRORS = {
    "lists of two lengths": lambda a, b: torch._foreach_add_([a, b], [a]),
    "a scalar tensor with elements": lambda a, b: torch._foreach_mul_([a, b], b),
    "shapes that do not broadcast": lambda a, b: torch._foreach_add_([a, b], [b, a]),
    "norm of integers": lambda a, b: torch._foreach_norm([a.long(), b.long()]),
    "norm into a narrower dtype": lambda a, b: torch._foreach_norm([a, b], dtype=torch.float16),
}


@pytest.mark.parametrize("name", ERRORS)
def test_foreach_errors_like_cpu(name, strict):
    assert_like_cpu(ERRORS[name], *_pair(torch.float32))


def test_a_cpu_tensor_in_an_npy_list_is_left_to_pytorch(strict):
    """PyTorch's loop dispatches each tensor's op to its own device."""
    on_npy, on_cpu = make((3, 4), torch.float32), make((5,), torch.float32)
    tensors = [on_npy.to("npy"), on_cpu.clone()]
    torch._foreach_mul_(tensors, 2.0)
    torch.testing.assert_close(tensors[0].cpu(), on_npy * 2.0)
    torch.testing.assert_close(tensors[1], on_cpu * 2.0)


# What clipping and SGD run, and the op PyTorch's loop would dispatch once per tensor.
CLIPPING_AND_SGD = {
    "_foreach_norm": (lambda tensors, others: torch._foreach_norm(tensors), "aten::linalg_vector_norm"),
    "_foreach_mul_": (lambda tensors, others: torch._foreach_mul_(tensors, others[0][0, 0]), "aten::mul_"),
    "_foreach_mul_ by a number": (lambda tensors, others: torch._foreach_mul_(tensors, 0.9), "aten::mul"),
    "_foreach_add_": (lambda tensors, others: torch._foreach_add_(tensors, others, alpha=0.5), "aten::add_"),
}


@pytest.mark.parametrize("name", CLIPPING_AND_SGD)
def test_no_op_dispatched_per_tensor(name):
    """Each tensor's npy kernel is called from the list's kernel, not through the dispatcher."""
    foreach, per_tensor_op = CLIPPING_AND_SGD[name]
    tensors, others = ([tensor.to("npy") for tensor in _pair(torch.float32, seed)] for seed in (0, 2))
    with torch.profiler.profile() as profile:
        foreach(tensors, others)
    names = [event.name for event in profile.events()]
    assert names.count(f"aten::{name.split()[0]}") == 1
    assert per_tensor_op not in names


@pytest.mark.parametrize("name", CLIPPING_AND_SGD)
def test_float_lists_skip_the_per_tensor_kernels(name, monkeypatch):
    """Float32 lists whose tensors lie apart are computed by the list's kernel alone."""

    def refuse(*args, **kwargs):
        raise AssertionError("a per-tensor kernel ran")

    for op in (aten.linalg_vector_norm.default, aten.mul_.Tensor, aten.add_.Tensor):
        monkeypatch.setitem(KERNELS, op, refuse)
    foreach, _ = CLIPPING_AND_SGD[name]
    tensors, others = ([tensor.to("npy") for tensor in _pair(torch.float32, seed)] for seed in (0, 2))
    foreach(tensors, others)
