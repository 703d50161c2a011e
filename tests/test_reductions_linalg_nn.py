"""Reductions, matrix products and the nn ops training needs: npy against CPU.

Most tests run one call on CPU tensors and on their npy copies and demand the
same outcome: equal results (device, dtype, shape, values), or the same error
(type and message; the quoted C++ kernel name in "not implemented for"
messages aside, since npy kernels are not CPU kernels).
"""

import warnings

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    DTYPES,
    FLOAT_DTYPES,
    as_tuple,
    assert_layer_trains_like_cpu,
    assert_like_cpu,
    assert_matches_cpu,
    assert_backward_like_cpu,
    assert_same_error,
    make,
    npy,
)
from torch.utils._python_dispatch import TorchDispatchMode

import backend_pkg

aten = torch.ops.aten
INEXACT_DTYPES = FLOAT_DTYPES + [torch.complex64, torch.complex128]
NONE, MEAN, SUM = 0, 1, 2  # at::Reduction


def exact_data(shape, dtype, seed=0):
    """Small integers in ``dtype``: every sum and product of a few is exact, in any order."""
    return make(shape, torch.int8, seed).to(dtype)


# --- reductions ---------------------------------------------------------------

DIM_CASES = [
    pytest.param({}, id="all"),
    pytest.param({"dim": 1}, id="dim1"),
    pytest.param({"dim": -1, "keepdim": True}, id="dim-1-keep"),
    pytest.param({"dim": (0, 2)}, id="dims02"),
    pytest.param({"dim": (2, 0), "keepdim": True}, id="dims20-keep"),
]

REDUCTIONS = {
    "mean": lambda t, kw: t.mean(**kw),
    "amax": lambda t, kw: t.amax(**kw),
    "amin": lambda t, kw: t.amin(**kw),
    "var": lambda t, kw: t.var(**kw),
    "std": lambda t, kw: t.std(**kw, correction=0),
    "var_mean": lambda t, kw: torch.var_mean(t, **kw, correction=2),
    "std_mean": lambda t, kw: torch.std_mean(t, **kw),
    "all": lambda t, kw: t.all(**kw) if kw else t.all(),
    "any": lambda t, kw: t.any(**kw) if kw else t.any(),
    "logsumexp": lambda t, kw: t.logsumexp(**{"dim": (0, 1, 2), **kw}),
    "vector_norm": lambda t, kw: torch.linalg.vector_norm(t, **kw),
}


@pytest.mark.parametrize("kwargs", DIM_CASES)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_over_dims(name, kwargs, dtype):
    a = make((3, 4, 5), dtype)
    assert_like_cpu(lambda t: REDUCTIONS[name](t, kwargs), a)


ALONG_ONE_DIM = {
    "prod": lambda t, d, k: t.prod(d, keepdim=k),
    "max": lambda t, d, k: t.max(d, keepdim=k),
    "min": lambda t, d, k: t.min(d, keepdim=k),
    "argmax": lambda t, d, k: t.argmax(d, keepdim=k),
    "argmin": lambda t, d, k: t.argmin(d, keepdim=k),
    "cumsum": lambda t, d, k: t.cumsum(d),
    "cumprod": lambda t, d, k: t.cumprod(d),
    "softmax": lambda t, d, k: aten._softmax(t, d, False),
    "log_softmax": lambda t, d, k: aten._log_softmax(t, d, False),
    "all": lambda t, d, k: t.all(d, keepdim=k),
}


@pytest.mark.parametrize("dim, keepdim", [(0, False), (1, True), (-1, False)])
@pytest.mark.parametrize("name", ALONG_ONE_DIM)
def test_reductions_along_one_dim(name, dim, keepdim, dtype):
    if name == "log_softmax" and dtype == torch.float16 and dim == -1:
        pytest.skip("tested with a half-precision tolerance below")
    a = make((3, 4, 5), dtype)
    assert_like_cpu(lambda t: ALONG_ONE_DIM[name](t, dim, keepdim), a)


def test_log_softmax_half_over_the_last_dim_within_half_precision():
    # CPU's last-dim half kernel rounds an intermediate to half; npy rounds only the
    # result, so the two differ by rounding (npy's is the nearer to the exact value).
    a = make((3, 4, 5), torch.float16)
    result = aten._log_softmax(npy(a), -1, False)
    assert (result.dtype, result.shape) == (torch.float16, a.shape)
    torch.testing.assert_close(result.cpu(), aten._log_softmax(a, -1, False), atol=1e-3, rtol=1e-3)
    exact = aten._log_softmax(a.double(), -1, False)
    torch.testing.assert_close(result.cpu().double(), exact, atol=6e-4, rtol=1e-3)


FULL = {
    "max": lambda t: t.max(),
    "min": lambda t: t.min(),
    "argmax": lambda t: t.argmax(),
    "argmin_keepdim": lambda t: t.argmin(keepdim=True),
    "prod": lambda t: t.prod(),
    "mean_dtype": lambda t: t.mean(dtype=torch.complex128),
    "prod_dtype": lambda t: t.prod(1, dtype=torch.float64),
    "cumsum_dtype": lambda t: t.cumsum(0, dtype=torch.int16),
    "cumprod_dtype": lambda t: t.cumprod(1, dtype=torch.float32),
    "norm": lambda t: t.norm(),
    "norm_p_dim": lambda t: t.norm(1, dim=1),
    "norm_dtype": lambda t: aten.norm.ScalarOpt_dim_dtype(t, 3, [0], True, dtype=torch.float64),
    "all_dims_empty_list": lambda t: aten.all.dims(t, []),
    "any_dims_none": lambda t: aten.any.dims(t, None, True),
}


@pytest.mark.filterwarnings("ignore:Casting complex values to real")  # tested below
@pytest.mark.parametrize("name", FULL)
def test_full_reductions_and_dtype_arguments(name, dtype):
    assert_like_cpu(FULL[name], make((3, 4), dtype))


@pytest.mark.parametrize("fn", [lambda t: t.prod(dtype=torch.float64), lambda t: t.cumsum(0, dtype=torch.int32)])
def test_complex_input_to_a_real_dtype_warns_and_keeps_the_real_part(fn, warn_always):
    a = make((3,), torch.complex64)
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
        result = fn(npy(a))
    assert_matches_cpu(result, fn(a.real))


