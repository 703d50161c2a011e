"""Ops without an npy kernel run PyTorch's CPU kernel on npy memory, with PyTorch's semantics."""

import warnings

import pytest
import torch
from reference import assert_like_cpu, assert_matches_cpu, make, npy

import backend_pkg
from backend_pkg import fallback

pytestmark = pytest.mark.filterwarnings("ignore:npy device.*has no npy kernel")


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


@pytest.mark.parametrize(
    "convert, layout",
    [(torch.Tensor.to_sparse, "torch.sparse_coo"), (torch.Tensor.to_sparse_csr, "torch.sparse_csr")],
    ids=["to_sparse", "to_sparse_csr"],
)
@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
def test_a_sparse_result_is_refused_by_name(convert, layout):
    """The CPU kernel's sparse result has no strided memory to become an npy tensor."""
    message = f"gives a tensor of layout {layout}, and npy tensors are strided only"
    with pytest.raises(NotImplementedError, match=message):
        convert(npy(torch.eye(3)))


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


# Ops that return several tensors, and out= tensors, take their own paths through the fallback.


def _tied():
    """Values with a repeat in each row, so mode and unique have something to find."""
    values = make((3, 4), torch.float64).round()
    values[:, 2] = values[:, 0]
    return values


SEVERAL_RESULTS = {
    "mode": lambda t: t.mode(1),
    "mode of a transpose": lambda t: t.t().mode(1),
    "geqrf": torch.geqrf,
    "unique2": lambda t: torch._unique2(t, return_inverse=True, return_counts=True),
    "unique_consecutive": lambda t: torch.unique_consecutive(t, return_inverse=True, return_counts=True, dim=1),
    "frexp of a strided view": lambda t: torch.frexp(t[:, ::2]),
    "linalg.eig": lambda t: torch.linalg.eig(t[:, :3]),
    "kthvalue": lambda t: t.kthvalue(2, 1, keepdim=True),
}


@pytest.mark.parametrize("name", SEVERAL_RESULTS)
def test_ops_returning_several_tensors_match_cpu(name, monkeypatch):
    monkeypatch.setenv(fallback.STRICT_ENV, "1")
    with pytest.raises(NotImplementedError, match="has no npy kernel"):
        SEVERAL_RESULTS[name](npy(_tied()))  # this test is about the fallback: the op must need it
    monkeypatch.delenv(fallback.STRICT_ENV)
    assert_like_cpu(SEVERAL_RESULTS[name], _tied())


def _kthvalue_into(values, indices):
    """kthvalue with out=: the fallback's path for several out= tensors; what the test compares."""

    def run(t):
        v, i = values(t.device), indices(t.device)
        result = torch.kthvalue(t, 2, 1, out=(v, i))
        assert result[0] is v and result[1] is i
        return v, i, torch.tensor(v.stride() + i.stride(), device=t.device)

    return run


OUTS = {
    "right size": (lambda d: torch.zeros(3, device=d), lambda d: torch.zeros(3, dtype=torch.int64, device=d)),
    "empty": (lambda d: torch.zeros(0, device=d), lambda d: torch.zeros(0, dtype=torch.int64, device=d)),
    "wrong size": (lambda d: torch.zeros(2, 2, device=d), lambda d: torch.zeros(5, dtype=torch.int64, device=d)),
    "non-contiguous": (
        lambda d: torch.zeros(3, 2, device=d)[:, 1],
        lambda d: torch.zeros(2, 6, dtype=torch.int64, device=d)[1, ::2],
    ),
    "wrong dtype": (
        lambda d: torch.zeros(3, dtype=torch.float64, device=d),
        lambda d: torch.zeros(3, dtype=torch.int64, device=d),
    ),
}


@pytest.mark.parametrize("name", OUTS)
def test_out_tensors_of_a_fallback_op_match_cpu(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the resize warning, on both devices
        assert_like_cpu(_kthvalue_into(*OUTS[name]), make((3, 4), torch.float32))


def test_non_contiguous_out_is_written_in_place():
    storage = torch.zeros(4, 6, device="npy")
    out = storage[:, ::2].t()
    result = torch.special.erfcx(npy(make((3, 4), torch.float32)), out=out)
    assert result is out and out.stride() == (2, 6)
    expected = torch.zeros(4, 6)
    torch.special.erfcx(make((3, 4), torch.float32), out=expected[:, ::2].t())
    assert_matches_cpu(storage, expected)


def test_out_tensors_of_several_results_keep_their_layout():
    mantissa = torch.zeros(4, 3, device="npy").t()
    exponent = torch.zeros(3, 8, dtype=torch.int32, device="npy")[:, ::2]
    torch.frexp(npy(make((3, 4), torch.float32)), out=(mantissa, exponent))
    expected = torch.frexp(make((3, 4), torch.float32))
    assert (mantissa.stride(), exponent.stride()) == ((1, 3), (8, 2))
    assert_matches_cpu(mantissa, expected.mantissa)
    assert_matches_cpu(exponent, expected.exponent)


def test_several_out_tensors_are_returned_through_torch_ops():
    """``torch.kthvalue(..., out=(v, i))`` returns the tensors it was given, whatever the kernel
    returned; ``torch.ops.aten`` (what FX graphs and decompositions call) returns what the
    fallback returned: each out= tensor in its own place."""
    values, indices = torch.zeros(3, device="npy"), torch.zeros(3, dtype=torch.int64, device="npy")
    result = torch.ops.aten.kthvalue.values(npy(make((3, 4), torch.float32)), 2, 1, values=values, indices=indices)
    assert result[0] is values and result[1] is indices
    mantissa, exponent = torch.zeros(3, device="npy"), torch.zeros(3, dtype=torch.int32, device="npy")
    result = torch.ops.aten.frexp.Tensor_out(npy(make((3,), torch.float32)), mantissa=mantissa, exponent=exponent)
    assert result[0] is mantissa and result[1] is exponent
