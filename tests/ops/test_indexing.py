"""Indexing, joining and shape ops against PyTorch's CPU results: values, errors, aliasing."""

import re

import pytest
import torch
from reference import NUMERIC_DTYPES, PROMOTIONS, assert_matches_cpu, make, npy

import backend_pkg


def long(*values):
    return torch.tensor(values, dtype=torch.int64)


def at(like, *values):
    """An int64 index tensor on ``like``'s device (ops other than index want it there)."""
    return long(*values).to(like.device)


def on_npy(args):
    return [npy(a) if isinstance(a, torch.Tensor) else a for a in args]


def assert_fails_like_cpu(call, *cpu_args):
    """``call`` raises the same exception type on CPU and npy inputs, with the same message."""
    with pytest.raises(Exception) as cpu_error:
        call(*cpu_args)
    with pytest.raises(Exception) as npy_error:
        call(*on_npy(cpu_args))
    assert type(npy_error.value) is type(cpu_error.value)
    assert str(npy_error.value) == str(cpu_error.value)


def check(call, *cpu_args):
    """``call`` gives the same result (values and layout) on npy copies of ``cpu_args`` as on CPU."""
    on_device = on_npy(cpu_args)  # before call changes them
    expected = call(*cpu_args)
    result = call(*on_device)
    assert_matches_cpu(result, expected)
    if expected.numel() > 1:
        assert result.stride() == expected.stride(), "layout differs from CPU's"
    return result


def check_in_place(call, base, *cpu_args):
    """An in-place ``call`` on a view of ``base`` changes ``base`` as on CPU, and returns its self."""
    on_device = npy(base)
    view = on_device[1:]
    returned = call(view, *on_npy(cpu_args))
    call(base[1:], *cpu_args)
    assert returned.data_ptr() == view.data_ptr()
    assert_matches_cpu(on_device, base)


def check_out(call, *cpu_args):
    """``call(..., out=)`` fills a given npy tensor, as on CPU, and returns it.

    ``call`` passes its ``**out`` keyword arguments on to the op.
    """
    expected = call(*cpu_args)
    out = torch.empty(0, dtype=expected.dtype, device="npy")
    returned = call(*on_npy(cpu_args), out=out)
    assert returned is out
    assert_matches_cpu(out, expected)


# --- index (reading with Tensor?[] indices) ---------------------------------


def test_registered_ops_include_this_family():
    expected = {
        "aten::index.Tensor",
        "aten::_index_put_impl_",
        "aten::index_select",
        "aten::gather",
        "aten::scatter.src",
        "aten::scatter_add",
        "aten::masked_select",
        "aten::nonzero",
        "aten::take",
        "aten::cat",
        "aten::cat.out",
        "aten::flip",
        "aten::roll",
        "aten::tril",
        "aten::unfold",
        "aten::view_as_real",
        "aten::view_as_complex",
    }
    assert expected <= set(backend_pkg.registered_ops())


INDEXINGS = {
    "long": lambda t: t[long(1, 0, 1)],
    "negative": lambda t: t[long(-1, -2)],
    "second dim": lambda t: t[:, long(2, 0)],
    "adjacent pair, broadcast": lambda t: t[:, long(0, 2, 1).view(3, 1), long(3, -1)],
    "split by a slice": lambda t: t[long(1, 0), :, long(3, 0)],
    "int32": lambda t: t[torch.tensor([1, 0], dtype=torch.int32)],
    "zero-dim index": lambda t: t[:, torch.tensor(2)],
    "mask": lambda t: t[make((2, 3, 4), torch.bool, seed=5).to(t.device)],
    "mask of leading dims": lambda t: t[torch.tensor([[True, False, True], [False, False, True]])],
    "mask and long": lambda t: t[torch.tensor([True, False]), :, long(0, 1)],
    "zero-dim mask": lambda t: t[torch.tensor(True)],
    "python list": lambda t: t[[1, 0], [2, 2]],
    "empty index": lambda t: t[long()],
}


@pytest.mark.parametrize("name", INDEXINGS)
def test_index_matches_cpu(name):
    check(INDEXINGS[name], make((2, 3, 4), torch.float32))


def test_index_every_dtype(dtype):
    a = make((4, 3), dtype)
    check(lambda t: t[long(3, -4, 3), long(0, 1, 2)], a)
    check(lambda t: t[make((4, 3), torch.bool, seed=3)], a)


def test_index_accepts_cpu_index_tensors():
    a = make((4, 3), torch.int32)
    assert_matches_cpu(npy(a)[long(2, 0)], a[long(2, 0)])


def test_uint8_index_is_a_mask_with_cpu_warning():
    a = make((3, 2), torch.float64)
    mask = torch.tensor([1, 0, 1], dtype=torch.uint8)
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        result = npy(a)[npy(mask)]
    with pytest.warns(UserWarning):
        assert_matches_cpu(result, a[mask])


