"""Embeddings on npy against CPU: nn.Embedding (max_norm's embedding_renorm_) and
nn.EmbeddingBag (the _embedding_bag family), forward, backward and errors."""

import itertools

import pytest
import torch
import torch.nn.functional as F
from reference import assert_backward_like_cpu, assert_like_cpu, make, npy

from backend_pkg.ops import KERNELS

aten = torch.ops.aten

INDICES = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
OFFSETS = torch.tensor([0, 2, 2, 5])  # bags [1, 2], [], [4, 5, 4], [3, 2, 9]
LAST_OFFSET = torch.tensor([0, 2, 2, 5, 8])
SHORT_LAST_OFFSET = torch.tensor([0, 2, 2, 5, 6])  # last bag: [3] on CPU's fast path, [3, 2, 9] on the others


# --- nn.Embedding -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [{}, {"padding_idx": 2}, {"scale_grad_by_freq": True}, {"max_norm": 1.0}, {"max_norm": 2.0, "norm_type": 1.0}],
    ids=["plain", "padding_idx", "scale_grad_by_freq", "max_norm", "max_norm_l1"],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_embedding_forward_backward(strict, options, dtype):
    indices = torch.tensor([[1, 2, 2], [9, 0, 2]])
    assert_backward_like_cpu(lambda w: F.embedding(indices.to(w.device), w, **options), make((10, 3), dtype))


def test_embedding_max_norm_renorms_the_weight_in_place(strict):
    weight = make((10, 3), torch.float32)
    indices = torch.tensor([1, 2, 2, 7])
    on_npy = npy(weight)
    F.embedding(indices, weight, max_norm=1.0)
    F.embedding(npy(indices), on_npy, max_norm=1.0)
    torch.testing.assert_close(on_npy.cpu(), weight)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 0.5, float("inf")])
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64], ids=str)
def test_embedding_renorm_like_cpu(strict, norm_type, dtype):
    indices = torch.tensor([3, 1, -2, 3, 8])  # repeated, and -2 is row 8 again

    def renorm(weight, indices):
        return torch.embedding_renorm_(weight.clone(), indices, 1.5, norm_type)

    assert_like_cpu(renorm, make((10, 3), dtype), indices)
    assert_like_cpu(renorm, make((10, 3), dtype), indices.int())


@pytest.mark.parametrize(
    "weight, indices",
    [
        (make((10, 3), torch.float32), torch.tensor([1, 12])),
        (make((10, 3), torch.float32), torch.tensor([1, -11])),
        (make((10,), torch.float32), torch.tensor([1])),
        (make((10, 3), torch.float32), torch.tensor([1.0])),
        (make((10, 3), torch.int64), torch.tensor([1])),
    ],
    ids=["too_large", "too_negative", "1d_weight", "float_indices", "integer_weight"],
)
def test_embedding_renorm_errors_like_cpu(strict, weight, indices):
    assert_like_cpu(lambda w, i: torch.embedding_renorm_(w.clone(), i, 1.0, 2.0), weight, indices)


def test_embedding_out_of_range_like_cpu(strict):
    assert_like_cpu(F.embedding, torch.tensor([1, 10]), make((10, 3), torch.float32))
    assert_like_cpu(F.embedding, torch.tensor([1, 2]), make((10, 3), torch.float32), None, 1.0)


# --- nn.EmbeddingBag ----------------------------------------------------------------


_BAG_CASES = [
    (mode, padding_idx, include_last_offset, per_sample_weights)
    for mode, padding_idx, include_last_offset, per_sample_weights in itertools.product(
        ["sum", "mean", "max"], [None, 4], [False, True], [False, True]
    )
    if mode == "sum" or not per_sample_weights
]