@pytest.mark.parametrize("ord", [0, 1, 2, 3, 0.5, -1, -2.5, float("inf"), float("-inf")], ids=str)
@pytest.mark.parametrize("dtype", INEXACT_DTYPES, ids=str)
def test_vector_norm_orders(ord, dtype):
    a = make((4, 6), dtype)
    a[1, 2] = 0
    assert_like_cpu(lambda t: torch.linalg.vector_norm(t, ord), a)
    assert_like_cpu(lambda t: torch.linalg.vector_norm(t, ord, dim=1, keepdim=True), a)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.complex128, torch.int32], ids=str)
def test_vector_norm_dtype_argument(dtype):
    for source in (torch.float32, torch.complex64):
        assert_like_cpu(lambda t: torch.linalg.vector_norm(t, dim=0, dtype=dtype), make((3, 2), source))


EMPTY_AND_SCALAR = {
    "max": lambda t: t.max(),
    "amax": lambda t: t.amax(),
    "amax0": lambda t: t.amax(0),
    "amin-1": lambda t: t.amin(-1),
    "max0": lambda t: t.max(0),
    "min-1": lambda t: t.min(-1),
    "argmax": lambda t: t.argmax(),
    "argmax0": lambda t: t.argmax(0),
    "argmin-1": lambda t: t.argmin(-1),
    "mean": lambda t: t.mean(),
    "mean0": lambda t: t.mean(0),
    "var0": lambda t: t.var(0),
    "std": lambda t: t.std(),
    "prod0": lambda t: t.prod(0),
    "cumsum0": lambda t: t.cumsum(0),
    "cumprod-1": lambda t: t.cumprod(-1),
    "logsumexp0": lambda t: t.logsumexp(0),
    "norm_inf": lambda t: torch.linalg.vector_norm(t, float("inf")),
    "norm_-1_dim0": lambda t: torch.linalg.vector_norm(t, -1, dim=0),
    "norm_2": lambda t: torch.linalg.vector_norm(t),
    "all0": lambda t: t.all(0),
    "any": lambda t: t.any(),
    "softmax0": lambda t: aten._softmax(t, 0, False),
}


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")
@pytest.mark.parametrize("shape", [(0, 3), (2, 0), ()], ids=str)
@pytest.mark.parametrize("name", EMPTY_AND_SCALAR)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
def test_empty_and_zero_dim_inputs(name, shape, dtype):
    assert_like_cpu(EMPTY_AND_SCALAR[name], make(shape, dtype))


def test_max_and_argmax_pick_the_first_of_ties_and_propagate_nan():
    ties = torch.tensor([[3, 1, 3, 3], [0, 0, -2, 0]])
    for dtype in (torch.int64, torch.float32):
        assert_like_cpu(lambda t: t.max(1), ties.to(dtype))
        assert_like_cpu(lambda t: t.min(0), ties.to(dtype))
        assert_like_cpu(lambda t: t.argmax(1), ties.to(dtype))
    nan = torch.tensor([[1.0, float("nan"), 5.0, float("nan")], [2.0, -1.0, 0.0, 3.0]])
    for fn in (lambda t: t.max(1), lambda t: t.argmin(1), lambda t: t.amax(1), lambda t: t.max()):
        assert_like_cpu(fn, nan)


def test_half_reductions_accumulate_in_float32():
    ones = torch.ones(4096, dtype=torch.float16)
    for fn in (lambda t: t.mean(), lambda t: t.cumsum(0)[-1:], lambda t: torch.linalg.vector_norm(t, 1)):
        result = fn(npy(ones))
        assert torch.equal(result.cpu(), fn(ones))  # 4096, not half precision's stuck-at-2048


def test_integer_scans_and_products_wrap_like_cpu():
    big = torch.full((70,), 3, dtype=torch.int64)
    assert_like_cpu(lambda t: t.cumprod(0), big)
    assert_like_cpu(lambda t: t.prod(), big)
    assert_like_cpu(lambda t: t.cumsum(0, dtype=torch.int8), torch.full((50,), 100, dtype=torch.uint8))


@pytest.mark.parametrize("correction", [0, 1, 2.5, 5], ids=str)
@pytest.mark.parametrize("dtype", INEXACT_DTYPES, ids=str)
def test_var_and_std_corrections(correction, dtype):
    a = make((3, 5), dtype)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "(var|std).*degrees of freedom")
        for fn in (torch.var, torch.std, torch.var_mean, torch.std_mean):
            assert_like_cpu(lambda t: fn(t, 1, correction=correction), a)


@pytest.mark.parametrize("fn", [torch.var, torch.std_mean], ids=["var", "std_mean"])
def test_too_few_degrees_of_freedom_warn_like_cpu(fn):
    a = make((2, 3), torch.float32)
    with pytest.warns(UserWarning, match=r"\(\): degrees of freedom is <= 0") as cpu:
        fn(a, 1, correction=3)
    with pytest.warns(UserWarning, match=r"\(\): degrees of freedom is <= 0") as npy_warnings:
        fn(npy(a), 1, correction=3)
    assert str(npy_warnings[0].message).split(" (")[0] == str(cpu[0].message).split(" (")[0]


def test_logsumexp_of_infinities_and_empty_slices():
    a = torch.tensor([[0.0, float("-inf")], [float("-inf"), float("-inf")], [float("inf"), 1.0]])
    assert_like_cpu(lambda t: t.logsumexp(1), a)
    assert_like_cpu(lambda t: t.logsumexp(0, keepdim=True), torch.zeros(0, 3))
    assert_like_cpu(lambda t: t.logsumexp(1), make((3, 4), torch.int16))  # integers give floats


