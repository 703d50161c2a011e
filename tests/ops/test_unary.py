"""Elementwise functions of one tensor (``backend_pkg/ops/unary.py``) against CPU, dtype by dtype:
results, errors, ``out=`` and in-place forms, clamping.

``neg`` (a kernel of ``arithmetic.py``) and ``logit`` (of ``losses.py``, beside binary cross entropy)
are checked here with the other functions of one tensor.
"""

from functools import partial

import pytest
import torch
from elementwise import (
    ATEN_OUT,
    INF,
    NAN,
    OUT_DTYPES,
    assert_half_precision_matches_cpu_bit_for_bit,
    check,
    npy_or_scalar,
    values,
    with_out,
)
from reference import FLOAT_DTYPES, make

import backend_pkg

FLOAT_FUNCTIONS = [
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "erf", "logit",
]  # fmt: skip
OTHER_UNARY = [
    "abs", "neg", "sign", "sgn", "floor", "ceil", "trunc", "round", "frac", "relu",
    "logical_not", "bitwise_not", "isnan", "isinf", "isposinf", "isneginf", "isfinite", "nan_to_num",
]  # fmt: skip
UNARY = {
    **{name: getattr(torch, name) for name in FLOAT_FUNCTIONS + OTHER_UNARY},
    "round_decimals": partial(torch.round, decimals=2),
    "round_negative_decimals": partial(torch.round, decimals=-1),
    "clamp": partial(torch.clamp, min=-1, max=2.5),
    "clamp_min": partial(torch.clamp_min, min=0),
    "clamp_max_tensor": partial(torch.clamp_max, max=torch.tensor(1, dtype=torch.int8)),
    "nan_to_num_args": partial(torch.nan_to_num, nan=1.5, posinf=2.0, neginf=-3.0),
}
NO_IN_PLACE = {"isnan", "isinf", "isposinf", "isneginf", "isfinite"}


def in_place(name):
    """The in-place form of ``UNARY[name]``, as a method call."""
    fn = UNARY[name]
    method = f"{fn.func.__name__ if isinstance(fn, partial) else name}_"
    keywords = fn.keywords if isinstance(fn, partial) else {}
    return lambda t: getattr(t, method)(**keywords)


@pytest.mark.parametrize("name", UNARY)
def test_unary(name, dtype):
    check(UNARY[name], values((3, 4), dtype))


@pytest.mark.parametrize("name", [name for name in UNARY if name != "isfinite"])
@pytest.mark.parametrize("dtype", [torch.int32, torch.float32], ids=str)
def test_unary_out_resizes_an_empty_tensor(name, dtype):
    x = values((3, 4), dtype)
    check(with_out(ATEN_OUT.get(name, UNARY[name]), [x]), x)


@pytest.mark.parametrize("name", [name for name in UNARY if name not in NO_IN_PLACE])
@pytest.mark.parametrize("dtype", [torch.int16, torch.float16, torch.float64, torch.complex64], ids=str)
def test_unary_in_place_through_a_view(name, dtype):
    def through_view(base):
        in_place(name)(base[1:, ::2])
        return base

    check(through_view, values((3, 4), dtype))


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", [torch.bool, torch.int32, torch.float32], ids=str)
def test_unary_results_never_alias_the_input(name, dtype):
    x = npy_or_scalar(values((3, 4), dtype))
    try:
        result = UNARY[name](x)
    except (RuntimeError, NotImplementedError):
        return  # refused: test_unary compares the error with CPU's
    assert result.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()


def test_unary_ops_with_no_kernel_of_their_own_compose():
    """isfinite is a composite: PyTorch runs it as eq, abs, ne and mul on npy."""
    assert "aten::isfinite" not in backend_pkg.registered_ops()
    check(torch.isfinite, values((4, 2), torch.float16))


@pytest.mark.parametrize("name", ["sigmoid", "round_decimals"])
def test_half_precision_matches_cpu_bit_for_bit(name):
    assert_half_precision_matches_cpu_bit_for_bit(UNARY[name])


def test_sign_of_nan_is_zero_like_cpu():
    check(torch.sign, torch.tensor([NAN, -0.0, 2.0, -INF]))


def test_sgn_of_complex_zero_and_infinities():
    check(torch.sgn, torch.tensor([0j, complex(3, -4), complex(INF, 1), complex(NAN, 0)]))


def test_round_half_to_even_with_decimals():
    x = torch.tensor([0.125, 0.375, -2.5, 1234.5678, 15.0, 25.0], dtype=torch.float64)
    for decimals in (0, 1, 2, -1):
        check(partial(torch.round, decimals=decimals), x)


def test_in_place_abs_refuses_complex_like_cpu():
    check(lambda t: t.abs_(), make((2,), torch.complex64))


def test_erf_matches_cpu_far_into_the_tails():
    check(torch.erf, torch.linspace(-7, 7, 141, dtype=torch.float64))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_nan_to_num_defaults_are_the_dtype_extremes(dtype):
    check(torch.nan_to_num, torch.tensor([NAN, INF, -INF, 1.0], dtype=dtype))


# --- clamp ------------------------------------------------------------------

CLAMPS = {
    "scalars": partial(torch.clamp, min=-1, max=1),
    "min_only": partial(torch.clamp, min=0.5),
    "max_only": partial(torch.clamp, max=-2),
    "min_above_max": partial(torch.clamp, min=3, max=1),
    "nan_bound": partial(torch.clamp, min=NAN),
    "none": torch.clamp,
    "bool_bounds": partial(torch.clamp, min=False, max=True),
    "complex_bound": partial(torch.clamp, min=1j),
    "complex_min": partial(torch.clamp_min, min=1j),
    "bound_out_of_range": partial(torch.clamp, max=1000),
    "bound_out_of_half_range": partial(torch.clamp_max, max=1e5),
    # Tensor bounds live on the clamped tensor's device.
    "tensor_bounds": lambda t: torch.clamp(
        t,
        torch.zeros(4, dtype=torch.int8, device=t.device),
        torch.full((3, 1), 2.5, dtype=torch.float64, device=t.device),
    ),
    "tensor_nan_bound": lambda t: torch.clamp(t, torch.tensor([NAN, 0.0, 0.0, 0.0], device=t.device)),
}


@pytest.mark.parametrize("name", CLAMPS)
@pytest.mark.parametrize(
    "dtype", [torch.bool, torch.uint8, torch.int64, torch.float16, torch.float32, torch.complex64], ids=str
)
def test_clamp(name, dtype):
    check(CLAMPS[name], values((3, 4), dtype))


@pytest.mark.parametrize("name", [name for name in UNARY if name != "isfinite"])
@pytest.mark.parametrize("out_dtype", OUT_DTYPES, ids=str)
@pytest.mark.parametrize("dtype", [torch.int32, torch.float32, torch.complex64], ids=str)
def test_unary_out_of_another_dtype(name, out_dtype, dtype):
    """Promoting ops cast into any out= dtype that holds the result; the others
    (neg, floor, clamp by Python bounds...) take their result's dtype only."""
    write = with_out(ATEN_OUT.get(name, UNARY[name]), None, out_dtype)
    if out_dtype == torch.float64:
        # Computed in float32, results agree to float32's precision in any out=.
        check(lambda t: write(t).float(), values((3, 4), dtype))
    else:
        check(write, values((3, 4), dtype))
