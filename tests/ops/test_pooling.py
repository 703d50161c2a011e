"""Pooling on npy against CPU: values, indices and gradients, refused dtypes, bad arguments.

Every test runs under the ``strict`` fixture, so an op without an npy kernel
fails instead of running PyTorch's CPU kernel.
"""

import pytest
import torch
import torch.nn.functional as F
from reference import FLOAT_DTYPES, assert_backward_like_cpu, assert_like_cpu, make, npy

aten = torch.ops.aten

pytestmark = pytest.mark.usefixtures("strict")


def tolerance(dtype):
    """CPU adds half-precision gradients (and adaptive_avg_pool3d's sums) in half, rounding
    at every step; npy adds in float32 and rounds once, so half results differ by those roundings."""
    return dict(atol=1e-2, rtol=1e-2) if dtype == torch.float16 else {}


def with_grad(args):
    """CPU takes the same path as npy only when the input needs a gradient (see test_max_pool1d_errors)."""
    return [arg.detach().requires_grad_() if arg.dtype.is_floating_point else arg for arg in args]


# --- max pooling ----------------------------------------------------------------

MAX_POOL_CASES = [
    pytest.param(1, (2, 3, 9), dict(kernel_size=3), id="1d"),
    pytest.param(
        1, (3, 10), dict(kernel_size=2, stride=3, padding=1, dilation=2, ceil_mode=True), id="1d-unbatched-all"
    ),
    pytest.param(2, (2, 3, 7, 8), dict(kernel_size=2), id="2d"),
    pytest.param(2, (3, 7, 8), dict(kernel_size=(3, 2), stride=(2, 1), padding=1), id="2d-unbatched-pad"),
    pytest.param(2, (2, 2, 9, 9), dict(kernel_size=3, stride=2, dilation=2, padding=1), id="2d-dilation"),
    pytest.param(2, (1, 2, 6, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), id="2d-ceil"),
    pytest.param(2, (1, 2, 5, 5), dict(kernel_size=2, stride=1), id="2d-overlapping"),
    pytest.param(3, (2, 2, 5, 6, 4), dict(kernel_size=2), id="3d"),
    pytest.param(
        3,
        (2, 5, 6, 7),
        dict(kernel_size=(3, 2, 2), stride=2, padding=1, dilation=(1, 2, 1), ceil_mode=True),
        id="3d-unbatched-all",
    ),
]
MAX_POOLS = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}


@pytest.mark.parametrize("dims, shape, kwargs", MAX_POOL_CASES)
def test_max_pool(dims, shape, kwargs):
    pool = MAX_POOLS[dims]
    assert_backward_like_cpu(lambda x: pool(x, **kwargs, return_indices=True), make(shape, torch.float64))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_max_pool_dtypes(dims, dtype):
    x = make((2, 3) + (6,) * dims, dtype)
    assert_backward_like_cpu(lambda x: MAX_POOLS[dims](x, 3, 2, 1, return_indices=True), x, **tolerance(dtype))


@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8, torch.int8])
def test_max_pool_integers_allowed_like_cpu(dtype):
    x = make((2, 3, 6, 6), dtype)
    assert_like_cpu(lambda x: aten.max_pool2d_with_indices(x, [3], [2], [1]), x)
    assert_like_cpu(lambda x: aten.max_pool3d_with_indices(x, [2]), x)


@pytest.mark.parametrize("dtype", [torch.bool, torch.complex64])
def test_max_pool_refused_dtypes(dtype):
    x = make((2, 3, 6, 6), dtype)
    assert_like_cpu(lambda x: aten.max_pool2d_with_indices(x, [2]), x)
    assert_like_cpu(lambda x: aten.max_pool3d_with_indices(x, [2]), x)


