"""Convolutions on npy against CPU: forward and backward, every option, dtypes, errors.

PyTorch sends npy convolutions to ``convolution_overrideable`` and their
backward to ``convolution_backward_overrideable`` (see
:mod:`backend_pkg.ops.convolution`); the ``strict`` fixture makes sure
nothing else runs on CPU behind the tests' back.
"""

import copy

import pytest
import torch
import torch.nn.functional as F
from reference import FLOAT_DTYPES, assert_backward_like_cpu, assert_like_cpu, assert_same_error, make, npy

from backend_pkg.ops import convolution

pytestmark = pytest.mark.usefixtures("strict")

# npy computes float16 in float32 and rounds once; CPU rounds partial sums to
# half, so where a sum cancels, its result can be off by an ulp or two of the
# largest terms (values up to ~600 here, whose half-precision ulp is 0.5). npy's
# are the nearer to the exact values.
# float32 sums are added up in another order than oneDNN's, so a sum that
# cancels can differ by an ulp of its largest terms (3e-5 at ~500).
TOLERANCES = {torch.float16: {"atol": 1.0, "rtol": 2e-3}, torch.float32: {"atol": 1e-4, "rtol": 1.3e-6}}


def case(function, input_shape, weight_shape, bias_size=None, **kwargs):
    return function, input_shape, weight_shape, bias_size, kwargs


CASES = {
    "1d": case(F.conv1d, (2, 4, 9), (6, 4, 3), 6),
    "1d-stride-pad-dil": case(F.conv1d, (2, 4, 13), (6, 2, 3), 6, stride=2, padding=2, dilation=2, groups=2),
    "1d-unbatched": case(F.conv1d, (4, 9), (6, 4, 3), padding="same"),
    "2d": case(F.conv2d, (2, 3, 7, 8), (5, 3, 3, 3), 5, padding=1),
    "2d-asymmetric": case(F.conv2d, (2, 3, 9, 8), (4, 3, 3, 2), 4, stride=(2, 1), padding=(0, 2), dilation=(1, 3)),
    "2d-groups": case(F.conv2d, (2, 6, 7, 7), (9, 2, 3, 3), 9, groups=3, stride=2),
    "2d-depthwise-multiplier": case(F.conv2d, (2, 4, 6, 6), (8, 1, 3, 3), groups=4, padding=1),
    # One weight row per channel: the kernels' shifted-slice path, without im2col.
    "2d-depthwise": case(F.conv2d, (2, 4, 7, 7), (4, 1, 3, 3), 4, groups=4, padding=1),
    "2d-depthwise-stride-pad-dil": case(
        F.conv2d, (2, 4, 9, 8), (4, 1, 3, 2), 4, groups=4, stride=(2, 1), padding=(1, 2), dilation=(2, 1)
    ),
    # At stride 1 the input's gradient is a convolution with the flipped kernel, padded to reach every
    # input position; padding past the kernel's reach takes the other path.
    "2d-depthwise-dilated": case(F.conv2d, (2, 4, 9, 8), (4, 1, 3, 2), 4, groups=4, padding=(2, 0), dilation=(2, 1)),
    "2d-depthwise-wide-padding": case(F.conv2d, (2, 3, 6, 6), (3, 1, 2, 2), 3, groups=3, padding=(2, 1)),
    "1d-depthwise": case(F.conv1d, (2, 3, 10), (3, 1, 4), 3, groups=3, stride=3, padding=2, dilation=2),
    "3d-depthwise": case(F.conv3d, (1, 2, 5, 6, 5), (2, 1, 3, 2, 3), 2, groups=2, stride=(1, 2, 1), padding=(1, 0, 1)),
    # An even kernel makes "same" pad one side more: the composite pads the input first.
    "2d-same-even": case(F.conv2d, (2, 3, 6, 7), (4, 3, 4, 2), 4, padding="same"),
    "2d-same-dilated": case(F.conv2d, (2, 3, 6, 7), (4, 3, 3, 3), 4, padding="same", dilation=2),
    "2d-valid": case(F.conv2d, (2, 3, 6, 7), (4, 3, 3, 3), padding="valid"),
    "2d-unbatched": case(F.conv2d, (3, 6, 6), (4, 3, 3, 3), 4),
    "2d-1x1": case(F.conv2d, (2, 8, 5, 5), (4, 8, 1, 1), 4),
    "3d": case(F.conv3d, (2, 3, 5, 6, 4), (4, 3, 3, 2, 3), 4, padding=(1, 0, 1)),
    "3d-stride-dil-groups": case(F.conv3d, (1, 4, 7, 7, 7), (4, 2, 2, 3, 2), 4, stride=2, dilation=(2, 1, 1), groups=2),
    # At stride 1 a 3d im2col copies whole rows of the flattened padded input (the stride-1 grid).
    "3d-groups-dilated": case(
        F.conv3d, (2, 4, 6, 5, 6), (6, 2, 3, 2, 2), 6, groups=2, padding=(1, 1, 0), dilation=(1, 2, 1)
    ),
    "3d-unbatched": case(F.conv3d, (2, 4, 4, 4), (3, 2, 2, 2, 2)),
    "transpose1d": case(F.conv_transpose1d, (2, 4, 6), (4, 3, 3), 3, stride=2, output_padding=1),
    "transpose1d-unbatched": case(F.conv_transpose1d, (4, 6), (4, 3, 3), padding=1),
    "transpose2d": case(
        F.conv_transpose2d, (2, 4, 5, 4), (4, 3, 3, 2), 3, stride=(2, 3), padding=1, output_padding=(1, 2)
    ),
    # output_padding below the dilation (not the stride) is allowed too.
    "transpose2d-groups-dil": case(
        F.conv_transpose2d, (2, 4, 5, 5), (4, 2, 3, 3), 4, groups=2, dilation=2, output_padding=1
    ),
    "transpose2d-unbatched": case(F.conv_transpose2d, (4, 5, 5), (4, 2, 3, 3), 2, stride=2),
    "transpose3d-stride1": case(F.conv_transpose3d, (2, 2, 3, 4, 3), (2, 3, 2, 3, 2), 3, padding=(0, 1, 0)),
    "transpose3d": case(
        F.conv_transpose3d,
        (2, 2, 3, 4, 3),
        (2, 3, 2, 3, 2),
        3,
        stride=2,
        padding=(0, 1, 0),
        output_padding=(1, 0, 0),
    ),
}


