"""Activation modules and functions (``backend_pkg/ops/activations.py``) on npy against CPU: forward,
backward, in place, refused dtypes; softmax, gelu and the backward ops PyTorch calls directly. Every
test runs under the ``strict`` fixture: an op without an npy kernel fails it instead of running on CPU.
"""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from reference import (
    FLOAT_DTYPES,
    assert_backward_like_cpu,
    assert_like_cpu,
    assert_matches_cpu,
    assert_same_error,
    assert_writes_out_like_cpu,
    exact_data,
    make,
    npy,
)

import backend_pkg

aten = torch.ops.aten

MODULES = {
    "leaky_relu": lambda: nn.LeakyReLU(0.2),
    "silu": nn.SiLU,
    "elu": lambda: nn.ELU(0.7),
    "selu": nn.SELU,
    "celu": lambda: nn.CELU(0.5),
    "hardtanh": lambda: nn.Hardtanh(-0.5, 2.0),
    "relu6": nn.ReLU6,
    "softplus": lambda: nn.Softplus(beta=2, threshold=3),
    "hardswish": nn.Hardswish,
    "hardsigmoid": nn.Hardsigmoid,
    "mish": nn.Mish,
    "log_sigmoid": nn.LogSigmoid,
    "glu": lambda: nn.GLU(1),
    "threshold": lambda: nn.Threshold(0.5, -2.0),
    "softshrink": lambda: nn.Softshrink(0.5),
    "hardshrink": lambda: nn.Hardshrink(0.5),
}

IN_PLACE_MODULES = {
    "leaky_relu": lambda: nn.LeakyReLU(0.2, inplace=True),
    "silu": lambda: nn.SiLU(inplace=True),
    "elu": lambda: nn.ELU(0.7, inplace=True),
    "selu": lambda: nn.SELU(inplace=True),
    "celu": lambda: nn.CELU(0.5, inplace=True),
    "hardtanh": lambda: nn.Hardtanh(-0.5, 2.0, inplace=True),
    "relu6": lambda: nn.ReLU6(inplace=True),
    "hardswish": lambda: nn.Hardswish(inplace=True),
    "hardsigmoid": lambda: nn.Hardsigmoid(inplace=True),
    "mish": lambda: nn.Mish(inplace=True),
    "threshold": lambda: nn.Threshold(0.5, -2.0, inplace=True),
}

# Values on and around every kink and threshold of the modules above
# (0, ±0.5, ±1, ±2, ±3, softplus's threshold 3/beta = 1.5), and large ones.
EDGES = torch.tensor([-30.0, -3.0, -2.5, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 30.0, float("nan")])


# CPU's scalar loops for these round each half-precision step (c10::Half
# arithmetic), and the backward of silu and mish reaches npy as PyTorch's
# composite, whose steps round in half; npy's kernels compute in float32 and
# round once. A few half ulps apart.
HALF_STEPS_ROUNDED = {"hardswish", "glu", "silu", "mish"}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("name", MODULES)
def test_modules_forward_and_backward(strict, name, dtype):
    module = MODULES[name]()
    loose = dtype == torch.float16 and name in HALF_STEPS_ROUNDED
    assert_backward_like_cpu(module, make((4, 6), dtype), **({"atol": 4e-3, "rtol": 4e-3} if loose else {}))


@pytest.mark.parametrize("name", MODULES)
def test_modules_at_their_kinks(strict, name):
    module = MODULES[name]()
    assert_backward_like_cpu(module, EDGES.reshape(-1, 1).expand(-1, 2).contiguous().double())


@pytest.mark.parametrize("name", IN_PLACE_MODULES)
def test_in_place_modules_write_into_their_input(strict, name):
    x = make((3, 4), torch.float32)
    on_npy = npy(x)
    result = IN_PLACE_MODULES[name]()(on_npy)
    assert result is on_npy
    torch.testing.assert_close(on_npy.cpu(), MODULES[name]()(x))


@pytest.mark.parametrize("name", IN_PLACE_MODULES)
def test_in_place_modules_backward(strict, name):
    # In place on a non-leaf, as inside a network; the gradient flows through the in-place op.
    assert_backward_like_cpu(lambda x: IN_PLACE_MODULES[name]()(x * 1), make((3, 4), torch.float64))