def test_max_pool_ties_nan_and_infinities_pick_cpus_index():
    """First maximum wins a tie; the last NaN wins; an all -inf window keeps its first in-bounds position."""
    x = torch.tensor([[1.0, 1, 2, 2, float("nan"), 3, float("nan"), 0, -float("inf"), -float("inf"), 5]])
    for kwargs in [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=4, stride=1)]:
        assert_like_cpu(lambda x: F.max_pool1d(x, **kwargs, return_indices=True), x)
    ints = torch.full((1, 4, 4), torch.iinfo(torch.int32).min, dtype=torch.int32)
    assert_like_cpu(lambda x: aten.max_pool2d_with_indices(x, [3], [1], [1]), ints)


def test_max_pool_side_by_side_windows_ties_and_lowest_pick_cpus_index():
    """Windows that tile the input (kernel = stride, no padding) take their own path: first maximum of a tie,
    the first position of a window at the lowest value, the rows and columns past the last window left out."""
    ties = torch.tensor([0.0, 1, 1, 0, -float("inf"), -float("inf"), 2, 2, 3]).repeat(2, 3, 9, 1)
    ties[:, 1] = ties[:, 1].transpose(-1, -2)
    for dims in (2, 3):
        x = ties if dims == 2 else ties.reshape(2, 3, 3, 3, 9)
        assert_like_cpu(lambda x: MAX_POOLS[dims](x, 2, return_indices=True), x)
        assert_like_cpu(lambda x: MAX_POOLS[dims](x, (3,) * (dims - 1) + (2,), return_indices=True), x)
    ints = torch.randint(0, 2, (2, 3, 7, 6), generator=torch.Generator().manual_seed(0), dtype=torch.int64)
    assert_like_cpu(lambda x: aten.max_pool2d_with_indices(x, [2, 3]), ints)
    lowest = torch.full((1, 4, 4), torch.iinfo(torch.int32).min, dtype=torch.int32)
    assert_like_cpu(lambda x: aten.max_pool2d_with_indices(x, [2]), lowest)


def test_max_pool_out_and_empty_batch():
    x = make((0, 3, 6, 6), torch.float32)
    assert_like_cpu(lambda x: aten.max_pool2d_with_indices(x, [2]), x)
    y = make((2, 3, 6, 6), torch.float32)
    out, indices = torch.empty(0), torch.empty(0, dtype=torch.int64)
    expected = aten.max_pool2d_with_indices.out(y, [2], out=out, indices=indices)
    out_n, indices_n = npy(torch.empty(0)), npy(torch.empty(0, dtype=torch.int64))
    got = aten.max_pool2d_with_indices.out(npy(y), [2], out=out_n, indices=indices_n)
    assert got[0] is out_n and got[1] is indices_n
    torch.testing.assert_close(out_n.cpu(), expected[0])
    torch.testing.assert_close(indices_n.cpu(), expected[1])


# Arguments max and avg pooling refuse alike: kernel size, stride and padding come first in both.
POOL2D_ERRORS = [
    pytest.param((2, 3, 5, 5), ([6, 6],), id="kernel-larger-than-input"),
    pytest.param((2, 3, 5, 5), ([2, 2], [], [2, 2]), id="pad-over-half-kernel"),
    pytest.param((2, 3, 5, 5), ([2, 2, 2],), id="three-kernel-sizes"),
    pytest.param((2, 3, 5, 5), ([2], [1, 1, 1]), id="three-strides"),
    pytest.param((2, 3, 5, 5), ([2], [1], [1, 1, 1]), id="three-pads"),
    pytest.param((2, 3, 5, 5), ([0], [1]), id="zero-kernel"),
    pytest.param((5, 5), ([2],), id="2d-input"),
    pytest.param((1, 2, 3, 5, 5), ([2],), id="5d-input"),
    pytest.param((2, 0, 5, 5), ([2],), id="no-channels"),
]
MAX_POOL_ERRORS = POOL2D_ERRORS + [
    pytest.param((2, 3, 9, 9), ([3], [1], [2], [2]), id="pad-over-half-kernel-dilated"),
    pytest.param((2, 3, 5, 5), ([2, 2], [], [-1, 0]), id="negative-pad"),
    pytest.param((2, 3, 5, 5), ([0, 2],), id="zero-kernel-zero-stride"),
    pytest.param((2, 3, 5, 5), ([2], [-1]), id="negative-stride"),
    pytest.param((2, 3, 5, 5), ([2], [1], [0], [0]), id="zero-dilation"),
    pytest.param((2, 3, 5, 5), ([2], [1], [0], [1, 1, 1]), id="three-dilations"),
    pytest.param((0, 5, 5), ([2],), id="unbatched-no-channels"),
]