def test_index_out():
    check_out(lambda t, **out: torch.ops.aten.index(t, [None, long(1, 1)], **out), make((2, 3), torch.int16))


INDEX_ERRORS = {
    "out of bounds": lambda t: t[long(0, 2)],
    "negative out of bounds": lambda t: t[long(-3)],
    "second index out of bounds": lambda t: t[long(0, 1), long(1, 4)],
    "after a slice": lambda t: t[:, long(3)],
    "float index": lambda t: t[torch.tensor([0.0])],
    "int16 index": lambda t: t[torch.tensor([0], dtype=torch.int16)],
    "mask shape": lambda t: t[torch.ones(3, dtype=torch.bool)],
    "mask shape after a slice": lambda t: t[:, torch.ones(3, 5, dtype=torch.bool)],
    "too many": lambda t: torch.ops.aten.index(t, [long(0)] * 4),
    "no broadcast": lambda t: t[long(0, 1), long(0, 1, 2)],
    "no index": lambda t: torch.ops.aten.index(t, []),
}


@pytest.mark.parametrize("name", INDEX_ERRORS)
def test_index_errors_match_cpu(name):
    assert_fails_like_cpu(INDEX_ERRORS[name], make((2, 3, 4), torch.float32))


# --- index_put_ ---------------------------------------------------------------


def put(index, value, accumulate=False):
    return lambda t: t.index_put_(index, value.to(t.device), accumulate=accumulate)


PUTS = {
    "long": put((long(1, -3),), torch.tensor(7.0)),
    "rows of values": put((long(0, 2),), torch.arange(8.0).view(2, 4)),
    "broadcast values": put((long(0, 2), long(1, 3)), torch.tensor([5.0, 6.0])),
    "mask": put((torch.tensor([True, False, True]),), torch.tensor(-1.0)),
    "slice then long": lambda t: torch.ops.aten.index_put_(
        t, [None, long(0, 3)], torch.tensor([[1.0], [2.0], [3.0]]).to(t.device)
    ),
    "duplicates accumulate": put((long(1, 1, 1, 0),), torch.ones(4, 4), accumulate=True),
    "mask accumulate": put((make((3, 4), torch.bool, seed=4),), torch.tensor(2.0), accumulate=True),
    "pairs accumulate": put((long(0, 0, 2), long(1, 1, 1)), torch.tensor([1.0, 2.0, 4.0]), accumulate=True),
}


@pytest.mark.parametrize("name", PUTS)
def test_index_put_writes_through_a_view(name):
    check_in_place(PUTS[name], make((4, 4), torch.float32))


def test_index_put_accumulate_adds_duplicates_every_dtype(dtype):
    a, values = make((5,), dtype), make((6,), dtype, seed=1)
    index = long(0, 0, 3, -1, 0, 4)
    check(lambda t, v: t.index_put((index,), v, accumulate=True), a, values)


def test_setitem_matches_cpu(dtype):
    a = make((3, 4), dtype)

    def assign(t):
        t[long(2, 0)] = t[1].clone()  # CPU refuses values that alias self
        t[make((3, 4), torch.bool, seed=1).to(t.device)] = t.flatten()[0]
        return t

    check(assign, a)


PUT_ERRORS = {
    "values dtype": put((long(0),), torch.ones(4, dtype=torch.float64)),
    "values shape": put((long(0),), torch.ones(2)),
    "out of bounds": put((long(3),), torch.ones(1)),
    "out of bounds, accumulate": put((long(-4),), torch.ones(1), accumulate=True),
    "mask shape": put((torch.ones(2, dtype=torch.bool),), torch.ones(1)),
}


@pytest.mark.parametrize("name", PUT_ERRORS)
def test_index_put_errors_match_cpu(name):
    assert_fails_like_cpu(PUT_ERRORS[name], make((3, 4), torch.float32))


# --- along one dim: index_select, index_fill_, index_add, index_copy -----------


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select(dim, dtype):
    check(lambda t: t.index_select(dim, at(t, 2, 0, 2)), make((3, 4, 5), dtype))


def test_index_select_shapes_and_out():
    a = make((3, 4), torch.float32)
    check(lambda t: t.index_select(1, at(t, 3).int().view(())), a)
    check(lambda t: t.index_select(0, at(t)), a)
    check(lambda t: t.index_select(0, at(t, 0)), torch.tensor(2.5))
    check_out(lambda t, **out: torch.index_select(t, 1, at(t, 0, 0), **out), a)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.index_select(0, at(t, 3)),
        lambda t: t.index_select(0, at(t, -1)),
        lambda t: t.index_select(0, at(t, 0).view(1, 1)),
        lambda t: t.index_select(0, at(t, 0).float()),
        lambda t: t.index_select(2, at(t, 0)),
        lambda t: t[0, 0].index_select(0, at(t, 0, 0)),
    ],
    ids=["out of range", "negative", "matrix index", "float index", "bad dim", "two picks of a scalar"],
)
def test_index_select_errors_match_cpu(call):
    assert_fails_like_cpu(call, make((3, 4), torch.float32))