REDUCTION_ERRORS = [
    (lambda t: t.long().mean(), "Input dtype must be either a floating point or complex dtype"),
    (lambda t: t.mean(dtype=torch.int32), "Optional dtype must be either a floating point"),
    (lambda t: t.long().var(), "std and var only support floating point and complex dtypes"),
    (lambda t: torch.var_mean(t.bool()), "var_mean only support floating point"),
    (lambda t: t.bool().argmax(), r"argmax\(\): does not support bool input"),
    (lambda t: t.cfloat().max(0), r"max\(\): does not support complex input"),
    (lambda t: t.cfloat().amax(), "not implemented for 'ComplexFloat'"),
    (lambda t: t.amax(3), "Dimension out of range"),
    (lambda t: t.amax((0, 0)), "appears multiple times in the list of dims"),
    (lambda t: t[:0].amax(0), r"amax\(\): Expected reduction dim 0 to have non-zero size"),
    (lambda t: t[:0].max(), "Expected reduction dim to be specified for input.numel\\(\\) == 0"),
    (lambda t: t.long().norm(), "Expected a floating point or complex tensor as input. Got Long"),
    (lambda t: aten.norm.ScalarOpt_dim(t.long(), 2, [0]), "norm\\(\\): input dtype should be"),
    (lambda t: torch.linalg.vector_norm(t, dtype=torch.float16), "without narrowing"),
    (lambda t: torch.linalg.vector_norm(t, dtype=torch.complex64), "dtype should be real for real inputs"),
    (lambda t: torch.linalg.vector_norm(t[:0], float("inf")), "does not have an identity"),
    (lambda t: t.cumsum(2), "Dimension out of range"),
]


@pytest.mark.parametrize("fn, match", REDUCTION_ERRORS, ids=[m for _, m in REDUCTION_ERRORS])
def test_reduction_errors_match_cpu(fn, match):
    assert_same_error(fn, make((3, 4), torch.float32), match=match)


@st.composite
def strided_views(draw):
    """A float64 tensor, permuted and sliced with steps, and a dim of it."""
    shape = draw(st.lists(st.integers(1, 5), min_size=1, max_size=4))
    base = make(shape, torch.float64, draw(st.integers(0, 2**16)))
    view = base.permute(draw(st.permutations(range(base.dim()))))
    for dim in range(view.dim()):
        start = draw(st.integers(0, view.shape[dim] - 1))
        view = view.narrow(dim, start, draw(st.integers(1, view.shape[dim] - start)))
        view = view[(slice(None),) * dim + (slice(None, None, draw(st.integers(1, 2))),)]
    return view, draw(st.integers(-view.dim(), view.dim() - 1))


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")  # single-element dims
@settings(max_examples=60, deadline=None)
@given(strided_views())
def test_reductions_read_strided_views(case):
    view, dim = case
    for fn in (
        lambda t: t.mean(dim),
        lambda t: t.max(dim),
        lambda t: t.var(dim, keepdim=True),
        lambda t: t.cumsum(dim),
        lambda t: t.logsumexp(dim),
        lambda t: aten._softmax(t, dim, False),
    ):
        assert_like_cpu(fn, view)


def labels(like, *values):
    """Class labels on ``like``'s device."""
    return torch.tensor(values).to(like.device)


# name: (the out tensor's dtype, the call writing into it)
OUT_VARIANTS = {
    "sum": (torch.float32, lambda t, out: aten.sum.out(t, out=out)),
    "sum_dims": (torch.float32, lambda t, out: torch.sum(t, 0, out=out)),
    "mean": (torch.float32, lambda t, out: torch.mean(t, 1, out=out)),
    "mean_dtype": (torch.float64, lambda t, out: aten.mean.dtype_out(t, dtype=torch.float64, out=out)),
    "prod": (torch.float32, lambda t, out: aten.prod.out(t, out=out)),
    "prod_dim": (torch.float32, lambda t, out: torch.prod(t, 0, out=out)),
    "amax": (torch.float32, lambda t, out: torch.amax(t, (0, 1), out=out)),
    "amin": (torch.float32, lambda t, out: torch.amin(t, 1, True, out=out)),
    "max": (torch.float32, lambda t, out: torch.max(t, out=out)),
    "min": (torch.float32, lambda t, out: torch.min(t, out=out)),
    "argmax": (torch.int64, lambda t, out: torch.argmax(t, 1, out=out)),
    "argmin": (torch.int64, lambda t, out: torch.argmin(t, 0, True, out=out)),
    "var": (torch.float32, lambda t, out: torch.var(t, 0, out=out)),
    "std": (torch.float32, lambda t, out: torch.std(t, 1, correction=0, out=out)),
    "cumsum": (torch.float32, lambda t, out: torch.cumsum(t, 1, out=out)),
    "cumprod": (torch.float32, lambda t, out: torch.cumprod(t, 0, out=out)),
    "logsumexp": (torch.float32, lambda t, out: torch.logsumexp(t, 1, out=out)),
    "vector_norm": (torch.float32, lambda t, out: torch.linalg.vector_norm(t, 3, 1, out=out)),
    "norm": (torch.float32, lambda t, out: aten.norm.out(t, 1, [0], out=out)),
    "norm_dtype": (torch.float64, lambda t, out: aten.norm.dtype_out(t, 2, [1], False, dtype=torch.float64, out=out)),
    "all": (torch.bool, lambda t, out: torch.all(t, 1, out=out)),
    "all_dims": (torch.bool, lambda t, out: aten.all.dims_out(t, [0, 1], out=out)),
    "all_all": (torch.bool, lambda t, out: aten.all.all_out(t, out=out)),
    "any": (torch.bool, lambda t, out: torch.any(t, 1, out=out)),
    "any_dims": (torch.bool, lambda t, out: aten.any.dims_out(t, [0], out=out)),
    "any_all": (torch.bool, lambda t, out: aten.any.all_out(t, out=out)),
    "mm": (torch.float32, lambda t, out: torch.mm(t, t.T, out=out)),
    "addmm": (torch.float32, lambda t, out: torch.addmm(t[0, :1], t, t.T, alpha=2, out=out)),
    "bmm": (torch.float32, lambda t, out: torch.bmm(t[None], t.T[None], out=out)),
    "baddbmm": (torch.float32, lambda t, out: torch.baddbmm(t[:1, :1], t[None], t.T[None], beta=0.5, out=out)),
    "addbmm": (torch.float32, lambda t, out: torch.addbmm(t[:1, :1], t[None], t.T[None], out=out)),
    "mv": (torch.float32, lambda t, out: torch.mv(t, t[0], out=out)),
    "addmv": (torch.float32, lambda t, out: torch.addmv(t[:, 0], t.T, t[:, 1], out=out)),
    "dot": (torch.float32, lambda t, out: torch.dot(t[0], t[1], out=out)),
    "softmax": (torch.float32, lambda t, out: aten._softmax.out(t, 1, False, out=out)),
    "log_softmax": (torch.float32, lambda t, out: aten._log_softmax.out(t, 0, False, out=out)),
    "softmax_backward": (
        torch.float32,
        lambda t, out: aten._softmax_backward_data.out(t, t * 0.125, 0, torch.float32, grad_input=out),
    ),
    "log_softmax_backward": (
        torch.float32,
        lambda t, out: aten._log_softmax_backward_data.out(t, t * 0.125, 1, torch.float32, out=out),
    ),
    "threshold_backward": (torch.float32, lambda t, out: aten.threshold_backward.grad_input(t, t, 1, grad_input=out)),
    "sigmoid_backward": (torch.float32, lambda t, out: aten.sigmoid_backward.grad_input(t, t, grad_input=out)),
    "tanh_backward": (torch.float32, lambda t, out: aten.tanh_backward.grad_input(t, t, grad_input=out)),
    "gelu": (torch.float32, lambda t, out: aten.gelu.out(t, approximate="tanh", out=out)),
    "gelu_backward": (torch.float32, lambda t, out: aten.gelu_backward.grad_input(t, t, grad_input=out)),
    "mse_loss": (torch.float32, lambda t, out: aten.mse_loss.out(t, t * 2, 2, out=out)),
    "mse_loss_backward": (
        torch.float32,
        lambda t, out: aten.mse_loss_backward.grad_input(t[0, 0], t, t * 2, MEAN, grad_input=out),
    ),
    "nll_loss_backward": (
        torch.float32,
        lambda t, out: aten.nll_loss_backward.grad_input(
            t[0, 0], t, labels(t, 0, 2, 1), None, MEAN, -100, t[1, 1], grad_input=out
        ),
    ),
    "nll_loss2d_backward": (
        torch.float32,
        lambda t, out: aten.nll_loss2d_backward.grad_input(
            t[0, 0], t[None, :, None], labels(t, [[0, 2, 1]]), None, SUM, -100, t[1, 1], grad_input=out
        ),
    ),
}