@pytest.mark.parametrize("shape, args", MAX_POOL_ERRORS)
def test_max_pool2d_errors(shape, args):
    assert_like_cpu(lambda x: aten.max_pool2d_with_indices(x, *args), make(shape, torch.float32))


POOL3D_ERRORS = [
    pytest.param((2, 3, 4, 4, 4), ([5],), id="kernel-larger-than-input"),
    pytest.param((2, 3, 4, 4, 4), ([2], [], [2]), id="pad-over-half-kernel"),
    pytest.param((2, 3, 4, 4, 4), ([2, 2],), id="two-kernel-sizes"),
    pytest.param((2, 3, 4, 4, 4), ([2], [1, 1]), id="two-strides"),
    pytest.param((2, 3, 4, 4, 4), ([2], [1], [1, 1]), id="two-pads"),
    pytest.param((2, 3, 4, 4, 4), ([0], [1]), id="zero-kernel"),
    pytest.param((2, 3, 4, 4, 4), ([2], [-1]), id="negative-stride"),
    pytest.param((4, 4, 4), ([2],), id="3d-input"),
    pytest.param((2, 0, 4, 4, 4), ([2],), id="no-channels"),
]
MAX_POOL3D_ERRORS = POOL3D_ERRORS + [
    pytest.param((2, 3, 6, 6, 6), ([3], [1], [2], [2]), id="pad-over-half-kernel-dilated"),
    pytest.param((2, 3, 4, 4, 4), ([2], [1], [0], [1, 1]), id="two-dilations"),
    pytest.param((2, 3, 4, 4, 4), ([2], [1], [0], [0]), id="zero-dilation"),
]


@pytest.mark.parametrize("shape, args", MAX_POOL3D_ERRORS)
def test_max_pool3d_errors(shape, args):
    assert_like_cpu(lambda x: aten.max_pool3d_with_indices(x, *args), make(shape, torch.float32))


def test_max_pool1d_errors():
    """CPU's own max_pool1d kernel (no gradient needed) words its errors differently; with a
    gradient, CPU goes through max_pool2d_with_indices as every other device does."""
    x = make((2, 3, 5), torch.float32)
    assert_like_cpu(lambda x: F.max_pool1d(x, 6), *with_grad([x]))
    assert_like_cpu(lambda x: F.max_pool1d(x, 2, padding=2), *with_grad([x]))


BACKWARDS = {
    "max_pool2d": lambda g, x, i: aten.max_pool2d_with_indices_backward(g, x, [2], [2], [0], [1], False, i),
    "max_pool3d": lambda g, x, i: aten.max_pool3d_with_indices_backward(g, x, [2], [2], [0], [1], False, i),
    "avg_pool2d": lambda g, x, i: aten.avg_pool2d_backward(g, x, [2], [2], [0], False, True, None),
    "avg_pool3d": lambda g, x, i: aten.avg_pool3d_backward(g, x, [2], [2], [0], False, True, None),
    "adaptive_avg_pool2d": lambda g, x, i: aten._adaptive_avg_pool2d_backward(g, x),
    "adaptive_avg_pool3d": lambda g, x, i: aten._adaptive_avg_pool3d_backward(g, x),
    "adaptive_max_pool2d": lambda g, x, i: aten.adaptive_max_pool2d_backward(g, x, i),
    "adaptive_max_pool3d": lambda g, x, i: aten.adaptive_max_pool3d_backward(g, x, i),
}


