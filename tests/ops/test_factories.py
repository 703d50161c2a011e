"""Allocation and filling (``backend_pkg/ops/factories.py``) against CPU: dtypes, shapes, strides
and memory formats, the factory options PyTorch checks, ``fill_``, and the zero tensor autograd makes."""

import pytest
import torch
from reference import DTYPES, assert_matches_cpu, make, npy

import backend_pkg


def test_empty_honours_dtype_and_shape(dtype):
    t = torch.empty((2, 0, 3), dtype=dtype, device="npy")
    assert (t.device.type, t.dtype, t.shape) == ("npy", dtype, torch.Size([2, 0, 3]))
    assert backend_pkg.unwrap(t).dtype == backend_pkg.dtypes.to_numpy_dtype(dtype)


def test_all_dtypes_listed():
    assert set(DTYPES) <= set(backend_pkg.SUPPORTED_DTYPES)


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
    with pytest.raises(RuntimeError, match="npy device: empty was asked for a tensor on cpu"):
        torch.ops.aten.empty.memory_format._op_dk(torch._C.DispatchKey.PrivateUse1, [2], device=torch.device("cpu"))


@pytest.mark.parametrize("device", ["npy", "npy:0", torch.device("npy", 0)])
def test_factories_take_the_device_with_or_without_its_index(device):
    for factory in (
        lambda **device: torch.empty(2, **device),
        lambda **device: torch.empty_strided((2, 3), (1, 2), **device),
    ):
        made, cpu = factory(device=device), factory()
        assert made.device == torch.device("npy", 0)
        assert (made.shape, made.stride(), made.dtype) == (cpu.shape, cpu.stride(), cpu.dtype)


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


def test_efficient_zero_tensor_is_zeros():
    # What autograd returns as the gradient of sgn on real inputs.
    zeros = torch._efficientzerotensor((2, 3), dtype=torch.float64, device="npy")
    assert_matches_cpu(zeros + 1, torch.ones(2, 3, dtype=torch.float64))
    x = torch.tensor([1.0, -2.0], device="npy", requires_grad=True)
    x.sgn().sum().backward()
    assert_matches_cpu(x.grad, torch.zeros(2), made_by_kernel=False)


def test_zero_writes_zeros_through_views(dtype):
    """``zero_`` writes into the memory it views: a strided view's elements, an expanded tensor's one row."""
    cpu = make((3, 4), dtype)
    base = npy(cpu)
    cpu[:, ::2].zero_(), base[:, ::2].zero_()
    assert_matches_cpu(base, cpu)
    cpu[0].expand(2, 4).zero_(), base[0].expand(2, 4).zero_()
    assert_matches_cpu(base, cpu)