@pytest.mark.parametrize("name", OUT_VARIANTS)
def test_out_variants_write_into_out(name):
    dtype, call = OUT_VARIANTS[name]
    a = exact_data((3, 3), torch.float32, 1)
    expected = call(a, torch.empty(0, dtype=dtype))
    out = npy(torch.empty(0, dtype=dtype))
    result = call(npy(a), out)
    assert result is out
    assert_matches_cpu(result, expected)


@pytest.mark.parametrize(
    "call",
    [
        lambda t, a, b: torch.max(t, 1, out=(a, b.long())),
        lambda t, a, b: torch.min(t, 0, True, out=(a, b.long())),
        lambda t, a, b: aten.var_mean.correction_out(t, [1], out0=a, out1=b),
        lambda t, a, b: aten.std_mean.correction_out(t, None, correction=0, out0=a, out1=b),
        lambda t, a, b: aten.nll_loss_forward.output(t, labels(t, 0, 2, 1), None, MEAN, -100, output=a, total_weight=b),
        lambda t, a, b: aten.nll_loss2d_forward.output(
            t[None, :, None], labels(t, [[0, 2, 1, 0]]), None, SUM, -100, output=a, total_weight=b
        ),
    ],
    ids=["max.dim_max", "min.dim_min", "var_mean", "std_mean", "nll_loss_forward", "nll_loss2d_forward"],
)
def test_out_variants_with_two_results(call):
    a = make((3, 4), torch.float32)
    expected = call(a, torch.empty(0), torch.empty(0))
    outs = npy(torch.empty(0)), npy(torch.empty(0))
    for got, want in zip(call(npy(a), *outs), expected):
        assert_matches_cpu(got, want)
    assert_matches_cpu(outs[0], expected[0])


def test_out_refuses_a_narrower_dtype_like_cpu():
    a = make((2, 3), torch.float32)
    assert_same_error(lambda t: torch.mean(t, 0, out=torch.empty(0, dtype=torch.int64, device=t.device)), a, match="can't be cast to the desired output type")


# --- matrix products ------------------------------------------------------------


def product_operands(dtype):
    """Operands whose products are exact in ``dtype`` (so any summation order agrees)."""
    data = exact_data if dtype == torch.float16 else make
    return {
        "A": data((3, 4), dtype, 1),
        "B": data((4, 5), dtype, 2),
        "C": data((3, 5), dtype, 3),
        "v": data((4,), dtype, 4),
        "w": data((3,), dtype, 5),
        "b1": data((2, 3, 4), dtype, 6),
        "b2": data((2, 4, 5), dtype, 7),
    }


PRODUCTS = {
    "mm": lambda o, al, be: torch.mm(o["A"], o["B"]),
    "addmm": lambda o, al, be: torch.addmm(o["C"], o["A"], o["B"], beta=be, alpha=al),
    "addmm_broadcast_self": lambda o, al, be: torch.addmm(o["C"][0], o["A"], o["B"], beta=be, alpha=al),
    "bmm": lambda o, al, be: torch.bmm(o["b1"], o["b2"]),
    "baddbmm": lambda o, al, be: torch.baddbmm(o["C"], o["b1"], o["b2"], beta=be, alpha=al),
    "addbmm": lambda o, al, be: torch.addbmm(o["C"], o["b1"], o["b2"], beta=be, alpha=al),
    "mv": lambda o, al, be: torch.mv(o["A"], o["v"]),
    "addmv": lambda o, al, be: torch.addmv(o["w"], o["A"], o["v"], beta=be, alpha=al),
    "dot": lambda o, al, be: torch.dot(o["v"], o["v"]),
    "matmul_2d_2d": lambda o, al, be: o["A"] @ o["B"],
    "matmul_1d_2d": lambda o, al, be: o["v"] @ o["B"],
    "matmul_2d_1d": lambda o, al, be: o["A"] @ o["v"],
    "matmul_1d_1d": lambda o, al, be: o["v"] @ o["v"],
    "matmul_3d_2d": lambda o, al, be: o["b1"] @ o["B"],
    "matmul_3d_3d": lambda o, al, be: o["b1"] @ o["b2"],
    "matmul_broadcast": lambda o, al, be: o["A"][None, None] @ o["b2"][:, None],
    "linear_bias": lambda o, al, be: F.linear(o["b1"], o["B"].T, o["C"][0]),
    "linear": lambda o, al, be: F.linear(o["A"], o["B"].T),
}


