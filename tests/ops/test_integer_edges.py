"""Integers at their edges: the unsigned dtypes beyond uint8, and wraparound on overflow, like CPU."""

import pytest
import torch
from reference import assert_like_cpu, npy

WIDE_UNSIGNED = [torch.uint16, torch.uint32, torch.uint64]


def wide_unsigned(dtype):
    """Values that need the whole of uint16, with a zero and a repeat."""
    return torch.tensor([[1, 2, 65535], [7, 0, 2]], dtype=dtype)


def _set_first_column(tensor, value):
    tensor[:, 0] = value
    return tensor


# What CPU computes for uint16, uint32 and uint64 (PyTorch gives them few kernels: add, lt and max,
# among others, raise NotImplementedError on CPU; see test_npy_computes_what_cpu_refuses).
UNSIGNED_OPS = {
    "clone": lambda t: t.clone(),
    "transpose_copy": lambda t: t.t().contiguous(),
    "zeros": lambda t: torch.zeros(2, 3, dtype=t.dtype, device=t.device),
    "full": lambda t: torch.full((2,), 65535, dtype=t.dtype, device=t.device),
    "zeros_like": torch.zeros_like,
    "fill_": lambda t: t.clone().fill_(9),
    "fill_ overflow": lambda t: t.clone().fill_(1 << 64),
    "to int64": lambda t: t.to(torch.int64),
    "to float32": lambda t: t.float(),
    "from float64": lambda t: t.double().to(t.dtype),
    "copy_ from int64": lambda t: t.clone().copy_(torch.tensor([[1, 70000, 3]], device=t.device)),
    "eq": lambda t: t == t[:1],
    "eq scalar": lambda t: t == 2,
    "ne": lambda t: t != 0,
    "mul": lambda t: t * t,
    "bitwise_and": lambda t: t & t[:1],
    "sum": lambda t: t.sum(),
    "sum dim keepdim": lambda t: t.sum(1, keepdim=True),
    "slice": lambda t: t[:, 1:],
    "index_select": lambda t: t.index_select(1, torch.tensor([2, 0], device=t.device)),
    "index": lambda t: t[torch.tensor([1, 0], device=t.device)],
    "setitem": lambda t: _set_first_column(t.clone(), 9),
    "cat": lambda t: torch.cat([t, t.t().contiguous().t()], 1),
    "view": lambda t: t.view(3, 2),
    "any": lambda t: t.any(1),
}


@pytest.mark.parametrize("name", UNSIGNED_OPS)
@pytest.mark.parametrize("dtype", WIDE_UNSIGNED, ids=str)
def test_wide_unsigned_like_cpu(name, dtype):
    assert_like_cpu(UNSIGNED_OPS[name], wide_unsigned(dtype))


@pytest.mark.parametrize("dtype", WIDE_UNSIGNED, ids=str)
def test_wide_unsigned_round_trip_is_bit_exact(dtype):
    top = torch.iinfo(dtype).max
    values = torch.tensor([0, 1, top, top - 1], dtype=dtype)
    back = npy(values).cpu()
    assert back.dtype == dtype and torch.equal(back, values)
    assert npy(values)[2].item() == top


@pytest.mark.parametrize("dtype", WIDE_UNSIGNED, ids=str)
def test_npy_computes_what_cpu_refuses(dtype):
    """CPU has no add, lt or amax for these dtypes; npy computes them as NumPy does: modulo 2**bits,
    which is also what CPU's int64 result wraps to."""
    x = wide_unsigned(dtype)
    with pytest.raises(NotImplementedError, match="not implemented for 'UInt"):
        x + x
    wide = x.to(torch.int64)
    modulus = 1 << torch.iinfo(dtype).bits
    wrapped = (wide + 65535) % modulus if modulus < 1 << 63 else wide + 65535  # these sums fit int64
    result = (npy(x) + 65535).cpu()
    assert result.dtype == dtype
    assert torch.equal(result.to(torch.int64), wrapped)
    assert torch.equal((npy(x) < 2).cpu(), wide < 2)
    assert torch.equal(npy(x).amax(0).cpu().to(torch.int64), wide.amax(0))


# Overflow: PyTorch's integer arithmetic wraps around (two's complement), in the operands' dtype.
SIGNED_AND_SMALL = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]


def at_the_edges(dtype):
    info = torch.iinfo(dtype)
    return torch.tensor([info.max, info.min, info.max - 1, info.min + 1, 0, 1], dtype=dtype)


def others(dtype):
    return torch.tensor([1, 1 if dtype == torch.uint8 else -1, 3, 2, 5, 7], dtype=dtype)


OVERFLOWING = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "add alpha": lambda a, b: torch.add(a, b, alpha=3),
    "add scalar": lambda a, b: a + 1,
    "sub scalar": lambda a, b: a - 2,
    "mul scalar": lambda a, b: a * 3,
    "rsub scalar": lambda a, b: 1 - a,
    "add_": lambda a, b: a.clone().add_(b),
    "mul_": lambda a, b: a.clone().mul_(b),
    "add strided": lambda a, b: a[::2] + b[1::2],
    "sum in dtype": lambda a, b: a.sum(dtype=a.dtype),
    "cumsum in dtype": lambda a, b: a.cumsum(0, dtype=a.dtype),
    "prod in dtype": lambda a, b: a.prod(dtype=a.dtype),
    "neg": lambda a, b: -a,
    "abs": lambda a, b: a.abs(),
}


@pytest.mark.parametrize("name", OVERFLOWING)
@pytest.mark.parametrize("dtype", SIGNED_AND_SMALL, ids=str)
def test_integer_overflow_wraps_like_cpu(name, dtype):
    assert_like_cpu(OVERFLOWING[name], at_the_edges(dtype), others(dtype))


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint16, torch.int32, torch.float16], ids=str)
def test_fill_out_of_range_is_cpus_error(dtype):
    assert_like_cpu(lambda t: t.fill_(1e6), torch.zeros(2, dtype=dtype))
    assert_like_cpu(lambda t: t.clamp(0, 1e6), torch.zeros(2, dtype=dtype))
