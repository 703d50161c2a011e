"""F.interpolate on npy against CPU: every non-antialiased mode, forward and backward, and bad inputs.

Every test runs under the ``strict`` fixture, so an op without an npy kernel
fails instead of running PyTorch's CPU kernel.
"""

import pytest
import torch
import torch.nn.functional as F
from reference import FLOAT_DTYPES, assert_backward_like_cpu, assert_like_cpu, make

aten = torch.ops.aten

pytestmark = pytest.mark.usefixtures("strict")

MODES = {
    "nearest": (1, 2, 3),
    "nearest-exact": (1, 2, 3),
    "linear": (1,),
    "bilinear": (2,),
    "trilinear": (3,),
    "bicubic": (2,),
}
MODE_DIMS = [pytest.param(mode, dims, id=f"{mode}-{dims}d") for mode, all_dims in MODES.items() for dims in all_dims]

SIZES = [
    pytest.param(5, dict(scale_factor=2), id="x2"),
    pytest.param(5, dict(scale_factor=0.7), id="x0.7"),
    pytest.param(4, dict(scale_factor=3.3), id="x3.3"),
    pytest.param(7, dict(scale_factor=1.37, recompute_scale_factor=True), id="x1.37-recomputed"),
    pytest.param(6, dict(size=4), id="size-down"),
    pytest.param(5, dict(size=13), id="size-up"),
    pytest.param(4, dict(size=1), id="size-1"),
]


def tolerance(mode, dtype):
    """CPU's half kernels for linear, trilinear and bicubic round intermediate sums to half
    (and add half gradients in half); npy computes in float32 and rounds once. In float32,
    bicubic adds 16 products per pixel whose terms exceed the result, in a different order
    (npy resamples one axis at a time); both devices are then about 2e-5 from the exact value."""
    if dtype == torch.float16:
        return dict(atol=1e-2, rtol=1e-2)
    if dtype == torch.float32 and mode == "bicubic":
        return dict(atol=1e-4, rtol=1e-4)
    return {}


def interpolate(mode, align_corners=None, **kwargs):
    if align_corners is not None:
        kwargs["align_corners"] = align_corners
    return lambda x: F.interpolate(x, mode=mode, **kwargs)


@pytest.mark.parametrize("size, kwargs", SIZES)
@pytest.mark.parametrize("mode, dims", MODE_DIMS)
def test_interpolate(mode, dims, size, kwargs):
    x = make((2, 3) + (size,) * dims, torch.float64)
    corners = [None] if mode.startswith("nearest") else [False, True]
    for align_corners in corners:
        assert_backward_like_cpu(interpolate(mode, align_corners, **kwargs), x)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("mode, dims", MODE_DIMS)
def test_interpolate_dtypes(mode, dims, dtype):
    x = make((2, 3) + (5,) * dims, dtype)
    align_corners = None if mode.startswith("nearest") else False
    assert_backward_like_cpu(interpolate(mode, align_corners, scale_factor=2.3), x, **tolerance(mode, dtype))


def test_interpolate_per_dim_sizes_and_unequal_scales():
    x = make((1, 2, 4, 6, 5), torch.float32)
    assert_backward_like_cpu(interpolate("trilinear", False, scale_factor=(1.5, 0.5, 2.0)), x)
    assert_backward_like_cpu(interpolate("nearest", size=(3, 11, 5)), x)
    assert_backward_like_cpu(interpolate("bicubic", True, size=(9, 2)), x[0])


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear", "bicubic"])
def test_interpolate_axis_keeping_its_size(mode):
    """A scale that leaves an axis's size unchanged: linear modes copy that axis, the others still scale."""
    x = make((1, 2, 5, 6), torch.float32)
    align_corners = None if mode.startswith("nearest") else False
    assert_backward_like_cpu(interpolate(mode, align_corners, scale_factor=(1.1, 2.0)), x, **tolerance(mode, x.dtype))


