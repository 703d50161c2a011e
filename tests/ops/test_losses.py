"""Losses on npy against CPU: forward and gradients over reductions and dtypes, and errors.

Every test runs under the ``strict`` fixture, so an op without an npy kernel
fails the test instead of running PyTorch's CPU kernel.
"""

import copy

import pytest
import torch
import torch.nn.functional as F
from elementwise import BinaryOpChecks
from reference import (
    DTYPES,
    FLOAT_DTYPES,
    MEAN,
    NONE,
    SUM,
    assert_backward_like_cpu,
    assert_like_cpu,
    assert_same_error,
    assert_writes_out_like_cpu,
    assert_writes_two_outs_like_cpu,
    exact_data,
    labels,
    make,
    npy,
)

import backend_pkg

aten = torch.ops.aten
REDUCTIONS = ["none", "mean", "sum"]

# PyTorch's CPU loops and composites for these losses round every half
# precision step (c10::Half arithmetic); npy computes in float32 and rounds
# once. Results agree to a few half ulps.
HALF_STEPS_ROUNDED = {"atol": 4e-3, "rtol": 4e-3}


def tolerance(dtype):
    return HALF_STEPS_ROUNDED if dtype == torch.float16 else {}


def on_device_of(tensor, optional):
    return None if optional is None else optional.to(tensor.device)


def probabilities(shape, dtype, seed=0):
    return make(shape, torch.float64, seed).sigmoid().to(dtype)


# --- binary cross entropy -------------------------------------------------------------


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(strict, reduction, dtype, weighted):
    weight = probabilities((5,), dtype, seed=2) if weighted else None
    assert_backward_like_cpu(
        lambda x, y: F.binary_cross_entropy(x, y, weight=on_device_of(x, weight), reduction=reduction),
        probabilities((4, 5), dtype),
        probabilities((4, 5), dtype, seed=1),
        **tolerance(dtype),
    )


def test_binary_cross_entropy_at_zero_and_one(strict):
    # log(0) is clamped at -100, and the gradient's denominator at 1e-12.
    x = torch.tensor([0.0, 1.0, 0.0, 1.0, 0.5, 1e-30], dtype=torch.float64)
    y = torch.tensor([0.0, 1.0, 1.0, 0.0, 0.5, 1.0], dtype=torch.float64)
    assert_backward_like_cpu(lambda x, y: F.binary_cross_entropy(x, y, reduction="none"), x, y)


@pytest.mark.parametrize("pos_weighted", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits(strict, reduction, dtype, weighted, pos_weighted):
    weight = probabilities((4, 1), dtype, seed=2) if weighted else None
    pos_weight = probabilities((5,), dtype, seed=3) * 3 if pos_weighted else None

    def loss(x, y):
        weights = on_device_of(x, weight), on_device_of(x, pos_weight)
        return F.binary_cross_entropy_with_logits(x, y, weights[0], reduction=reduction, pos_weight=weights[1])

    assert_backward_like_cpu(loss, make((4, 5), dtype), probabilities((4, 5), dtype, seed=1), **tolerance(dtype))


def test_binary_cross_entropy_with_logits_of_large_logits(strict):
    x = torch.tensor([-800.0, -30.0, 0.0, 30.0, 800.0], dtype=torch.float64)
    assert_backward_like_cpu(
        lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction="none"),
        x,
        torch.full((5,), 0.25, dtype=torch.float64),
    )