def test_index_fill(dtype):
    a = make((3, 4), dtype)
    value = True if dtype == torch.bool else 3
    check_in_place(lambda t: t.index_fill_(1, at(t, 0, -1), value), a)
    check_in_place(lambda t, v: t.index_fill_(0, at(t, 1), v), make((4, 2), dtype), make((), dtype, seed=2))
    check(lambda t: t.index_fill(-1, at(t, 2), value), a)
    check(lambda t: t.index_fill(2, at(t, 3, 0), value), make((2, 3, 4), dtype))


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.index_fill_(1, at(t, 4), 1.0),
        lambda t: t.index_fill_(1, at(t, -5), 1.0),
        lambda t: t.index_fill_(1, at(t, 1).view(1, 1), 1.0),
        lambda t: t.index_fill_(1, at(t, 1).int(), 1.0),
        lambda t: t.index_fill_(1, at(t, 1), torch.ones(2, device=t.device)),
        lambda t: t.index_fill_(1, at(t, 1), 1j),
    ],
    ids=["out of range", "negative out of range", "matrix index", "int32 index", "vector value", "complex value"],
)
def test_index_fill_errors_match_cpu(call):
    assert_fails_like_cpu(call, make((3, 4), torch.float32))


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
def test_index_add_adds_duplicates(dtype):
    a, source = make((3, 4), dtype), make((3, 5), dtype, seed=1)
    index = long(0, 3, 0, 0, 2)
    check(lambda t, s, i: t.index_add(1, i, s), a, source, index)
    alpha = 2 if not (dtype.is_floating_point or dtype.is_complex) else 0.5
    check(lambda t, s, i: t.index_add(1, i, s, alpha=alpha), a, source, index.int())
    check_in_place(lambda t, s: t.index_add_(0, at(t, 1, 1), s), make((4, 3), dtype), make((2, 3), dtype))
    check_out(lambda t, s, i, **out: torch.index_add(t, 1, i, s, **out), a, source, index)


def test_index_copy(dtype):
    a, source = make((3, 4), dtype), make((3, 2), dtype, seed=1)
    check(lambda t, s: t.index_copy(1, at(t, 3, 0), s), a, source)
    check_in_place(lambda t, s: t.index_copy_(0, at(t, 1), s), make((4, 2), dtype), make((1, 2), dtype))
    check_out(lambda t, s, **out: torch.index_copy(t, 1, at(t, 3, 0), s, **out), a, source)
    check(lambda t, s: t.index_copy(2, at(t, 3, 0), s), make((2, 3, 4), dtype), make((2, 3, 2), dtype, seed=1))


@pytest.mark.parametrize(
    "call",
    [
        lambda t, s: t.index_add(1, at(t, 4), s),
        lambda t, s: t[0].index_add(0, at(t, 4), s[0]),
        lambda t, s: t.index_add(1, at(t, -1), s),
        lambda t, s: t.index_add(1, at(t, 0, 1), s),
        lambda t, s: t.index_add(1, at(t, 0).view(1, 1), s),
        lambda t, s: t.index_add(1, at(t, 0), s.double()),
        lambda t, s: t.index_copy(1, at(t, 4), s),
        lambda t, s: t.index_copy(1, at(t, -1), s),
        lambda t, s: t.index_copy(1, at(t, 0, 1), s),
        lambda t, s: t.index_copy(1, at(t, 0).view(1, 1), s),
        lambda t, s: t.index_copy(1, at(t, 0).int(), s),
        lambda t, s: t.index_copy(1, at(t, 0), s.double()),
    ],
    ids=[
        "index_add out of range",
        "index_add out of range, 1-dim",
        "index_add negative",
        "index_add count",
        "index_add matrix index",
        "index_add dtype",
        "index_copy out of range",
        "index_copy negative",
        "index_copy count",
        "index_copy matrix index",
        "index_copy int32 index",
        "index_copy dtype",
    ],
)
def test_index_add_and_copy_errors_match_cpu(call):
    # Functional forms: in-place ones meet PyTorch's own meta checks before the npy kernel.
    assert_fails_like_cpu(call, make((3, 4), torch.float32), make((3, 1), torch.float32))