def conv_args(case, dtype):
    function, input_shape, weight_shape, bias_size, kwargs = CASES[case]
    bias = None if bias_size is None else make((bias_size,), dtype, seed=3)
    return function, make(input_shape, dtype, seed=1), make(weight_shape, dtype, seed=2), bias, kwargs


# PyTorch warns that an asymmetric "same" padding copies the input.
@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")
@pytest.mark.parametrize("case", CASES)
def test_forward_and_backward(case):
    function, x, weight, bias, kwargs = conv_args(case, torch.float64)
    assert_backward_like_cpu(lambda x, w, b: function(x, w, b, **kwargs), x, weight, bias)


# The im2col cases: columns above the one-copy limit are copied per kernel offset.
IM2COL_CASES = ["1d-stride-pad-dil", "2d-asymmetric", "2d-groups", "2d-depthwise-multiplier", "3d-stride-dil-groups"]


@pytest.mark.parametrize("case", IM2COL_CASES)
def test_im2col_a_copy_per_kernel_offset(case, monkeypatch):
    monkeypatch.setattr(convolution, "_ONE_COPY_LIMIT", 0)
    function, x, weight, bias, kwargs = conv_args(case, torch.float64)
    assert_backward_like_cpu(lambda x, w, b: function(x, w, b, **kwargs), x, weight, bias)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("case", ["1d-stride-pad-dil", "2d-groups", "2d-depthwise-stride-pad-dil", "3d", "transpose2d"])
def test_float_dtypes(case, dtype):
    function, x, weight, bias, kwargs = conv_args(case, dtype)
    assert_backward_like_cpu(lambda x, w, b: function(x, w, b, **kwargs), x, weight, bias, **TOLERANCES.get(dtype, {}))