BCE_ERRORS = {
    "input above 1": (lambda x, y: F.binary_cross_entropy(x + 1, y), probabilities((3, 4), torch.float32)),
    "input below 0": (lambda x, y: F.binary_cross_entropy(x - 1, y), probabilities((3, 4), torch.float32)),
    "target above 1": (lambda x, y: F.binary_cross_entropy(x, y + 1), probabilities((3, 4), torch.float32)),
    "input nan": (lambda x, y: F.binary_cross_entropy(x * torch.nan, y), probabilities((3, 4), torch.float32)),
    "target shape": (lambda x, y: aten.binary_cross_entropy(x, y[:2]), probabilities((3, 4), torch.float32)),
    "target dtype": (lambda x, y: aten.binary_cross_entropy(x, y.double()), probabilities((3, 4), torch.float32)),
    "weight shape": (
        lambda x, y: aten.binary_cross_entropy(x, y, torch.ones(5, device=x.device)),
        probabilities((3, 4), torch.float32),
    ),
    "weight broadcast past the input": (
        lambda x, y: aten.binary_cross_entropy(x, y, torch.ones(2, 3, 4, device=x.device)),
        probabilities((3, 4), torch.float32),
    ),
    "integer input": (
        lambda x, y: aten.binary_cross_entropy(x.long(), y.long()),
        probabilities((3, 4), torch.float32),
    ),
    "backward grad dtype": (
        lambda x, y: aten.binary_cross_entropy_backward(torch.ones((), dtype=torch.float64).to(x.device), x, y),
        probabilities((3, 4), torch.float32),
    ),
    "logits integer input": (
        lambda x, y: F.binary_cross_entropy_with_logits(x.long(), y),
        probabilities((3, 4), torch.float32),
    ),
    "logits integer target": (
        lambda x, y: aten.binary_cross_entropy_with_logits(x, y.long()),
        probabilities((3, 4), torch.float32),
    ),
    "logits target shape": (
        lambda x, y: aten.binary_cross_entropy_with_logits(x, y[0]),
        probabilities((3, 4), torch.float32),
    ),
    "logits pos_weight shape": (
        lambda x, y: F.binary_cross_entropy_with_logits(x, y, pos_weight=torch.ones(5, device=x.device)),
        probabilities((3, 4), torch.float32),
    ),
}


@pytest.mark.parametrize("case", BCE_ERRORS)
def test_binary_cross_entropy_errors_match_cpu(strict, case):
    fn, x = BCE_ERRORS[case]
    assert_like_cpu(fn, x, probabilities(x.shape, x.dtype, seed=1))


# --- smooth L1, Huber, L1, KL divergence ----------------------------------------------------

DISTANCE_LOSSES = {
    "smooth_l1": lambda x, y, r: F.smooth_l1_loss(x, y, reduction=r),
    "smooth_l1_beta": lambda x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=2.5),
    "smooth_l1_beta0": lambda x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=0.0),
    "huber": lambda x, y, r: F.huber_loss(x, y, reduction=r),
    "huber_delta": lambda x, y, r: F.huber_loss(x, y, reduction=r, delta=0.3),
    "l1": lambda x, y, r: F.l1_loss(x, y, reduction=r),
    "mse": lambda x, y, r: F.mse_loss(x, y, reduction=r),
}


# Those whose CPU kernels round the half-precision difference before squaring it.
SQUARING_IN_HALF = {"smooth_l1", "smooth_l1_beta", "mse"}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", DISTANCE_LOSSES)
def test_distance_losses(strict, name, reduction, dtype):
    fn = DISTANCE_LOSSES[name]
    x, y = make((4, 5), dtype), make((4, 5), dtype, seed=1)
    loose = tolerance(dtype) if name in SQUARING_IN_HALF else {}
    assert_backward_like_cpu(lambda x, y: fn(x, y, reduction), x, y, **loose)


@pytest.mark.parametrize("name", DISTANCE_LOSSES)
def test_distance_losses_on_their_kinks(strict, name):
    # Differences of exactly 0, ±0.3 (delta), ±1 (beta) and ±2.5.
    x = torch.tensor([0.0, 0.3, -0.3, 1.0, -1.0, 2.5, -2.5, 4.0], dtype=torch.float64)
    assert_backward_like_cpu(lambda x, y: DISTANCE_LOSSES[name](x, y, "none"), x, torch.zeros_like(x))