def test_nearest_shortcuts_like_cpu():
    """An unchanged or doubled size ignores the scale in every nearest backward, and in the
    forward where CPU runs its channels-last kernel: 2d outputs of height plus width up to 128,
    channels-last inputs of more than 3 channels. Not in nearest-exact."""
    x = make((1, 2, 10), torch.float32)
    for size in (10, 20):
        assert_like_cpu(lambda x: aten.upsample_nearest1d(x, [size], 0.3), x)
        assert_like_cpu(lambda x: aten.upsample_nearest2d(x[None], [1, size], None, 0.3), x)
        assert_like_cpu(lambda x: aten.upsample_nearest3d(x[None, None], [1, 1, size], None, None, 0.3), x)
        assert_like_cpu(lambda x: aten._upsample_nearest_exact2d(x[None], [1, size], None, 0.3), x)
        grad = make((1, 2, size), torch.float32)
        assert_like_cpu(lambda g: aten.upsample_nearest1d_backward(g, [size], [1, 2, 10], 0.3), grad)
        assert_like_cpu(
            lambda g: aten.upsample_nearest3d_backward(
                g.reshape(1, 2, 1, 1, size), [1, 1, size], [1, 2, 1, 1, 10], None, None, 0.3
            ),
            grad,
        )
        assert_like_cpu(lambda g: aten._upsample_nearest_exact1d_backward(g, [size], [1, 2, 10], 0.3), grad)
    wide = make((1, 2, 1, 100), torch.float32)
    for size in (100, 200):
        assert_like_cpu(lambda x: aten.upsample_nearest2d(x, [1, size], None, 0.3), wide)
    for shape in [(1, 4, 1, 100), (1, 3, 1, 100), (2, 5, 2, 3, 100), (2, 3, 2, 3, 100)]:
        images = make(shape, torch.float32)
        layout = torch.channels_last if len(shape) == 4 else torch.channels_last_3d
        sizes, scales = list(shape[2:-1]) + [200], [None] * (len(shape) - 3) + [0.3]
        op = aten.upsample_nearest2d if len(shape) == 4 else aten.upsample_nearest3d
        assert_like_cpu(lambda x: op(x.contiguous(memory_format=layout), sizes, *scales), images)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int64, torch.bool])
@pytest.mark.parametrize(
    "mode, dims",
    [p for p in MODE_DIMS if p.values[0].startswith("nearest")]
    + [pytest.param("linear", 1, id="linear-1d"), pytest.param("trilinear", 3, id="trilinear-3d")],
)
def test_interpolate_integers_like_cpu(mode, dims, dtype):
    """Nearest modes copy uint8 pixels; other integer dtypes are refused."""
    x = make((2, 3) + (5,) * dims, dtype)
    align_corners = None if mode.startswith("nearest") else False
    assert_like_cpu(interpolate(mode, align_corners, scale_factor=1.7), x)


ANTIALIAS_SIZES = [
    pytest.param(dict(scale_factor=0.37), id="x0.37"),
    pytest.param(dict(size=(4, 20)), id="down-and-up"),
    pytest.param(dict(scale_factor=(1.0, 0.5)), id="one-axis"),
    pytest.param(dict(size=(13, 11)), id="same-size"),
]


@pytest.mark.parametrize("kwargs", ANTIALIAS_SIZES)
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_interpolate_antialias(mode, align_corners, kwargs):
    x = make((2, 3, 13, 11), torch.float64)
    assert_backward_like_cpu(interpolate(mode, align_corners, antialias=True, **kwargs), x)
    assert_backward_like_cpu(interpolate(mode, align_corners, antialias=True, **kwargs), x.float())


@pytest.mark.parametrize("dtype", [torch.float16, torch.int64])
def test_interpolate_antialias_refuses_like_cpu(dtype):
    x = make((2, 3, 6, 6), dtype)
    assert_like_cpu(interpolate("bilinear", False, antialias=True, size=(3, 3)), x)
    grad = make((2, 3, 3, 3), dtype)
    assert_like_cpu(lambda g: aten._upsample_bicubic2d_aa_backward(g, [3, 3], [2, 3, 6, 6], False), grad)