@pytest.mark.parametrize("grad_dtype", [torch.float64, torch.float16, torch.int64])
@pytest.mark.parametrize("name", BACKWARDS)
def test_backward_checks_gradient_dtype(name, grad_dtype):
    dims = 3 if name.endswith("3d") else 2
    x = make((1, 2) + (4,) * dims, torch.float32)
    grad = make((1, 2) + (2,) * dims, grad_dtype)
    indices = torch.zeros((1, 2) + (2,) * dims, dtype=torch.int64)
    assert_like_cpu(BACKWARDS[name], grad, x, indices)


@pytest.mark.parametrize("name", BACKWARDS)
def test_backward_called_directly(name):
    """With indices no forward made: each output's gradient goes where its index says."""
    dims = 3 if name.endswith("3d") else 2
    x = make((1, 2) + (4,) * dims, torch.float32)
    grad = make((1, 2) + (2,) * dims, torch.float32)
    indices = torch.tensor([5, 1, 1, 0, 7, 7, 2, 3][: 2**dims]).reshape((1, 1) + (2,) * dims).repeat(1, 2, *[1] * dims)
    assert_like_cpu(BACKWARDS[name], grad, x, indices)


OUT_OVERLOADS = {
    "max_pool3d_with_indices": lambda x, out: aten.max_pool3d_with_indices.out(
        x, [2], out=out, indices=torch.empty(0, dtype=torch.int64, device=x.device)
    ),
    "avg_pool3d": lambda x, out: aten.avg_pool3d.out(x, [2], out=out),
    "adaptive_avg_pool2d": lambda x, out: aten._adaptive_avg_pool2d.out(x[0], [3, 2], out=out),
    "adaptive_max_pool3d": lambda x, out: aten.adaptive_max_pool3d.out(
        x, [3, 2, 1], out=out, indices=torch.empty(0, dtype=torch.int64, device=x.device)
    ),
    "max_pool2d_backward": lambda x, out: aten.max_pool2d_with_indices_backward.grad_input(
        x[0, 0],
        x[0, 0],
        [1],
        [1],
        [0],
        [1],
        False,
        torch.zeros(x[0, 0].shape, dtype=torch.int64, device=x.device),
        grad_input=out,
    ),
    "avg_pool2d_backward": lambda x, out: aten.avg_pool2d_backward.grad_input(
        x[0, 0], x[0, 0], [1], [1], [0], False, True, None, grad_input=out
    ),
    "adaptive_avg_pool3d_backward": lambda x, out: aten._adaptive_avg_pool3d_backward.out(x, x, out=out),
    "adaptive_max_pool2d_backward": lambda x, out: aten.adaptive_max_pool2d_backward.grad_input(
        x[0, 0], x[0, 0], torch.zeros(x[0, 0].shape, dtype=torch.int64, device=x.device), grad_input=out
    ),
}


@pytest.mark.parametrize("name", OUT_OVERLOADS)
def test_out_overloads(name):
    x = make((2, 3, 4, 5, 6), torch.float32)
    assert_like_cpu(OUT_OVERLOADS[name], x, torch.empty(0))


def backward_case(name, grad_shape, input_shape, indices_shape=None):
    """A direct call of a pooling backward: ``BACKWARDS[name]`` and its three tensors."""
    indices_shape = indices_shape or grad_shape
    indices = torch.zeros(indices_shape, dtype=torch.int64)
    args = (make(grad_shape, torch.float32), make(input_shape, torch.float32), indices)
    return pytest.param(name, args, id=f"{name}-{'x'.join(map(str, grad_shape))}-{'x'.join(map(str, indices_shape))}")