@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 5), (2, 3, 4, 4)])
def test_prelu_gradient_of_input_and_weight(strict, channels, shape):
    weight = torch.tensor([0.25, -0.5, 2.0][:channels], dtype=torch.float64)
    assert_backward_like_cpu(F.prelu, make(shape, torch.float64), weight)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_prelu_module(strict, dtype):
    module = nn.PReLU(3, init=0.1).to(dtype)
    on_npy = nn.PReLU(3, init=0.1).to(dtype).to("npy")
    x = make((2, 3, 4), dtype)
    cpu_x, npy_x = x.clone().requires_grad_(), npy(x).requires_grad_()
    module(cpu_x).sum().backward()
    on_npy(npy_x).sum().backward()
    torch.testing.assert_close(npy_x.grad.cpu(), cpu_x.grad)
    torch.testing.assert_close(on_npy.weight.grad.cpu(), module.weight.grad)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_glu_along_any_dim(strict, dim):
    assert_backward_like_cpu(lambda x: F.glu(x, dim), make((4, 6, 2), torch.float64))


def test_log_sigmoid_forward_returns_cpu_buffer(strict):
    assert_like_cpu(aten.log_sigmoid_forward, make((3, 5), torch.float32))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_rrelu_in_evaluation_is_leaky_relu_with_the_mean_slope(strict, dtype):
    assert_backward_like_cpu(lambda x: F.rrelu(x, 0.1, 0.3, training=False), make((4, 6), dtype))


@pytest.mark.parametrize("in_place", [False, True])
def test_rrelu_in_training_draws_slopes_between_its_bounds(strict, in_place):
    # npy draws from its own generator, so the slopes are checked, not compared with CPU's.
    x = npy(make((50, 40), torch.float64)).requires_grad_()

    def rrelu(t):
        return F.rrelu_(t * 1, 0.1, 0.3, training=True) if in_place else F.rrelu(t, 0.1, 0.3, training=True)

    torch.manual_seed(0)
    y = rrelu(x)
    y.sum().backward()
    slopes = (y / x).detach().cpu()
    negative = x.detach().cpu() < 0
    assert torch.equal(slopes[~negative], torch.ones_like(slopes[~negative]))
    assert slopes[negative].min() >= 0.1 and slopes[negative].max() < 0.3
    assert slopes[negative].std() > 0.04  # drawn, not one slope
    torch.testing.assert_close(x.grad.cpu(), slopes)
    torch.manual_seed(0)
    torch.testing.assert_close(rrelu(x).detach().cpu(), y.detach().cpu())


RRELU_ERRORS = {
    "noise shape": lambda x, noise: aten.rrelu_with_noise(x, noise[0], 0.1, 0.3, True),
    "noise dtype": lambda x, noise: aten.rrelu_with_noise(x, noise.double(), 0.1, 0.3, True),
    "lower above upper": lambda x, noise: aten.rrelu_with_noise(x, noise, 0.5, 0.1, True),
    "half while training": lambda x, noise: aten.rrelu_with_noise(x.half(), noise.half(), 0.1, 0.3, True),
    "integers in evaluation": lambda x, noise: aten.rrelu_with_noise(x.long(), noise.long()),
}


@pytest.mark.parametrize("case", RRELU_ERRORS)
def test_rrelu_errors_match_cpu(strict, case):
    assert_like_cpu(RRELU_ERRORS[case], make((3, 4), torch.float32), torch.empty(3, 4))


FUNCTIONS = {
    "leaky_relu": F.leaky_relu,
    "silu": F.silu,
    "elu": F.elu,
    "softplus": F.softplus,
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "mish": F.mish,
    "log_sigmoid": F.logsigmoid,
    "glu": F.glu,
    "prelu": lambda x: F.prelu(x, torch.ones(1, dtype=x.dtype, device=x.device)),
    "softshrink": F.softshrink,
    "hardshrink": F.hardshrink,
}


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool, torch.complex64], ids=str)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_non_floating_inputs_refused_like_cpu(strict, name, dtype):
    assert_like_cpu(FUNCTIONS[name], make((2, 4), dtype))


