"""Views (``backend_pkg/ops/views.py``) against CPU: values, strides and storage offsets, writes
through a view reaching its base (the slices of ``split``, ``chunk`` and ``unbind`` among them), errors,
and the ``*_scatter`` ops that write into a copy."""

import pytest
import torch
from reference import assert_fails_like_cpu, assert_matches_cpu, check_like_cpu, make, npy

import backend_pkg


def test_registered_ops_include_this_family():
    expected = {"aten::view", "aten::as_strided", "aten::unfold", "aten::view_as_real", "aten::view_as_complex"}
    expected |= {"aten::squeeze.dim", "aten::permute"}
    assert expected <= set(backend_pkg.registered_ops())


def assert_same_view(npy_view, cpu_view, made_by_kernel=True):
    assert_matches_cpu(npy_view, cpu_view, made_by_kernel=made_by_kernel)
    assert npy_view.stride() == cpu_view.stride()
    assert npy_view.storage_offset() == cpu_view.storage_offset()


VIEWS = {
    "view": lambda t: t.view(4, 6),
    "view_infer": lambda t: t.view(-1, 3),
    "view_dtype": lambda t: t.view(torch.int32),
    "as_strided": lambda t: t.as_strided((3, 2), (2, 5), 3),
    "expand": lambda t: t[:, :1].expand(5, 2, 3, 4),
    "expand_keep": lambda t: t[:1].expand(-1, 3, 4),
    "detach": lambda t: t.detach(),
    "transpose": lambda t: t.transpose(0, 2),
    "slice_step": lambda t: t[1:, ::2, 1:],
    "select": lambda t: t[1, 2],
    "diagonal": lambda t: t[0].diagonal(),
    "unsqueeze": lambda t: t.unsqueeze(1),
    "unsqueeze_last": lambda t: t.unsqueeze(-1),
    "unsqueeze_strided": lambda t: t[1:, :, ::2].unsqueeze(2),
    "unsqueeze_scalar": lambda t: t[1, 2, 3].unsqueeze(0),
    "squeeze": lambda t: t[:, 1:2].squeeze(1),
    "squeeze_strided": lambda t: t.transpose(0, 2)[:, :1].squeeze(-2),
    "squeeze_not_one": lambda t: t.squeeze(1),
    "squeeze_scalar": lambda t: t[1, 2, 3].squeeze(-1),
    "squeeze_then_transpose": lambda t: t[:, :, 1:2].squeeze(2).t(),
    "unsqueeze_then_transpose": lambda t: t[:, :, ::2].unsqueeze(-1).transpose(1, 3),
    "permute": lambda t: t.permute(2, 0, 1),
    "permute_negative": lambda t: t[:, 1:, ::2].permute(-1, 0, -2),
    "permute_scalar": lambda t: t[1, 2, 3].permute(()),
    "permute_then_transpose": lambda t: t[:1].unsqueeze(2).permute(2, 0, 3, 1).transpose(0, 1),
    "reshape_copy": lambda t: t.transpose(0, 1).reshape(-1),
    "split": lambda t: t.split(1)[1],
}


@pytest.mark.parametrize("name", VIEWS)
def test_views_match_cpu(name):
    a = make((2, 3, 4), torch.float32)
    assert_same_view(VIEWS[name](npy(a)), VIEWS[name](a), made_by_kernel=name != "view_dtype")


def test_view_of_a_view_keeps_its_size():
    a = make((4, 6), torch.float64)
    assert_same_view(npy(a)[1:].view(2, 3, 3), a[1:].view(2, 3, 3))


def test_view_errors_match_cpu():
    a = make((3, 4), torch.float32)
    for bad in (lambda t: t.t().view(12), lambda t: t.view(5, 2), lambda t: t.view(-1, -1)):
        with pytest.raises(RuntimeError) as cpu_error:
            bad(a)
        with pytest.raises(RuntimeError) as npy_error:
            bad(npy(a))
        assert str(npy_error.value) == str(cpu_error.value)