BACKWARD_SHAPES = [
    backward_case("max_pool2d", (2, 3, 3, 4), (2, 3, 6, 6), (2, 3, 3, 3)),
    backward_case("max_pool2d", (1, 3, 3, 3), (2, 3, 6, 6), (2, 3, 3, 3)),
    backward_case("max_pool2d", (2, 4, 3, 3), (2, 3, 6, 6), (2, 3, 3, 3)),
    backward_case("max_pool2d", (2, 3, 3, 3), (2, 3, 6, 6), (2, 3, 2, 3)),
    backward_case("max_pool2d", (2, 3, 3, 3), (2, 3, 6, 6), (1, 3, 3, 3)),
    backward_case("max_pool3d", (2, 3, 2, 2, 3), (2, 3, 4, 4, 4), (2, 3, 2, 2, 2)),
    backward_case("max_pool3d", (2, 3, 2, 2, 2), (2, 3, 4, 4, 4), (2, 3, 2, 2, 1)),
    backward_case("avg_pool2d", (2, 3, 3, 4), (2, 3, 6, 6)),
    backward_case("avg_pool3d", (2, 3, 2, 2, 3), (2, 3, 4, 4, 4)),
    backward_case("adaptive_avg_pool2d", (2, 3, 3, 4), (2, 3, 6, 6)),
    backward_case("adaptive_avg_pool3d", (2, 3, 2, 2, 3), (2, 3, 4, 4, 4)),
    backward_case("adaptive_max_pool2d", (2, 3, 3, 4), (2, 3, 6, 6), (2, 3, 3, 3)),
    backward_case("adaptive_max_pool2d", (3, 3, 3), (2, 3, 6, 6), (2, 3, 3, 3)),
    backward_case("adaptive_max_pool3d", (2, 3, 2, 2, 3), (2, 3, 4, 4, 4), (2, 3, 2, 2, 2)),
]


@pytest.mark.parametrize("name, args", BACKWARD_SHAPES)
def test_backward_checks_shapes_like_cpu(name, args):
    """Including adaptive average pooling's backward, which takes its output size from the gradient."""
    assert_like_cpu(BACKWARDS[name], *args)


@pytest.mark.parametrize("name", ["avg_pool2d", "adaptive_avg_pool2d"])
def test_backward_refuses_other_batch_sizes(name):
    """CPU checks neither; it reads the smaller gradient out of bounds."""
    grad, x = make((1, 3, 3, 3), torch.float32), make((2, 3, 6, 6), torch.float32)
    with pytest.raises(RuntimeError, match="does not fit an input of shape"):
        BACKWARDS[name](npy(grad), npy(x), None)


# --- average pooling ---------------------------------------------------------------

AVG_POOL_CASES = [
    pytest.param(1, (2, 3, 9), dict(kernel_size=3), id="1d"),
    pytest.param(
        1, (3, 10), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True, count_include_pad=False), id="1d-unbatched"
    ),
    pytest.param(2, (2, 3, 7, 8), dict(kernel_size=2), id="2d"),
    pytest.param(2, (3, 7, 8), dict(kernel_size=(3, 2), stride=(2, 1), padding=1), id="2d-unbatched-pad"),
    pytest.param(
        2, (2, 2, 7, 7), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False), id="2d-exclude-pad"
    ),
    pytest.param(2, (1, 2, 6, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), id="2d-ceil"),
    pytest.param(
        2,
        (1, 2, 6, 7),
        dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        id="2d-ceil-exclude",
    ),
    pytest.param(2, (1, 2, 6, 7), dict(kernel_size=3, stride=1, padding=1, divisor_override=5), id="2d-divisor"),
    pytest.param(3, (2, 2, 5, 6, 4), dict(kernel_size=2), id="3d"),
    pytest.param(
        3, (2, 5, 6, 7), dict(kernel_size=(3, 2, 2), stride=2, padding=1, ceil_mode=True), id="3d-unbatched-ceil"
    ),
    pytest.param(
        3,
        (1, 2, 5, 6, 7),
        dict(kernel_size=3, stride=2, padding=1, count_include_pad=False, divisor_override=-4),
        id="3d-divisor",
    ),
]
AVG_POOLS = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}


