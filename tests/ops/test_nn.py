"""Softmax, gelu, the backward ops and the two losses of ``backend_pkg/ops/nn.py``: npy against CPU.

Most tests run one call on CPU tensors and on their npy copies and demand the
same outcome: equal results (device, dtype, shape, values), or the same error
(type and message; the quoted C++ kernel name in "not implemented for"
messages aside, since npy kernels are not CPU kernels).
"""

import pytest
import torch
import torch.nn.functional as F
from reference import (
    DTYPES,
    FLOAT_DTYPES,
    assert_like_cpu,
    assert_same_error,
    exact_data,
    labels,
    make,
)

aten = torch.ops.aten
NONE, MEAN, SUM = 0, 1, 2  # at::Reduction


# --- nn ops -----------------------------------------------------------------------

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
def test_activations_and_backward_ops(name, dtype):
    assert_like_cpu(ACTIVATIONS[name], make((3, 4), dtype, 1), make((3, 4), dtype, 2))


# The softmax backwards take tensors of one size (CUDA checks it, CPU does not) and stay out.
ELEMENTWISE_ACTIVATIONS = [name for name in ACTIVATIONS if "softmax" not in name]


@pytest.mark.parametrize("name", ELEMENTWISE_ACTIVATIONS)
@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((4,), (3, 4)), ((3, 4), (3,))], ids=str)
def test_activations_and_backward_ops_broadcast_like_cpu(name, shapes):
    """Shapes that broadcast give CPU's result; shapes that do not, CPU's error word for word."""
    first, second = shapes
    if name == "gelu_backward" and shapes != ((3, 4), (3,)):
        pytest.skip(
            "CPU's gelu_backward goes to oneDNN, which fails on shapes that broadcast: "
            "'could not create a primitive descriptor for the reorder primitive'"
        )
    assert_like_cpu(ACTIVATIONS[name], make(first, torch.float32, 1), make(second, torch.float32, 2))


def test_activations_keep_nan_and_promote_like_cpu():
    x = torch.tensor([float("nan"), -1.0, 0.0, 2.0])
    assert_like_cpu(torch.relu, x)
    assert_like_cpu(lambda g, t: aten.threshold_backward(g, t, 0), torch.ones(4), x)
    assert_like_cpu(lambda g, t: aten.threshold_backward(g, t, 0), torch.ones(4, dtype=torch.float64), x)
    assert_like_cpu(lambda g, t: aten.sigmoid_backward(g, t), torch.ones(4, dtype=torch.float64), x)
    assert_like_cpu(lambda g, t: aten.gelu_backward(g, t), torch.ones(4), x)


def test_gelu_erf_is_accurate_in_double():
    # npy maps math.erf over the elements; CPU uses its own erf: both within rounding of float64.
    x = torch.linspace(-8, 8, 1001, dtype=torch.float64)
    assert_like_cpu(F.gelu, x)
    assert_like_cpu(lambda g, t: aten.gelu_backward(g, t), torch.ones_like(x), x)


def test_softmax_of_extreme_values():
    a = torch.tensor([[0.0, float("-inf")], [float("-inf"), float("-inf")], [1e4, -1e4], [float("inf"), 1.0]])
    for fn in (lambda t: aten._softmax(t, 1, False), lambda t: aten._log_softmax(t, 1, False)):
        assert_like_cpu(fn, a)


def loss_data(dtype):
    """Logits and targets for nll tests: a quarter grid keeps half-precision sums exact."""
    logits = (make((6, 5), torch.float64, 1) * 4).round() / 4
    weight = make((5,), torch.float64, 2).abs().round().add(1)
    return logits.to(dtype), torch.tensor([0, 4, 2, 2, 3, 1]), weight.to(dtype)


