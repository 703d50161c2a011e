"""What the tests compare the npy device against: CPU, dtype by dtype."""

import re

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

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
# The reduction argument of the loss ops called through torch.ops.aten (at::Reduction).
NONE, MEAN, SUM = 0, 1, 2
NUMERIC_DTYPES = [d for d in DTYPES if d != torch.bool]
# Operand dtypes of different kinds and sizes, for the tests of type promotion: each pair
# promotes across a kind (bool, integer, floating, complex) or a size, or both.
PROMOTIONS = [
    (torch.int64, torch.float32),
    (torch.int8, torch.uint8),
    (torch.bool, torch.int32),
    (torch.float16, torch.float64),
    (torch.int16, torch.float16),
    (torch.int32, torch.complex64),
    (torch.float32, torch.complex128),
]


def make(shape, dtype, seed=0):
    """A CPU tensor of ``dtype`` with varied values (no zeros for integer types)."""
    generator = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=generator).bool()
    if dtype.is_floating_point or dtype.is_complex:
        wide = torch.complex128 if dtype.is_complex else torch.float64
        return (torch.randn(shape, dtype=wide, generator=generator) * 4).to(dtype)
    low = 0 if dtype == torch.uint8 else -9
    return torch.randint(low, 10, shape, generator=generator).to(dtype)


def views_of_a_3x4_tensor(t):
    """A view of each kind PyTorch's view ops make of the 3x4 ``t``: reshaped, permuted, transposed,
    expanded, unsqueezed, squeezed, strided, selected."""
    return (
        t.reshape(-1),
        t.permute(1, 0),
        t.t(),
        t.transpose(0, 1),
        t[:1].expand(3, 4),
        t.unsqueeze(1),
        t[:1].squeeze(0),
        t[1:, ::2],
        t[1],
    )


def assert_matches_cpu(npy_result, cpu_result, *, made_by_kernel=True):
    """An npy result equals the CPU one: device, dtype, shape and values.

    Results made by npy kernels are NpyTensors. PyTorch's autograd layer
    re-wraps non-differentiable views (``view(dtype)``) in a new
    plain ``torch.Tensor`` object over the same storage, and a leaf's
    ``.grad`` is mostly the C++ ``detach`` of the computed gradient (see
    ``backend_pkg.tensor.detached``): pass ``made_by_kernel=False`` for those.
    """
    assert npy_result.device.type == "npy", npy_result.device
    assert isinstance(npy_result, backend_pkg.NpyTensor) == made_by_kernel
    host = npy_result.cpu()
    assert type(host) is torch.Tensor
    torch.testing.assert_close(host, cpu_result, equal_nan=True)


def npy(tensor):
    return tensor.to("npy")


def exact_data(shape, dtype, seed=0):
    """Small integers in ``dtype``: every sum and product of a few is exact, in any order."""
    return make(shape, torch.int8, seed).to(dtype)


def labels(like, *values):
    """Class labels on ``like``'s device."""
    return torch.tensor(values).to(like.device)


def on_npy(args):
    return [npy(arg) if isinstance(arg, torch.Tensor) else arg for arg in args]


def as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


_REFUSAL = re.compile(r'^"([^"]+)" not implemented for')


def gist(error):
    """An error message without what differs between backends: C++ kernel names, C++ source lines."""
    message = str(error).split("\n")[0].split(" (Triggered internally")[0]
    return _REFUSAL.sub("not implemented for", message)


def assert_same_message(npy_error, cpu_error):
    """npy's error message reads as CPU's: their :func:`gist`, and in a refusal of a dtype, the kernel it names.

    Where npy names CPU's kernel (a ``_cpu`` name), it must be CPU's; where npy names its own, it must name
    the op CPU's is named after (``"elu_backward"`` for ``"elu_backward_cpu"``), if CPU's is named after
    an op (not ``"GeluKernelImpl"`` or ``"mse_cpu"``).
    """
    assert gist(npy_error) == gist(cpu_error)
    cpu_kernel, npy_kernel = (_refusing_kernel(error) for error in (cpu_error, npy_error))
    if cpu_kernel is None or npy_kernel is None:
        return
    if npy_kernel.endswith("_cpu"):
        assert npy_kernel == cpu_kernel
    elif hasattr(torch.ops.aten, cpu_kernel.removesuffix("_cpu")):
        assert npy_kernel == cpu_kernel.removesuffix("_cpu")


