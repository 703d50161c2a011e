"""Every npy kernel against PyTorch's CPU result for the same call."""

import pytest
import torch
from reference import (
    DTYPES,
    FLOAT_DTYPES,
    NUMERIC_DTYPES,
    PROMOTIONS,
    assert_like_cpu,
    assert_matches_cpu,
    make,
    npy,
)

import backend_pkg


def test_registered_ops_cover_the_minimal_backend():
    """What minimal/python_backend.py registers, npy registers too, but for detach: npy leaves it to
    PyTorch's C++ kernel, so that results have no Python object yet (see backend_pkg.tensor.detached)."""
    minimal = {
        "aten::empty.memory_format",
        "aten::empty_strided",
        "aten::_copy_from",
        "aten::_to_copy",
        "aten::view",
        "aten::as_strided",
        "aten::ones_like",
        "aten::expand",
        "aten::sum",
        "aten::sum.dim_IntList",
        "aten::add.Tensor",
        "aten::mul.Tensor",
    }
    assert minimal <= set(backend_pkg.registered_ops())


# --- arithmetic -----------------------------------------------------------


@pytest.mark.parametrize("op", [torch.add, torch.mul])
def test_binary_op_same_dtype(op, dtype):
    a, b = make((3, 4), dtype, seed=1), make((3, 4), dtype, seed=2)
    assert_matches_cpu(op(npy(a), npy(b)), op(a, b))


@pytest.mark.parametrize("op", [torch.add, torch.sub, torch.mul])
@pytest.mark.parametrize("left, right", PROMOTIONS, ids=str)
def test_binary_op_type_promotion(op, left, right):
    if op is torch.sub and torch.bool in (left, right):
        pytest.skip("sub refuses bool tensors (tested below)")
    a, b = make((2, 3), left, seed=3), make((2, 3), right, seed=4)
    assert_matches_cpu(op(npy(a), npy(b)), op(a, b))


@pytest.mark.parametrize("op", [torch.add, torch.sub, torch.mul])
def test_binary_op_broadcasts(op):
    a, b = make((4, 1, 3), torch.float32, 1), make((5, 1), torch.float32, 2)
    assert_matches_cpu(op(npy(a), npy(b)), op(a, b))


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize("scalar", [2, -3, 0.5, True, 1 + 2j], ids=repr)
@pytest.mark.parametrize("dtype", [torch.int32, torch.float16, torch.float32, torch.bool], ids=str)
def test_python_scalars_promote_like_cpu(scalar, dtype):
    a = make((5,), dtype)
    for op in (torch.add, torch.mul):
        if op(a, scalar).dtype == torch.complex32:
            with pytest.raises(TypeError, match="torch.complex32 has no NumPy equivalent"):
                op(npy(a), scalar)
            continue
        assert_matches_cpu(op(npy(a), scalar), op(a, scalar))
        assert_matches_cpu(op(scalar, npy(a)), op(scalar, a))


def test_zero_dim_cpu_tensor_mixes_in_as_a_scalar():
    a, s = make((3,), torch.float32), torch.tensor(2.5, dtype=torch.float64)
    assert_matches_cpu(npy(a) * s, a * s)


def test_cpu_tensor_with_dims_is_a_device_error():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        npy(torch.ones(3)) + torch.ones(3)


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
def test_add_and_sub_alpha(dtype):
    a, b = make((4,), dtype, 1), make((4,), dtype, 2)
    alpha = 3 if not (dtype.is_floating_point or dtype.is_complex) else 0.25
    assert_matches_cpu(torch.add(npy(a), npy(b), alpha=alpha), torch.add(a, b, alpha=alpha))
    assert_matches_cpu(torch.sub(npy(a), npy(b), alpha=alpha), torch.sub(a, b, alpha=alpha))


@pytest.mark.parametrize("op", [torch.add, torch.sub, torch.rsub, torch.Tensor.add_], ids=lambda op: op.__name__)
@pytest.mark.parametrize("dtype, alpha", [(torch.int64, 0.5), (torch.float32, True), (torch.float32, 1j)], ids=str)
def test_alpha_errors_are_cpu_errors(op, dtype, alpha):
    """Word for word: an integer tensor with a float alpha, a bool alpha, a complex alpha."""
    assert_like_cpu(lambda a: op(a, a, alpha=alpha), make((2,), dtype))


