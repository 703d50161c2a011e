"""Comparisons, logical and bitwise combinations and membership (``backend_pkg/ops/comparison.py``)
against CPU: results in every dtype, Python integers past a dtype's range, in-place forms, ``isin``."""

import pytest
import torch
from elementwise import BinaryOpChecks, check, values
from reference import assert_matches_cpu

COMPARISONS = {
    "eq": torch.eq,
    "ne": torch.ne,
    "lt": torch.lt,
    "le": torch.le,
    "gt": torch.gt,
    "ge": torch.ge,
    "logical_and": torch.logical_and,
    "logical_or": torch.logical_or,
    "logical_xor": torch.logical_xor,
    "bitwise_and": torch.bitwise_and,
    "bitwise_or": torch.bitwise_or,
    "bitwise_xor": torch.bitwise_xor,
}


class TestComparisons(BinaryOpChecks):
    OPS = COMPARISONS


def test_comparisons_wrap_python_integers_like_cpu():
    u = torch.tensor([0, 1, 255], dtype=torch.uint8)
    for fn in (torch.lt, torch.eq, torch.ge):
        check(fn, u, -1)  # -1 becomes 255, as the C++ cast makes it
        check(fn, u.to(torch.int8), 1000)


@pytest.mark.parametrize("op", ["eq_", "lt_", "logical_and_", "bitwise_or_"])
def test_in_place_comparisons_keep_self_dtype(op):
    check(lambda a, b: getattr(a, op)(b), values((2, 4), torch.int32, 1), values((4,), torch.int32, 2))


# --- membership: isin ---------------------------------------------------------------------------

ISIN_CASES = {
    "ints in floats": lambda: (torch.tensor([1, 2, 3]), torch.tensor([2.0, 5.0])),
    "a transposed matrix": lambda: (torch.tensor([[1, 2], [3, 4]]).t(), torch.tensor([[2, 5]])),
    "nan matches nothing": lambda: (torch.tensor([1.0, float("nan"), 3.0]), torch.tensor([float("nan"), 3.0])),
    "half in int8": lambda: (torch.tensor([1.5, 2.0], dtype=torch.float16), torch.tensor([2], dtype=torch.int8)),
    "a number": lambda: (torch.tensor([1, 2, 3]), 2),
    "a fraction among ints": lambda: (torch.tensor([1, 2, 3]), 2.5),
    "in a tensor": lambda: (2, torch.tensor([1, 2, 3])),
    "bool elements": lambda: (torch.tensor([True]), torch.tensor([1])),
    "complex tests": lambda: (torch.tensor([1]), torch.tensor([1j])),
    "bool tests of a number": lambda: (1, torch.tensor([True])),
}


@pytest.mark.usefixtures("strict")
@pytest.mark.parametrize("invert", [False, True])
@pytest.mark.parametrize("case", ISIN_CASES)
def test_isin_like_cpu(case, invert):
    elements, tests = ISIN_CASES[case]()
    on_npy = [value.to("npy") if isinstance(value, torch.Tensor) else value for value in (elements, tests)]
    try:
        want = torch.isin(elements, tests, invert=invert)
    except RuntimeError as cpu_error:
        with pytest.raises(RuntimeError) as npy_error:
            torch.isin(*on_npy, invert=invert)
        assert str(npy_error.value) == str(cpu_error)
        return
    got = torch.isin(*on_npy, invert=invert)
    assert_matches_cpu(got, want)
    assert got.stride() == want.stride()
    out = torch.empty(0, dtype=torch.bool, device="npy")
    assert torch.isin(*on_npy, invert=invert, out=out) is out
    assert_matches_cpu(out, want)