@pytest.mark.parametrize("dims, shape, kwargs", AVG_POOL_CASES)
def test_avg_pool(dims, shape, kwargs):
    assert_backward_like_cpu(lambda x: AVG_POOLS[dims](x, **kwargs), make(shape, torch.float64))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("dims", [2, 3])
def test_avg_pool_dtypes(dims, dtype):
    """CPU averages float32 and float64 in 2d and 3d, half in 2d only."""
    x = make((2, 3) + (6,) * dims, dtype)
    if dims == 3 and dtype == torch.float16:
        assert_like_cpu(lambda x: AVG_POOLS[dims](x, 3, 2, 1), x)
    else:
        assert_backward_like_cpu(lambda x: AVG_POOLS[dims](x, 3, 2, 1), x, **tolerance(dtype))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool])
@pytest.mark.parametrize("dims", [2, 3])
def test_avg_pool_integers(dims, dtype):
    """int64 is averaged, truncating toward zero as C++ divides; other integers are refused."""
    x = make((2, 3) + (6,) * dims, dtype)
    assert_like_cpu(lambda x: AVG_POOLS[dims](x, 3, 2, 1), x)
    assert_like_cpu(lambda x: AVG_POOLS[dims](x, 3, 2, 1, count_include_pad=False), x)
    assert_like_cpu(lambda x: AVG_POOLS[dims](x, 3, 2, 1, divisor_override=-4), x)


AVG_POOL2D_ERRORS = POOL2D_ERRORS + [
    pytest.param((2, 3, 5, 5), ([2], [], [0], False, True, 0), id="zero-divisor"),
]


@pytest.mark.parametrize("shape, args", AVG_POOL2D_ERRORS)
def test_avg_pool2d_errors(shape, args):
    assert_like_cpu(lambda x: aten.avg_pool2d(x, *args), make(shape, torch.float32))


AVG_POOL3D_ERRORS = POOL3D_ERRORS + [
    pytest.param((2, 3, 4, 4, 4), ([2], [], [0], False, True, 0), id="zero-divisor"),
]


@pytest.mark.parametrize("shape, args", AVG_POOL3D_ERRORS)
def test_avg_pool3d_errors(shape, args):
    assert_like_cpu(lambda x: aten.avg_pool3d(x, *args), make(shape, torch.float32))


# --- adaptive pooling ------------------------------------------------------------------

ADAPTIVE_CASES = [
    pytest.param(1, (2, 3, 10), 4, id="1d"),
    pytest.param(1, (3, 7), 7, id="1d-unbatched-same"),
    pytest.param(2, (2, 3, 8, 8), (4, 2), id="2d-divisible"),
    pytest.param(2, (2, 3, 7, 9), (3, 4), id="2d-not-divisible"),
    pytest.param(2, (3, 5, 4), (7, 6), id="2d-unbatched-larger-output"),
    pytest.param(2, (2, 3, 5, 5), (None, 2), id="2d-keep-height"),
    pytest.param(3, (2, 2, 5, 6, 7), (2, 3, 4), id="3d"),
    pytest.param(3, (2, 4, 3, 5), (3, 5, 2), id="3d-unbatched"),
]
ADAPTIVE_AVG = {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d, 3: F.adaptive_avg_pool3d}
ADAPTIVE_MAX = {1: F.adaptive_max_pool1d, 2: F.adaptive_max_pool2d, 3: F.adaptive_max_pool3d}


@pytest.mark.parametrize("dims, shape, size", ADAPTIVE_CASES)
def test_adaptive_avg_pool(dims, shape, size):
    assert_backward_like_cpu(lambda x: ADAPTIVE_AVG[dims](x, size), make(shape, torch.float64))


@pytest.mark.parametrize("dims, shape, size", ADAPTIVE_CASES)
def test_adaptive_max_pool(dims, shape, size):
    assert_backward_like_cpu(lambda x: ADAPTIVE_MAX[dims](x, size, return_indices=True), make(shape, torch.float64))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("dims", [2, 3])
