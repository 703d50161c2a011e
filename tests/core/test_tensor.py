"""The two shortcuts of backend_pkg.tensor never show: an npy tensor's kept
NumPy view follows every in-place metadata change, and a result whose
storage has no data pointer yet gets one whenever something reads it."""

import io

import pytest
import torch

import backend_pkg  # noqa: F401
from backend_pkg.tensor import NpyTensor

IN_PLACE_METADATA_CHANGES = {
    "unsqueeze_": lambda t: t.unsqueeze_(0),
    "squeeze_": lambda t: t.unsqueeze_(1).squeeze_(1),
    "t_": lambda t: t.t_(),
    "transpose_": lambda t: t.transpose_(0, 1),
    "swapdims_": lambda t: t.swapdims_(1, 0),
    "as_strided_": lambda t: t.as_strided_((2, 2), (1, 3), 1),
    "resize_ smaller": lambda t: t.resize_(4),
    "resize_ larger": lambda t: t.resize_(3, 4).flatten()[:6],  # the rest is uninitialized
    "set_ to another tensor": lambda t: t.set_(torch.arange(5.0).to(t.device)),
    "set_ to a view of itself": lambda t: t.set_(t[1:, ::2]),
}


def as_gradient(cpu):
    """``cpu`` on npy with a plain ``torch.Tensor`` Python object: the gradient ``AccumulateGrad``
    stores is PyTorch's C++ ``detach`` of the one the backward computed (backend_pkg.tensor.detached)."""
    leaf = torch.zeros(cpu.shape, device="npy", requires_grad=True)
    (leaf * cpu.to("npy")).sum().backward()
    assert type(leaf.grad) is torch.Tensor
    return leaf.grad


NPY_OBJECTS = {"NpyTensor": lambda cpu: cpu.to("npy"), "plain object (a gradient)": as_gradient}


@pytest.mark.parametrize("make_npy", NPY_OBJECTS.values(), ids=NPY_OBJECTS)
@pytest.mark.parametrize("change", IN_PLACE_METADATA_CHANGES.values(), ids=IN_PLACE_METADATA_CHANGES)
def test_in_place_metadata_changes_are_seen_by_kernels(change, make_npy):
    cpu = torch.arange(6.0).reshape(2, 3)
    npy = make_npy(cpu)
    npy + 0  # the kernels have read (and kept) its NumPy view
    changed_cpu, changed_npy = change(cpu), change(npy)
    torch.testing.assert_close((changed_npy * 2).cpu(), changed_cpu * 2)
    assert npy.shape == cpu.shape and npy.stride() == cpu.stride()


@pytest.mark.parametrize("make_npy", NPY_OBJECTS.values(), ids=NPY_OBJECTS)
def test_setting_data_is_seen_by_kernels(make_npy):
    npy = make_npy(torch.arange(6.0).reshape(2, 3))
    npy * 1
    npy.data = torch.arange(4, dtype=torch.float64).to("npy")
    torch.testing.assert_close((npy + 1).cpu(), torch.arange(1, 5, dtype=torch.float64))
    torch.testing.assert_close(npy.view(2, 2).cpu(), torch.arange(4, dtype=torch.float64).view(2, 2))
    npy.data = npy.data.flip(0)[::2]
    torch.testing.assert_close((npy + 1).cpu(), torch.tensor([4.0, 2.0], dtype=torch.float64))


def test_saving_a_fresh_gradient_saves_its_bytes():
    """A plain object's storage is read by ``torch.save`` without asking the tensor (backend_pkg.storage)."""
    gradient = as_gradient(torch.arange(6.0).reshape(2, 3))
    buffer = io.BytesIO()
    torch.save(gradient, buffer)
    buffer.seek(0)
    torch.testing.assert_close(torch.load(buffer, weights_only=True).cpu(), torch.arange(6.0).reshape(2, 3))


def test_module_dtype_conversion_on_npy_reaches_parameters():
    torch.manual_seed(0)
    cpu = torch.nn.Linear(3, 2)
    npy = torch.nn.Linear(3, 2).to("npy")
    npy.load_state_dict(cpu.state_dict())
    npy(torch.ones(1, 3, device="npy"))
    cpu, npy = cpu.double(), npy.double()  # npy to npy conversions assign `param.data`
    assert isinstance(npy.weight, NpyTensor) and npy.weight.dtype == torch.float64
    x = torch.randn(4, 3, dtype=torch.float64)
    torch.testing.assert_close(npy(x.to("npy")).cpu(), cpu(x))


def test_results_have_data_pointers_when_read():
    x = torch.arange(6.0).to("npy")
    result = x * 2
    assert result.data_ptr() != 0
    assert result.untyped_storage().nbytes() == 6 * 4
    assert result[2:].data_ptr() == result.data_ptr() + 2 * 4
    assert (x + 1).data.data_ptr() != 0


def test_autograd_saved_results_keep_their_memory():
    x = torch.linspace(-1, 1, 5, requires_grad=True)
    y = torch.linspace(-1, 1, 5).to("npy").requires_grad_()
    x.exp().sigmoid().sum().backward()  # both save their results for backward
    y.exp().sigmoid().sum().backward()
    torch.testing.assert_close(y.grad.cpu(), x.grad)


def test_saving_a_fresh_result_saves_its_bytes():
    result = torch.arange(6.0).to("npy") * 3
    buffer = io.BytesIO()
    torch.save({"result": result, "detached data": (result + 1).data}, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)
    torch.testing.assert_close(loaded["result"].cpu(), torch.arange(6.0) * 3)
    torch.testing.assert_close(loaded["detached data"].cpu(), torch.arange(6.0) * 3 + 1)


def test_set_to_a_plain_tensor_over_a_fresh_result():
    """Autograd keeps a result as a plain tensor over the same storage: still a full npy storage to ``set_``."""
    x = torch.arange(4.0).to("npy").requires_grad_()
    result = x.exp()
    saved = result.grad_fn._saved_result
    assert type(saved) is torch.Tensor
    target = torch.empty(0, device="npy").set_(saved)
    result.detach().add_(1)  # the same memory
    torch.testing.assert_close(target.detach().cpu(), torch.arange(4.0).exp() + 1)
    assert target.data_ptr() == result.data_ptr() != 0


VIEWS = {
    "as_strided": lambda t: t.as_strided(t.shape, t.stride()),
    "slice": lambda t: t[1:],
    "select": lambda t: t[:, 1],
    "unsqueeze": lambda t: t.unsqueeze(0),
}


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 0, 1), (1, 2, 0), (2, 1, 0)], ids=str)
@pytest.mark.parametrize("view", VIEWS.values(), ids=VIEWS)
def test_views_of_a_result_laid_out_like_its_permuted_input(order, view):
    """NumPy lays ``permuted * 2`` out in the permuted input's memory order; views read it right
    (C++ attention takes views of such a scaled key)."""
    base = torch.randn(2, 3, 4)
    expected = view(base.permute(order) * 2)
    actual = view(base.to("npy").permute(order) * 2)
    assert actual.stride() == expected.stride()
    torch.testing.assert_close(actual.cpu(), expected)