def _refusing_kernel(error):
    refusal = _REFUSAL.match(str(error))
    return refusal and refusal.group(1)


def assert_like_cpu(fn, *args):
    """``fn`` on npy copies of ``args`` does what it does on CPU: equal results (device, dtype, shape,
    values), or the same error (type, and message as :func:`assert_same_message` compares them)."""
    try:
        expected = fn(*args)
    except Exception as cpu_error:
        with pytest.raises(Exception) as npy_error:
            fn(*on_npy(args))
        assert type(npy_error.value) is type(cpu_error)
        assert_same_message(npy_error.value, cpu_error)
        return
    actual = fn(*on_npy(args))
    assert len(as_tuple(actual)) == len(as_tuple(expected))
    for got, want in zip(as_tuple(actual), as_tuple(expected)):
        assert_matches_cpu(got, want)


def assert_same_error(fn, *args, match):
    """``fn`` fails on CPU and on npy with the same exception type, both saying ``match``."""
    with pytest.raises(Exception, match=match) as cpu_error:
        fn(*args)
    with pytest.raises(type(cpu_error.value), match=match) as npy_error:
        fn(*on_npy(args))
    assert type(npy_error.value) is type(cpu_error.value)


def assert_fails_like_cpu(call, *cpu_args):
    """``call`` raises the same exception type on CPU and npy inputs, with the same message."""
    with pytest.raises(Exception) as cpu_error:
        call(*cpu_args)
    with pytest.raises(Exception) as npy_error:
        call(*on_npy(cpu_args))
    assert type(npy_error.value) is type(cpu_error.value)
    assert str(npy_error.value) == str(cpu_error.value)


def check_like_cpu(call, *cpu_args):
    """``call`` gives the same result (values and layout) on npy copies of ``cpu_args`` as on CPU."""
    on_device = on_npy(cpu_args)  # before call changes them
    expected = call(*cpu_args)
    result = call(*on_device)
    assert_matches_cpu(result, expected)
    if expected.numel() > 1:
        assert result.stride() == expected.stride(), "layout differs from CPU's"
    return result


def check_in_place_like_cpu(call, base, *cpu_args):
    """An in-place ``call`` on a view of ``base`` changes ``base`` as on CPU, and returns its self."""
    on_device = npy(base)
    view = on_device[1:]
    returned = call(view, *on_npy(cpu_args))
    call(base[1:], *cpu_args)
    assert returned.data_ptr() == view.data_ptr()
    assert_matches_cpu(on_device, base)


def check_out_like_cpu(call, *cpu_args):
    """``call(..., out=)`` fills a given npy tensor, as on CPU, and returns it.

    ``call`` passes its ``**out`` keyword arguments on to the op.
    """
    expected = call(*cpu_args)
    out = torch.empty(0, dtype=expected.dtype, device="npy")
    returned = call(*on_npy(cpu_args), out=out)
    assert returned is out
    assert_matches_cpu(out, expected)


def assert_writes_out_like_cpu(call, cpu_input, dtype=torch.float32):
    """``call(input, out)`` writes into an empty npy ``out`` of ``dtype`` what it writes on CPU, and returns it."""
    expected = call(cpu_input, torch.empty(0, dtype=dtype))
    out = npy(torch.empty(0, dtype=dtype))
    assert call(npy(cpu_input), out) is out
    assert_matches_cpu(out, expected)