def test_embedding_and_its_gradient_match_cpu():
    weight, indices = make((6, 3), torch.float32), long(0, 5, 5, 2, 0, 0).view(2, 3)
    for options in ({}, {"padding_idx": 5}, {"scale_grad_by_freq": True}):
        grads = []
        for device in ("cpu", "npy"):
            leaf = weight.to(device).detach().requires_grad_()
            out = torch.nn.functional.embedding(indices.to(device), leaf, **options)
            (out * torch.arange(3.0).to(device)).sum().backward()
            grads.append((out, leaf.grad))
        assert_matches_cpu(grads[1][0].detach(), grads[0][0].detach())
        assert_matches_cpu(grads[1][1], grads[0][1], made_by_kernel=False)  # see reference.assert_matches_cpu


# --- gather and scatter ----------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(dim, dtype):
    index = torch.randint(0, 3, (2, 3, 2), generator=torch.Generator().manual_seed(dim))
    check(lambda t: t.gather(dim, index.to(t.device)), make((3, 3, 3), dtype))


def test_gather_int32_scalar_empty_and_out():
    a = make((3, 4), torch.float64)
    check(lambda t: t.gather(1, long(3, 0).view(1, 2).int().to(t.device)), a)
    check(lambda t: t.gather(0, torch.tensor(0).to(t.device)), torch.tensor(1.5))
    check(lambda t: t.gather(0, long().view(0, 4).to(t.device)), a)
    check_out(lambda t, i, **out: torch.gather(t, 0, i, **out), a, long(2, 1).view(2, 1))


@pytest.mark.parametrize(
    "index",
    [long(3).view(1, 1), long(-1).view(1, 1), long(0), torch.zeros(1, 5, dtype=torch.int64), torch.zeros(1, 1)],
    ids=["out of range", "negative", "fewer dims", "too wide", "float"],
)
def test_gather_errors_match_cpu(index):
    assert_fails_like_cpu(lambda t, i: t.gather(0, i), make((3, 4), torch.float32), index)


SCATTERS = {
    "src": lambda t, i, s: t.scatter_(1, i, s),
    "value": lambda t, i, s: t.scatter_(1, i, 2),
    "add": lambda t, i, s: t.scatter_add_(1, i, s),
    "reduce add": lambda t, i, s: t.scatter_(1, i, s, reduce="add"),
    "reduce multiply": lambda t, i, s: t.scatter_(1, i, s, reduce="multiply"),
    "value reduce add": lambda t, i, s: t.scatter_(1, i, 3, reduce="add"),
    **{
        f"reduce {how}{'' if include else ' excluding self'}": (
            lambda t, i, s, how=how, include=include: t.scatter_reduce_(1, i, s, how, include_self=include)
        )
        for how in ("sum", "prod", "mean", "amax", "amin", "max")
        for include in (True, False)
    },
}
# Duplicates only where the result does not depend on which write lands last.
UNIQUE_ROWS = long(2, 0, 1, 3, 1, 2, 0, 3).view(2, 4)[:, :3]
DUPLICATES = long(0, 0, 3, 3, 1, 0, 0, 0).view(2, 4)


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@pytest.mark.parametrize("name", SCATTERS)
@pytest.mark.parametrize("dtype", [torch.int64, torch.float32, torch.float64], ids=str)
def test_scatter_family_writes_through_a_view(name, dtype):
    index = UNIQUE_ROWS if name in ("src", "value") else DUPLICATES
    source = make((2, 5), dtype, seed=1)
    check_in_place(SCATTERS[name], make((3, 4), dtype), index, source)


def test_scatter_every_dtype_and_out(dtype):
    a, source = make((3, 4), dtype), make((3, 4), dtype, seed=1)
    check(lambda t, i, s: t.scatter(1, i, s), a, UNIQUE_ROWS, source)
    check(lambda t, i, s: t.scatter_add(0, i, s), a, DUPLICATES.clamp(max=2), source)
    check_out(lambda t, i, s, **out: torch.scatter(t, 1, i, s, **out), a, UNIQUE_ROWS, source)
    check_out(lambda t, i, s, **out: torch.scatter_add(t, 0, i, s, **out), a, DUPLICATES.clamp(max=2), source)
    if dtype != torch.bool and not dtype.is_complex:
        check_out(
            lambda t, i, s, **out: torch.scatter_reduce(t, 0, i, s, "amax", **out),
            a,
            DUPLICATES.clamp(max=2),
            source,
        )


def test_scatter_takes_an_empty_index_of_any_dtype():
    # PyTorch checks an index's dtype only when it has elements (scatter_gather_dtype_check).
    empty = torch.zeros(0, dtype=torch.uint8)
    check(lambda t, i: t.scatter_add(0, i, t), make((5,), torch.float64), empty)
    check(lambda t, i: t.scatter(0, i, 2.0), make((5,), torch.float64), empty)


