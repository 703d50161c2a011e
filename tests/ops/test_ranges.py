"""``torch.arange`` on npy against CPU: lengths, values, dtypes, ``out=`` and errors, in strict mode."""

import warnings

import pytest
import torch
from reference import assert_like_cpu, gist, npy

CASES = [
    pytest.param((5,), {}, id="end"),
    pytest.param((2, 9), {}, id="start_end"),
    pytest.param((0.5, 3.2, 0.7), {}, id="float_step"),
    pytest.param((10, 0, -0.3), {"dtype": torch.float64}, id="negative_step"),
    pytest.param((0, 1, 0.1), {"dtype": torch.float32}, id="float32"),
    pytest.param((0, 5, 0.5), {"dtype": torch.float16}, id="float16"),
    pytest.param((0, 70000, 10000), {"dtype": torch.float16}, id="float16_rounds"),
    pytest.param((0, 1e10, 1e9), {"dtype": torch.float16}, id="float16_overflows"),
    pytest.param((-5, 7, 2), {"dtype": torch.int64}, id="int64"),
    pytest.param((7, -5, -2), {"dtype": torch.int64}, id="int64_down"),
    pytest.param((0, 5, 1.5), {"dtype": torch.int64}, id="int64_step_truncates"),
    pytest.param((0.5, 5, 1), {"dtype": torch.int64}, id="int64_start_truncates"),
    pytest.param((0, 5, 1.5), {"dtype": torch.int32}, id="int32_length_from_floats"),
    pytest.param((0, 5, 0.3), {"dtype": torch.int32}, id="int32_zero_step"),
    pytest.param((0, 1e10, 1e9), {"dtype": torch.int32}, id="int32_wraps"),
    pytest.param((1, 10, 3), {"dtype": torch.int16}, id="int16"),
    pytest.param((0, 300), {"dtype": torch.uint8}, id="uint8_wraps"),
    pytest.param((0, 0), {}, id="empty"),
]

ERRORS = [
    pytest.param((0, 3, 0), {}, id="zero_step"),
    pytest.param((0, 5, float("nan")), {}, id="nan_step"),
    pytest.param((0, float("inf"), 1), {}, id="infinite_end"),
    pytest.param((float("nan"), 5), {}, id="nan_start"),
    pytest.param((0, float("inf")), {"dtype": torch.int64}, id="infinite_end_int64"),
    pytest.param((3, 0, 1), {}, id="wrong_sign"),
    pytest.param((0, 1e30, 1e-5), {}, id="too_long"),
    pytest.param((1.5, 1.2, -0.5), {"dtype": torch.int64}, id="int64_step_truncates_to_zero"),
    pytest.param((0, 1e30, 1e25), {"dtype": torch.int64}, id="int64_overflow"),
    pytest.param((0, 5, float("inf")), {"dtype": torch.int64}, id="int64_infinite_step"),
    pytest.param((0, 3), {"dtype": torch.bool}, id="bool"),
    pytest.param((0, 3), {"dtype": torch.complex64}, id="complex"),
]


@pytest.fixture(autouse=True)
def _strict(strict):
    """Every test here runs in strict mode."""


@pytest.mark.parametrize(("args", "options"), CASES + ERRORS)
def test_arange_matches_cpu(args, options):
    def arange(device):
        return torch.arange(*args, device=device, **options)

    assert_like_cpu(lambda anchor: arange(anchor.device), torch.zeros(()))


@pytest.mark.parametrize("size", [0, 2, 5], ids=["empty", "smaller", "same"])
def test_arange_out_is_resized_as_on_cpu(size):
    """Resized to the range's length, with CPU's warning when it had other elements."""
    results = {}
    for device in ("cpu", "npy"):
        out = torch.full((size,), 7, dtype=torch.int32, device=device)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.arange(0, 5, out=out)
        results[device] = out.cpu(), [gist(warning.message) for warning in caught]
    assert torch.equal(results["npy"][0], results["cpu"][0])
    assert results["npy"][1] == results["cpu"][1]
    assert len(results["npy"][1]) == (size == 2)


def test_arange_out_keeps_a_view_strided():
    base = npy(torch.zeros(10))
    torch.arange(0, 5, out=base[::2])
    torch.testing.assert_close(base.cpu(), torch.tensor([0.0, 0, 1, 0, 2, 0, 3, 0, 4, 0]))
