"""Batch, instance, layer and group norm on npy against CPU, forward and backward.

Every test runs under the ``strict`` fixture: an op without an npy kernel
fails instead of quietly running PyTorch's CPU kernel.
"""

import copy

import pytest
import torch
import torch.nn.functional as F
from reference import (
    FLOAT_DTYPES,
    assert_backward_like_cpu,
    assert_layer_trains_like_cpu,
    assert_like_cpu,
    assert_same_error,
    make,
    npy,
)

aten = torch.ops.aten
pytestmark = pytest.mark.usefixtures("strict")

# Both devices compute half precision in float32, but CPU rounds some
# intermediates to half and adds up in another order: results with half inputs
# (float32 parameter gradients included) differ by about one half-precision rounding.
HALF_TOLERANCE = {"atol": 1e-3, "rtol": 1e-3}


def tolerance(dtype):
    return HALF_TOLERANCE if dtype == torch.float16 else {}


def running_stats(channels, dtype, device):
    """Running statistics away from their initial values, so the momentum update shows."""
    mean = make((channels,), torch.float64, seed=7) / 4
    var = make((channels,), torch.float64, seed=8).abs() + 0.5
    return mean.to(dtype).to(device), var.to(dtype).to(device)


def batch_norm_step(training, track, stats_dtype=None):
    """F.batch_norm with running statistics made on the input's device, returned after the step."""

    def step(x, weight, bias):
        stats = running_stats(x.shape[1], stats_dtype or x.dtype, x.device) if track else (None, None)
        out = F.batch_norm(x, *stats, weight, bias, training, momentum=0.3, eps=1e-3)
        return (out, *stats) if track else out

    return step


# --- batch norm -----------------------------------------------------------------------

BATCH_SHAPES = [(6, 3), (4, 3, 5), (2, 3, 4, 5), (2, 3, 2, 3, 4)]
MODES = pytest.mark.parametrize(
    "training, track", [(True, True), (True, False), (False, True)], ids=["train", "train-untracked", "eval"]
)


@pytest.mark.parametrize("shape", BATCH_SHAPES, ids=str)
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
@MODES
def test_batch_norm_forward_backward_and_running_stats(shape, affine, training, track):
    x = make(shape, torch.float32)
    weight, bias = (make((3,), torch.float32, 1), make((3,), torch.float32, 2)) if affine else (None, None)
    assert_backward_like_cpu(batch_norm_step(training, track), x, weight, bias)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm_dtypes(dtype, training):
    x, weight, bias = make((4, 3, 6), dtype), make((3,), dtype, 1), make((3,), dtype, 2)
    assert_backward_like_cpu(batch_norm_step(training, True), x, weight, bias, **tolerance(dtype))


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm_half_input_with_float32_parameters_as_autocast_makes(training):
    x = make((4, 3, 6), torch.float16)
    weight, bias = make((3,), torch.float32, 1), make((3,), torch.float32, 2)
    step = batch_norm_step(training, True, stats_dtype=torch.float32)
    assert_backward_like_cpu(step, x, weight, bias, **HALF_TOLERANCE)
    out, mean, var = step(npy(x), npy(weight), npy(bias))
    assert (out.dtype, mean.dtype, var.dtype) == (torch.float16, torch.float32, torch.float32)


def test_batch_norm_saved_statistics_and_their_dtypes():
    x, weight = make((4, 3, 5), torch.float16), make((3,), torch.float32, 1)
    stats = running_stats(3, torch.float32, "cpu")
    for args in [(x, None, None, None, None, True), (x, weight, None, *stats, False)]:
        assert_like_cpu(lambda *a: aten.native_batch_norm(*a, 0.1, 1e-5), *args)


def test_batch_norm_takes_per_channel_tensors_of_any_shape_with_one_value_per_channel():
    x, weight = make((4, 3, 5), torch.float32), make((3, 1), torch.float32, 1)
    for training in (True, False):
        assert_like_cpu(lambda t, w: batch_norm_step(training, True)(t, w, w.view(1, 3)), x, weight)