@pytest.mark.parametrize(
    "call",
    [
        lambda t, i: t.scatter(1, i + 4, 1.0),
        lambda t, i: t.scatter(1, i - 1, t),
        lambda t, i: t.scatter_add(1, i, t.double()),
        lambda t, i: t.scatter(1, i.float(), t),
        lambda t, i: t.scatter(1, i[0], t),
        lambda t, i: t.scatter(0, i.repeat(2, 2), 1.0),
        lambda t, i: t.scatter(0, i, t[:1, :1]),
        lambda t, i: t.scatter(1, i, 1.0, reduce="max"),
        lambda t, i: t.scatter_reduce(1, i, t, "multiply"),
        lambda t, i: t.scatter(1, i, 1j),
    ],
    ids=[
        "out of range",
        "negative",
        "src dtype",
        "float index",
        "fewer dims",
        "index too big",
        "src too small",
        "bad reduce",
        "bad scatter_reduce",
        "complex value",
    ],
)
def test_scatter_errors_match_cpu(call):
    assert_fails_like_cpu(call, make((3, 4), torch.float32), DUPLICATES)


@pytest.mark.parametrize(
    "dtype, reduce",
    [(torch.complex64, "amax"), (torch.complex128, "min"), (torch.bool, "mean")],
    ids=str,
)
def test_scatter_reduce_refuses_what_cpu_has_no_kernel_for(dtype, reduce):
    assert_fails_like_cpu(lambda t, i: t.scatter_reduce(1, i, t, reduce), make((3, 4), dtype), DUPLICATES)


# --- take, put_, masked_select, masked_fill_, masked_scatter_, nonzero, where -----


def test_take(dtype):
    a = make((3, 4), dtype).t()
    check(lambda t: t.take(long(0, -1, 5, 5, -12).view(5, 1).to(t.device)), a)
    check(lambda t: t.take(torch.tensor(3).to(t.device)), a)
    check_out(lambda t, i, **out: torch.take(t, i, **out), a, long(1, 2))


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.take(long(12).to(t.device)),
        lambda t: t.take(long(-13).to(t.device)),
        lambda t: t.take(long(0).int().to(t.device)),
        lambda t: t[:0].take(long(0).to(t.device)),
    ],
    ids=["out of range", "negative out of range", "int32 index", "empty self"],
)
def test_take_errors_match_cpu(call):
    assert_fails_like_cpu(call, make((3, 4), torch.float32))


def test_put_and_put_accumulate(dtype):
    a, source = make((3, 4), dtype).t(), make((5,), dtype, seed=1)
    check(lambda t, i, s: t.put(i, s), a, long(0, -1, 5, 7, -12), source)
    check(lambda t, i, s: t.put(i, s, accumulate=True), a, long(3, 3, -9, 3, 0), source)
    check_in_place(lambda t, i, s: t.put_(i, s, accumulate=True), a, long(0, 0, 1, 0, 2), source)


@pytest.mark.parametrize(
    "call",
    [
        lambda t, i: t.put_(i + 12, i.float()),
        lambda t, i: t.put_(i - 13, i.float()),
        lambda t, i: t.put_(i.int(), i.float()),
        lambda t, i: t.put_(i, i.double()),
        lambda t, i: t.put_(i, i[:1].float()),
        lambda t, i: t[:0].put_(i, i.float()),
    ],
    ids=["out of range", "negative out of range", "int32 index", "source dtype", "counts", "empty self"],
)
def test_put_errors_match_cpu(call):
    assert_fails_like_cpu(call, make((3, 4), torch.float32), long(0, 1))


def test_masked_scatter(dtype):
    a, mask, source = make((3, 4), dtype), make((4,), torch.bool, seed=1), make((3, 5), dtype, seed=2)
    check(lambda t, m, s: t.masked_scatter(m, s), a, mask, source)
    check(lambda t, m, s: t.masked_scatter(m, s), a[0], mask.expand(2, 4), source)  # self broadcasts too
    check_in_place(lambda t, m, s: t.masked_scatter_(m, s), a, mask, source)


@pytest.mark.parametrize(
    "call",
    [
        lambda t, m, s: t.masked_scatter_(m.float(), s),
        lambda t, m, s: t.masked_scatter_(m, s.double()),
        lambda t, m, s: t.masked_scatter_(m, s[:1]),
    ],
    ids=["float mask", "source dtype", "source too small"],
)
def test_masked_scatter_errors_match_cpu(call):
    assert_fails_like_cpu(call, make((3, 4), torch.float32), torch.ones(4, dtype=torch.bool), torch.ones(3, 4))


def test_masked_scatter_mask_must_broadcast_to_self():
    mask = torch.ones(1, 3, 4, dtype=torch.bool)
    for t in (torch.zeros(3, 4), npy(torch.zeros(3, 4))):
        with pytest.raises(RuntimeError, match=r"the number of sizes provided \(2\) must be greater or equal"):
            t.masked_scatter_(mask.to(t.device), t)