BACKWARDS = {
    "hardtanh_backward": lambda grad, x: aten.hardtanh_backward(grad, x, -1, 1),
    "hardsigmoid_backward": aten.hardsigmoid_backward,
    "hardswish_backward": aten.hardswish_backward,
    "softplus_backward": lambda grad, x: aten.softplus_backward(grad, x, 1, 20),
    "log_sigmoid_backward": lambda grad, x: aten.log_sigmoid_backward(grad, x, x),
    "softshrink_backward": lambda grad, x: aten.softshrink_backward(grad, x, 0.5),
    "hardshrink_backward": lambda grad, x: aten.hardshrink_backward(grad, x, 0.5),
    "leaky_relu_backward": lambda grad, x: aten.leaky_relu_backward(grad, x, 0.1, False),
    "elu_backward": lambda grad, x: aten.elu_backward(grad, 1.0, 1.0, 1.0, False, x),
    "glu_backward": lambda grad, x: aten.glu_backward(grad[:, :2], x, 1),
    "prelu_backward": lambda grad, x: aten._prelu_kernel_backward(
        grad, x, torch.ones(1, dtype=x.dtype, device=x.device)
    ),
    "threshold_backward": lambda grad, x: aten.threshold_backward(grad, x, 0.5),
    "sigmoid_backward": aten.sigmoid_backward,
    "tanh_backward": aten.tanh_backward,
}
# Operand dtypes (grad's, self's): one non-floating dtype, or two dtypes, which some backwards refuse to mix.
_BACKWARD_DTYPES = [
    *((dtype, dtype) for dtype in (torch.int64, torch.bool, torch.complex64)),
    (torch.int64, torch.bool),
    (torch.float32, torch.int64),
    (torch.int64, torch.float32),
    (torch.float16, torch.float64),
]


@pytest.mark.parametrize("grad_dtype, dtype", _BACKWARD_DTYPES, ids=str)
@pytest.mark.parametrize("name", BACKWARDS)
def test_backwards_refuse_operands_like_cpu(strict, name, grad_dtype, dtype):
    """Each refusal reads as CPU's, word for word: the kernel it names is CPU's, which for some is another op's."""
    grad, x = make((2, 4), grad_dtype), make((2, 4), dtype, seed=1)
    try:
        expected = BACKWARDS[name](grad, x)
    except Exception as cpu_error:  # noqa: BLE001 - the error is what is compared
        with pytest.raises(type(cpu_error)) as npy_error:
            BACKWARDS[name](npy(grad), npy(x))
        assert str(npy_error.value) == str(cpu_error)
        return
    assert_matches_cpu(BACKWARDS[name](npy(grad), npy(x)), expected)


def test_silu_of_complex_numbers(strict):
    assert_like_cpu(F.silu, make((3, 4), torch.complex128))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool, torch.complex64], ids=str)
@pytest.mark.parametrize("limits", [(-1.5, 2.7), (0, 6)])
def test_hardtanh_of_integers_clamps_like_cpu(strict, dtype, limits):
    assert_like_cpu(lambda x: F.hardtanh(x, *limits), make((3, 4), dtype))


@pytest.mark.parametrize(
    "dtype", [torch.int64, torch.int32, torch.uint8, torch.int8, torch.float16, torch.float32], ids=str
)
@pytest.mark.parametrize(
    "limits",
    # The float limits: a threshold of half is read as float, its value as half; 127.5 into int8.
    [(2.7, 1.5), (-1, 300), (-256, 3), (2**31, 0), (-9, -129), (70000.0, 0), (0, 70000.0), (1e300, 0), (127.5, 0)],
    ids=str,
)
def test_threshold_converts_its_scalars_like_cpu(strict, dtype, limits):
    assert_like_cpu(lambda x: F.threshold(x, *limits), make((3, 4), dtype))


@pytest.mark.parametrize("dtype", [torch.bool, torch.complex64, torch.uint16], ids=str)
def test_threshold_refuses_dtypes_like_cpu(strict, dtype):
    assert_like_cpu(lambda x: F.threshold(x, 0, 1), make((3, 4), dtype))


