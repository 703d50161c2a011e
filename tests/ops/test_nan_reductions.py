"""NaN in the middle of reductions and scans: propagated, or skipped, exactly where CPU does."""

import pytest
import torch
from reference import assert_like_cpu

pytestmark = [
    pytest.mark.filterwarnings("ignore:npy device.*has no npy kernel"),
    pytest.mark.filterwarnings("error::RuntimeWarning"),  # CPU makes its nans silently; NumPy warns
]

NAN = float("nan")


def with_nans(dtype=torch.float32):
    """NaN neither first nor last in its row, a row without one, and -inf and inf beside them."""
    return torch.tensor(
        [[1.0, NAN, 3.0, -2.0], [4.0, 5.0, -float("inf"), NAN], [1.0, 2.0, float("inf"), 4.0]], dtype=dtype
    )


REDUCTIONS = {
    "sum": lambda t: t.sum(),
    "sum dim": lambda t: t.sum(1),
    "mean": lambda t: t.mean(0),
    "prod": lambda t: t.prod(1),
    "max": lambda t: t.max(),
    "max dim": lambda t: t.max(1),
    "max dim keepdim": lambda t: t.max(0, keepdim=True),
    "min dim": lambda t: t.min(1),
    "amax": lambda t: t.amax(1),
    "amin": lambda t: t.amin((0, 1)),
    "argmax": lambda t: t.argmax(),
    "argmax dim": lambda t: t.argmax(1),
    "argmin dim keepdim": lambda t: t.argmin(0, keepdim=True),
    "aminmax": lambda t: torch.aminmax(t, dim=1),
    "cumsum": lambda t: t.cumsum(1),
    "cumprod": lambda t: t.cumprod(1),
    "cummax": lambda t: t.cummax(1),
    "logcumsumexp": lambda t: t.logcumsumexp(1),
    "logsumexp": lambda t: t.logsumexp(1),
    "std": lambda t: t.std(1),
    "var_mean": lambda t: torch.var_mean(t, 0),
    "norm": lambda t: t.norm(dim=1),
    "nansum": lambda t: t.nansum(1),
    "nanmean": lambda t: t.nanmean(0),
    "maximum": lambda t: torch.maximum(t, t.flip(0)),
    "fmax": lambda t: torch.fmax(t, t.flip(0)),
    "clamp": lambda t: t.clamp(0, 2),
    "sort": lambda t: t.sort(1),
    "topk": lambda t: t.topk(2, 1),
    "softmax": lambda t: t.softmax(1),
    "all": lambda t: t.all(1),
}


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("name", REDUCTIONS)
def test_nan_in_the_middle_like_cpu(name, layout):
    values = with_nans()
    if layout == "transposed":  # the same values, the reduced dim now strided
        values = values.t().contiguous().t()
    assert_like_cpu(REDUCTIONS[name], values)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float64, torch.complex64], ids=str)
def test_nan_propagates_in_other_dtypes(dtype):
    values = with_nans(torch.float32).to(dtype)
    for name in ("sum dim", "mean", "prod", "cumsum"):
        assert_like_cpu(REDUCTIONS[name], values)
    if not dtype.is_complex:
        for name in ("max dim", "amax", "argmax dim", "cummax"):
            assert_like_cpu(REDUCTIONS[name], values)