@pytest.mark.parametrize("case", ["weight", "input", "bias"])
def test_backward_of_one_argument(case):
    """Each gradient alone: ``output_mask`` asks for one of the three."""
    _, x, weight, bias, _ = conv_args("2d-groups", torch.float64)
    leaves = {"input": x, "weight": weight, "bias": bias}
    for name, leaf in leaves.items():
        leaf.requires_grad_(name == case)
    cpu = torch.autograd.grad(F.conv2d(x, weight, bias, groups=3).sum(), leaves[case])
    npy_leaves = {name: npy(leaf).detach().requires_grad_(name == case) for name, leaf in leaves.items()}
    result = F.conv2d(npy_leaves["input"], npy_leaves["weight"], npy_leaves["bias"], groups=3)
    (got,) = torch.autograd.grad(result.sum(), npy_leaves[case])
    torch.testing.assert_close(got.cpu(), cpu[0])


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_padding_modes(mode):
    """What ``nn.Conv2d(padding_mode=...)`` runs: ``F.pad`` in that mode, then an unpadded convolution."""
    _, x, weight, bias, _ = conv_args("2d", torch.float64)
    assert_backward_like_cpu(lambda x, w, b: F.conv2d(F.pad(x, (2, 1, 1, 2), mode=mode), w, b), x, weight, bias)


# Integer convolutions run on CPU as well (summed in the integer type, wrapping
# on overflow), int64 everywhere, the narrower ones when neither transposed nor dilated.
INTEGER_CALLS = {
    "int64-2d": (torch.int64, lambda x, w: F.conv2d(x, w, padding=1, stride=2)),
    "int64-dilated-groups": (torch.int64, lambda x, w: F.conv2d(x, w[:, :1], dilation=2, groups=3)),
    "int64-transposed": (torch.int64, lambda x, w: F.conv_transpose2d(x, w[:3], stride=2)),
    "int32-2d": (torch.int32, lambda x, w: F.conv2d(x, w)),
    "int64-depthwise": (torch.int64, lambda x, w: F.conv2d(x, w[:3, :1], stride=2, padding=1, groups=3)),
    "uint8-depthwise-wrapping": (torch.uint8, lambda x, w: F.conv2d(x * 7, w[:3, :1] * 9, groups=3)),
    "uint8-wrapping": (torch.uint8, lambda x, w: F.conv2d(x * 7, w * 9)),
    "int8-3d": (torch.int8, lambda x, w: F.conv3d(x[None], w[:, :1, None].expand(4, 3, 3, 3, 3))),
}


@pytest.mark.parametrize("case", INTEGER_CALLS)
def test_integer_dtypes(case):
    dtype, fn = INTEGER_CALLS[case]
    assert_like_cpu(fn, make((2, 3, 6, 6), dtype), make((4, 3, 3, 3), dtype, seed=1))


def tensor(shape, dtype=torch.float64):
    return make(shape, dtype)


X, W, WT = (2, 4, 6, 6), (4, 4, 3, 3), (4, 2, 3, 3)