def assert_writes_two_outs_like_cpu(call, cpu_input):
    """``call(input, first, second)`` writes its two results into empty npy tensors as on CPU, and returns them."""
    expected = call(cpu_input, torch.empty(0), torch.empty(0))
    outs = npy(torch.empty(0)), npy(torch.empty(0))
    for got, want in zip(call(npy(cpu_input), *outs), expected):
        assert_matches_cpu(got, want)
    assert_matches_cpu(outs[0], expected[0])


def _differentiable(value):
    return isinstance(value, torch.Tensor) and (value.dtype.is_floating_point or value.dtype.is_complex)


def _leaves(args, to_device):
    """``args`` on the device; floating-point and complex tensors become leaves that require grad."""
    moved = [to_device(arg) if isinstance(arg, torch.Tensor) else arg for arg in args]
    return [arg.detach().requires_grad_() if _differentiable(arg) else arg for arg in moved]


def assert_backward_like_cpu(fn, *args, **tolerance):
    """``fn`` on npy copies of ``args`` matches CPU forward and backward, or fails as it does.

    Every floating-point tensor argument becomes a leaf on each device; the
    floating-point results are compared, then given the same random gradient,
    and the gradients of the leaves are compared. ``tolerance`` goes to
    :func:`torch.testing.assert_close`, for kernels that add up in another order.
    """
    cpu_args = _leaves(args, lambda arg: arg)
    npy_args = _leaves(args, npy)
    try:
        cpu_results = as_tuple(fn(*cpu_args))
    except Exception as cpu_error:
        with pytest.raises(type(cpu_error)) as npy_error:
            fn(*npy_args)
        assert_same_message(npy_error.value, cpu_error)
        return
    npy_results = as_tuple(fn(*npy_args))
    assert len(npy_results) == len(cpu_results)
    for got, want in zip(npy_results, cpu_results):
        if isinstance(want, torch.Tensor):
            assert got.device.type == "npy", got.device
            torch.testing.assert_close(got.detach().cpu(), want.detach(), equal_nan=True, **tolerance)
    outputs = [
        (got, want) for got, want in zip(npy_results, cpu_results) if _differentiable(want) and want.requires_grad
    ]
    leaves = [(got, want) for got, want in zip(npy_args, cpu_args) if _differentiable(want)]
    if not outputs or not leaves:
        return
    seeds = [make(want.shape, want.dtype, seed=index + 1) for index, (_, want) in enumerate(outputs)]
    cpu_grads = torch.autograd.grad([w for _, w in outputs], [w for _, w in leaves], seeds, allow_unused=True)
    npy_grads = torch.autograd.grad(
        [g for g, _ in outputs], [g for g, _ in leaves], [npy(seed) for seed in seeds], allow_unused=True
    )
    for got, want in zip(npy_grads, cpu_grads):
        assert (got is None) == (want is None)
        if want is not None:
            assert got.device.type == "npy", got.device
            torch.testing.assert_close(got.cpu(), want, equal_nan=True, **tolerance)


def assert_layer_trains_like_cpu(build_layer, steps=3):
    """``build_layer()`` (made on CPU, then moved) trained ``steps`` SGD steps on a mean-square loss gives
    CPU's losses on npy."""

    def losses(device):
        torch.manual_seed(0)
        layer = build_layer().to(device)
        x = torch.randn(5, 4).to(device)
        optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
        return training_losses(optimizer, lambda: layer(x).square().mean(), steps).tolist()  # compared as float64

    torch.testing.assert_close(losses("npy"), losses("cpu"))


def training_losses(optimizer, compute_loss, steps):
    """The losses of ``steps`` steps of ``optimizer``, each on the loss ``compute_loss()`` returns, on CPU."""
    losses = []
    for _ in range(steps):
        loss = compute_loss()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach().cpu())
    return torch.stack(losses)


class RecordOps(TorchDispatchMode):
    """The aten overloads called inside it, to check which path an op or module took."""

    def __init__(self):
        super().__init__()
        self.ops = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(func)
        return func(*args, **(kwargs or {}))