ERRORS = {
    "glu of a scalar": (lambda x: F.glu(x[0, 0]),),
    "glu of an odd dim": (lambda x: F.glu(x, 0),),
    "glu dim out of range": (lambda x: F.glu(x, 2),),
    "in-place leaky_relu backward, negative slope": (lambda x: F.leaky_relu_(x * 1, -0.1).sum().backward(),),
    "in-place elu backward, negative alpha": (lambda x: F.elu_(x * 1, -0.5).sum().backward(),),
    "in-place into an integer tensor": (lambda x: F.leaky_relu_(x.long()),),
    "softshrink negative lambda": (lambda x: F.softshrink(x, -1.0),),
    "softshrink negative lambda, double": (lambda x: F.softshrink(x.double(), -0.25),),
    "softshrink negative lambda, half": (lambda x: F.softshrink(x.half(), -1.0),),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_match_cpu(strict, case):
    (fn,) = ERRORS[case]
    assert_like_cpu(fn, make((3, 4), torch.float32).requires_grad_())


OUT_VARIANTS = {
    "leaky_relu": lambda x, out: torch._C._nn.leaky_relu(x, 0.3, out=out),
    "elu": lambda x, out: torch._C._nn.elu(x, out=out),
    "hardtanh": lambda x, out: torch._C._nn.hardtanh(x, -1, 1, out=out),
    "softplus": lambda x, out: torch._C._nn.softplus(x, out=out),
    "glu": lambda x, out: torch._C._nn.glu(x, out=out),
    "hardswish_backward": lambda x, out: aten.hardswish_backward.out(x, x, out=out),
    "softplus_backward": lambda x, out: aten.softplus_backward.grad_input(x, x, 1, 20, grad_input=out),
    "softmax": lambda x, out: aten._softmax.out(x, 1, False, out=out),
    "log_softmax": lambda x, out: aten._log_softmax.out(x, 0, False, out=out),
    "softmax_backward": lambda x, out: aten._softmax_backward_data.out(x, x * 0.125, 0, torch.float32, grad_input=out),
    "log_softmax_backward": lambda x, out: aten._log_softmax_backward_data.out(x, x * 0.125, 1, torch.float32, out=out),
    "threshold_backward": lambda x, out: aten.threshold_backward.grad_input(x, x, 1, grad_input=out),
    "sigmoid_backward": lambda x, out: aten.sigmoid_backward.grad_input(x, x, grad_input=out),
    "tanh_backward": lambda x, out: aten.tanh_backward.grad_input(x, x, grad_input=out),
    "gelu": lambda x, out: aten.gelu.out(x, approximate="tanh", out=out),
    "gelu_backward": lambda x, out: aten.gelu_backward.grad_input(x, x, grad_input=out),
}


@pytest.mark.parametrize("name", OUT_VARIANTS)
def test_out_variants_write_into_out(strict, name):
    assert_writes_out_like_cpu(OUT_VARIANTS[name], make((3, 4), torch.float32))


OUT_OF_ANOTHER_DTYPE = {
    "leaky_relu": lambda x, out: torch._C._nn.leaky_relu(x, 0.3, out=out),
    "silu": lambda x, out: torch._C._nn.silu(x, out=out),
    "hardtanh": lambda x, out: torch._C._nn.hardtanh(x, out=out),
    "log_sigmoid": lambda x, out: torch._C._nn.log_sigmoid(x, out=out),
    "glu": lambda x, out: torch._C._nn.glu(x, out=out),
    "threshold": lambda x, out: torch.threshold(x, 0.1, 2.0, out=out),
}


@pytest.mark.parametrize("out_dtype", [torch.float64, torch.float16], ids=str)
@pytest.mark.parametrize("name", OUT_OF_ANOTHER_DTYPE)
def test_out_of_another_dtype_like_cpu(strict, name, out_dtype):
    assert_like_cpu(OUT_OF_ANOTHER_DTYPE[name], make((3, 4), torch.float32), torch.empty(0, dtype=out_dtype))


def test_kernels_are_registered():
    registered = set(backend_pkg.ops.registered_ops())
    for op in ["leaky_relu_", "hardtanh_", "elu_", "hardswish_", "log_sigmoid_forward.output", "_prelu_kernel"]:
        assert f"aten::{op}" in registered, op


# --- softmax, gelu and the backward ops PyTorch calls directly ------------------------------

ACTIVATIONS = {
    "relu": lambda g, x: torch.relu(x),
    "gelu": lambda g, x: F.gelu(x),
    "gelu_tanh": lambda g, x: F.gelu(x, approximate="tanh"),
    "gelu_backward": lambda g, x: aten.gelu_backward(g, x),
    "gelu_backward_tanh": lambda g, x: aten.gelu_backward(g, x, approximate="tanh"),
    "threshold_backward": lambda g, x: aten.threshold_backward(g, x, 0),
    "threshold_backward_1.5": lambda g, x: aten.threshold_backward(g, x, 1.5),
    "sigmoid_backward": lambda g, x: aten.sigmoid_backward(g, x),
    "tanh_backward": lambda g, x: aten.tanh_backward(g, x),
    "softmax_backward": lambda g, x: aten._softmax_backward_data(g, x, 1, g.dtype),
    "log_softmax_backward": lambda g, x: aten._log_softmax_backward_data(g, x, 0, g.dtype),
}


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activations_and_backward_ops(strict, name, dtype):
    assert_like_cpu(ACTIVATIONS[name], make((3, 4), dtype, 1), make((3, 4), dtype, 2))


# The softmax backwards take tensors of one size (CUDA checks it, CPU does not) and stay out.
ELEMENTWISE_ACTIVATIONS = [name for name in ACTIVATIONS if "softmax" not in name]


@pytest.mark.parametrize("name", ELEMENTWISE_ACTIVATIONS)
@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((4,), (3, 4)), ((3, 4), (3,))], ids=str)
def test_activations_and_backward_ops_broadcast_like_cpu(strict, name, shapes):
    """Shapes that broadcast give CPU's result; shapes that do not, CPU's error word for word."""
    first, second = shapes
    if name == "gelu_backward" and shapes != ((3, 4), (3,)):
        pytest.skip(
            "CPU's gelu_backward goes to oneDNN, which fails on shapes that broadcast: "
            "'could not create a primitive descriptor for the reorder primitive'"
        )
    assert_like_cpu(ACTIVATIONS[name], make(first, torch.float32, 1), make(second, torch.float32, 2))