def test_masked_select_broadcasts_both_ways(dtype):
    a, mask = make((3, 4), dtype), make((3, 4), torch.bool, seed=1)
    check(lambda t, m: t.masked_select(m), a, mask)
    check(lambda t, m: t.masked_select(m), a, mask[1])
    check(lambda t, m: t[0].masked_select(m), a, mask)
    check_out(lambda t, m, **out: torch.masked_select(t, m, **out), a, mask)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.masked_select(torch.ones(4, device=t.device)),
        lambda t: t.masked_select(torch.ones(3, dtype=torch.bool, device=t.device)),
        lambda t: torch.masked_select(
            t, torch.ones_like(t, dtype=torch.bool), out=torch.empty(0, dtype=torch.int32, device=t.device)
        ),
    ],
    ids=["float mask", "no broadcast", "out dtype"],
)
def test_masked_select_errors_match_cpu(call):
    assert_fails_like_cpu(call, make((3, 4), torch.float32))


def test_masked_fill(dtype):
    a, mask = make((3, 4), dtype), make((4,), torch.bool, seed=1)
    value = False if dtype == torch.bool else -1  # -1 wraps for uint8, as on CPU
    check_in_place(lambda t, m: t.masked_fill_(m, value), a, mask)
    check_in_place(lambda t, m, v: t.masked_fill_(m, v), a, mask, make((), dtype, seed=2))
    check(lambda t, m: t.masked_fill(m, value), a, mask)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.masked_fill_(torch.ones(2, 3, 4, dtype=torch.bool, device=t.device), 0.0),
        lambda t: t.masked_fill_(torch.ones_like(t, dtype=torch.bool), torch.ones(2, device=t.device)),
        lambda t: t.masked_fill_(torch.ones_like(t, dtype=torch.bool), 1j),
    ],
    ids=["mask broadcasts past self", "vector value", "complex value"],
)
def test_masked_fill_errors_match_cpu(call):
    assert_fails_like_cpu(call, make((3, 4), torch.float32))


def test_masked_fill_refuses_a_float_mask_like_cpu():
    # CPU's message ends with the C++ type name ("float"); npy's with the torch dtype.
    message = "masked_fill_ only supports boolean masks, but got mask with dtype"
    for t in (torch.zeros(3), npy(torch.zeros(3))):
        with pytest.raises(RuntimeError, match=message):
            t.masked_fill_(torch.ones(3, device=t.device), 0.0)


def test_nonzero(dtype):
    for shape in ((3, 4), (5,), (), (0, 2)):
        check(lambda t: t.nonzero(), make(shape, dtype))
    check(lambda t: torch.argwhere(t), make((2, 3), dtype))
    check_out(lambda t, **out: torch.nonzero(t, **out), make((3, 4), dtype))


def test_nonzero_out_must_be_long_like_cpu():
    def into_int32(t):
        return torch.nonzero(t, out=torch.empty(0, dtype=torch.int32, device=t.device))

    assert_fails_like_cpu(into_int32, torch.ones(2))


@pytest.mark.parametrize("left, right", [(torch.float32, torch.float32), *PROMOTIONS], ids=str)
def test_where_promotes_and_broadcasts(left, right):
    cond, a, b = make((3, 1), torch.bool), make((1, 4), left, seed=1), make((4,), right, seed=2)
    check(lambda c, x, y: torch.where(c, x, y), cond, a, b)
    check(lambda c, x: torch.where(c, x, 2.5), cond, a)
    check(lambda c, y: torch.where(c, 7, y), cond, b)
    check_out(lambda c, x, y, **out: torch.where(c, x, y, **out), cond, a, b)


def test_where_condition_errors_and_warnings_match_cpu():
    a = make((3,), torch.float32)
    assert_fails_like_cpu(lambda c, x: torch.where(c, x, x), a, a)
    assert_fails_like_cpu(lambda c, x: torch.where(c, x, x), torch.ones(2, dtype=torch.bool), a)
    with pytest.warns(UserWarning, match="where received a uint8 condition tensor"):
        check(lambda c, x: torch.where(c, x, -x), torch.tensor([1, 0, 2], dtype=torch.uint8), a)


# --- joining -----------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat(dim, dtype):
    a, b = make((2, 3, 4), dtype), make((2, 3, 4), dtype, seed=1)
    check(lambda x, y: torch.cat([x, y[:1, :1, :1].expand(2, 3, 4), x], dim), a, b)
    check(lambda x, y: torch.stack([x, y], dim), a, b)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)], ids=str)