@pytest.mark.parametrize(
    "mode, padding_idx, include_last_offset, per_sample_weights",
    _BAG_CASES,
    ids=[f"{m}-pad{p}-last{i}-psw{w}" for m, p, i, w in _BAG_CASES],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_embedding_bag_forward_backward(strict, mode, padding_idx, include_last_offset, per_sample_weights, dtype):
    offsets = LAST_OFFSET if include_last_offset else OFFSETS
    sample_weights = make((8,), dtype, seed=3) if per_sample_weights else None

    def bag(weight, sample_weights):
        device = weight.device
        return F.embedding_bag(
            INDICES.to(device),
            weight,
            offsets.to(device),
            mode=mode,
            padding_idx=padding_idx,
            include_last_offset=include_last_offset,
            per_sample_weights=sample_weights,
        )

    assert_backward_like_cpu(bag, make((10, 3), dtype), sample_weights)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_half(strict, mode):
    weight = make((10, 3), torch.float16)
    expected = F.embedding_bag(INDICES, weight, OFFSETS, mode=mode)
    actual = F.embedding_bag(npy(INDICES), npy(weight), npy(OFFSETS), mode=mode)
    assert actual.dtype == torch.float16
    # CPU divides the mean after rounding the sum to half; npy rounds once.
    torch.testing.assert_close(actual.cpu(), expected, atol=1e-2, rtol=1e-3)


@pytest.mark.parametrize("op", [aten._embedding_bag, aten._embedding_bag_forward_only], ids=["grad", "forward_only"])
@pytest.mark.parametrize("mode, padding_idx", [(0, -1), (0, 4), (1, -1), (1, 4), (2, -1), (2, 4)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize(
    "offsets", [OFFSETS, LAST_OFFSET, SHORT_LAST_OFFSET], ids=["", "last_offset", "short_last_offset"]
)
def test_embedding_bag_op_results_like_cpu(strict, op, mode, padding_idx, dtype, offsets):
    """All four results, the backward's offset2bag, bag_size and max_indices included,
    with CPU's shortcuts (the float sum leaves offset2bag empty, and the forward-only sum
    has as many bag sizes as offsets, one more than bags with ``include_last_offset``)."""
    include_last_offset = offsets is not OFFSETS

    def bag(weight, indices, offsets):
        return op(weight, indices, offsets, False, mode, False, None, include_last_offset, padding_idx)

    assert_like_cpu(bag, make((10, 3), dtype), INDICES, offsets)
    assert_like_cpu(bag, make((10, 3), dtype), INDICES.int(), offsets.int())
    assert_like_cpu(bag, make((10, 3), dtype), INDICES.int(), offsets)


def _short_last_offset_bag(mode, padding_idx):
    """F.embedding_bag of INDICES whose last offset stops short of them, or of the indices up to it."""

    def bag(weight, sample_weights, cut=False):
        count = SHORT_LAST_OFFSET[-1] if cut else len(INDICES)
        return F.embedding_bag(
            INDICES[:count].to(weight.device),
            weight,
            SHORT_LAST_OFFSET.to(weight.device),
            mode=mode,
            padding_idx=padding_idx,
            include_last_offset=True,
            per_sample_weights=None if sample_weights is None else sample_weights[:count],
        )

    return bag


# Each path of CPU's kernel, as (mode, dtype, padding_idx, per-sample weights): the fast path (sum or mean,
# float32 or float16, no padding_idx) stops the last bag at its offset, the others run it to the end.
_SHORT_LAST_OFFSET_PATHS = [
    ("sum", torch.float32, None, False),
    ("sum", torch.float32, None, True),
    ("sum", torch.float16, None, True),
    ("mean", torch.float32, None, False),
    ("mean", torch.float16, None, False),
    ("sum", torch.float64, None, True),
    ("mean", torch.float64, None, False),
    ("sum", torch.float32, 4, True),
    ("mean", torch.float32, 4, False),
    ("max", torch.float32, None, False),
    ("max", torch.float16, None, False),
    ("max", torch.float64, 4, False),
]


def _half_tolerance(dtype):
    # CPU divides the half mean after rounding the sum to half; npy rounds once.
    return {"atol": 1e-2, "rtol": 1e-3} if dtype == torch.float16 else {}


def _assert_same_results(got, want, **tolerance):
    for npy_result, cpu_result in zip(got, want):
        torch.testing.assert_close(npy_result.detach().cpu(), cpu_result.detach(), **tolerance)
        assert npy_result.stride() == cpu_result.stride()


@pytest.mark.parametrize(
    "mode, dtype, padding_idx, per_sample_weights",
    _SHORT_LAST_OFFSET_PATHS,
    ids=[f"{m}-{str(d)[6:]}-pad{p}-psw{w}" for m, d, p, w in _SHORT_LAST_OFFSET_PATHS],
)
def test_embedding_bag_short_last_offset_like_cpu(strict, mode, dtype, padding_idx, per_sample_weights):
    """With ``include_last_offset``, indices past the last offset: in the last bag or not, as each of CPU's
    paths has it, forward and backward. The fast sum's backward on CPU reads their gradient from past the
    end of the output gradient; npy gives them none, as CPU does for the indices cut at the last offset."""
    bag = _short_last_offset_bag(mode, padding_idx)
    weight = make((10, 3), dtype).requires_grad_()
    sample_weights = make((8,), dtype, seed=3).requires_grad_() if per_sample_weights else None
    on_npy = [None if t is None else npy(t.detach()).requires_grad_() for t in (weight, sample_weights)]
    expected, actual = bag(weight, sample_weights), bag(*on_npy)
    _assert_same_results([actual], [expected], **_half_tolerance(dtype))
    if mode == "sum" and dtype != torch.float64 and padding_idx is None:  # the fast sum
        expected = bag(weight, sample_weights, cut=True)
    seed = make(tuple(expected.shape), dtype, seed=5)
    cpu_grads = torch.autograd.grad(expected, [t for t in (weight, sample_weights) if t is not None], seed)
    npy_grads = torch.autograd.grad(actual, [t for t in on_npy if t is not None], npy(seed))
    _assert_same_results(npy_grads, cpu_grads, **_half_tolerance(dtype))


def test_embedding_bag_short_last_offset_of_a_transposed_weight_like_cpu(strict):
    """Rows that are not contiguous take CPU's slow path: the last bag runs to the end of the indices."""
    weight = make((3, 10), torch.float32).t()
    assert_backward_like_cpu(lambda weight: _short_last_offset_bag("sum", None)(weight, None), weight)


def test_cpu_fast_sum_backward_reads_the_row_after_the_output_gradient():
    """What the limits page on the CPU reference shows, on CPU alone: the fast sum's backward takes the
    gradient of the indices past a short last offset from the row after the output gradient. Fails the
    day PyTorch changes it, and with it the page and npy's choice to give those indices no gradient."""
    weight = make((10, 3), torch.float32).requires_grad_()
    rows = torch.arange(15.0).reshape(5, 3)  # the output gradient is the first 4 rows: row 4 is past its end
    (weight_grad,) = torch.autograd.grad(_short_last_offset_bag("sum", None)(weight, None), weight, rows[:4])
    torch.testing.assert_close(weight_grad[9], rows[4])  # index 9 comes after the last offset only


@pytest.mark.skipif(aten.arange.start_out not in KERNELS, reason="arange.start_out comes with the ranges family")
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d_input(strict, mode):
    """A 2-D input is one bag per row: F.embedding_bag makes the offsets with arange."""
    indices = torch.tensor([[1, 2, 3], [4, 4, 9]])
    assert_backward_like_cpu(
        lambda w: F.embedding_bag(indices.to(w.device), w, mode=mode), make((10, 3), torch.float32)
    )


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq_uniform_counts(strict, mode):
    indices = torch.tensor([1, 2, 1, 2, 7, 7])
    offsets = torch.tensor([0, 3])

    def bag(weight):
        device = weight.device
        return F.embedding_bag(indices.to(device), weight, offsets.to(device), mode=mode, scale_grad_by_freq=True)

    assert_backward_like_cpu(bag, make((10, 3), torch.float32))


def test_embedding_bag_scale_grad_by_freq_divides_by_each_index_count(strict):
    """Each row's gradient is divided by how often its index occurs, as ``F.embedding``'s is.

    PyTorch 2.13's CPU kernel divides by the count of another index when counts
    differ (pytorch/pytorch#190063, fixed after 2.13), so this case is checked
    against the documented values instead of CPU.
    """
    weight = npy(make((10, 3), torch.float32)).requires_grad_()
    F.embedding_bag(npy(INDICES), weight, npy(OFFSETS), mode="sum", scale_grad_by_freq=True).sum().backward()
    expected = torch.zeros(10, 3)
    expected[[1, 2, 3, 4, 5, 9]] = 1.0  # each occurrence adds 1, divided by the count
    torch.testing.assert_close(weight.grad.cpu(), expected)


def _bad_bags():
    weight = make((10, 3), torch.float32)
    return {
        # In the first bag: CPU's message for a bad index in a later bag depends on how
        # its threads split the bags (see _check_in_vocabulary).
        "index_too_large_sum": (weight, torch.tensor([1, 10, 2]), torch.tensor([0, 2]), "sum", None),
        "index_negative_mean": (weight, torch.tensor([1, -1]), torch.tensor([0]), "mean", None),
        "index_too_large_max": (weight, torch.tensor([1, 10]), torch.tensor([0]), "max", None),
        "index_too_large_double": (weight.double(), torch.tensor([1, 10]), torch.tensor([0]), "sum", None),
        "first_offset": (weight, torch.tensor([1, 2]), torch.tensor([1]), "sum", None),
        "last_offset": (weight, torch.tensor([1, 2]), torch.tensor([0, 3]), "sum", None),
        "float_indices": (weight, torch.tensor([1.0, 2.0]), torch.tensor([0]), "sum", None),
        "integer_weight": (weight.long(), torch.tensor([1, 2]), torch.tensor([0]), "sum", None),
        "weights_with_max": (weight, torch.tensor([1, 2]), torch.tensor([0]), "max", torch.ones(2)),
        "weights_dtype": (weight, torch.tensor([1, 2]), torch.tensor([0]), "sum", torch.ones(2).double()),
        "2d_offsets": (weight, torch.tensor([1, 2]), torch.tensor([[0]]), "sum", None),
    }


@pytest.mark.parametrize("case", list(_bad_bags()))
def test_embedding_bag_errors_like_cpu(strict, case):
    weight, indices, offsets, mode, sample_weights = _bad_bags()[case]

    def bag(weight, indices, offsets, sample_weights):
        return F.embedding_bag(indices, weight, offsets, mode=mode, per_sample_weights=sample_weights)

    assert_like_cpu(bag, weight, indices, offsets, sample_weights)


def test_embedding_bag_op_errors_like_cpu(strict):
    weight = make((10, 3), torch.float32)

    def bag(weight, indices, offsets, include_last_offset=False, sample_weights=None):
        return aten._embedding_bag(weight, indices, offsets, False, 0, False, sample_weights, include_last_offset, -1)

    assert_like_cpu(bag, weight, torch.ones(1, 1, 2, dtype=torch.long), torch.tensor([0]))
    assert_like_cpu(lambda *a: bag(*a, include_last_offset=True), weight, INDICES, torch.tensor([], dtype=torch.long))
    assert_like_cpu(lambda w, i, o, s: bag(w, i, o, False, s), weight, INDICES, OFFSETS, torch.ones(3))