@pytest.mark.parametrize("name", PRODUCTS)
def test_matrix_products(name, dtype):
    operands = product_operands(dtype)
    inexact = dtype.is_floating_point or dtype.is_complex
    alpha, beta = (0.5, -1.5) if inexact else (2, 3)
    assert_like_cpu(lambda *tensors: PRODUCTS[name](dict(zip(operands, tensors)), alpha, beta), *operands.values())


def test_float32_products_of_random_values():
    a, b, c = make((16, 32), torch.float32, 1), make((32, 8), torch.float32, 2), make((8,), torch.float32, 3)
    assert_like_cpu(torch.mm, a, b)
    assert_like_cpu(lambda x, y, z: torch.addmm(z, x, y, beta=0.25, alpha=-2), a, b, c)
    assert_like_cpu(torch.mv, a, b[:, 0])


def test_integer_products_stay_integers_and_wrap_like_cpu():
    a = torch.full((2, 300), 3, dtype=torch.int8)
    result = npy(a) @ npy(a.T)
    assert result.dtype == torch.int8
    assert_matches_cpu(result, a @ a.T)
    assert_like_cpu(lambda x: torch.addmm(x[:, :2], x, x.T, alpha=7, beta=-1), a)


def test_scalars_convert_to_the_operands_dtype_like_cpu():
    a = make((3, 3), torch.int64)
    assert_like_cpu(lambda t: torch.addmm(t, t, t, beta=0.5, alpha=2.7), a)  # 0 and 2, as in C++
    nan = torch.full((3, 3), float("nan"))
    assert_like_cpu(lambda c, t: torch.addmm(c, t, t, beta=0), nan, a.float())  # beta=0 ignores NaN
    assert_like_cpu(lambda c, t: torch.addmv(c, t, t[0], beta=0), nan[0], a.float())


PRODUCT_ERRORS = [
    (lambda t: torch.mm(t, t), "mat1 and mat2 shapes cannot be multiplied \\(2x3 and 2x3\\)"),
    (lambda t: torch.mm(t, t[0]), "mat2 must be a matrix"),
    (lambda t: torch.mm(t, t.T.double()), "expected m1 and m2 to have the same dtype"),
    (lambda t: torch.mm(t.bool(), t.T.bool()), "not implemented for 'Bool'"),
    (lambda t: torch.addmm(t[:, :2].double(), t, t.T), "self and mat2 must have the same dtype"),
    (lambda t: torch.addmm(t[:, :2], t[0], t.T), "mat1 must be a matrix, got 1-D tensor"),
    (lambda t: torch.addmm(t[0], t, t.T), "The expanded size of the tensor \\(2\\) must match"),
    (lambda t: torch.addmm(t[:, :2], t, t.T, alpha=1j), "value cannot be converted to type"),
    (lambda t: torch.bmm(t, t.T), "batch1 must be a 3D tensor"),
    (lambda t: torch.bmm(t[None].expand(2, 2, 3), t.T[None]), "Expected size for first two dimensions of batch2"),
    (lambda t: torch.bmm(t[None], t.T[None].double()), "expected scalar type Float but found Double"),
    (lambda t: torch.baddbmm(t[None, :, :2].double(), t[None], t.T[None]), "Input dtypes must be the same"),
    (lambda t: torch.baddbmm(t[None, :, :2], t[None], t[None]), "The expanded size of the tensor"),
    (lambda t: torch.addbmm(t[:, :2], t[None], t.T[None].expand(2, 3, 2)), "must have same number of batches"),
    (lambda t: torch.addbmm(t, t[None], t[None]), "Incompatible matrix sizes for bmm \\(2x3 and 2x3\\)"),
    (lambda t: torch.mv(t[0], t[0]), "vector \\+ matrix @ vector expected, got 1, 1, 1"),
    (lambda t: torch.mv(t, t[0, :2]), "size mismatch, got input \\(2\\), mat \\(2x3\\), vec \\(2\\)"),
    (lambda t: torch.mv(t, t[0].long()), "addmv input tensors must have the same dtype"),
    (lambda t: torch.addmv(t[0], t, t[0]), "size mismatch, got input \\(3\\)"),
    (lambda t: torch.dot(t, t[0]), "1D tensors expected, but got 2D and 1D tensors"),
    (lambda t: torch.dot(t[0], t[1].double()), "expected both vectors to have same dtype"),
    (lambda t: torch.dot(t[0], t[1, :2]), "inconsistent tensor size"),
    (lambda t: torch.dot(t[0].bool(), t[1].bool()), "not implemented for 'Bool'"),
]


@pytest.mark.parametrize("fn, match", PRODUCT_ERRORS, ids=[m for _, m in PRODUCT_ERRORS])
def test_product_errors_match_cpu(fn, match):
    assert_same_error(fn, make((2, 3), torch.float32), match=match)


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
        pytest.skip("CPU's gelu_backward goes to oneDNN, which fails on shapes that broadcast: "
                    "'could not create a primitive descriptor for the reorder primitive'")
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
    return logits.to(dtype), torch.tensor([0, 4, 2, 2, 3, 1]), make((5,), torch.float64, 2).abs().round().add(1).to(dtype)


