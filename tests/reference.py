"""What the tests compare the npy device against: CPU, dtype by dtype."""

import torch

import backend_pkg

# Every dtype the npy device stores; bfloat16 is the one PyTorch dtype in common
# use that it refuses (NumPy has no bfloat16).
DTYPES = [
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.float32,
    torch.float64,
    torch.complex64,
    torch.complex128,
]
FLOAT_DTYPES = [torch.float16, torch.float32, torch.float64]
NUMERIC_DTYPES = [d for d in DTYPES if d != torch.bool]


def make(shape, dtype, seed=0):
    """A CPU tensor of ``dtype`` with varied values (no zeros for integer types)."""
    generator = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=generator).bool()
    if dtype.is_floating_point or dtype.is_complex:
        return (torch.randn(shape, dtype=torch.complex128 if dtype.is_complex else torch.float64, generator=generator) * 4).to(dtype)
    low = 0 if dtype == torch.uint8 else -9
    return torch.randint(low, 10, shape, generator=generator).to(dtype)


def assert_matches_cpu(npy_result, cpu_result, *, made_by_kernel=True):
    """An npy result equals the CPU one: device, dtype, shape and values.

    Results made by npy kernels are NpyTensors. PyTorch's autograd layer
    re-wraps non-differentiable views (``view(dtype)``, ``.data``) in a new
    plain ``torch.Tensor`` object over the same storage: pass
    ``made_by_kernel=False`` for those.
    """
    assert npy_result.device.type == "npy", npy_result.device
    assert isinstance(npy_result, backend_pkg.NpyTensor) == made_by_kernel
    host = npy_result.cpu()
    assert type(host) is torch.Tensor
    torch.testing.assert_close(host, cpu_result, equal_nan=True)
