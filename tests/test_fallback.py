"""Ops without an npy kernel run PyTorch's CPU kernel on npy memory, with PyTorch's semantics."""

import warnings

import pytest
import torch
from reference import assert_matches_cpu, make

import backend_pkg
from backend_pkg import fallback

pytestmark = pytest.mark.filterwarnings("ignore:npy device.*has no npy kernel")


def npy(tensor):
    return tensor.to("npy")


def test_functional_ops_match_cpu():
    a = make((3, 4), torch.float32)
    assert_matches_cpu(torch.special.erfcx(npy(a)), torch.special.erfcx(a))
    values, indices = npy(a).max(dim=1)
    expected_values, expected_indices = a.max(dim=1)
    assert_matches_cpu(values, expected_values)
    assert_matches_cpu(indices, expected_indices)


def test_in_place_op_writes_through_a_view_and_returns_self():
    base = make((3, 4), torch.float64)
    on_device = npy(base)
    view = on_device[1:, ::2]
    result = view.atan_()
    base[1:, ::2].atan_()
    assert result is view
    assert_matches_cpu(on_device, base)


def test_out_argument_is_resized_and_filled():
    a = make((2, 3), torch.float32)
    out = torch.empty(0, device="npy")
    result = torch.atan(npy(a), out=out)
    assert result is out
    assert_matches_cpu(out, torch.atan(a))


def test_view_op_returns_a_view_of_npy_memory():
    base = npy(torch.arange(8.0))
    windows = base.unfold(0, 3, 2)
    windows[1].fill_(-1.0)  # writes through the view reach the base
    expected = torch.arange(8.0)
    expected.unfold(0, 3, 2)[1].fill_(-1.0)
    assert_matches_cpu(base, expected)
    assert windows.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()


def test_factory_op_on_the_device():
    torch.manual_seed(0)
    expected = torch.empty(5).exponential_()
    torch.manual_seed(0)
    assert_matches_cpu(torch.empty(5, device="npy").exponential_(), expected)


def test_mixing_a_cpu_tensor_is_a_device_error():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.special.xlogy(npy(torch.ones(3)), torch.ones(3))


def test_warns_once_per_op_and_counts_calls():
    x = npy(torch.rand(4))
    before = fallback.calls["aten::special_i1e.out"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.special.i1e(x)
        torch.special.i1e(x)
    messages = [str(w.message) for w in caught if "special_i1e" in str(w.message)]
    assert len(messages) == (1 if before == 0 else 0)
    assert fallback.calls["aten::special_i1e.out"] == before + 2


def test_strict_mode_names_the_op(monkeypatch):
    monkeypatch.setenv(fallback.STRICT_ENV, "1")
    with pytest.raises(NotImplementedError, match=r"aten::special_i0e.out has no npy kernel"):
        torch.special.i0e(npy(torch.rand(3)))


def test_native_ops_do_not_fall_back():
    before = sum(fallback.calls.values())
    x = npy(torch.rand(3))
    (x + x * 2 - x).sum().item()
    assert sum(fallback.calls.values()) == before
    assert "aten::add.Tensor" in backend_pkg.registered_ops()