def test_activations_keep_nan_and_promote_like_cpu(strict):
    x = torch.tensor([float("nan"), -1.0, 0.0, 2.0])
    assert_like_cpu(torch.relu, x)
    assert_like_cpu(lambda g, t: aten.threshold_backward(g, t, 0), torch.ones(4), x)
    assert_like_cpu(lambda g, t: aten.threshold_backward(g, t, 0), torch.ones(4, dtype=torch.float64), x)
    assert_like_cpu(lambda g, t: aten.sigmoid_backward(g, t), torch.ones(4, dtype=torch.float64), x)
    assert_like_cpu(lambda g, t: aten.gelu_backward(g, t), torch.ones(4), x)


def test_gelu_erf_is_accurate_in_double(strict):
    # npy maps math.erf over the elements; CPU uses its own erf: both within rounding of float64.
    x = torch.linspace(-8, 8, 1001, dtype=torch.float64)
    assert_like_cpu(F.gelu, x)
    assert_like_cpu(lambda g, t: aten.gelu_backward(g, t), torch.ones_like(x), x)


def test_softmax_of_extreme_values(strict):
    a = torch.tensor([[0.0, float("-inf")], [float("-inf"), float("-inf")], [1e4, -1e4], [float("inf"), 1.0]])
    for fn in (lambda t: aten._softmax(t, 1, False), lambda t: aten._log_softmax(t, 1, False)):
        assert_like_cpu(fn, a)


ACTIVATION_ERRORS = [
    (lambda t: aten._softmax(t.half(), 1, True), "half to float conversion is not supported"),
    (lambda t: aten._softmax(t, 2, False), "Dimension out of range"),
    (lambda t: aten._log_softmax(t.long(), 1, False), "not implemented for 'Long'"),
    (lambda t: aten._softmax_backward_data(t, t.T, 1, torch.float32), "to have same size as tensor for argument #2"),
    (
        lambda t: aten._softmax_backward_data(t, t.double(), 1, torch.float32),
        "expected scalar type Float but found Double",
    ),
    (lambda t: aten._log_softmax_backward_data(t, t, 1, torch.float16), "expected scalar type Float but found Half"),
    (lambda t: torch.relu(t.bool()), "Boolean inputs not supported for relu"),
    (lambda t: torch.relu(t.cfloat()), "clamp is not supported for complex types"),
    (lambda t: aten.threshold_backward(t.cfloat(), t.cfloat(), 0), "not implemented for 'ComplexFloat'"),
    (lambda t: aten.tanh_backward(t.long(), t.long()), "not implemented for 'Long'"),
    (lambda t: F.gelu(t, approximate="erf"), "approximate argument must be either none or tanh"),
    (lambda t: F.gelu(t.long()), "not implemented for 'Long'"),
]


@pytest.mark.parametrize("fn, match", ACTIVATION_ERRORS, ids=[m for _, m in ACTIVATION_ERRORS])
def test_activation_and_backward_op_errors_match_cpu(strict, fn, match):
    assert_same_error(fn, exact_data((3, 4), torch.float32).abs(), match=match)