def test_float16_computes_in_float32_like_cpu():
    a = torch.full((8,), 2048.0, dtype=torch.float16)
    b = torch.full((8,), 1.0, dtype=torch.float16)
    # 2048 + 0.5 * 1 in half precision: exact only if computed in float32.
    expected = torch.add(a, b, alpha=0.75)
    assert_matches_cpu(torch.add(npy(a), npy(b), alpha=0.75), expected)
    assert torch.equal(torch.add(npy(a), npy(b), alpha=0.75).cpu(), expected)


def test_sub_and_neg_refuse_bool_like_cpu():
    m = torch.tensor([True, False])
    for fn in (lambda t: t - t, lambda t: -t):
        with pytest.raises(RuntimeError) as cpu_error:
            fn(m)
        with pytest.raises(RuntimeError) as npy_error:
            fn(npy(m))
        assert str(npy_error.value) == str(cpu_error.value)


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
def test_neg(dtype):
    a = make((2, 3), dtype)
    if dtype == torch.uint8:
        pytest.skip("unsigned negation wraps; covered by int8")
    assert_matches_cpu(-npy(a), -a)


IN_PLACE = {
    "add_": lambda t, o: t.add_(o, alpha=2),
    "sub_": lambda t, o: t.sub_(o),
    "mul_": lambda t, o: t.mul_(o),
}


@pytest.mark.parametrize("name", IN_PLACE)
@pytest.mark.parametrize("dtype", [torch.int32, torch.float32, torch.complex64], ids=str)
def test_in_place_arithmetic_writes_through_views(name, dtype):
    base, other = make((3, 4), dtype, 1), make((4,), dtype, 2)
    on_device = npy(base)
    result = IN_PLACE[name](on_device[1:], npy(other))
    IN_PLACE[name](base[1:], other)
    assert result.data_ptr() == on_device[1:].data_ptr()
    assert_matches_cpu(on_device, base)


@pytest.mark.parametrize(
    "bad, message",
    [
        (lambda t: t.add_(torch.ones(3, device=t.device)), "can't be cast to the desired output type"),
        (lambda t: t.mul_(torch.ones(2, 3, dtype=torch.int64, device=t.device)), "doesn't match the broadcast shape"),
        (lambda t: t[:1].expand(2, 3).add_(1), "more than one element of the written-to tensor"),
    ],
    ids=["float into int", "broadcasts past self", "writes one element twice"],
)
def test_in_place_errors_like_cpu(bad, message):
    cpu = torch.arange(3, dtype=torch.int64)
    with pytest.raises(RuntimeError, match=message):
        bad(cpu)
    with pytest.raises(RuntimeError, match=message):
        bad(npy(cpu))


# --- reductions -----------------------------------------------------------


def test_sum_all(dtype):
    a = make((3, 5), dtype)
    assert_matches_cpu(npy(a).sum(), a.sum())


@pytest.mark.parametrize(
    "dim, keepdim",
    [(0, False), (1, True), (-1, False), ((0, 2), True), ((), False), ((-3, 1), False)],
)
def test_sum_dims(dim, keepdim, dtype):
    a = make((2, 3, 4), dtype)
    assert_matches_cpu(npy(a).sum(dim, keepdim=keepdim), a.sum(dim, keepdim=keepdim))


@pytest.mark.parametrize("out_dtype", [torch.float64, torch.int32, torch.complex128], ids=str)
def test_sum_dtype_argument(out_dtype):
    a = make((4, 3), torch.int16)
    assert_matches_cpu(npy(a).sum(0, dtype=out_dtype), a.sum(0, dtype=out_dtype))


def test_sum_of_empty_and_zero_dim():
    for a in (torch.zeros(0, 3), torch.tensor(2.5)):
        assert_matches_cpu(npy(a).sum(), a.sum())
        assert_matches_cpu(npy(a).sum(0, keepdim=True), a.sum(0, keepdim=True))


def test_float16_sum_accumulates_in_float32():
    a = torch.full((4096,), 1.0, dtype=torch.float16)
    assert torch.equal(npy(a).sum().cpu(), a.sum())  # 4096, not half's stuck-at-2048


@pytest.mark.parametrize("dim, error", [((0, 0), RuntimeError), ((3,), IndexError)])
def test_sum_bad_dims_fail_like_cpu(dim, error):
    a = torch.ones(2, 3)
    with pytest.raises(error):
        a.sum(dim)
    with pytest.raises(error):
        npy(a).sum(dim)