@pytest.mark.parametrize("ignore_index", [-100, 2])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("reduction", [NONE, MEAN, SUM], ids=["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_nll_loss_forward_and_backward(dtype, reduction, weighted, ignore_index):
    logits, target, weight = loss_data(dtype)
    weight = weight if weighted else None
    output, total_weight = aten.nll_loss_forward(logits, target, weight, reduction, ignore_index)
    assert_like_cpu(lambda x, t, *w: aten.nll_loss_forward(x, t, *(w or [None]), reduction, ignore_index), logits, target, *([weight] if weighted else []))
    grad = loss_data(dtype)[0][:, 0] if reduction == NONE else torch.tensor(0.5, dtype=dtype)
    assert_like_cpu(
        lambda g, x, t, tw, *w: aten.nll_loss_backward(g, x, t, *(w or [None]), reduction, ignore_index, tw),
        grad, logits, target, total_weight, *([weight] if weighted else []),
    )


@pytest.mark.parametrize("reduction", [NONE, MEAN, SUM], ids=["none", "mean", "sum"])
def test_nll_loss_of_one_unbatched_sample_and_of_images(reduction):
    logits, _, weight = loss_data(torch.float32)
    for target in (torch.tensor(3), torch.tensor([3]), torch.tensor(-100)):
        assert_like_cpu(lambda x, t: aten.nll_loss_forward(x, t, None, reduction, -100), logits[0], target)
    assert_like_cpu(
        lambda g, x, t: aten.nll_loss_backward(g, x, t, None, reduction, -100, torch.tensor(1.0).to(x.device)),
        torch.tensor(2.0), logits[0], torch.tensor(3),
    )
    images, pixels = make((2, 3, 4, 5), torch.float32), torch.randint(0, 3, (2, 4, 5), generator=torch.Generator().manual_seed(0))
    pixels[0, 0, 0] = -100
    output, total_weight = aten.nll_loss2d_forward(images, pixels, weight[:3], reduction, -100)
    assert_like_cpu(lambda x, t, w: aten.nll_loss2d_forward(x, t, w, reduction, -100), images, pixels, weight[:3])
    grad = make(output.shape, torch.float32, 3)
    assert_like_cpu(
        lambda g, x, t, tw: aten.nll_loss2d_backward(g, x, t, None, reduction, -100, tw),
        grad, images, pixels, total_weight,
    )


def test_nll_loss_with_every_target_ignored_is_nan_like_cpu():
    logits, _, _ = loss_data(torch.float32)
    target = torch.full((6,), 1)
    assert_like_cpu(lambda x, t: aten.nll_loss_forward(x, t, None, MEAN, 1), logits, target)
    assert_like_cpu(lambda x, t: aten.nll_loss_backward(torch.tensor(1.0).to(x.device), x, t, None, MEAN, 1, torch.tensor(0.0).to(x.device)), logits, target)


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
    (lambda t: aten._softmax_backward_data(t, t.double(), 1, torch.float32), "expected scalar type Float but found Double"),
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
    (lambda t: aten.nll_loss_forward(t, t[:2, 0].long(), None, 1, -100), "size mismatch \\(got input: \\[3, 4\\], target: \\[2\\]\\)"),
    (lambda t: aten.nll_loss_forward(t[0], t[:2, 0].long(), None, 1, -100), "1D target must have size 1"),
    (lambda t: aten.nll_loss_forward(t, t[0, 0].long(), None, 1, -100), "Dimension specified as 0 but tensor has no dimensions"),
    (lambda t: aten.nll_loss_forward(t, t[:, 0].long(), t[0, :3], 1, -100), "weight tensor should be defined either for all 4 classes"),
    (lambda t: aten.nll_loss_forward(t, t[:, 0].long(), t[0].double(), 1, -100), "expected scalar type Float but found Double"),
    (lambda t: aten.nll_loss_forward(t.long(), t[:, 0].long(), None, 1, -100), "not implemented for 'Long'"),
    (lambda t: aten.nll_loss_backward(t[0], t, t[:, 0].long(), None, 1, -100, t[0, 0]), "Expected a single element grad_output tensor"),
    (lambda t: aten.nll_loss_backward(t[0], t, t[:, 0].long(), None, 0, -100, t[0, 0]), "Expected a tensor of dimension 1 and tensor.size\\[0\\] == 3"),
    (lambda t: aten.nll_loss_backward(t[0, 0], t, t[:, 0].long(), None, 1, -100, t[0]), "expected total_weight to be a  single element tensor"),
    (lambda t: aten.nll_loss_backward(t[0, 0].double(), t, t[:, 0].long(), None, 1, -100, t[0, 0]), "expected scalar type Float but found Double"),
    (lambda t: aten.nll_loss2d_forward(t, t.long(), None, 1, -100), "only batches of spatial targets supported"),
    (lambda t: aten.nll_loss2d_forward(t, t[None].long(), None, 1, -100), "only batches of spatial inputs supported"),
    (lambda t: aten.nll_loss2d_forward(t[None, None], t[None, :2].long(), None, 1, -100), "size mismatch \\(got input: \\[1, 1, 3, 4\\] , target: \\[1, 2, 4\\]"),
]


@pytest.mark.parametrize("fn, match", NN_ERRORS, ids=[m for _, m in NN_ERRORS])
def test_nn_errors_match_cpu(fn, match):
    assert_same_error(fn, exact_data((3, 4), torch.float32).abs(), match=match)


# --- autograd and training --------------------------------------------------------


def gradients(fn, *leaves):
    leaves = [leaf.detach().clone().requires_grad_() for leaf in leaves]
    fn(*leaves).backward()
    return [leaf.grad for leaf in leaves]


TARGET = torch.tensor([0, 3, 1, 4])
WEIGHTS = torch.tensor([1.0, 2.0, 0.5, 1.5, 3.0])
BACKWARD = {
    "softmax": lambda a: (F.softmax(a, 1) * a.detach()).sum(),
    "log_softmax": lambda a: (F.log_softmax(a, 0) * a.detach()).sum(),
    "cross_entropy": lambda a: F.cross_entropy(a, TARGET.to(a.device)),
    "cross_entropy_weight_ignore_sum": lambda a: F.cross_entropy(
        a, TARGET.to(a.device), weight=WEIGHTS.to(a), ignore_index=3, reduction="sum"
    ),
    "nll_loss": lambda a: F.nll_loss(F.log_softmax(a, 1), TARGET.to(a.device), weight=WEIGHTS.to(a)),
    "mse_loss": lambda a: F.mse_loss(a, a.detach().flip(1) if a.device.type == "cpu" else npy(a.detach().cpu().flip(1))),
    "mse_loss_sum": lambda a: F.mse_loss(a, torch.ones(4, 5).to(a.device), reduction="sum"),
    "relu": lambda a: (F.relu(a) * a.detach()).sum(),
    "gelu": lambda a: (F.gelu(a) * a.detach()).sum(),
    "gelu_tanh": lambda a: (F.gelu(a, approximate="tanh") * a.detach()).sum(),
    "linear": lambda a: (F.linear(a, a[:3], a[0, :3]) * 0.5).sum(),
    "matmul": lambda a: (a @ a.T).sum(),
    "var": lambda a: a.var(1).sum(),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name", BACKWARD)
def test_gradients_match_cpu(name, dtype):
    a = make((4, 5), dtype)
    (expected,) = gradients(BACKWARD[name], a)
    (actual,) = gradients(BACKWARD[name], npy(a))
    assert actual.device.type == "npy"
    torch.testing.assert_close(actual.cpu(), expected)


def train(device, loss, steps=5):
    """A few SGD steps of a small MLP; the losses and the trained parameters."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).to(device)
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(32, 8, generator=generator)
    if loss is F.cross_entropy:
        y = torch.randint(0, 3, (32,), generator=generator)
    else:
        y = torch.randn(32, 3, generator=generator)
    x, y = x.to(device), y.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        value = loss(model(x), y)
        value.backward()
        optimizer.step()
        losses.append(value.item())
    return losses, [p.detach() for p in model.parameters()]


@pytest.mark.parametrize("loss", [F.cross_entropy, F.mse_loss], ids=["cross_entropy", "mse"])
def test_mlp_trains_like_cpu(loss):
    cpu_losses, cpu_params = train("cpu", loss)
    npy_losses, npy_params = train("npy", loss)
    assert cpu_losses[-1] < cpu_losses[0]  # it does learn
    torch.testing.assert_close(npy_losses, cpu_losses, rtol=0, atol=1e-6)
    for got, want in zip(npy_params, cpu_params):
        assert got.device.type == "npy"
        torch.testing.assert_close(got.cpu(), want)


def test_kernels_are_registered():
    registered = set(backend_pkg.registered_ops())
    for name in (
        "aten::mean.dim", "aten::max.dim", "aten::var.correction", "aten::logsumexp",
        "aten::linalg_vector_norm", "aten::mm", "aten::addmm", "aten::bmm", "aten::dot",
        "aten::_log_softmax", "aten::nll_loss_forward", "aten::nll_loss_backward",
        "aten::threshold_backward", "aten::mse_loss_backward", "aten::gelu_backward",
    ):
        assert name in registered


# --- topk, vdot --------------------------------------------------------------


def _assert_strides_like_cpu(fn, *args):
    for got, want in zip(as_tuple(fn(*[npy(a) for a in args])), as_tuple(fn(*args))):
        assert got.stride() == want.stride()


@pytest.mark.usefixtures("strict")  # native kernels: no CPU fallback
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", [d for d in DTYPES if d not in (torch.bool, torch.complex64, torch.complex128)],
                         ids=str)  # the refused ones: test_topk_errors_match_cpu
def test_topk_of_distinct_values_like_cpu(dim, largest, dtype):
    a = torch.randperm(60, generator=torch.Generator().manual_seed(0)).reshape(3, 4, 5).to(dtype)  # no ties
    fn = lambda t: torch.topk(t, 2, dim=dim, largest=largest)  # noqa: E731
    assert_like_cpu(fn, a)
    _assert_strides_like_cpu(fn, a)


@pytest.mark.usefixtures("strict")  # native kernels: no CPU fallback
def test_topk_puts_nan_first_and_keeps_tied_values():
    a = torch.tensor([[1.0, float("nan"), 1.0, 1.0, 0.0, float("nan")], [3.0, 1.0, 2.0, 5.0, 0.0, 2.0]])
    for largest in (True, False):
        values, indices = torch.topk(npy(a), 3, largest=largest)
        torch.testing.assert_close(values.cpu(), torch.topk(a, 3, largest=largest).values, equal_nan=True)
        # PyTorch picks among tied values in no set order: the positions must hold the values.
        torch.testing.assert_close(a.gather(1, indices.cpu()), values.cpu(), equal_nan=True)


@pytest.mark.usefixtures("strict")  # native kernels: no CPU fallback
@pytest.mark.parametrize("shape, k", [((), 1), ((), 0), ((3, 0), 0), ((4,), 4)])
def test_topk_of_zero_dim_and_empty_inputs(shape, k):
    a = make(shape, torch.float32)
    assert_like_cpu(lambda t: torch.topk(t, k), a)
    _assert_strides_like_cpu(lambda t: torch.topk(t, k), a)


@pytest.mark.usefixtures("strict")  # native kernels: no CPU fallback
def test_topk_unsorted_and_out_like_cpu():
    a = torch.randn(4, 6, generator=torch.Generator().manual_seed(1))
    values, _ = torch.topk(npy(a), 3, sorted=False)
    torch.testing.assert_close(values.cpu().sort(1).values, torch.topk(a, 3).values.sort(1).values)
    out = (torch.empty(0, device="npy"), torch.empty(0, dtype=torch.int64, device="npy"))
    torch.topk(npy(a), 2, out=out)
    torch.testing.assert_close(out[0].cpu(), torch.topk(a, 2).values)
    torch.testing.assert_close(out[1].cpu(), torch.topk(a, 2).indices)


TOPK_ERRORS = [
    (lambda t: torch.topk(t, 5), "selected index k out of range"),
    (lambda t: torch.topk(t, -1), "selected index k out of range"),
    (lambda t: torch.topk(t[0, 0], 2), "selected index k out of range"),
    (lambda t: torch.topk(t, 2, dim=2), "Dimension out of range"),
    (lambda t: torch.topk(t.bool(), 2), "topk does not support bool dtypes on CPU"),
    (lambda t: torch.topk(t.cfloat(), 2), "topk does not support complex dtypes on CPU"),
    (lambda t: torch.topk(t.to(torch.uint16), 2), "not implemented for 'UInt16'"),
]


@pytest.mark.usefixtures("strict")  # native kernels: no CPU fallback
@pytest.mark.parametrize("fn, match", TOPK_ERRORS, ids=[m for _, m in TOPK_ERRORS])
def test_topk_errors_match_cpu(fn, match):
    a = make((3, 4), torch.float32)
    assert_same_error(fn, a, match=match)
    assert_like_cpu(fn, a)  # the whole message, not only the part matched


SORT_LAYOUTS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.transpose(0, 2),
    "sliced with a step": lambda t: t[:, ::2],
    "expanded": lambda t: t[:1].expand(3, 4, 5),
    "permuted": lambda t: t.permute(1, 2, 0),
}


@pytest.mark.usefixtures("strict")  # native kernels: no CPU fallback
@pytest.mark.parametrize("layout", SORT_LAYOUTS)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, -1])
def test_sort_is_stable_and_keeps_the_input_layout_like_cpu(dim, descending, layout, dtype):
    a = SORT_LAYOUTS[layout](exact_data((3, 4, 5), dtype))  # small integers: many ties
    fn = lambda t: torch.sort(t, dim=dim, descending=descending)  # noqa: E731
    assert_like_cpu(fn, a)
    if not dtype.is_complex:
        _assert_strides_like_cpu(fn, a)
        assert_like_cpu(lambda t: torch.argsort(t, dim=dim, descending=descending, stable=True), a)


@pytest.mark.usefixtures("strict")
def test_sort_puts_nan_last_ascending_and_first_descending_like_cpu():
    a = torch.tensor([[1.0, float("nan"), -0.0, 0.0, float("-inf"), float("nan")]])
    for descending in (False, True):
        assert_like_cpu(lambda t: torch.sort(t, descending=descending), a)


@pytest.mark.usefixtures("strict")
@pytest.mark.parametrize("shape", [(), (0,), (3, 0)])
def test_sort_of_zero_dim_and_empty_inputs(shape):
    a = make(shape, torch.float32)
    assert_like_cpu(torch.sort, a)
    _assert_strides_like_cpu(torch.sort, a)

    values, indices = torch.sort(make((4,), torch.float32))
    out = (torch.empty(0, device="npy"), torch.empty(0, dtype=torch.int64, device="npy"))
    torch.sort(npy(make((4,), torch.float32)), out=out)
    assert torch.equal(out[0].cpu(), values) and torch.equal(out[1].cpu(), indices)


@pytest.mark.usefixtures("strict")
def test_sort_errors_match_cpu():
    a = make((3, 4), torch.float32)
    assert_same_error(lambda t: torch.sort(t, dim=2), a, match="Dimension out of range")
    assert_same_error(lambda t: torch.sort(t.cfloat()), a, match="Sort does not support complex dtypes on CPU")
    assert_like_cpu(lambda t: torch.sort(t.cfloat()), a)


@pytest.mark.usefixtures("strict")  # native kernels: no CPU fallback
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64, torch.complex64,
                                   torch.complex128, torch.int64])
def test_vdot_conjugates_its_first_argument_like_cpu(dtype):
    a, b = make((5,), dtype, 1), make((5,), dtype, 2)
    assert_like_cpu(torch.vdot, a, b)
    assert_like_cpu(lambda x, y: torch.vdot(x, y, out=torch.empty((), dtype=dtype, device=x.device)), a, b)


VDOT_ERRORS = [
    (lambda t: torch.vdot(t, t[:3]), "inconsistent tensor size"),
    (lambda t: torch.vdot(t, t.double()), "dot : expected both vectors to have same dtype"),
    (lambda t: torch.vdot(t.reshape(2, 2), t), "1D tensors expected, but got 2D and 1D tensors"),
    (lambda t: torch.vdot(t.bool(), t.bool()), "not implemented for 'Bool'"),
]


@pytest.mark.usefixtures("strict")  # native kernels: no CPU fallback
@pytest.mark.parametrize("fn, match", VDOT_ERRORS, ids=[m for _, m in VDOT_ERRORS])
def test_vdot_errors_match_cpu(fn, match):
    assert_same_error(fn, make((4,), torch.float32), match=match)
    assert_like_cpu(fn, make((4,), torch.float32))


@pytest.mark.usefixtures("strict")  # native kernels: no CPU fallback
def test_spectral_norm_trains_like_cpu():
    assert_layer_trains_like_cpu(lambda: torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(4, 3)))


# --- linear, computed whole (backend_pkg/ops/linalg.py, _Linear) -----------------

LINEAR_CALLS = {
    "matrix": ((5, 4), (3, 4), (3,)),
    "batch_of_sequences": ((2, 5, 4), (3, 4), (3,)),
    "vector": ((4,), (3, 4), (3,)),
    "no_bias": ((2, 5, 4), (3, 4), None),
    # Left to PyTorch's composite: a bias that only broadcasts, and bad shapes (its errors).
    "broadcast_bias": ((5, 4), (3, 4), (1,)),
    "features_mismatch": ((5, 4), (3, 5), (3,)),
    "weight_3d": ((5, 4), (2, 3, 4), (3,)),
}


@pytest.mark.usefixtures("strict")
@pytest.mark.parametrize("case", LINEAR_CALLS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_linear_like_cpu(case, dtype):
    shapes = LINEAR_CALLS[case]
    tensors = [None if shape is None else make(shape, dtype, seed=index) for index, shape in enumerate(shapes)]
    assert_backward_like_cpu(F.linear, *tensors)


@pytest.mark.usefixtures("strict")
def test_linear_of_a_transposed_input_and_of_mixed_dtypes_like_cpu():
    x, weight = make((4, 5), torch.float64), make((3, 4), torch.float64, seed=1)
    assert_backward_like_cpu(lambda x, w: F.linear(x.T, w), x, weight)
    assert_backward_like_cpu(lambda x, w: F.linear(x.T, w.float()), x, weight)


@pytest.mark.usefixtures("strict")
def test_linear_runs_no_aten_op():
    """Forward and backward are one NumPy call each: no aten op runs for them (autograd's detach
    unpacks what the forward saved)."""
    x, weight, bias = (npy(make(shape, torch.float32, seed=i)).requires_grad_()
                       for i, shape in enumerate(((2, 5, 4), (3, 4), (3,))))
    seed = npy(make((2, 5, 3), torch.float32))
    with RecordOps() as forward:
        output = F.linear(x, weight, bias)
    with RecordOps() as backward:
        output.backward(seed)
    assert forward.ops == set() and backward.ops <= {torch.ops.aten.detach.default}, (forward.ops, backward.ops)


@pytest.mark.usefixtures("strict")
def test_linear_double_backward():
    """Under create_graph the backward is the composite's, so a second derivative exists and is CPU's."""

    def second_gradients(device):
        x, weight, bias = (make(shape, torch.float64, seed=i).to(device).requires_grad_()
                           for i, shape in enumerate(((5, 4), (3, 4), (3,))))
        output = F.linear(x, weight, bias)
        grads = torch.autograd.grad((output * output).sum(), (x, weight, bias), create_graph=True)
        return torch.autograd.grad(sum((g * g).sum() for g in grads), (x, weight, bias))

    for got, want in zip(second_gradients("npy"), second_gradients("cpu")):
        torch.testing.assert_close(got.cpu(), want)


class RecordOps(TorchDispatchMode):
    """The aten overloads called inside it."""

    def __init__(self):
        super().__init__()
        self.ops = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(func)
        return func(*args, **(kwargs or {}))