def test_batch_norm_module_over_several_steps_then_eval():
    cpu_module = torch.nn.BatchNorm2d(4, momentum=0.2)
    with torch.no_grad():
        cpu_module.weight.copy_(make((4,), torch.float32, 1))
        cpu_module.bias.copy_(make((4,), torch.float32, 2))
    npy_module = copy.deepcopy(cpu_module).to("npy")
    for seed in range(3):
        x = make((3, 4, 5, 5), torch.float32, seed) + seed
        cpu_module(x).square().sum().backward()
        npy_module(npy(x)).square().sum().backward()
    for name, value in cpu_module.state_dict().items():
        torch.testing.assert_close(npy_module.state_dict()[name].cpu(), value, msg=name)
    for (name, got), want in zip(npy_module.named_parameters(), cpu_module.parameters()):
        torch.testing.assert_close(got.grad.cpu(), want.grad, msg=name)
    x = make((2, 4, 3, 3), torch.float32, 9)
    torch.testing.assert_close(npy_module.eval()(npy(x)).detach().cpu(), cpu_module.eval()(x).detach())


def test_batch_norm_channels_last_input():
    x = make((2, 3, 4, 5), torch.float32).to(memory_format=torch.channels_last)
    assert_backward_like_cpu(batch_norm_step(True, True), x, make((3,), torch.float32, 1), None)


def test_batch_norm_one_value_per_channel_updates_running_var_to_nan_like_cpu():
    # Through aten: F.batch_norm refuses this in Python before any kernel runs. The
    # output, 0 amplified by 1 / sqrt(eps), is rounding noise of CPU's fused multiply-add.
    def step(x):
        mean, var = running_stats(3, x.dtype, x.device)
        _, save_mean, save_invstd = aten.native_batch_norm(x, None, None, mean, var, True, 0.1, 1e-5)
        return save_mean, save_invstd, mean, var

    assert_like_cpu(step, torch.tensor([[1.0, -2.0, 3.0]]))


def test_batch_norm_constant_channel_without_eps_has_zero_inverse_std():
    x = torch.ones(4, 2, 3)
    # F.batch_norm refuses eps=0 in training, in Python.
    assert_backward_like_cpu(lambda t: aten.native_batch_norm(t, None, None, None, None, True, 0.1, 0.0), x)


def assert_optional_like_cpu(fn, *args):
    """Like assert_like_cpu, for ops that return None in place of the results not asked for."""
    expected = fn(*args)
    actual = fn(*[npy(arg) if isinstance(arg, torch.Tensor) else arg for arg in args])
    assert [got is None for got in actual] == [want is None for want in expected]
    for got, want in zip(actual, expected):
        if want is not None:
            assert got.device.type == "npy"
            torch.testing.assert_close(got.cpu(), want)


@pytest.mark.parametrize("mask", [(True, False, False), (False, True, True), (False, True, False)], ids=str)
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_batch_norm_backward_output_mask(mask, train):
    x, grad = make((3, 2, 4), torch.float64), make((3, 2, 4), torch.float64, 1)
    weight = make((2,), torch.float64, 2)
    mean, var = running_stats(2, torch.float64, "cpu")
    save_mean, save_invstd = x.mean((0, 2)), (x.var((0, 2), unbiased=False) + 1e-5).rsqrt()
    assert_optional_like_cpu(
        lambda *a: aten.native_batch_norm_backward(*a, train, 1e-5, list(mask)),
        grad,
        x,
        weight,
        mean,
        var,
        save_mean,
        save_invstd,
    )


def test_layer_and_group_norm_backward_output_mask():
    x, grad = make((3, 4, 2), torch.float32), make((3, 4, 2), torch.float32, 1)
    _, mean, rstd = aten.native_layer_norm(x, [2], None, None, 1e-5)
    bias = make((2,), torch.float32, 2)
    for mask in ([True, False, False], [False, False, True], [True, False, True]):
        assert_optional_like_cpu(
            lambda *a: aten.native_layer_norm_backward(*a, mask), grad, x, [2], mean, rstd, None, bias
        )
    _, mean, rstd = aten.native_group_norm(x, None, None, 3, 4, 2, 2, 1e-5)
    weight = make((4,), torch.float32, 2)
    for mask in ([True, False, False], [False, True, False], [False, False, True]):
        assert_optional_like_cpu(
            lambda *a: aten.native_group_norm_backward(*a, 3, 4, 2, 2, mask), grad, x, mean, rstd, weight
        )