def test_stack_of_npy_tensors_of_one_shape_like_cpu(shape, dtype):
    """The tensors npy's stack kernel joins itself (one shape and dtype, at most two dims), at every
    dim it takes, transposed too; beside them a dim out of range and a tensor of another dtype."""
    a, b = make(shape, dtype), make(shape, dtype, seed=1)
    for dim in range(-len(shape) - 1, len(shape) + 1):
        check(lambda x, y: torch.stack([x, y, x], dim), a, b)
        check(lambda x, y: torch.stack([x.T, y.T], dim), a, b)
    assert_fails_like_cpu(lambda x: torch.stack([x, x], len(shape) + 2), a)
    check(lambda x, y: torch.stack([x, y.to(torch.complex128)]), a, b)


def test_stack_backward_like_cpu():
    grad = make((3, 2, 4), torch.float32, seed=2)
    results = {}
    for device in ("cpu", "npy"):
        a, b, c = (make((2, 4), torch.float32, seed).to(device).requires_grad_() for seed in range(3))
        torch.stack([a, b, c]).backward(grad.to(device))
        results[device] = [tensor.grad.cpu() for tensor in (a, b, c)]
    torch.testing.assert_close(results["npy"], results["cpu"])


def test_cat_promotes_skips_legacy_empties_and_writes_out():
    a, b = make((2, 3), torch.int32), make((1, 3), torch.float16, seed=1)
    check(lambda x, y: torch.cat([x, y]), a, b)
    check(lambda x, y: torch.cat([torch.zeros(0, device=x.device), x, y]), a, b)
    check(lambda x: torch.cat([x, x]), torch.zeros(0, dtype=torch.int8))
    check_out(lambda x, y, **out: torch.cat([x, y], **out), a, b)
    check_out(lambda x, y, **out: torch.stack([x, x], 1, **out), a, b)


@pytest.mark.parametrize("join", [torch.hstack, torch.vstack, torch.dstack, torch.column_stack, torch.row_stack])
def test_stacking_helpers_reach_cat(join):
    check(lambda x, y: join([x, y]), make((2, 3), torch.float64), make((2, 3), torch.float64, seed=1))


@pytest.mark.parametrize(
    "call",
    [
        lambda x: torch.cat([x, x[:, :2]], 0),
        lambda x: torch.cat([x, x[0]]),
        lambda x: torch.cat([x[0, 0], x[0, 0]]),
        lambda x: torch.cat([x, x], 2),
        lambda x: torch.stack([x, x[:1]]),
    ],
    ids=["sizes", "dims", "zero-dim", "dim out of range", "stack sizes"],
)
def test_cat_errors_match_cpu(call):
    assert_fails_like_cpu(call, make((2, 3), torch.float32))


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


REARRANGEMENTS = {
    "flip": lambda t: t.flip(0, -1),
    "flip none": lambda t: t.flip(()),
    "flip zero-dim": lambda t: t[0, 0, 0].flip(0),
    "roll zero-dim": lambda t: t[0, 0, 0].roll(3),
    "fliplr": torch.fliplr,
    "rot90": lambda t: t.rot90(1, (1, 2)),
    "roll": lambda t: t.roll(1, 1),
    "roll negative, two dims": lambda t: t.roll((-5, 2), (2, 0)),
    "roll flat": lambda t: t.roll(-7),
    "repeat": lambda t: t.repeat(2, 1, 3),
    "repeat more dims": lambda t: t.repeat(2, 1, 1, 2),
    "tile": lambda t: t.tile(2),
    "tril": lambda t: t.tril(),
    "tril offset": lambda t: t.tril(-1),
    "triu offset": lambda t: t.triu(2),
    "triu wide": lambda t: t[0].triu(-5),
    "repeat_interleave": lambda t: t.repeat_interleave(2, 1),
    "diag_embed": torch.diag_embed,
}


@pytest.mark.parametrize("name", REARRANGEMENTS)
def test_rearrangements_match_cpu(name, dtype):
    check(REARRANGEMENTS[name], make((2, 3, 4), dtype))
    base = npy(make((2, 3, 4), dtype))
    assert REARRANGEMENTS[name](base).untyped_storage().data_ptr() != base.untyped_storage().data_ptr()


@pytest.mark.parametrize("name", REARRANGEMENTS)
def test_rearrangements_of_a_permuted_input_lay_out_like_cpu(name):
    check(REARRANGEMENTS[name], make((4, 3, 2), torch.float32).permute(2, 1, 0))  # check compares strides


@pytest.mark.parametrize(
    "inputs",
    [
        lambda: [make((3, 4), torch.float32).t()] * 2,
        lambda: [make((2, 3, 4, 5), torch.float32).to(memory_format=torch.channels_last)] * 2,
        lambda: [
            make((2, 3, 4, 5), torch.float32).to(memory_format=torch.channels_last),
            make((2, 3, 4, 5), torch.float32),
        ],
    ],
    ids=["transposed", "channels_last", "mixed"],
)
def test_cat_lays_out_like_cpu(inputs):
    check(lambda *ts: torch.cat(ts, 1), *inputs())


