"""``select``, the branch-free ``np.where`` behind ReLU's and the activations' backward."""

import numpy as np
import pytest
import torch

from backend_pkg.ops._select import select

LARGE = 20_000  # above the size where select stops deferring to np.where


def special_values(dtype, size, seed):
    values = np.random.default_rng(seed).standard_normal(size).astype(dtype)
    values[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0]
    return values


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("size", [10, LARGE])
def test_select_is_np_where_bit_for_bit(dtype, size):
    x, g = special_values(dtype, size, 0), special_values(dtype, size, 1)[::-1]
    cases = [
        (x <= 0, 0, g),
        (x > 0, x, x * dtype(0.1)),
        (x > 0, g, 0.5),
        (x > 0, np.float64(2), g),
        (x.reshape(-1, 10) > 0, g[:10], 1.0),
        (True, g, 0.0),
    ]
    for condition, if_true, if_false in cases:
        expected = np.atleast_1d(np.where(condition, if_true, if_false))
        actual = np.atleast_1d(select(condition, if_true, if_false))
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        assert np.array_equal(actual.view(np.uint8), expected.view(np.uint8))


def test_non_float_results_are_np_where():
    x = np.arange(LARGE)
    assert np.array_equal(select(x % 3 == 0, x, -x), np.where(x % 3 == 0, x, -x))


def test_relu_backward_on_large_tensors_like_cpu(strict):
    x = torch.randn(LARGE * 2)
    x[:3] = torch.tensor([float("nan"), 0.0, -0.0])
    grad = torch.randn(LARGE * 2)
    grad[3:5] = torch.tensor([float("inf"), float("nan")])
    expected = torch.ops.aten.threshold_backward(grad, x, 0)
    actual = torch.ops.aten.threshold_backward(grad.to("npy"), x.to("npy"), 0)
    torch.testing.assert_close(actual.cpu(), expected, equal_nan=True)