def test_adaptive_pool_dtypes(dims, dtype):
    x = make((2, 3) + (7,) * dims, dtype)
    assert_backward_like_cpu(lambda x: ADAPTIVE_AVG[dims](x, 3), x, **tolerance(dtype))
    assert_backward_like_cpu(lambda x: ADAPTIVE_MAX[dims](x, 3, return_indices=True), x, **tolerance(dtype))


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool])
@pytest.mark.parametrize("dims", [2, 3])
def test_adaptive_pool_refuses_integers(dims, dtype):
    x = make((2, 3) + (7,) * dims, dtype)
    assert_like_cpu(lambda x: ADAPTIVE_AVG[dims](x, 3), x)
    assert_like_cpu(lambda x: ADAPTIVE_MAX[dims](x, 3), x)


def test_adaptive_max_pool_nan_and_ties():
    x = torch.tensor([[[1.0, 3, 3, float("nan"), 2, float("nan"), 0, -float("inf"), -float("inf")]]])
    assert_like_cpu(lambda x: aten.adaptive_max_pool2d(x, [1, 4]), x)


def test_windows_never_read_past_their_edges():
    """An inf or NaN makes only the windows that hold it inf or NaN, forward and backward."""
    x = make((1, 2, 7, 9), torch.float64)
    x[0, 0, 0, 0], x[0, 0, 6, 8], x[0, 1, 3, 4] = float("inf"), float("-inf"), float("nan")
    assert_like_cpu(lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), x)
    assert_like_cpu(lambda x: F.adaptive_avg_pool2d(x, (3, 4)), x)
    assert_like_cpu(lambda x: F.adaptive_avg_pool2d(x, (9, 11)), x)
    grad = make((1, 2, 4, 5), torch.float64)
    grad[0, 0, 0, 0], grad[0, 1, 3, 4] = float("inf"), float("nan")
    assert_like_cpu(lambda g, x: aten.avg_pool2d_backward(g, x, [3], [2], [1], False, False, None), grad, x)
    assert_like_cpu(lambda g, x: aten._adaptive_avg_pool2d_backward(g, x), grad, x)


ADAPTIVE_ERRORS = [
    pytest.param((2, 3, 5, 5), [0, 2], id="zero-output"),
    pytest.param((2, 3, 5, 5), [-1, 2], id="negative-output"),
    pytest.param((2, 3, 5, 5), [2], id="one-size"),
    pytest.param((5, 5), [2, 2], id="2d-input"),
    pytest.param((2, 0, 5, 5), [2, 2], id="no-channels"),
    pytest.param((2, 3, 0, 5), [2, 2], id="no-height"),
    pytest.param((3, 0, 5), [2, 2], id="unbatched-no-height"),
    pytest.param((0, 3, 5, 5), [2, 2], id="empty-batch"),
]


@pytest.mark.parametrize("shape, size", ADAPTIVE_ERRORS)
@pytest.mark.parametrize("op", [aten._adaptive_avg_pool2d, aten.adaptive_max_pool2d], ids=["avg", "max"])
def test_adaptive_pool2d_errors(op, shape, size):
    assert_like_cpu(lambda x: op(x, size), make(shape, torch.float32))


@pytest.mark.parametrize(
    "shape, size",
    [((2, 3, 4, 4, 4), [0, 2, 2]), ((2, 3, 4, 4, 4), [2, 2]), ((4, 4, 4), [2, 2, 2]), ((2, 0, 4, 4, 4), [2, 2, 2])],
)
@pytest.mark.parametrize("op", [aten._adaptive_avg_pool3d, aten.adaptive_max_pool3d], ids=["avg", "max"])
def test_adaptive_pool3d_errors(op, shape, size):
    assert_like_cpu(lambda x: op(x, size), make(shape, torch.float32))