def test_functional_batch_norm_overloads():
    """The ops decompositions produce; each takes running statistics it may update in place."""
    x, weight, bias = make((4, 3, 5), torch.float32), make((3,), torch.float32, 1), make((3,), torch.float32, 2)

    def legit(t, w, b):
        mean, var = running_stats(3, t.dtype, t.device)
        return (*aten._native_batch_norm_legit(t, w, b, mean, var, True, 0.1, 1e-5), mean, var)

    def with_update(t, w, b):
        mean, var = running_stats(3, t.dtype, t.device)
        out, save_mean, save_invstd, reserve = aten._batch_norm_with_update(t, w, b, mean, var, 0.1, 1e-5)
        assert reserve.shape == (0,)
        return out, save_mean, save_invstd, mean, var

    def new_backward(t, w, b):
        mean, var = running_stats(3, t.dtype, t.device)
        _, save_mean, save_invstd, reserve = aten._batch_norm_with_update(t, w, b, mean, var, 0.1, 1e-5)
        saved = (mean, var, save_mean, save_invstd)
        return aten.batch_norm_backward(t * b[:, None], t, w, *saved, True, 1e-5, [True] * 3, reserve)

    def no_training(t, w, b):
        stats = running_stats(3, t.dtype, t.device)
        return aten._native_batch_norm_legit_no_training(t, w, b, *stats, 0.1, 1e-5)

    def no_update(t, w, b):
        return aten._batch_norm_no_update(t, w, b, *running_stats(3, t.dtype, t.device), 0.1, 1e-5)

    def no_stats(t, w, b):
        return aten._native_batch_norm_legit.no_stats(t, w, b, True, 0.1, 1e-5)

    for fn in (legit, with_update, new_backward, no_training, no_update, no_stats):
        assert_like_cpu(fn, x, weight, bias)


# --- instance norm --------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(2, 3, 7), (2, 3, 4, 5)], ids=str)
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
@MODES
def test_instance_norm(shape, affine, training, track):
    x = make(shape, torch.float32)
    weight, bias = (make((3,), torch.float32, 1), make((3,), torch.float32, 2)) if affine else (None, None)

    def step(t, w, b):
        stats = running_stats(3, t.dtype, t.device) if track else (None, None)
        out = F.instance_norm(t, *stats, w, b, use_input_stats=training, momentum=0.3)
        return (out, *stats) if track else out

    assert_backward_like_cpu(step, x, weight, bias)


# --- layer norm -----------------------------------------------------------------------


@pytest.mark.parametrize("normalized", [(5,), (4, 5), (3, 4, 5)], ids=str)
@pytest.mark.parametrize("affine", ["weight+bias", "weight", "bias", "none"])
def test_layer_norm(normalized, affine):
    x = make((2, 3, 4, 5), torch.float32)
    weight = make(normalized, torch.float32, 1) if "weight" in affine else None
    bias = make(normalized, torch.float32, 2) if "bias" in affine else None
    assert_backward_like_cpu(lambda t, w, b: F.layer_norm(t, normalized, w, b, eps=1e-4), x, weight, bias)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_layer_norm_dtypes(dtype):
    x, weight, bias = make((3, 8), dtype), make((8,), dtype, 1), make((8,), dtype, 2)
    assert_backward_like_cpu(lambda t, w, b: F.layer_norm(t, (8,), w, b), x, weight, bias, **tolerance(dtype))


def test_layer_norm_statistics_and_mixed_dtypes():
    x = make((2, 3, 4), torch.float16)
    weight, bias = make((3, 4), torch.float32, 1), make((3, 4), torch.float32, 2)
    assert_backward_like_cpu(lambda t, w, b: F.layer_norm(t, (3, 4), w, b), x, weight, bias, **HALF_TOLERANCE)
    assert_like_cpu(lambda *a: aten.native_layer_norm(*a, 1e-5), x, [3, 4], weight, bias)
    assert_like_cpu(lambda *a: aten.native_layer_norm(*a, 1e-5), x.double(), [4], None, None)