@pytest.mark.parametrize("dim", [3, -4], ids=str)
def test_squeeze_and_unsqueeze_dim_errors_match_cpu(dim):
    a = make((2, 3, 4), torch.float32)
    assert_fails_like_cpu(lambda t: t.unsqueeze(dim + 1 if dim > 0 else dim - 1), a)
    assert_fails_like_cpu(lambda t: t.squeeze(dim), a)
    assert_fails_like_cpu(lambda t: t[0, 0, 0].squeeze(dim // 3), a)


@pytest.mark.parametrize("dims", [(0, 1), (0, 1, 3), (0, 1, -4), (0, 1, 1), (0, 1, -2), (0, 1, 2, 3)], ids=str)
def test_permute_errors_match_cpu(dims):
    assert_fails_like_cpu(lambda t: t.permute(dims), make((2, 3, 4), torch.float32))


def test_as_strided_out_of_bounds_is_an_error():
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        npy(torch.ones(4)).as_strided((2, 2), (2, 1), 1)


def test_expand_errors_match_cpu():
    a = make((3,), torch.float32)
    for size in ((2, 4), (-1, 3), (2,)):
        with pytest.raises(RuntimeError) as cpu_error:
            a.expand(size)
        with pytest.raises(RuntimeError) as npy_error:
            npy(a).expand(size)
        assert str(cpu_error.value).split(":")[-1] in str(npy_error.value)


SCATTER_INTO_COPIES = {
    "as_strided_scatter": lambda t, s: t.as_strided_scatter(s, (3,), (4,)),
    "diagonal_scatter": lambda t, s: t.diagonal_scatter(s),
    "select_scatter": lambda t, s: t.select_scatter(s, 0, 1),
    "slice_scatter": lambda t, s: t.slice_scatter(s[None, :], 0, 1, 2),
}


@pytest.mark.parametrize("name", SCATTER_INTO_COPIES)
def test_scatter_into_a_copy_of_a_fresh_result(name):
    # A fresh npy result's storage has no data pointer yet, and PyTorch's composite reads its size as 0.
    scatter = SCATTER_INTO_COPIES[name]
    expected = scatter(torch.zeros(3, 3), torch.arange(3.0))
    assert_matches_cpu(scatter(torch.zeros(3, 3, device="npy"), torch.arange(3.0, device="npy")), expected)


def test_views_alias_their_base():
    base = npy(torch.zeros(3, 4))
    base.view(2, 6)[1].fill_(1)
    base[:, 1:3].t()[0].fill_(2)
    base.as_strided((2,), (5,), 2).fill_(3)
    expected = torch.zeros(3, 4)
    expected.view(2, 6)[1].fill_(1)
    expected[:, 1:3].t()[0].fill_(2)
    expected.as_strided((2,), (5,), 2).fill_(3)
    assert_matches_cpu(base, expected)
    assert base[1:].untyped_storage().data_ptr() == base.untyped_storage().data_ptr()


def test_in_place_metadata_changes_are_seen():
    t = npy(torch.arange(6.0))
    t.unsqueeze_(0)
    t.t_()
    assert_matches_cpu(t * 1, torch.arange(6.0).unsqueeze(0).t())


def test_view_outlives_its_base():
    view = npy(torch.arange(12.0).reshape(3, 4)).t()[1:]
    torch.zeros(1 << 20, device="npy")  # reuse of freed memory would show here
    assert_matches_cpu(view, torch.arange(12.0).reshape(3, 4).t()[1:])


def test_tensors_made_by_pytorch_cpp_still_compute():
    a = make((2, 3), torch.float32)
    data = npy(a).view(a.dtype)  # a new Python object over the same storage
    assert type(data) is torch.Tensor and data.device.type == "npy"
    torch.testing.assert_close((data * 2).cpu(), a * 2)


def test_split_chunk_unbind_are_views_of_their_input():
    a = make((4, 6), torch.float32)
    splits = (lambda t: t.split(2, 1), lambda t: t.chunk(3), lambda t: t.unbind(1), lambda t: t.tensor_split(3, 1))
    for pieces in splits:
        on_device = npy(a)
        for got, expected in zip(pieces(on_device), pieces(a), strict=True):
            assert_matches_cpu(got, expected)
        pieces(on_device)[-1].fill_(0)
        expected = a.clone()
        pieces(expected)[-1].fill_(0)
        assert_matches_cpu(on_device, expected)


# --- views of new shapes, complex views ----------------------------------------


def assert_view_of(view, base, cpu_view):
    """``view`` matches CPU's (values and layout) and shares ``base``'s storage."""
    assert_same_view(view, cpu_view)
    assert view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()


NEW_SHAPE_VIEWS = {
    "unfold": (torch.float32, lambda t: t.unfold(2, 2, 1)),
    "unfold step": (torch.int16, lambda t: t[:, 1:].unfold(-1, 2, 3)),
    "unfold whole": (torch.float32, lambda t: t.transpose(0, 2).unfold(0, 4, 4)),
    "unfold zero-dim": (torch.float32, lambda t: t[0, 0, 0].unfold(0, 1, 1)),
    "view_as_complex": (torch.float64, lambda t: torch.view_as_complex(t[:, 1:, 2:])),
    "view_as_real": (torch.complex64, lambda t: torch.view_as_real(t[1:, ::2])),
    "real": (torch.complex128, lambda t: t.real),
    "imag": (torch.complex64, lambda t: t[:, 1].imag),
    "diagonal": (torch.float32, lambda t: t.diagonal(1, 0, 2)),
    "squeeze": (torch.float32, lambda t: t[:, :1].squeeze()),
    "squeeze dims": (torch.float32, lambda t: t[:1, :, :1].squeeze((0, 2))),
    "unsqueeze": (torch.float32, lambda t: t.unsqueeze(-1)),
    "movedim": (torch.float32, lambda t: t.movedim(0, -1)),
    "narrow": (torch.float32, lambda t: t.narrow(2, 1, 2)),
    "unflatten": (torch.float32, lambda t: t.unflatten(2, (2, 2))),
}


@pytest.mark.parametrize("name", NEW_SHAPE_VIEWS)
def test_views_share_their_base(name):
    dtype, view = NEW_SHAPE_VIEWS[name]
    a = make((2, 3, 4), dtype)
    on_device = npy(a)
    assert_view_of(view(on_device), on_device, view(a))


def test_writes_through_new_views_reach_the_base():
    base = npy(torch.zeros(3, 4, dtype=torch.complex64))
    expected = torch.zeros(3, 4, dtype=torch.complex64)
    for t in (base, expected):
        torch.view_as_real(t)[1, :, 1].fill_(5)  # imaginary parts of row 1
        torch.view_as_complex(torch.view_as_real(t)[2:])[0, ::2].fill_(1 + 1j)
        t.real.unfold(1, 2, 2)[0, :, 1].fill_(7)
        t.imag.diagonal().fill_(-1)
    assert_matches_cpu(base, expected)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
def test_view_as_real_and_complex_round_trip(dtype):
    a = make((3, 2), dtype)
    real = check_like_cpu(torch.view_as_real, a)
    assert_view_of(torch.view_as_complex(real), real, a)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.unfold(1, 5, 1),
        lambda t: t.unfold(1, 2, 0),
        lambda t: t.unfold(1, -1, 1),
        lambda t: t.unfold(2, 1, 1),
        lambda t: t[0, 0].unfold(0, 2, 1),
        lambda t: torch.view_as_real(t),
        lambda t: torch.view_as_complex(t),
        lambda t: torch.view_as_complex(t[:, ::2]),
        lambda t: torch.view_as_complex(t[:2, :2].t()),
        lambda t: torch.view_as_complex(t.flatten()[1:5].view(2, 2)),
        lambda t: torch.view_as_complex(t.long()[:, :2]),
        lambda t: torch.view_as_complex(t[0, 0]),
        lambda t: torch.view_as_real(t.to(torch.complex64).conj()),
    ],
    ids=[
        "unfold too big",
        "unfold step 0",
        "unfold negative size",
        "unfold dim",
        "unfold scalar",
        "real of real",
        "last dim not 2",
        "last stride not 1",
        "odd stride",
        "odd offset",
        "integer",
        "zero-dim",
        "conjugate",
    ],
)
def test_unfold_and_complex_view_errors_match_cpu(call):
    assert_fails_like_cpu(call, make((3, 4), torch.float32))
