"""In-place ops on views, on expanded tensors, and with arguments that share memory, like CPU.

An in-place op on a view writes into its base's memory; PyTorch refuses to
write an element twice (an expanded target) and to read an argument that
shares part, not all, of the written memory (``x.add_(x.T)``), and words both
refusals the same on every device. Where PyTorch's result would depend on the
order its loop visits elements (two overlapping strided views it cannot
tell apart, ``mm(x, x, out=x)``), nothing is compared.
"""

import warnings

import pytest
import torch
from reference import assert_like_cpu, npy


def base():
    return torch.arange(12.0).reshape(3, 4)


def square():
    return torch.arange(9.0).reshape(3, 3)


def _then_base(write):
    """``write`` applied to a copy of the tensor; the copy (the base) is the result."""

    def run(tensor):
        tensor = tensor.clone()
        write(tensor)
        return tensor

    return run


ON_VIEWS = {
    "slice add_": lambda t: t[1:].add_(1),
    "transpose mul_": lambda t: t.t().mul_(2),
    "column sub_": lambda t: t[:, 1].sub_(5),
    "step div_": lambda t: t[:, ::2].div_(2),
    "diagonal fill_": lambda t: t.diagonal().fill_(7),
    "view zero_": lambda t: t.view(4, 3)[1:].zero_(),
    "row of transpose neg_": lambda t: t.t()[1:].neg_(),
    "row pow_": lambda t: t[1].pow_(2),
    "strided clamp_": lambda t: t[:, 1:3].clamp_(2, 5),
    "strided sigmoid_": lambda t: t[::2].sigmoid_(),
    "row copy_": lambda t: t[0].copy_(t[2]),
    "transpose masked_fill_": lambda t: t.t().masked_fill_(t.t() > 4, -1),
    "slice index_put_": lambda t: t[:, 1:].index_put_(
        (torch.tensor([0, 2], device=t.device),), torch.tensor(1.0, device=t.device)
    ),
    "column addcmul_": lambda t: t[:, 0].addcmul_(t[:, 1], t[:, 2], value=2),
    "slice out=": lambda t: torch.mul(t[0], 3, out=t[2]),
    "transposed out=": lambda t: torch.exp(t[:, :3].contiguous(), out=t[:, :3].t()),
}


@pytest.mark.parametrize("name", ON_VIEWS)
def test_in_place_on_a_view_writes_its_base_like_cpu(name):
    assert_like_cpu(_then_base(ON_VIEWS[name]), base())


OVERLAPPING = {
    "add_ own transpose": lambda t: t.add_(t.T),
    "mul_ own transpose": lambda t: t.mul_(t.T),
    "add_ shifted self": lambda t: t[1:].add_(t[:-1]),
    "addcmul_ shifted": lambda t: t[1:].addcmul_(t[:-1], t[:-1]),
    "copy_ own transpose": lambda t: t.copy_(t.T),
    "add out= own transpose": lambda t: torch.add(t, 1, out=t.T),
    "exp out= own transpose": lambda t: torch.exp(t, out=t.T),
    "index_copy_ from itself": lambda t: t.index_copy_(0, torch.tensor([0, 1], device=t.device), t[1:]),
    "index_put_ from itself": lambda t: t.index_put_((torch.tensor([0, 1], device=t.device),), t[1:]),
    "setitem from itself": lambda t: t.__setitem__(torch.tensor([0, 1], device=t.device), t[1:]),
    "index_put_ indexed by itself": lambda t: t.view(-1)[:3].index_put_((t.view(-1)[:3].long(),), t[0, :1]),
    # sharing all the memory, the same way, is allowed
    "add_ itself": lambda t: t.add_(t),
    "mul out= itself": lambda t: torch.mul(t, t, out=t),
    "copy_ itself": lambda t: t.copy_(t),
}


@pytest.mark.parametrize("name", OVERLAPPING)
def test_overlapping_arguments_like_cpu(name):
    assert_like_cpu(_then_base(OVERLAPPING[name]), square())


ON_EXPANDED = {
    "add_": lambda t: t.add_(1),
    "mul_": lambda t: t.mul_(2),
    "exp_": lambda t: t.exp_(),
    "clamp_": lambda t: t.clamp_(0, 1),
    "copy_": lambda t: t.copy_(torch.ones(2, 3, device=t.device)),
    "uniform_": lambda t: t.uniform_(),
    "add out=": lambda t: torch.add(torch.ones(3, device=t.device), 1, out=t),
    # zero_ and fill_ write one value: PyTorch allows them
    "zero_": lambda t: t.zero_(),
    "fill_": lambda t: t.fill_(2),
}


@pytest.mark.parametrize("name", ON_EXPANDED)
def test_writing_an_expanded_tensor_like_cpu(name):
    assert_like_cpu(lambda t: ON_EXPANDED[name](t.clone().expand(2, 3)), torch.ones(3))


@pytest.mark.parametrize(
    "write, warning",
    [
        (lambda t: t.masked_fill_(torch.tensor([[True, False, False]] * 2, device=t.device), 0), "masked_fill_"),
        (
            lambda t: t.index_put_((torch.tensor([0], device=t.device),), torch.tensor(2.0, device=t.device)),
            "index_put_",
        ),
    ],
    ids=["masked_fill_", "index_put_"],
)
def test_deprecated_writes_to_expanded_tensors_warn_and_write_like_cpu(write, warning):
    def run(values):
        expanded = values.clone().expand(2, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            write(expanded)
        assert any(f"Use of {warning} on expanded tensors is deprecated" in str(w.message) for w in caught)
        return expanded

    assert_like_cpu(run, torch.arange(3.0))


def test_in_place_result_is_the_view_itself():
    x = npy(base())
    view = x[1:, ::2]
    assert view.add_(1) is view
    assert view.mul_(view) is view
    assert x._version == view._version