# --- allocation and filling ------------------------------------------------


def test_empty_honours_dtype_and_shape(dtype):
    t = torch.empty((2, 0, 3), dtype=dtype, device="npy")
    assert (t.device.type, t.dtype, t.shape) == ("npy", dtype, torch.Size([2, 0, 3]))
    assert backend_pkg.unwrap(t).dtype == backend_pkg.dtypes.to_numpy_dtype(dtype)


def test_empty_default_dtype_follows_torch_default():
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.empty(2, device="npy").dtype == torch.float64
    finally:
        torch.set_default_dtype(previous)


@pytest.mark.parametrize(
    "shape, memory_format",
    [((2, 3, 4, 5), torch.channels_last), ((2, 3, 4, 5, 6), torch.channels_last_3d)],
)
def test_empty_memory_format_strides_match_cpu(shape, memory_format):
    t = torch.empty(shape, device="npy", memory_format=memory_format)
    assert t.stride() == torch.empty(shape, memory_format=memory_format).stride()
    assert t.is_contiguous(memory_format=memory_format)


@pytest.mark.parametrize("size, stride", [((2, 3), (1, 2)), ((3, 4), (8, 2)), ((2, 2), (0, 1)), ((0, 3), (3, 1))])
def test_empty_strided_honours_stride_and_dtype(size, stride):
    t = torch.empty_strided(size, stride, dtype=torch.int16, device="npy")
    cpu = torch.empty_strided(size, stride, dtype=torch.int16)
    assert (t.shape, t.stride(), t.dtype) == (cpu.shape, cpu.stride(), torch.int16)
    t.fill_(7)
    assert_matches_cpu(t, cpu.fill_(7))


def test_factory_options_are_checked():
    with pytest.raises(RuntimeError, match="npy device: empty cannot pin memory"):
        torch.ops.aten.empty.memory_format([2], device="npy", pin_memory=True)
    with pytest.raises(RuntimeError, match="invalid device index 1"):
        torch.empty(2, device="npy:1")


def test_ones_like_and_zeros_like(dtype):
    a = make((3, 2), dtype)
    assert_matches_cpu(torch.ones_like(npy(a)), torch.ones_like(a))
    assert_matches_cpu(torch.zeros_like(npy(a)), torch.zeros_like(a))


def test_ones_like_options():
    a = make((3, 4), torch.float32).t()
    ones = torch.ones_like(npy(a), dtype=torch.int8)
    assert_matches_cpu(ones, torch.ones_like(a, dtype=torch.int8))
    assert ones.stride() == torch.ones_like(a).stride()  # preserve_format keeps the layout
    on_cpu = torch.ones_like(npy(a), device="cpu")
    assert type(on_cpu) is torch.Tensor and on_cpu.device.type == "cpu"
    torch.testing.assert_close(on_cpu, torch.ones_like(a))


@pytest.mark.parametrize("value", [3, -1.5, True])
def test_fill(value, dtype):
    if dtype == torch.uint8 and value == -1.5:
        pytest.skip("negative float to uint8 is undefined behaviour in C++")
    a = make((2, 3), dtype)
    assert_matches_cpu(npy(a).fill_(value), a.clone().fill_(value))


def test_item():
    for value in (torch.tensor(2.5), torch.tensor(-3), torch.tensor(True), torch.tensor(1 + 2j)):
        assert npy(value).item() == value.item()
        assert type(npy(value).item()) is type(value.item())


# --- views ---------------------------------------------------------------


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


def test_efficient_zero_tensor_is_zeros():
    # What autograd returns as the gradient of sgn on real inputs.
    zeros = torch._efficientzerotensor((2, 3), dtype=torch.float64, device="npy")
    assert_matches_cpu(zeros + 1, torch.ones(2, 3, dtype=torch.float64))
    x = torch.tensor([1.0, -2.0], device="npy", requires_grad=True)
    x.sgn().sum().backward()
    assert_matches_cpu(x.grad, torch.zeros(2), made_by_kernel=False)


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


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_sum_of_strided_views(dtype):
    a = make((4, 5, 6), dtype)
    assert_matches_cpu(npy(a).transpose(0, 2)[::2].sum(1), a.transpose(0, 2)[::2].sum(1))


def test_all_dtypes_listed():
    assert set(DTYPES) <= set(backend_pkg.SUPPORTED_DTYPES)