@pytest.mark.filterwarnings("ignore:reduction. .mean. divides")
@pytest.mark.parametrize("reduction", ["none", "batchmean", "sum", "mean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(strict, reduction, log_target):
    target = make((4, 5), torch.float64, seed=1)
    target = target.log_softmax(1) if log_target else target.softmax(1)
    target[0, 0] = -torch.inf if log_target else 0.0  # a zero probability: 0 log 0 is 0
    assert_backward_like_cpu(
        lambda x, y: F.kl_div(x, y, reduction=reduction, log_target=log_target),
        make((4, 5), torch.float64).log_softmax(1),
        target,
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
def test_xlogy(strict, dtype):
    x = torch.tensor([0, 0, 1, 2, 3]).to(dtype)
    y = torch.tensor([0.0, torch.nan, 0.0, 2.0, -1.0])
    assert_like_cpu(torch.xlogy, x, y)
    assert_like_cpu(torch.xlogy, x, y.to(dtype))
    assert_like_cpu(lambda x, y: torch.xlogy(x, 2.5), x, y)


DISTANCE_ERRORS = {
    "smooth_l1 negative beta": lambda x, y: F.smooth_l1_loss(x, y, beta=-1.0),
    "huber zero delta": lambda x, y: F.huber_loss(x, y, delta=0.0),
    "smooth_l1 target shape": lambda x, y: aten.smooth_l1_loss(x, y[:2]),
    "huber target shape": lambda x, y: aten.huber_loss(x, y[:2]),
    "huber target past the input": lambda x, y: aten.huber_loss(x[:1], y),
    "smooth_l1 integers": lambda x, y: aten.smooth_l1_loss(x.long(), y.long()),
    "huber integers": lambda x, y: aten.huber_loss(x.long(), y.long()),
    "huber backward of mixed dtypes": lambda x, y: F.huber_loss(x.requires_grad_(), y.double()).backward(),
    "smooth_l1 of mixed dtypes": lambda x, y: aten.smooth_l1_loss(x, y.double()),
    "smooth_l1 backward of mixed dtypes": lambda x, y: aten.smooth_l1_loss_backward(
        torch.ones(()).to(x.device), x, y.double(), 1, 1.0
    ),
}


@pytest.mark.parametrize("case", DISTANCE_ERRORS)
def test_distance_loss_errors_match_cpu(strict, case):
    assert_like_cpu(DISTANCE_ERRORS[case], make((3, 4), torch.float32), make((3, 4), torch.float32, seed=1))


# --- multi-class margin losses --------------------------------------------------------------

MARGIN_LABELS = torch.tensor([0, 3, 1, 1, 2])
# Each row's labels run to its first -1; a repeated label counts twice, as in PyTorch.
MULTILABELS = torch.tensor([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 2, 0, 1], [2, 2, -1, 0], [0, -1, 3, 3]])


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multi_margin_loss(strict, reduction, dtype, p, weighted):
    weight = probabilities((4,), dtype, seed=2) if weighted else None
    assert_backward_like_cpu(
        lambda x: F.multi_margin_loss(
            x, MARGIN_LABELS.to(x.device), p=p, margin=2.5, weight=on_device_of(x, weight), reduction=reduction
        ),
        make((5, 4), dtype),
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(strict, reduction, dtype):
    # Scores within the margin of each other, so that most pairs count.
    scores = make((5, 4), dtype) / 4
    assert_backward_like_cpu(
        lambda x: F.multilabel_margin_loss(x, MULTILABELS.to(x.device), reduction=reduction), scores
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_losses_of_one_sample(strict, reduction):
    scores = make((4,), torch.float64) / 4
    label = torch.tensor(2)
    assert_backward_like_cpu(lambda x: F.multi_margin_loss(x, label.to(x.device), reduction=reduction), scores)
    assert_backward_like_cpu(
        lambda x: F.multilabel_margin_loss(x, MULTILABELS[0].to(x.device), reduction=reduction), scores
    )


MARGIN_ERRORS = {
    "multi_margin 3-d input": lambda x: aten.multi_margin_loss(x[None], MARGIN_LABELS.to(x.device)),
    "multi_margin p 3": lambda x: F.multi_margin_loss(x, MARGIN_LABELS.to(x.device), p=3),
    "multi_margin target size": lambda x: F.multi_margin_loss(x, MARGIN_LABELS[:4].to(x.device)),
    "multi_margin target out of range": lambda x: F.multi_margin_loss(x, (MARGIN_LABELS + 1).to(x.device)),
    "multi_margin negative target": lambda x: F.multi_margin_loss(x, (MARGIN_LABELS - 1).to(x.device)),
    "multi_margin weight size": lambda x: F.multi_margin_loss(x, MARGIN_LABELS.to(x.device), weight=x[0, :3]),
    "multi_margin half": lambda x: F.multi_margin_loss(x.half(), MARGIN_LABELS.to(x.device)),
    "multi_margin integers": lambda x: aten.multi_margin_loss(x.long(), MARGIN_LABELS.to(x.device)),
    "multi_margin int32 target": lambda x: aten.multi_margin_loss(x, MARGIN_LABELS.int().to(x.device)),
    "multilabel target size": lambda x: F.multilabel_margin_loss(x, MULTILABELS[:4].to(x.device)),
    "multilabel target out of range": lambda x: F.multilabel_margin_loss(x, (MULTILABELS + 1).to(x.device)),
    "multilabel target below -1": lambda x: F.multilabel_margin_loss(x, (MULTILABELS - 1).to(x.device)),
    "multilabel half": lambda x: F.multilabel_margin_loss(x.half(), MULTILABELS.to(x.device)),
    "multilabel backward is_target size": lambda x: aten.multilabel_margin_loss_backward(
        x[0, 0], x, MULTILABELS.to(x.device), 1, x[:4]
    ),
    "multilabel backward is_target values": lambda x: aten.multilabel_margin_loss_backward(
        x[0, 0], x, MULTILABELS.to(x.device), 1, x
    ),
    "multilabel backward grad size": lambda x: aten.multilabel_margin_loss_backward(
        x[:4, 0], x, MULTILABELS.to(x.device), 0, (x > 0).float()
    ),
}


@pytest.mark.parametrize("case", MARGIN_ERRORS)
def test_margin_loss_errors_match_cpu(strict, case):
    assert_like_cpu(MARGIN_ERRORS[case], make((5, 4), torch.float32))


# --- cross entropy (a composite: checked) ------------------------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    "options",
    [
        {"label_smoothing": 0.1},
        {"label_smoothing": 0.2, "ignore_index": 2},
        {"label_smoothing": 0.1, "weighted": True},
        {"label_smoothing": 0.1, "weighted": True, "ignore_index": 1},
    ],
    ids=str,
)
def test_cross_entropy_with_label_smoothing(strict, reduction, options):
    options = dict(options)
    weight = probabilities((5,), torch.float64, seed=3) if options.pop("weighted", False) else None
    labels = torch.tensor([0, 1, 2, 4, 2, 1])
    assert_backward_like_cpu(
        lambda x: F.cross_entropy(
            x, labels.to(x.device), weight=on_device_of(x, weight), reduction=reduction, **options
        ),
        make((6, 5), torch.float64),
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("label_smoothing", [0.0, 0.15])
def test_cross_entropy_with_probabilities_as_targets(strict, reduction, label_smoothing):
    weight = probabilities((5,), torch.float64, seed=3)
    assert_backward_like_cpu(
        lambda x, y: F.cross_entropy(
            x, y, weight=weight.to(x.device), reduction=reduction, label_smoothing=label_smoothing
        ),
        make((2, 5, 3), torch.float64),
        make((2, 5, 3), torch.float64, seed=1).softmax(1),
    )


# --- CTC ----------------------------------------------------------------------------------

STEPS, BATCH, CLASSES = 12, 4, 6
INPUT_LENGTHS = [12, 10, 12, 7]
TARGET_LENGTHS = [4, 3, 0, 2]


def ctc_targets(concatenated):
    targets = torch.randint(1, CLASSES, (BATCH, 4), generator=torch.Generator().manual_seed(5))
    targets[0, 2] = targets[0, 1]  # a repeated label needs a blank between
    if concatenated:
        return torch.cat([targets[b, : TARGET_LENGTHS[b]] for b in range(BATCH)])
    return targets


@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("concatenated", [False, True], ids=["padded", "concatenated"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_ctc_loss(strict, reduction, dtype, concatenated, zero_infinity):
    targets = ctc_targets(concatenated)
    assert_backward_like_cpu(
        lambda x: F.ctc_loss(
            x.log_softmax(2),
            targets.to(x.device),
            INPUT_LENGTHS,
            TARGET_LENGTHS,
            reduction=reduction,
            zero_infinity=zero_infinity,
        ),
        make((STEPS, BATCH, CLASSES), dtype),
    )


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_of_impossible_alignments(strict, zero_infinity):
    # Sample 0 has 3 input steps for 3 labels of which two repeat (which need 4 steps);
    # sample 1 has no input step and sample 2 no input and no label.
    targets = torch.tensor([[1, 1, 2], [3, 0, 0], [0, 0, 0]])
    assert_backward_like_cpu(
        lambda x: F.ctc_loss(
            x.log_softmax(2),
            targets.to(x.device),
            [3, 0, 0],
            [3, 1, 0],
            reduction="none",
            zero_infinity=zero_infinity,
        ),
        make((5, 3, 4), torch.float64),
    )


def test_ctc_loss_with_lengths_as_tensors_and_another_blank(strict):
    targets = ctc_targets(False) - 1  # labels 0..4, blank 5
    assert_backward_like_cpu(
        lambda x: F.ctc_loss(
            x.log_softmax(2),
            targets.to(x.device),
            torch.tensor(INPUT_LENGTHS),
            torch.tensor(TARGET_LENGTHS),
            blank=CLASSES - 1,
        ),
        make((STEPS, BATCH, CLASSES), torch.float64),
    )


def test_ctc_loss_of_one_unbatched_sample(strict):
    assert_backward_like_cpu(
        lambda x: F.ctc_loss(x.log_softmax(1), torch.tensor([1, 2, 2]).to(x.device), [8], [3], reduction="none"),
        make((8, 4), torch.float64),
    )


@pytest.mark.parametrize("length_dtype", [torch.int64, torch.int32, torch.uint8], ids=str)
def test_ctc_loss_kernels_taking_lengths_as_tensors(strict, length_dtype):
    input_lengths = torch.tensor(INPUT_LENGTHS, dtype=length_dtype)
    target_lengths = torch.tensor(TARGET_LENGTHS, dtype=length_dtype).reshape(2, 2)  # read flattened
    log_probs = make((STEPS, BATCH, CLASSES), torch.float64).log_softmax(2)
    targets = ctc_targets(False)
    nll, log_alpha = aten._ctc_loss.Tensor(log_probs, targets, input_lengths, target_lengths)
    nll_npy, log_alpha_npy = aten._ctc_loss.Tensor(npy(log_probs), npy(targets), input_lengths, npy(target_lengths))
    torch.testing.assert_close(nll_npy.cpu(), nll)
    grad = make((BATCH,), torch.float64, seed=1)
    expected = aten._ctc_loss_backward.Tensor(
        grad, log_probs, targets, input_lengths, target_lengths, nll, log_alpha, 0
    )
    actual = aten._ctc_loss_backward.Tensor(
        npy(grad), npy(log_probs), npy(targets), npy(input_lengths), target_lengths, nll_npy, log_alpha_npy, 0
    )
    torch.testing.assert_close(actual.cpu(), expected)


@pytest.mark.parametrize("lengths", ["input_lengths", "target_lengths"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bool], ids=str)
def test_ctc_lengths_tensors_must_be_integral(strict, lengths, dtype):
    given = {"input_lengths": torch.tensor(INPUT_LENGTHS), "target_lengths": torch.tensor(TARGET_LENGTHS)}
    given[lengths] = given[lengths].to(dtype)
    assert_like_cpu(
        lambda x, t: aten._ctc_loss.Tensor(x, t, given["input_lengths"], given["target_lengths"]),
        make((STEPS, BATCH, CLASSES), torch.float32).log_softmax(2),
        ctc_targets(False),
    )


CTC_ERRORS = {
    "half log_probs": lambda x, t: F.ctc_loss(x.half(), t, [12, 10, 12, 7], [4, 3, 0, 2]),
    "blank out of range": lambda x, t: F.ctc_loss(x, t, [12, 10, 12, 7], [4, 3, 0, 2], blank=CLASSES),
    "input_lengths size": lambda x, t: F.ctc_loss(x, t, [12, 10, 12], [4, 3, 0, 2]),
    "target_lengths size": lambda x, t: F.ctc_loss(x, t, [12, 10, 12, 7], [4, 3, 0]),
    "negative target length": lambda x, t: F.ctc_loss(x, t, [12, 10, 12, 7], [4, -3, 0, 2]),
    "input length too long": lambda x, t: F.ctc_loss(x, t, [13, 10, 12, 7], [4, 3, 0, 2]),
    "negative input length": lambda x, t: F.ctc_loss(x, t, [12, -1, 12, 7], [4, 3, 0, 2]),
    "targets too short": lambda x, t: F.ctc_loss(x, t[:, :3], [12, 10, 12, 7], [4, 3, 0, 2]),
    "targets batch": lambda x, t: F.ctc_loss(x, t[:3], [12, 10, 12, 7], [4, 3, 0, 2]),
    "concatenated targets size": lambda x, t: F.ctc_loss(x, t.flatten()[:8], [12, 10, 12, 7], [4, 3, 0, 2]),
    "3-d targets": lambda x, t: F.ctc_loss(x, t[None], [12, 10, 12, 7], [4, 3, 0, 2]),
    "float targets to _ctc_loss": lambda x, t: aten._ctc_loss(x, t.double(), [12, 10, 12, 7], [4, 3, 0, 2]),
    "4-d log_probs": lambda x, t: F.ctc_loss(x[None], t, [12, 10, 12, 7], [4, 3, 0, 2]),
}


@pytest.mark.parametrize("case", CTC_ERRORS)
def test_ctc_errors_match_cpu(strict, case):
    log_probs = make((STEPS, BATCH, CLASSES), torch.float32).log_softmax(2)
    assert_like_cpu(CTC_ERRORS[case], log_probs, ctc_targets(False))


# --- training ----------------------------------------------------------------------------


TRAINING_LOSSES = {
    "bce_with_logits": lambda out, y: F.binary_cross_entropy_with_logits(out, y, pos_weight=y[0] + 1),
    "bce": lambda out, y: F.binary_cross_entropy(torch.sigmoid(out), y),
    "huber": lambda out, y: F.huber_loss(out, y, delta=0.5),
    "smooth_l1": lambda out, y: F.smooth_l1_loss(out, y, beta=0.5),
}


@pytest.mark.parametrize("loss", TRAINING_LOSSES)
def test_a_small_network_trains_like_cpu(strict, loss):
    torch.manual_seed(0)
    layers = [torch.nn.Linear(6, 8), torch.nn.SiLU(), torch.nn.Linear(8, 8), torch.nn.LeakyReLU(0.1, inplace=True)]
    cpu_model = torch.nn.Sequential(*layers, torch.nn.Linear(8, 1)).double()
    npy_model = copy.deepcopy(cpu_model).to("npy")
    x, y = make((16, 6), torch.float64), probabilities((16, 1), torch.float64, seed=1)
    for model, inputs, targets in [(cpu_model, x, y), (npy_model, npy(x), npy(y))]:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            optimizer.zero_grad()
            TRAINING_LOSSES[loss](model(inputs), targets).backward()
            optimizer.step()
    for trained, expected in zip(npy_model.parameters(), cpu_model.parameters()):
        torch.testing.assert_close(trained.detach().cpu(), expected.detach())


def test_kernels_are_registered():
    registered = set(backend_pkg.ops.registered_ops())
    for op in ["binary_cross_entropy_with_logits", "huber_loss", "_ctc_loss", "multilabel_margin_loss_forward"]:
        assert f"aten::{op}" in registered, op


# --- negative log likelihood, cross entropy of any rank, mean squared error ----------------


def loss_data(dtype):
    """Logits and targets for nll tests: a quarter grid keeps half-precision sums exact."""
    logits = (make((6, 5), torch.float64, 1) * 4).round() / 4
    weight = make((5,), torch.float64, 2).abs().round().add(1)
    return logits.to(dtype), torch.tensor([0, 4, 2, 2, 3, 1]), weight.to(dtype)


@pytest.mark.parametrize("ignore_index", [-100, 2])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("reduction", [NONE, MEAN, SUM], ids=["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_nll_loss_forward_and_backward(strict, dtype, reduction, weighted, ignore_index):
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
def test_nll_loss_of_one_unbatched_sample_and_of_images(strict, reduction):
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


def test_nll_loss_with_every_target_ignored_is_nan_like_cpu(strict):
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
def test_cross_entropy_of_any_rank(strict, shape, reduction):
    logits = make(shape, torch.float32)
    target = torch.randint(0, 5, (shape[0], *shape[2:]), generator=torch.Generator().manual_seed(1))
    assert_like_cpu(lambda x, t: F.cross_entropy(x, t, reduction=reduction), logits, target)


@pytest.mark.parametrize("reduction", [NONE, MEAN, SUM], ids=["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_mse_loss_forward_and_backward(strict, dtype, reduction):
    if dtype == torch.float16:
        x, y = (make((4, 8), torch.float64, s).mul(4).round().div(4).to(dtype) for s in (1, 2))  # exact in half
    else:
        x, y = make((4, 8), dtype, 1), make((4, 8), dtype, 2)
    assert_like_cpu(lambda a, b: aten.mse_loss(a, b, reduction), x, y)
    if dtype.is_floating_point:
        grad = y if reduction == NONE else torch.tensor(0.5, dtype=dtype)
        assert_like_cpu(lambda g, a, b: aten.mse_loss_backward(g, a, b, reduction), grad, x, y)


LOSS_ERRORS = [
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


@pytest.mark.parametrize("fn, match", LOSS_ERRORS, ids=[m for _, m in LOSS_ERRORS])
def test_nll_and_mse_loss_errors_match_cpu(strict, fn, match):
    assert_same_error(fn, exact_data((3, 4), torch.float32).abs(), match=match)


@pytest.mark.usefixtures("strict")
class TestXlogy(BinaryOpChecks):
    OPS = {"xlogy": torch.xlogy}


# out= overloads by name, each writing into the float32 `out` it is given
OUT_VARIANTS = {
    "mse_loss": lambda t, out: aten.mse_loss.out(t, t * 2, 2, out=out),
    "mse_loss_backward": lambda t, out: aten.mse_loss_backward.grad_input(t[0, 0], t, t * 2, MEAN, grad_input=out),
    "nll_loss_backward": lambda t, out: aten.nll_loss_backward.grad_input(
        t[0, 0], t, labels(t, 0, 2, 1), None, MEAN, -100, t[1, 1], grad_input=out
    ),
    "nll_loss2d_backward": lambda t, out: aten.nll_loss2d_backward.grad_input(
        t[0, 0], t[None, :, None], labels(t, [[0, 2, 1]]), None, SUM, -100, t[1, 1], grad_input=out
    ),
}


@pytest.mark.parametrize("name", OUT_VARIANTS)
def test_out_variants_write_into_out(strict, name):
    assert_writes_out_like_cpu(OUT_VARIANTS[name], exact_data((3, 3), torch.float32, 1))


TWO_RESULTS = {
    "nll_loss_forward": lambda t, a, b: aten.nll_loss_forward.output(
        t, labels(t, 0, 2, 1), None, MEAN, -100, output=a, total_weight=b
    ),
    "nll_loss2d_forward": lambda t, a, b: aten.nll_loss2d_forward.output(
        t[None, :, None], labels(t, [[0, 2, 1, 0]]), None, SUM, -100, output=a, total_weight=b
    ),
}


@pytest.mark.parametrize("name", TWO_RESULTS)
def test_out_variants_with_two_results(strict, name):
    assert_writes_two_outs_like_cpu(TWO_RESULTS[name], make((3, 4), torch.float32))
