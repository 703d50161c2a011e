"""Reductions, scans, topk and sort (``backend_pkg/ops/reductions.py``): npy against CPU, by the
comparisons of ``tests/reference.py``."""

import warnings

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    DTYPES,
    FLOAT_DTYPES,
    as_tuple,
    assert_like_cpu,
    assert_matches_cpu,
    assert_same_error,
    assert_writes_out_like_cpu,
    assert_writes_two_outs_like_cpu,
    exact_data,
    make,
    npy,
)

aten = torch.ops.aten
INEXACT_DTYPES = FLOAT_DTYPES + [torch.complex64, torch.complex128]


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
}


@pytest.mark.parametrize("name", OUT_VARIANTS)
def test_out_variants_write_into_out(name):
    dtype, call = OUT_VARIANTS[name]
    assert_writes_out_like_cpu(call, exact_data((3, 3), torch.float32, 1), dtype)


TWO_RESULTS = {
    "max.dim_max": lambda t, a, b: torch.max(t, 1, out=(a, b.long())),
    "min.dim_min": lambda t, a, b: torch.min(t, 0, True, out=(a, b.long())),
    "var_mean": lambda t, a, b: aten.var_mean.correction_out(t, [1], out0=a, out1=b),
    "std_mean": lambda t, a, b: aten.std_mean.correction_out(t, None, correction=0, out0=a, out1=b),
}


@pytest.mark.parametrize("name", TWO_RESULTS)
def test_out_variants_with_two_results(name):
    assert_writes_two_outs_like_cpu(TWO_RESULTS[name], make((3, 4), torch.float32))


def test_out_refuses_a_narrower_dtype_like_cpu():
    a = make((2, 3), torch.float32)
    assert_same_error(
        lambda t: torch.mean(t, 0, out=torch.empty(0, dtype=torch.int64, device=t.device)),
        a,
        match="can't be cast to the desired output type",
    )


# --- topk, vdot --------------------------------------------------------------


def _assert_strides_like_cpu(fn, *args):
    for got, want in zip(as_tuple(fn(*[npy(a) for a in args])), as_tuple(fn(*args))):
        assert got.stride() == want.stride()


@pytest.mark.usefixtures("strict")  # native kernels: no CPU fallback
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize(
    "dtype", [d for d in DTYPES if d not in (torch.bool, torch.complex64, torch.complex128)], ids=str
)  # the refused ones: test_topk_errors_match_cpu
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


# --- sum, the reduction every backend starts with ----------------------------------------


def test_sum_all(dtype):
    a = make((3, 5), dtype)
    assert_matches_cpu(npy(a).sum(), a.sum())


@pytest.mark.parametrize(
    "dim, keepdim",
    [(0, False), (1, True), (-1, False), ((0, 2), True), ((), False), ((-3, 1), False)],
)
def test_sum_dims(dim, keepdim, dtype):
    a = make((2, 3, 4), dtype)
    assert_matches_cpu(npy(a).sum(dim, keepdim=keepdim), a.sum(dim, keepdim=keepdim))


@pytest.mark.parametrize("out_dtype", [torch.float64, torch.int32, torch.complex128], ids=str)
def test_sum_dtype_argument(out_dtype):
    a = make((4, 3), torch.int16)
    assert_matches_cpu(npy(a).sum(0, dtype=out_dtype), a.sum(0, dtype=out_dtype))


def test_sum_of_empty_and_zero_dim():
    for a in (torch.zeros(0, 3), torch.tensor(2.5)):
        assert_matches_cpu(npy(a).sum(), a.sum())
        assert_matches_cpu(npy(a).sum(0, keepdim=True), a.sum(0, keepdim=True))


def test_float16_sum_accumulates_in_float32():
    a = torch.full((4096,), 1.0, dtype=torch.float16)
    assert torch.equal(npy(a).sum().cpu(), a.sum())  # 4096, not half's stuck-at-2048


@pytest.mark.parametrize("dim, error", [((0, 0), RuntimeError), ((3,), IndexError)])
def test_sum_bad_dims_fail_like_cpu(dim, error):
    a = torch.ones(2, 3)
    with pytest.raises(error):
        a.sum(dim)
    with pytest.raises(error):
        npy(a).sum(dim)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_sum_of_strided_views(dtype):
    a = make((4, 5, 6), dtype)
    assert_matches_cpu(npy(a).transpose(0, 2)[::2].sum(1), a.transpose(0, 2)[::2].sum(1))
