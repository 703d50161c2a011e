"""GradScaler's two ops (``backend_pkg/ops/amp.py``) against CPU: unscaling gradients, finding
infs and nans, updating the scale; the checks of each, word for word."""

import pytest
import torch
from reference import FLOAT_DTYPES, make


def to_npy(value):
    if isinstance(value, (list, tuple)):
        return type(value)(to_npy(item) for item in value)
    return value.to("npy") if isinstance(value, torch.Tensor) else value


def copied(value):
    if isinstance(value, (list, tuple)):
        return type(value)(copied(item) for item in value)
    return value.clone() if isinstance(value, torch.Tensor) else value


def tensors_in(values):
    flat = [item for value in values for item in (value if isinstance(value, list) else [value])]
    return [item for item in flat if isinstance(item, torch.Tensor)]


def assert_in_place_like_cpu(op, *args):
    """``op`` changes npy copies of ``args`` as it changes them on CPU, or fails the same way."""
    cpu_args, npy_args = copied(args), to_npy(copied(args))
    try:
        op(*cpu_args)
    except Exception as cpu_error:
        with pytest.raises(type(cpu_error)) as npy_error:
            op(*npy_args)
        assert str(npy_error.value) == str(cpu_error)
        return
    op(*npy_args)
    for got, want in zip(tensors_in(npy_args), tensors_in(cpu_args), strict=True):
        assert got.device.type == "npy"
        torch.testing.assert_close(got.cpu(), want, equal_nan=True, rtol=0, atol=0)


@pytest.mark.parametrize("bad_value", [None, float("inf"), float("nan")])
def test_unscale_gradients_like_cpu(strict, bad_value):
    gradients = [make((3, 4), dtype, seed) for seed, dtype in enumerate(FLOAT_DTYPES)]
    gradients.append(make((4, 3), torch.float32, 9).t())
    if bad_value is not None:
        gradients[1][1, 2] = bad_value
    assert_in_place_like_cpu(
        torch._amp_foreach_non_finite_check_and_unscale_, gradients, torch.zeros(1), torch.full((1,), 0.3)
    )


@pytest.mark.parametrize(
    "gradients, found_inf, inv_scale",
    [
        ([torch.ones(2)], torch.zeros(1), torch.ones(2)),
        ([torch.ones(2)], torch.zeros(2), torch.ones(1)),
        ([torch.ones(2)], torch.zeros(1), torch.ones(1, dtype=torch.float64)),
        ([torch.ones(2)], torch.zeros(1, dtype=torch.float16), torch.ones(1)),
        ([torch.ones(2, dtype=torch.int64)], torch.zeros(1), torch.ones(1)),
        ([], torch.zeros(1), torch.ones(1)),
    ],
    ids=["inv_scale-size", "found_inf-size", "inv_scale-dtype", "found_inf-dtype", "integer-gradient", "no-gradients"],
)
def test_unscale_checks_like_cpu(strict, gradients, found_inf, inv_scale):
    assert_in_place_like_cpu(torch._amp_foreach_non_finite_check_and_unscale_, gradients, found_inf, inv_scale)


@pytest.mark.parametrize(
    "scale, tracker, found_inf, growth_factor",
    [
        (1024.0, 0, 0.0, 2.0),
        (1024.0, 1, 0.0, 2.0),
        (1024.0, 1, 1.0, 2.0),
        (3.0e38, 1, 0.0, 2.0),
        (1000.1, 1, 0.0, 1.3),  # float32 arithmetic would round this product differently
    ],
    ids=["count", "grow", "back-off", "grow-past-float32", "rounding"],
)
def test_update_scale_like_cpu(strict, scale, tracker, found_inf, growth_factor):
    assert_in_place_like_cpu(
        torch._amp_update_scale_,
        torch.full((1,), scale),
        torch.full((1,), tracker, dtype=torch.int32),
        torch.full((1,), found_inf),
        growth_factor,
        0.3,
        2,
    )


@pytest.mark.parametrize(
    "scale, tracker, found_inf",
    [
        (torch.ones(2), torch.zeros(1, dtype=torch.int32), torch.zeros(1)),
        (torch.ones(1), torch.zeros(1, dtype=torch.int64), torch.zeros(1, dtype=torch.float64)),
        (torch.ones(1, dtype=torch.float64), torch.zeros(1, dtype=torch.int32), torch.zeros(2)),
    ],
    ids=["scale-size", "tracker-dtype", "found_inf-size-before-dtype"],
)
def test_update_scale_checks_like_cpu(strict, scale, tracker, found_inf):
    assert_in_place_like_cpu(torch._amp_update_scale_, scale, tracker, found_inf, 2.0, 0.5, 2)