# Bad calls that reach the npy kernels, and a few stopped before them (checked
# by PyTorch's composite, identically for every device). float64 where CPU's
# float32 convolutions (oneDNN) word an error as oneDNN internals.
BAD_CALLS = {
    "channels": (F.conv2d, tensor(X), tensor((4, 2, 3, 3))),
    "kernel-too-large": (F.conv2d, tensor(X), tensor((4, 4, 7, 7))),
    "float32-input-float64-weight": (F.conv2d, tensor(X, torch.float32), tensor(W)),
    "float64-input-float32-weight": (F.conv2d, tensor(X), tensor(W, torch.float32)),
    "float16-input-float32-weight-transposed": (
        F.conv_transpose2d,
        tensor(X, torch.float16),
        tensor(WT, torch.float32),
    ),
    "float32-input-float64-bias-transposed": (
        F.conv_transpose2d,
        tensor(X, torch.float32),
        tensor(WT, torch.float32),
        tensor((2,)),
    ),
    "float64-input-float32-bias-transposed": (
        F.conv_transpose2d,
        tensor(X),
        tensor(WT),
        tensor((2,), torch.float32),
    ),
    "int64-input-float-bias-transposed": (
        F.conv_transpose2d,
        tensor(X, torch.int64),
        tensor(WT, torch.int64),
        tensor((2,)),
    ),
    "bool": (F.conv2d, tensor(X, torch.bool), tensor(W, torch.bool)),
    "uint16": (F.conv2d, tensor(X, torch.uint16), tensor(W, torch.uint16)),
    "int32-transposed": (F.conv_transpose2d, tensor(X, torch.int32), tensor(WT, torch.int32)),
    "complex": (
        lambda x, w: torch.convolution(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1),
        tensor(X, torch.complex128),
        tensor(W, torch.complex128),
    ),
    "zero-kernel": (F.conv2d, tensor(X), tensor((4, 4, 0, 3))),
    "zero-kernel-dilated": (lambda x, w: F.conv2d(x, w, dilation=2), tensor(X), tensor((4, 4, 3, 0))),
    "zero-kernel-3d": (F.conv3d, tensor((1, *X)), tensor((4, 2, 2, 0, 3))),
    "zero-kernel-transposed": (F.conv_transpose2d, tensor(X), tensor((4, 2, 0, 3))),
    "zero-kernel-transposed-3d": (F.conv_transpose3d, tensor((1, *X)), tensor((2, 2, 2, 0, 3))),
    "zero-dilation": (lambda x, w: F.conv2d(x, w, dilation=(1, 0)), tensor(X), tensor(W)),
    "zero-dilation-1d": (lambda x, w: F.conv1d(x, w, dilation=0), tensor((2, 4, 6)), tensor((4, 4, 3))),
    "zero-dilation-transposed": (lambda x, w: F.conv_transpose2d(x, w, dilation=0), tensor(X), tensor(WT)),
    "zero-dilation-transposed-3d": (
        lambda x, w: F.conv_transpose3d(x, w, dilation=0),
        tensor((1, *X)),
        tensor((2, 2, 2, 2, 2)),
    ),
    "output-padding-too-large": (
        lambda x, w: F.conv_transpose2d(x, w, stride=2, output_padding=(0, 2)),
        tensor(X),
        tensor(WT),
    ),
    "output-padding-too-large-3d": (
        lambda x, w: F.conv_transpose3d(x, w, output_padding=1),
        tensor((1, *X)),
        tensor((2, 2, 2, 2, 2)),
    ),
    "transposed-output-too-small": (
        lambda x, w: F.conv_transpose2d(x, w, padding=(1, 5)),
        tensor(X),
        tensor(WT),
    ),
    "transposed-output-too-small-1d": (
        lambda x, w: F.conv_transpose1d(x, w, padding=4),
        tensor((2, 4, 6)),
        tensor((4, 2, 3)),
    ),
    "transposed-output-too-small-3d": (
        lambda x, w: F.conv_transpose3d(x, w, padding=(0, 4, 0)),
        tensor((1, *X)),
        tensor((2, 2, 2, 2, 2)),
    ),
    "transposed-no-output-channels": (F.conv_transpose2d, tensor(X), tensor((4, 0, 3, 3))),
    "transposed-no-output-channels-3d": (F.conv_transpose3d, tensor((1, *X)), tensor((2, 0, 2, 2, 2))),
}


@pytest.mark.parametrize("case", BAD_CALLS)
def test_errors_like_cpu(case):
    fn, *args = BAD_CALLS[case]
    assert_like_cpu(fn, *args)


def test_narrow_integers_refused_when_dilated():
    # CPU's kernel is named "slow_conv_dilated<>", which reference.gist does not strip.
    def dilated(x, w):
        return F.conv2d(x, w, dilation=2)

    assert_same_error(dilated, tensor(X, torch.uint8), tensor(W, torch.uint8), match="not implemented for 'Byte'")


def backward(grad_output, x, w, transposed=False, groups=1):
    """``convolution_backward`` called directly, with a ``grad_output`` autograd would never pass."""
    output_padding = [1, 0] if transposed else [0, 0]
    return torch.ops.aten.convolution_backward(
        grad_output,
        x,
        w,
        None,
        [2, 1],
        [1, 0],
        [1, 1],
        F.conv_transpose2d,
        output_padding,
        groups,
        [True, True, True],
    )


@pytest.mark.parametrize(
    "grad_shape, dtype, transposed",
    [
        ((2, 4, 3, 3), torch.float64, False),
        ((2, 2, 3, 4), torch.float64, False),
        ((2, 4, 3, 4), torch.float32, False),
        ((2, 4, 12, 4), torch.float64, True),
        ((2, 2, 12, 8), torch.float64, True),
    ],
)
def test_backward_errors_like_cpu(grad_shape, dtype, transposed):
    """The checks of ``grad_output``; the third case is right but for its dtype."""
    assert_like_cpu(lambda g, x, w: backward(g, x, w, transposed, 2), tensor(grad_shape, dtype), tensor(X), tensor(WT))