@pytest.mark.parametrize("ignore_index", [-100, 2])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("reduction", [NONE, MEAN, SUM], ids=["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_nll_loss_forward_and_backward(dtype, reduction, weighted, ignore_index):
    logits, target, weight = loss_data(dtype)
    weight = weight if weighted else None
    output, total_weight = aten.nll_loss_forward(logits, target, weight, reduction, ignore_index)
    assert_like_cpu(
        lambda x, t, *w: aten.nll_loss_forward(x, t, *(w or [None]), reduction, ignore_index),
        logits,
        target,
        *([weight] if weighted else []),
    )
    grad = loss_data(dtype)[0][:, 0] if reduction == NONE else torch.tensor(0.5, dtype=dtype)
    assert_like_cpu(
        lambda g, x, t, tw, *w: aten.nll_loss_backward(g, x, t, *(w or [None]), reduction, ignore_index, tw),
        grad,
        logits,
        target,
        total_weight,
        *([weight] if weighted else []),
    )


@pytest.mark.parametrize("reduction", [NONE, MEAN, SUM], ids=["none", "mean", "sum"])
def test_nll_loss_of_one_unbatched_sample_and_of_images(reduction):
    logits, _, weight = loss_data(torch.float32)
    for target in (torch.tensor(3), torch.tensor([3]), torch.tensor(-100)):
        assert_like_cpu(lambda x, t: aten.nll_loss_forward(x, t, None, reduction, -100), logits[0], target)
    assert_like_cpu(
        lambda g, x, t: aten.nll_loss_backward(g, x, t, None, reduction, -100, torch.tensor(1.0).to(x.device)),
        torch.tensor(2.0),
        logits[0],
        torch.tensor(3),
    )
    images = make((2, 3, 4, 5), torch.float32)
    pixels = torch.randint(0, 3, (2, 4, 5), generator=torch.Generator().manual_seed(0))
    pixels[0, 0, 0] = -100
    output, total_weight = aten.nll_loss2d_forward(images, pixels, weight[:3], reduction, -100)
    assert_like_cpu(lambda x, t, w: aten.nll_loss2d_forward(x, t, w, reduction, -100), images, pixels, weight[:3])
    grad = make(output.shape, torch.float32, 3)
    assert_like_cpu(
        lambda g, x, t, tw: aten.nll_loss2d_backward(g, x, t, None, reduction, -100, tw),
        grad,
        images,
        pixels,
        total_weight,
    )


def test_nll_loss_with_every_target_ignored_is_nan_like_cpu():
    logits, _, _ = loss_data(torch.float32)
    target = torch.full((6,), 1)
    assert_like_cpu(lambda x, t: aten.nll_loss_forward(x, t, None, MEAN, 1), logits, target)
    assert_like_cpu(
        lambda x, t: aten.nll_loss_backward(
            torch.tensor(1.0).to(x.device), x, t, None, MEAN, 1, torch.tensor(0.0).to(x.device)
        ),
        logits,
        target,
    )


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("shape", [(6, 5), (2, 5, 3), (2, 5, 3, 2), (2, 5, 2, 2, 2)], ids=str)
def test_cross_entropy_of_any_rank(shape, reduction):
    logits = make(shape, torch.float32)
    target = torch.randint(0, 5, (shape[0], *shape[2:]), generator=torch.Generator().manual_seed(1))
    assert_like_cpu(lambda x, t: F.cross_entropy(x, t, reduction=reduction), logits, target)


@pytest.mark.parametrize("reduction", [NONE, MEAN, SUM], ids=["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_mse_loss_forward_and_backward(dtype, reduction):
    if dtype == torch.float16:
        x, y = (make((4, 8), torch.float64, s).mul(4).round().div(4).to(dtype) for s in (1, 2))  # exact in half
    else:
        x, y = make((4, 8), dtype, 1), make((4, 8), dtype, 2)
    assert_like_cpu(lambda a, b: aten.mse_loss(a, b, reduction), x, y)
    if dtype.is_floating_point:
        grad = y if reduction == NONE else torch.tensor(0.5, dtype=dtype)
        assert_like_cpu(lambda g, a, b: aten.mse_loss_backward(g, a, b, reduction), grad, x, y)


NN_ERRORS = [
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
    (lambda t: aten.mse_loss(t.long(), t.long()), "not implemented for 'Long'"),
    (lambda t: aten.nll_loss_forward(t, t[:, 0].int(), None, 1, -100), "expected target dtype to be Long or Byte"),
    (lambda t: aten.nll_loss_forward(t, labels(t, 0, 5, 1), None, 1, -100), "Target 5 is out of bounds"),
    (lambda t: aten.nll_loss_forward(t, labels(t, 0, -1, -100), None, 1, -100), "Target -1 is out of bounds"),
    (lambda t: aten.nll_loss_forward(t[None], t[:, 0].long(), None, 1, -100), "input tensor should be 1D or 2D"),
    (lambda t: aten.nll_loss_forward(t, t.long(), None, 1, -100), "0D or 1D target tensor expected"),
    (
        lambda t: aten.nll_loss_forward(t, t[:2, 0].long(), None, 1, -100),
        "size mismatch \\(got input: \\[3, 4\\], target: \\[2\\]\\)",
    ),
    (lambda t: aten.nll_loss_forward(t[0], t[:2, 0].long(), None, 1, -100), "1D target must have size 1"),
    (
        lambda t: aten.nll_loss_forward(t, t[0, 0].long(), None, 1, -100),
        "Dimension specified as 0 but tensor has no dimensions",
    ),
    (
        lambda t: aten.nll_loss_forward(t, t[:, 0].long(), t[0, :3], 1, -100),
        "weight tensor should be defined either for all 4 classes",
    ),
    (
        lambda t: aten.nll_loss_forward(t, t[:, 0].long(), t[0].double(), 1, -100),
        "expected scalar type Float but found Double",
    ),
    (lambda t: aten.nll_loss_forward(t.long(), t[:, 0].long(), None, 1, -100), "not implemented for 'Long'"),
    (
        lambda t: aten.nll_loss_backward(t[0], t, t[:, 0].long(), None, 1, -100, t[0, 0]),
        "Expected a single element grad_output tensor",
    ),
    (
        lambda t: aten.nll_loss_backward(t[0], t, t[:, 0].long(), None, 0, -100, t[0, 0]),
        "Expected a tensor of dimension 1 and tensor.size\\[0\\] == 3",
    ),
    (
        lambda t: aten.nll_loss_backward(t[0, 0], t, t[:, 0].long(), None, 1, -100, t[0]),
        "expected total_weight to be a  single element tensor",
    ),
    (
        lambda t: aten.nll_loss_backward(t[0, 0].double(), t, t[:, 0].long(), None, 1, -100, t[0, 0]),
        "expected scalar type Float but found Double",
    ),
    (lambda t: aten.nll_loss2d_forward(t, t.long(), None, 1, -100), "only batches of spatial targets supported"),
    (lambda t: aten.nll_loss2d_forward(t, t[None].long(), None, 1, -100), "only batches of spatial inputs supported"),
    (
        lambda t: aten.nll_loss2d_forward(t[None, None], t[None, :2].long(), None, 1, -100),
        "size mismatch \\(got input: \\[1, 1, 3, 4\\] , target: \\[1, 2, 4\\]",
    ),
]


@pytest.mark.parametrize("fn, match", NN_ERRORS, ids=[m for _, m in NN_ERRORS])
def test_nn_errors_match_cpu(fn, match):
    assert_same_error(fn, exact_data((3, 4), torch.float32).abs(), match=match)