@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("channels", [3, 5])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_interpolate_uint8_images_exactly_like_cpu(mode, channels, antialias):
    """CPU resizes uint8 images as PIL does (int16 fixed-point weights, one uint8 pass per axis,
    with AVX2 code for up to 4 channels): npy gives the same pixels."""
    x = torch.randint(0, 256, (2, channels, 13, 11), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    for kwargs in [dict(scale_factor=2), dict(scale_factor=0.37), dict(size=(4, 20)), dict(scale_factor=(1.0, 0.6))]:
        for align_corners in [False, True]:
            assert_like_cpu(interpolate(mode, align_corners, antialias=antialias, **kwargs), x)


UPSAMPLE_ERRORS = [
    pytest.param(aten.upsample_nearest1d, (2, 3, 5), ([2, 2],), id="nearest1d-two-sizes"),
    pytest.param(aten.upsample_nearest1d, (2, 3, 5, 5), ([2],), id="nearest1d-4d-input"),
    pytest.param(aten.upsample_nearest1d, (2, 3, 5), ([0],), id="nearest1d-output-0"),
    pytest.param(aten.upsample_nearest1d, (2, 3, 0), ([3],), id="nearest1d-input-0"),
    pytest.param(aten.upsample_nearest1d, (2, 0, 4), ([3],), id="nearest1d-no-channels"),
    pytest.param(aten.upsample_nearest1d, (0, 3, 4), ([3],), id="nearest1d-empty-batch"),
    pytest.param(aten.upsample_nearest2d, (2, 3, 5, 5), ([2],), id="nearest2d-one-size"),
    pytest.param(aten.upsample_nearest2d, (2, 3, 5), ([2, 2],), id="nearest2d-3d-input"),
    pytest.param(aten.upsample_nearest2d, (2, 3, 5, 5), ([0, 3],), id="nearest2d-output-0"),
    pytest.param(aten.upsample_nearest2d, (2, 3, 5, 5), ([-1, 3],), id="nearest2d-negative-output"),
    pytest.param(aten.upsample_nearest2d, (2, 0, 4, 4), ([3, 3],), id="nearest2d-no-channels"),
    pytest.param(aten.upsample_nearest3d, (2, 3, 4, 4, 4), ([0, 3, 3],), id="nearest3d-output-0"),
    pytest.param(aten.upsample_nearest3d, (2, 3, 4, 4), ([3, 3, 3],), id="nearest3d-4d-input"),
    pytest.param(aten._upsample_nearest_exact2d, (2, 3, 5, 5), ([0, 3],), id="nearest-exact2d-output-0"),
    pytest.param(aten.upsample_linear1d, (2, 3, 5), ([0], False), id="linear1d-output-0"),
    pytest.param(aten.upsample_bilinear2d, (2, 3, 5, 5), ([0, 3], False), id="bilinear2d-output-0"),
    pytest.param(aten.upsample_bilinear2d, (2, 3, 5), ([3, 3], False), id="bilinear2d-3d-input"),
    pytest.param(aten.upsample_bilinear2d, (2, 0, 4, 4), ([3, 3], True), id="bilinear2d-no-channels"),
    pytest.param(aten.upsample_trilinear3d, (2, 3, 4, 4, 4), ([0, 3, 3], False), id="trilinear3d-output-0"),
    pytest.param(aten.upsample_bicubic2d, (2, 3, 5, 5), ([0, 3], False), id="bicubic2d-output-0"),
    pytest.param(aten.upsample_nearest2d, (2, 3, 5, 5), ([10, 10], -1.0, 0.0), id="nonpositive-scales-ignored"),
]


@pytest.mark.parametrize("op, shape, args", UPSAMPLE_ERRORS)
def test_upsample_errors(op, shape, args):
    assert_like_cpu(lambda x: op(x, *args), make(shape, torch.float32))


BACKWARD_ERRORS = [
    pytest.param(aten.upsample_nearest2d_backward, (2, 3, 10, 10), ([10, 9], [2, 3, 5, 5]), id="nearest2d-output-size"),
    pytest.param(aten.upsample_nearest2d_backward, (2, 3, 10, 10), ([10, 10], [2, 4, 5, 5]), id="nearest2d-channels"),
    pytest.param(aten.upsample_nearest2d_backward, (2, 3, 10, 10), ([10, 10], [2, 3, 5]), id="nearest2d-input-size"),
    pytest.param(
        aten.upsample_bilinear2d_backward, (2, 3, 10, 10), ([10, 9], [2, 3, 5, 5], False), id="bilinear2d-output-size"
    ),
    pytest.param(
        aten.upsample_bilinear2d_backward, (2, 3, 10), ([10, 10], [2, 3, 5, 5], False), id="bilinear2d-3d-grad"
    ),
    pytest.param(aten.upsample_nearest1d_backward, (2, 3, 10), ([9], [2, 3, 5]), id="nearest1d-output-size"),
    pytest.param(aten.upsample_linear1d_backward, (2, 3, 10), ([9], [2, 3, 5], False), id="linear1d-output-size"),
    pytest.param(
        aten.upsample_nearest3d_backward, (2, 3, 8, 8, 8), ([8, 8, 7], [2, 3, 4, 4, 4]), id="nearest3d-output-size"
    ),
    pytest.param(
        aten.upsample_trilinear3d_backward,
        (2, 3, 8, 8, 8),
        ([8, 8, 7], [2, 3, 4, 4, 4], True),
        id="trilinear3d-output-size",
    ),
]


@pytest.mark.parametrize("op, shape, args", BACKWARD_ERRORS)
def test_upsample_backward_errors(op, shape, args):
    assert_like_cpu(lambda g: op(g, *args), make(shape, torch.float32))


@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8])
@pytest.mark.parametrize(
    "op, extra",
    [
        (aten.upsample_nearest2d_backward, ()),
        (aten.upsample_bilinear2d_backward, (False,)),
        (aten.upsample_bicubic2d_backward, (True,)),
    ],
)
def test_upsample_backward_refuses_integers(op, extra, dtype):
    assert_like_cpu(lambda g: op(g, [10, 10], [2, 3, 5, 5], *extra), make((2, 3, 10, 10), dtype))


def test_upsample_out():
    x = make((2, 3, 5, 5), torch.float32)
    assert_like_cpu(lambda x, out: aten.upsample_bilinear2d.out(x, [7, 9], True, out=out), x, torch.empty(0))
    assert_like_cpu(lambda x, out: aten.upsample_nearest2d.out(x, [7, 9], out=out), x, torch.empty(0))