def test_double_backward():
    """Gradients of gradients: PyTorch's composite ``_convolution_double_backward`` calls the kernels again."""

    def grads_of_grads(x, w):
        y = F.conv2d(x, w, padding=1, stride=2, groups=2)
        grad_x, grad_w = torch.autograd.grad(y.pow(2).sum(), (x, w), create_graph=True)
        return grad_x.sin().sum() + grad_w.cos().sum()

    assert_backward_like_cpu(grads_of_grads, tensor((2, 4, 6, 6)), tensor((6, 2, 3, 3)))


def test_empty_batch():
    """PyTorch's composite handles an empty batch itself (no kernel runs): results and gradients like CPU's."""
    assert_backward_like_cpu(lambda x, w: F.conv2d(x, w, padding=1), tensor((0, 4, 6, 6)), tensor(W))


# Each module with an input of its dims (unbatched for the 3d one).
MODULES = {
    "conv1d-circular": (lambda: torch.nn.Conv1d(3, 4, 3, padding=2, padding_mode="circular"), (2, 3, 7)),
    "conv2d-reflect": (
        lambda: torch.nn.Conv2d(3, 4, 3, stride=2, padding=1, padding_mode="reflect"),
        (2, 3, 6, 7),
    ),
    "conv2d-replicate-same": (
        lambda: torch.nn.Conv2d(3, 4, (3, 2), padding="same", padding_mode="replicate"),
        (2, 3, 6, 7),
    ),
    "conv3d-unbatched": (lambda: torch.nn.Conv3d(3, 4, 2, padding=1, bias=False), (3, 4, 4, 5)),
    "conv-transpose2d": (lambda: torch.nn.ConvTranspose2d(3, 4, 3, stride=2, output_padding=1), (2, 3, 6, 7)),
}


@pytest.mark.parametrize("name", MODULES)
def test_modules(name):
    """The ``nn`` modules, moved to npy, train like their CPU originals."""
    make_module, input_shape = MODULES[name]
    torch.manual_seed(0)
    module = make_module().double()
    on_npy = copy.deepcopy(module).to("npy")
    x = make(input_shape, torch.float64)
    expected, got = module(x), on_npy(npy(x))
    torch.testing.assert_close(got.detach().cpu(), expected.detach())
    seed = make(expected.shape, torch.float64, seed=1)
    expected.backward(seed)
    got.backward(npy(seed))
    for cpu_parameter, npy_parameter in zip(module.parameters(), on_npy.parameters()):
        torch.testing.assert_close(npy_parameter.grad.cpu(), cpu_parameter.grad)


@pytest.mark.parametrize("weight_shape, groups", [((4, 3, 3, 3), 1), ((3, 1, 3, 3), 3)], ids=["im2col", "depthwise"])
@pytest.mark.parametrize("batch, padding", [(1, 0), (1, 1), (3, 0)])
def test_results_do_not_share_the_kernels_workspace(batch, padding, weight_shape, groups, strict):
    """Column matrices, padded copies and the depthwise outputs on their grid live in memory reused
    from call to call; results never do."""
    weight = torch.randn(weight_shape)
    inputs = [torch.randn(batch, 3, 6, 6, requires_grad=True) for _ in range(2)]
    npy_inputs = [x.detach().to("npy").requires_grad_() for x in inputs]
    npy_weight = weight.to("npy")
    outputs = [torch.nn.functional.conv2d(x, npy_weight, padding=padding, groups=groups) for x in npy_inputs]
    seeds = [torch.randn(out.shape) for out in outputs]
    grads = [torch.autograd.grad(out, x, npy(seed))[0] for out, x, seed in zip(outputs, npy_inputs, seeds)]
    for x, out, grad, seed in zip(inputs, outputs, grads, seeds):
        expected = torch.nn.functional.conv2d(x, weight, padding=padding, groups=groups)
        torch.testing.assert_close(out.detach().cpu(), expected.detach(), atol=1e-4, rtol=1.3e-6)
        torch.testing.assert_close(grad.cpu(), torch.autograd.grad(expected, x, seed)[0], atol=1e-4, rtol=1.3e-6)