def test_layer_norm_modules():
    for module in [
        torch.nn.LayerNorm([4, 5]),
        torch.nn.LayerNorm(5, bias=False),
        torch.nn.LayerNorm(5, elementwise_affine=False),
    ]:
        with torch.no_grad():
            for parameter in module.parameters():
                parameter.copy_(make(parameter.shape, torch.float32, 3))
        on_npy = copy.deepcopy(module).to("npy")
        x = make((2, 3, 4, 5), torch.float32)
        x_npy = npy(x).requires_grad_()
        x.requires_grad_()
        module(x).square().sum().backward()
        on_npy(x_npy).square().sum().backward()
        torch.testing.assert_close(x_npy.grad.cpu(), x.grad)
        for got, want in zip(on_npy.parameters(), module.parameters()):
            torch.testing.assert_close(got.grad.cpu(), want.grad)


# --- group norm -----------------------------------------------------------------------


# Not (3, 6) in 6 groups: one value per group normalizes to 0 amplified by
# 1 / sqrt(eps), rounding noise of CPU's fused multiply-add.
GROUPINGS = [((3, 6), 1), ((3, 6), 3), ((2, 6, 5), 1), ((2, 6, 5), 6), ((2, 6, 3, 4), 3), ((2, 6, 3, 4), 6)]


@pytest.mark.parametrize("shape, groups", GROUPINGS, ids=str)
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
def test_group_norm(shape, groups, affine):
    x = make(shape, torch.float32)
    weight, bias = (make((6,), torch.float32, 1), make((6,), torch.float32, 2)) if affine else (None, None)
    assert_backward_like_cpu(lambda t, w, b: F.group_norm(t, groups, w, b, eps=1e-4), x, weight, bias)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_group_norm_dtypes(dtype):
    x, weight, bias = make((2, 4, 5), dtype), make((4,), dtype, 1), make((4,), dtype, 2)
    assert_backward_like_cpu(lambda t, w, b: F.group_norm(t, 2, w, b), x, weight, bias, **tolerance(dtype))


def test_group_norm_statistics_and_mixed_dtypes():
    x, weight = make((2, 4, 5), torch.float16), make((4,), torch.float32, 1)
    assert_backward_like_cpu(lambda t, w: F.group_norm(t, 2, w), x, weight, **HALF_TOLERANCE)
    assert_like_cpu(lambda *a: aten.native_group_norm(*a, 2, 4, 5, 2, 1e-5), x, weight, None)


def test_group_norm_double_backward():
    # With grad mode on, PyTorch differentiates group norm through its composite
    # backward, which reaches the npy kernels of simpler ops.
    x, weight = make((2, 4, 3), torch.float64), make((4,), torch.float64, 1)

    def grad_of_grad(t, w):
        (grad,) = torch.autograd.grad(F.group_norm(t, 2, w).square().sum(), t, create_graph=True)
        return grad

    assert_backward_like_cpu(grad_of_grad, x, weight)


# --- empty inputs ---------------------------------------------------------------------

EMPTY = {
    "batch": ((0, 3, 4), lambda t, w, b: F.batch_norm(t, None, None, w, b, training=True)),
    "layer, no rows": ((0, 3, 4), lambda t, w, b: F.layer_norm(t, (4,))),
    "layer, empty rows": ((2, 3, 0), lambda t, w, b: aten.native_layer_norm(t, [0], None, None, 1e-5)),
    "group, no samples": ((0, 3, 4), lambda t, w, b: F.group_norm(t, 3, w, b)),
    "group, no values": ((2, 3, 0), lambda t, w, b: F.group_norm(t, 3, w, b)),
    # F.group_norm's composite refuses these since torch 2.14 before any kernel runs; the kernel too.
    "group, no values, kernel": ((2, 3, 0), lambda t, w, b: aten.native_group_norm(t, w, b, 2, 3, 0, 3, 1e-5)),
}


@pytest.mark.parametrize("name", EMPTY)
def test_empty_inputs(name):
    shape, fn = EMPTY[name]
    weight, bias = make((3,), torch.float32, 1), make((3,), torch.float32, 2)
    assert_backward_like_cpu(fn, make(shape, torch.float32), weight, bias)