def test_rearrangements_in_place_and_out():
    a = make((3, 4), torch.float32)
    check_in_place(lambda t: t.tril_(1), a)
    check_in_place(lambda t: t.triu_(), a)
    for op in (torch.tril, torch.triu):
        check_out(lambda t, op=op, **out: op(t, -1, **out), a)
    # Python has no out= for these; the CompositeExplicit out overloads call the kernels.
    check_out(lambda t, **out: torch.ops.aten.flip(t, [0], **out), a)
    check_out(lambda t, **out: torch.ops.aten.roll(t, [2], [1], **out), a)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.flip(0, -2),
        lambda t: t.flip(2),
        lambda t: t.roll((1, 2), (0,)),
        lambda t: t.roll((1, 2)),
        lambda t: t.roll(1, 2),
        lambda t: t[0].tril(),
        lambda t: t[0].triu(),
        lambda t: t.repeat(2),
        lambda t: t[0, 0].flip(1),
        lambda t: t[0, 0].flip(0, 0),
        lambda t: t[0, 0].roll(1, 0),
    ],
    ids=[
        "flip twice",
        "flip dim",
        "roll misaligned",
        "roll no dims",
        "roll dim",
        "tril 1-dim",
        "triu 1-dim",
        "repeat too few",
        "zero-dim flip dim",
        "zero-dim flip twice",
        "zero-dim roll",
    ],
)
def test_rearrangement_errors_match_cpu(call):
    assert_fails_like_cpu(call, make((2, 3), torch.float32))


# --- new views -------------------------------------------------------------------


def assert_view_of(view, base, cpu_view):
    """``view`` matches CPU's (values and layout) and shares ``base``'s storage."""
    assert_matches_cpu(view, cpu_view)
    assert (view.stride(), view.storage_offset()) == (cpu_view.stride(), cpu_view.storage_offset())
    assert view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()


VIEWS = {
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


@pytest.mark.parametrize("name", VIEWS)
def test_views_share_their_base(name):
    dtype, view = VIEWS[name]
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
    real = check(torch.view_as_real, a)
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
def test_view_errors_match_cpu(call):
    assert_fails_like_cpu(call, make((3, 4), torch.float32))


# --- printing a plain tensor -------------------------------------------------------
# ``view(dtype)`` makes a plain ``torch.Tensor`` object, which PyTorch's printer
# formats by running ops on the device (an NpyTensor formats a CPU copy).

# Ops the printer runs that other modules of the backend implement.
OPS_OF_OTHER_MODULES = {"abs", "ne", "eq", "isfinite", "bitwise_and", "min", "max", "ceil", "div", "gt", "lt"}

PRINTED = {
    "int": lambda: make((3, 4), torch.int32),
    "bool": lambda: make((5,), torch.bool),
    "summarized int": lambda: torch.arange(5000).reshape(50, 100),
    "float": lambda: torch.arange(4.0),
    "summarized float": lambda: torch.linspace(-5, 5, 5000),
    "complex": lambda: make((2, 2), torch.complex64),
}


def test_printer_summarizes_a_plain_tensor_like_cpu():
    cpu = make((40, 3, 50), torch.float64)
    plain = npy(cpu).view(cpu.dtype)
    summarized = torch._tensor_str.get_summarized_data(plain)
    assert_matches_cpu(summarized, torch._tensor_str.get_summarized_data(cpu))
    assert_matches_cpu(plain.masked_select(npy(cpu.abs() > 1)), cpu.masked_select(cpu.abs() > 1))


@pytest.mark.parametrize("name", PRINTED)
def test_plain_npy_tensor_prints_like_cpu(name):
    cpu = PRINTED[name]()
    plain = npy(cpu).view(cpu.dtype)
    assert type(plain) is torch.Tensor
    try:
        text = repr(plain)
    except NotImplementedError as error:
        op = re.search(r"aten::(\w+)", str(error)).group(1)
        assert op in OPS_OF_OTHER_MODULES, f"printing needs aten::{op}"
        pytest.skip(f"printing {name} waits for aten::{op}, from another module")
    expected = repr(npy(cpu))  # an NpyTensor prints its CPU copy's digits
    if text != expected and backend_pkg.NpyTensor.__format__ is torch.Tensor.__format__:
        # The printer measures each element with f"{element}"; torch.Tensor
        # formats only plain 0-dim tensors as numbers, and the elements of a
        # plain npy tensor's views are NpyTensors.
        pytest.skip("element widths wait for NpyTensor.__format__ (backend_pkg/tensor.py)")
    assert text == expected