def test_empty_input_to_batch_norm_directly():
    # Forward only: CPU's native_batch_norm_backward divides by zero (SIGFPE) on an
    # empty input, which F.batch_norm never gives it (_batch_norm_impl_index_backward
    # answers empty inputs itself).
    def step(t):
        return aten.native_batch_norm(t, None, None, *running_stats(3, t.dtype, t.device), False, 0.1, 1e-5)

    assert_like_cpu(step, make((0, 3, 4), torch.float32))


# --- refusals and errors --------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: F.batch_norm(t, None, None, training=True),
        lambda t: F.batch_norm(t, *(torch.ones(3, dtype=t.dtype, device=t.device),) * 2),
        lambda t: F.layer_norm(t, (4,)),
        lambda t: F.group_norm(t, 3),
        lambda t: F.instance_norm(t),
    ],
    ids=["batch-train", "batch-eval", "layer", "group", "instance"],
)
@pytest.mark.parametrize("dtype", [torch.int64, torch.bool, torch.complex64], ids=str)
def test_non_floating_inputs_are_refused_like_cpu(fn, dtype):
    assert_like_cpu(fn, make((2, 3, 4), dtype))


ERRORS = {
    "weight size": lambda x, p: F.batch_norm(x, None, None, p(4), p(3), training=True),
    "bias size": lambda x, p: F.batch_norm(x, None, None, p(3), p(2), training=True),
    "running_mean size": lambda x, p: F.batch_norm(x, p(4), p(3), training=False),
    "running_var size": lambda x, p: F.batch_norm(x, p(3), p(5), training=True),
    "one value per channel": lambda x, p: F.batch_norm(x[:1, :, :1], p(3), p(3), training=True),
    "one running statistic": lambda x, p: aten.native_batch_norm(x, None, None, None, p(3), False, 0.1, 1e-5),
    "double input, float weight": lambda x, p: F.batch_norm(x.double(), None, None, p(3), training=True),
    "float input, half weight": lambda x, p: F.batch_norm(x, None, None, p(3).half(), training=True),
    "half input, float weight, half bias": lambda x, p: F.batch_norm(
        x.half(), None, None, p(3), p(3).half(), training=True
    ),
    "half weight and float stats": lambda x, p: aten.native_batch_norm(
        x.half(), p(3).half(), None, p(3), p(3), True, 0.1, 1e-5
    ),
    "empty input, directly": lambda x, p: aten.native_batch_norm(x[:0], None, None, None, None, True, 0.1, 1e-5),
    "1-d input, directly": lambda x, p: aten.native_batch_norm(x[0, 0], None, None, None, None, True, 0.1, 1e-5),
    "module channels": lambda x, p: torch.nn.BatchNorm1d(4).to(x.device)(x),
    "layer shape": lambda x, p: F.layer_norm(x, (3,)),
    "layer weight": lambda x, p: F.layer_norm(x, (4,), p(3)),
    "layer bias": lambda x, p: F.layer_norm(x, (3, 4), None, p(3)),
    "layer empty shape": lambda x, p: aten.native_layer_norm(x, [], None, None, 1e-5),
    "layer mixed": lambda x, p: F.layer_norm(x.double(), (4,), p(4)),
    "layer bias dtype": lambda x, p: F.layer_norm(x, (4,), p(4), p(4).double()),
    "group divisible": lambda x, p: F.group_norm(x, 2),
    "group zero": lambda x, p: aten.native_group_norm(x, None, None, 2, 3, 4, 0, 1e-5),
    "group weight": lambda x, p: F.group_norm(x, 3, p(4)),
    "group bias": lambda x, p: F.group_norm(x, 3, None, p(2)),
    "group sizes": lambda x, p: aten.native_group_norm(x, None, None, 2, 3, 5, 3, 1e-5),
    "group mixed": lambda x, p: F.group_norm(x, 3, p(3).half()),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_like_cpu(name):
    x = make((2, 3, 4), torch.float32)

    def fn(t):
        return ERRORS[name](t, lambda size: torch.ones(size, device=t.device))

    with pytest.raises(Exception):
        fn(x)
    assert_like_cpu(fn, x)


def test_backward_refusals_like_cpu():
    x = make((2, 3, 4), torch.float32)
    mean, rstd = x.mean(-1, keepdim=True), x.var(-1, unbiased=False, keepdim=True).rsqrt()
    assert_same_error(
        lambda *a: aten.native_layer_norm_backward(*a, None, None, [True, True, False]),
        x,
        x,
        [4],
        mean,
        rstd,
        match="tensor does not have a device",
    )
    assert_same_error(
        lambda *a: aten.native_layer_norm_backward(*a, None, None, [True, False, False]),
        x.double(),
        x,
        [4],
        mean,
        rstd,
        match="expected scalar type Float but found Double",
    )
    group_mean, group_rstd = x.mean(-1), x.var(-1, unbiased=False).rsqrt()
    assert_same_error(
        lambda *a: aten.native_group_norm_backward(*a, None, 2, 3, 4, 3, [True, False, False]),
        x.double(),
        x,
        group_mean,
        group_rstd,
        match="Expected scalar types of X and dY are same.",
    )
    assert_same_error(
        lambda g, t: aten.native_batch_norm_backward(g, t, None, None, None, None, None, True, 1e-5, [True] * 3),
        x.long(),
        x.long(),
        match="not implemented for 'Long'",
    )


# --- weight norm ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape, dim", [((3, 4, 5), 0), ((3, 4, 5), 2), ((6,), 0), ((3, 0), 0), ((2, 3), 1)])
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
def test_weight_norm_interface_and_backward_like_cpu(shape, dim, dtype):
    v = make(shape, dtype)
    g = make([size if axis == dim else 1 for axis, size in enumerate(shape)], dtype, seed=1)
    for got, want in zip(
        aten._weight_norm_interface(v.to("npy"), g.to("npy"), dim), aten._weight_norm_interface(v, g, dim)
    ):
        assert (got.dtype, got.shape, got.stride()) == (want.dtype, want.shape, want.stride())
        torch.testing.assert_close(
            got.cpu(),
            want,
            rtol=1e-3 if dtype == torch.float16 else None,
            atol=1e-3 if dtype == torch.float16 else None,
        )
    assert_backward_like_cpu(
        lambda v, g: torch._weight_norm(v, g, dim),
        v,
        g,
        **({"rtol": 1e-2, "atol": 1e-2} if dtype == torch.float16 else {}),
    )


def test_weight_norm_parametrization_trains_like_cpu():
    assert_layer_trains_like_cpu(lambda: torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(4, 3)))


def _weight_norm_inputs():
    v, g = make((3, 4), torch.float32), make((3, 1), torch.float32, seed=1)
    _, norms = aten._weight_norm_interface(v, g, 0)
    return v, g, norms


WEIGHT_NORM_ERRORS = [
    (lambda v, g, n: aten._weight_norm_interface(v.long(), g.long(), 0), "not implemented for 'Long'"),
    (lambda v, g, n: aten._weight_norm_interface(v, g.double(), 0), "expected scalar type Float but found Double"),
    (lambda v, g, n: aten._weight_norm_interface(v.half(), g, 0), "expected scalar type Half but found Float"),
    (lambda v, g, n: aten._weight_norm_interface(v[None], g[None], 1), "fused kernels can only be applied"),
    (
        lambda v, g, n: aten._weight_norm_interface_backward(v, v.t().contiguous().t(), g, n, 0),
        "saved_v must be contiguous",
    ),
    (
        lambda v, g, n: aten._weight_norm_interface_backward(v.double(), v, g, n, 0),
        "expected scalar type Float but found Double",
    ),
    (
        lambda v, g, n: aten._weight_norm_interface_backward(v.half(), v.half(), g.half(), n.half(), 0),
        "expected scalar type Float but found Half",
    ),
    (
        lambda v, g, n: aten._weight_norm_interface_backward(v.long(), v.long(), g.long(), n.long(), 0),
        "not implemented for 'Long'",
    ),
]


@pytest.mark.parametrize("fn, match", WEIGHT_NORM_ERRORS, ids=[m for _, m in WEIGHT_NORM_ERRORS])
def test_weight_norm_errors_like_cpu(fn, match):
    assert_same_error(fn, *_weight_norm_inputs(), match=match)
