"""Elementwise kernels (arithmetic, unary, comparison) against CPU, dtype by dtype.

Every call runs on CPU first. If CPU raises, npy must raise the same
exception type with the same message, up to the device's own spelling: the
kernel named in dtype errors (``"abs_cpu"``/``"abs_npy"``), the op prefix of
npy messages, and ``torch.float32`` for C++'s ``Float``.
"""

import re
import subprocess
import sys
from functools import partial

import pytest
import torch
from reference import FLOAT_DTYPES, PROMOTIONS, assert_matches_cpu, make

import backend_pkg
from backend_pkg.ops._dtype_errors import scalar_type_name

NAN, INF = float("nan"), float("inf")


def npy_or_scalar(value):
    """``value`` on npy; 0-dim tensors stay on CPU, where PyTorch mixes them in as scalars."""
    return value.to("npy") if isinstance(value, torch.Tensor) and value.dim() else value


def normalized(error):
    message = str(error).split("\n")[0].replace("NpyTensor", "Tensor")
    message = re.sub(r'^"\w+" not implemented', '"kernel" not implemented', message)
    message = re.sub(r"^\w+: (?=result type|output with shape|value cannot)", "", message)
    # C++ names types three ways here (Short, short int, int16_t): the tests use torch's.
    message = re.sub(r"(desired output type|converted to type) .*", r"\1 ...", message)
    return re.sub(r"torch\.(\w+)", _scalar_type_name_of_dtype, message)


def _scalar_type_name_of_dtype(match):
    dtype = getattr(torch, match[1], None)
    return scalar_type_name(dtype) if isinstance(dtype, torch.dtype) else match[0]


def check(fn, *args, **kwargs):
    """``fn`` on npy copies of ``args`` gives CPU's result, or CPU's error."""
    on_device = [npy_or_scalar(a) for a in args]  # copied before an in-place fn changes args
    try:
        expected = fn(*args, **kwargs)
    except Exception as cpu_error:
        with pytest.raises(type(cpu_error)) as npy_error:
            fn(*on_device, **kwargs)
        assert normalized(npy_error.value) == normalized(cpu_error)
        return
    assert_matches_cpu(fn(*on_device, **kwargs), expected)


def values(shape, dtype, seed=0):
    """``make``'s values; floats also get nan, infinities, signed zeros and rounding ties."""
    t = make(shape, dtype, seed)
    if dtype.is_floating_point:
        specials = torch.tensor([NAN, INF, -INF, 0.0, -0.0, 0.5, -2.5, 1.0], dtype=dtype)
        t.view(-1)[: specials.numel()] = specials[: t.numel()]
    return t


def divisors(shape, dtype, seed):
    """Like ``values``, with no integer zeros: integer division by zero is its own test."""
    t = values(shape, dtype, seed)
    if dtype.is_floating_point or dtype.is_complex or dtype == torch.bool:
        return t
    return torch.where(t == 0, torch.ones_like(t), t)


# --- unary ops --------------------------------------------------------------

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


def with_out(fn, cpu_args, dtype=None):
    """``fn`` writing into an empty ``out=`` tensor of ``dtype``, by default the dtype of CPU's result."""
    if dtype is None:
        try:
            dtype = fn(*cpu_args).dtype
        except (RuntimeError, NotImplementedError):
            dtype = torch.float32

    def call(*args):
        out = torch.empty(0, dtype=dtype, device=args[0].device)
        assert fn(*args, out=out) is out
        return out

    return call


# Ops whose Python API has no out=: their aten out= overloads, called directly.
ATEN_OUT = {
    "isnan": torch.ops.aten.isnan.out,
    "isinf": torch.ops.aten.isinf.out,
    "relu": torch.ops.aten.relu.out,
    "rsub": torch.ops.aten.rsub.Tensor_out,
}


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


HALF_PRECISION = {
    "sigmoid": torch.sigmoid,
    "round_decimals": partial(torch.round, decimals=2),
    "add_alpha": lambda x: torch.add(x, (x * 0.37).floor(), alpha=1.3),
    "mul_scalar": lambda x: x * 0.7,
    "div_scalar": lambda x: x / 0.7,
    "floor_divide_scalar": lambda x: x // 0.7,
    "remainder_scalar": lambda x: x % 0.7,
    "pow_scalar": lambda x: x.abs() ** 2.7,
    "pow_tensor": lambda x: x.abs() ** (x / 4),
    "atan2_zero_dim": lambda x: torch.atan2(x, torch.tensor(0.7, dtype=torch.float64)),
}


@pytest.mark.parametrize("name", HALF_PRECISION)
def test_half_precision_matches_cpu_bit_for_bit(name):
    """float16 computes in float32 and rounds once, and a scalar operand is first
    rounded to float16 (but mul and div read it at float32 precision), as on CPU.

    Any other order misses some of CPU's bits here. (CPU computes the elements
    past its last full vector in float16: 1024 elements leave none.)
    """
    x = torch.linspace(-6, 6, 1024, dtype=torch.float16)
    assert torch.equal(HALF_PRECISION[name](npy_or_scalar(x)).cpu(), HALF_PRECISION[name](x))


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


# --- binary ops -------------------------------------------------------------

BINARY = {
    "div": torch.div,
    "div_trunc": partial(torch.div, rounding_mode="trunc"),
    "div_floor": partial(torch.div, rounding_mode="floor"),
    "floor_divide": torch.floor_divide,
    "remainder": torch.remainder,
    "fmod": torch.fmod,
    "pow": torch.pow,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "atan2": torch.atan2,
    "xlogy": torch.xlogy,
    "rsub": torch.rsub,
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
NO_BINARY_IN_PLACE = {"maximum", "minimum", "rsub"}


def binary_in_place(name):
    fn = BINARY[name]
    method = f"{fn.func.__name__ if isinstance(fn, partial) else name}_"
    keywords = fn.keywords if isinstance(fn, partial) else {}
    return lambda t, other: getattr(t, method)(other, **keywords)


@pytest.mark.parametrize("name", BINARY)
def test_binary_same_dtype(name, dtype):
    check(BINARY[name], values((3, 4), dtype, 1), divisors((3, 4), dtype, 2))


# The shortcut of add_, sub_ and mul_ for two npy tensors of one dtype (backend_pkg.ops._same_dtype),
# and the cases it leaves to the general path, which words PyTorch's errors.
SAME_DTYPE_IN_PLACE = {
    "add_ alpha": lambda t, other: t.add_(other, alpha=-0.01),
    "sub_ integer alpha": lambda t, other: t.sub_(other, alpha=3),
    "mul_ broadcast": lambda t, other: t.mul_(other[0]),
    "add_ into a view": lambda t, other: (t[:, 1:].add_(other[:, 1:], alpha=2), t)[1],
    "add_ other larger than self": lambda t, other: t[0].add_(other),
    "add_ into an expanded tensor": lambda t, other: t[0].expand(3, 4).add_(other),
    # A Python number, as SGD's momentum multiplies by one: cast to self's dtype, then computed.
    "mul_ number": lambda t, other: t.mul_(0.9),
    "add_ integer": lambda t, other: t.add_(3),
    "sub_ number": lambda t, other: t.sub_(0.1),
    "mul_ number past float32's range": lambda t, other: t.mul_(1e39),
    "add_ number with alpha": lambda t, other: t.add_(2, alpha=3),
    "add_ into a tensor without a kept NumPy view": lambda t, other: _without_kept_view(t).add_(other, alpha=2),
    "mul_ number into a tensor without a kept NumPy view": lambda t, other: _without_kept_view(t).mul_(0.5),
}


def _without_kept_view(tensor):
    """``tensor`` as ``module.to("npy")`` leaves a parameter: ``.data`` replaced, its NumPy view dropped."""
    tensor.data = tensor.clone()
    return tensor


@pytest.mark.filterwarnings("error")  # NumPy's overflow warning, for one, must not reach the user
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64], ids=str)
@pytest.mark.parametrize("fn", SAME_DTYPE_IN_PLACE.values(), ids=SAME_DTYPE_IN_PLACE)
def test_same_dtype_in_place_shortcut(fn, dtype):
    check(fn, values((3, 4), dtype, 1), values((3, 4), dtype, 2))


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("other", [1, 0, True, 2.0, torch.tensor(1), torch.tensor(False)], ids=repr)
def test_binary_results_never_alias_an_operand(name, other):
    x = npy_or_scalar(values((3, 4), torch.int32))
    try:
        result = BINARY[name](x, other)
    except (TypeError, RuntimeError, NotImplementedError):
        return  # refused: the other binary tests compare the error with CPU's
    assert result.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("left, right", PROMOTIONS, ids=str)
def test_binary_type_promotion(name, left, right):
    check(BINARY[name], values((2, 4), left, 3), divisors((2, 4), right, 4))


@pytest.mark.parametrize("name", BINARY)
def test_binary_broadcasts(name):
    check(BINARY[name], values((4, 1, 3), torch.float32, 1), divisors((5, 1), torch.float32, 2))
    check(BINARY[name], values((2, 3), torch.int32, 1), divisors((3,), torch.int32, 2))


SCALARS = [3, -2, 0.5, True, 1 + 2j, 1000]


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int8, torch.int64, torch.float32], ids=str)
def test_binary_python_scalars(name, scalar, dtype):
    t = divisors((5,), dtype, 5)
    check(BINARY[name], t, scalar)
    check(BINARY[name], scalar, t)


@pytest.mark.parametrize("name", BINARY)
def test_binary_zero_dim_cpu_tensor_is_a_scalar(name):
    check(BINARY[name], values((2, 3), torch.float32, 1), torch.tensor(2.5, dtype=torch.float64))
    check(BINARY[name], values((2, 3), torch.int16, 1), torch.tensor(3))


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", [torch.int32, torch.float32], ids=str)
def test_binary_out_resizes_an_empty_tensor(name, dtype):
    a, b = values((3, 4), dtype, 1), divisors((4,), dtype, 2)
    check(with_out(ATEN_OUT.get(name, BINARY[name]), [a, b]), a, b)


@pytest.mark.parametrize("name", [name for name in BINARY if name not in NO_BINARY_IN_PLACE])
@pytest.mark.parametrize("dtype", [torch.bool, torch.int64, torch.float16, torch.float32, torch.complex128], ids=str)
def test_binary_in_place_through_a_view(name, dtype):
    def through_view(base, other):
        binary_in_place(name)(base[1:], other)
        return base

    check(through_view, values((3, 4), dtype, 1), divisors((4,), dtype, 2))


@pytest.mark.parametrize("name", ["div_trunc", "div_floor", "floor_divide", "remainder", "fmod"])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.int64, torch.float32], ids=str)
def test_division_by_zero(name, dtype):
    """Integers raise ZeroDivisionError as on CPU; floats give inf and nan."""
    check(BINARY[name], values((4,), dtype, 1), torch.tensor([1, 0, 2, 0], dtype=dtype))
    check(BINARY[name], values((4,), dtype, 1), 0)


def test_div_of_integers_is_true_division_in_the_default_dtype():
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        check(torch.div, torch.tensor([7, -7, 1]), torch.tensor([2, 2, 3]))
    finally:
        torch.set_default_dtype(previous)


def test_div_trunc_and_floor_differ_for_negative_quotients():
    a, b = torch.tensor([7, -7, 7, -7, -6]), torch.tensor([2, 2, -2, -2, 3])
    for mode in ("trunc", "floor"):
        check(partial(torch.div, rounding_mode=mode), a, b)
        check(partial(torch.div, rounding_mode=mode), a.double(), b.double())


def test_div_refuses_unknown_rounding_modes():
    check(partial(torch.div, rounding_mode="round"), make((2,), torch.float32), 2)


def test_remainder_and_fmod_signs():
    a, b = torch.tensor([5, -5, 5, -5]), torch.tensor([3, 3, -3, -3])
    for fn in (torch.remainder, torch.fmod):
        check(fn, a, b)
        check(fn, a.float(), b.float())
        check(fn, a.float() + 0.5, INF)


def test_integer_powers():
    base = torch.tensor([0, 1, -1, 2, -2, 3, 7])
    check(torch.pow, base, torch.tensor([-1, -2, -3, -1, 3, 0, 30]))  # negatives: 0 unless |base| is 1
    check(torch.pow, base, -1)  # refused for a Python exponent, as on CPU
    check(torch.pow, base.to(torch.int8), 9)  # wraps
    check(torch.pow, 2, torch.tensor([-1, 0, 10]))


def test_comparisons_wrap_python_integers_like_cpu():
    u = torch.tensor([0, 1, 255], dtype=torch.uint8)
    for fn in (torch.lt, torch.eq, torch.ge):
        check(fn, u, -1)  # -1 becomes 255, as the C++ cast makes it
        check(fn, u.to(torch.int8), 1000)


@pytest.mark.parametrize("op", ["eq_", "lt_", "logical_and_", "bitwise_or_"])
def test_in_place_comparisons_keep_self_dtype(op):
    check(lambda a, b: getattr(a, op)(b), values((2, 4), torch.int32, 1), values((4,), torch.int32, 2))


OUT_DTYPES = [torch.bool, torch.int64, torch.float64, torch.complex64]


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


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("out_dtype", OUT_DTYPES, ids=str)
@pytest.mark.parametrize("dtype", [torch.int32, torch.float32], ids=str)
def test_binary_out_of_another_dtype(name, out_dtype, dtype):
    a, b = values((3, 4), dtype, 1), divisors((4,), dtype, 2)
    check(with_out(ATEN_OUT.get(name, BINARY[name]), None, out_dtype), a, b)
    check(with_out(BINARY[name], None, out_dtype), a, 3)


# --- where and masked_fill --------------------------------------------------


@pytest.mark.parametrize("left, right", [(torch.float32, torch.float32), *PROMOTIONS], ids=str)
def test_where(left, right):
    condition = make((3, 1), torch.bool, 7)
    check(torch.where, condition, values((3, 4), left, 1), values((4,), right, 2))


def test_where_scalars_and_composites():
    condition, x = make((2, 3), torch.bool, 1), values((2, 3), torch.int16, 2)
    check(torch.where, condition, x, 2.5)
    check(torch.where, condition, -1, x)
    check(torch.where, condition, x, torch.tensor(7, dtype=torch.int64))
    out = torch.empty(0, device="npy", dtype=torch.float32)
    torch.where(npy_or_scalar(condition), npy_or_scalar(x), npy_or_scalar(x.float()), out=out)
    assert_matches_cpu(out, torch.where(condition, x, x.float()))


@pytest.mark.parametrize("out_dtype", [torch.float32, *OUT_DTYPES], ids=str)
def test_where_out_takes_the_result_dtype_only(out_dtype):
    condition, x = make((2, 3), torch.bool, 1), values((2, 3), torch.float32, 2)
    check(with_out(torch.where, None, out_dtype), condition, x, -x)
    check(with_out(torch.where, None, out_dtype), condition.int(), x, -x)  # out= is checked first


def test_where_condition_must_be_bool(warn_always):
    x = make((3,), torch.float32)
    check(torch.where, make((3,), torch.int64), x, x)
    condition = torch.tensor([1, 0, 2], dtype=torch.uint8)
    with pytest.warns(UserWarning, match="where received a uint8 condition tensor"):
        expected = torch.where(condition, x, -x)
    with pytest.warns(UserWarning, match="where received a uint8 condition tensor"):
        assert_matches_cpu(torch.where(npy_or_scalar(condition), npy_or_scalar(x), -npy_or_scalar(x)), expected)


WARNED_ONCE = """
import sys, warnings, torch, backend_pkg
device = sys.argv[1]
condition, x = torch.tensor([1, 0], dtype=torch.uint8, device=device), torch.ones(2, device=device)
complex_values = torch.tensor([1 + 2j], device=device)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(3):
        torch.where(condition, x, -x)
        complex_values.sum(dtype=torch.float32)
print(sorted(str(warning.message)[:30] for warning in caught))
"""


def test_warn_once_warnings_reach_python_once_per_process_as_on_cpu():
    printed = {
        device: subprocess.run(
            [sys.executable, "-c", WARNED_ONCE, device], capture_output=True, text=True, timeout=120, check=True
        ).stdout
        for device in ("cpu", "npy")
    }
    assert printed["npy"] == printed["cpu"]
    assert printed["cpu"].count("where received") == 1


MASKED_FILLS = {
    "scalar": lambda t, m: t.masked_fill(m, 2.5),
    "negative": lambda t, m: t.masked_fill(m, -1),
    "tensor": lambda t, m: t.masked_fill(m, torch.tensor(3)),
    "broadcast_mask": lambda t, m: t[0].masked_fill(m, 1),
    "in_place_view": lambda t, m: (t[:, 1:].masked_fill_(m[:, 1:], 4), t)[1],
}


@pytest.mark.parametrize("name", MASKED_FILLS)
def test_masked_fill(name, dtype):
    check(MASKED_FILLS[name], values((3, 4), dtype, 1), make((3, 4), torch.bool, 2))


@pytest.mark.parametrize(
    "dtype, value",
    [
        (torch.uint8, -255), (torch.uint8, -256), (torch.uint8, 256), (torch.uint8, -1.0),
        (torch.int8, 127.5), (torch.int8, -128), (torch.int64, INF), (torch.int32, NAN),
        (torch.float16, 65504.0), (torch.float16, 70000), (torch.float16, INF),
        (torch.float32, 1 + 0j), (torch.float32, 1j), (torch.complex64, complex(1, 1e39)),
        (torch.bool, 2.5), (torch.bool, NAN),
    ],
    ids=repr,
)  # fmt: skip
def test_masked_fill_value_conversion(dtype, value):
    """Values convert as C++'s checked conversion does: in range, or an overflow error."""
    check(lambda t, mask: t.masked_fill(mask, value), make((3,), dtype), torch.tensor([True, False, True]))


@pytest.mark.parametrize(
    "bad, message",
    [
        (
            lambda t: t.masked_fill(t > 0, torch.ones(1, device=t.device)),
            "only supports a 0-dimensional value tensor",
        ),
        (lambda t: t.masked_fill((t > 0).float(), 1), "only supports boolean masks"),
        (lambda t: t[0].masked_fill_(t > 0, 1), "doesn't match the broadcast shape"),
    ],
    ids=["value with dims", "float mask", "mask broadcasts past self"],
)
def test_masked_fill_errors_like_cpu(bad, message):
    t = make((2, 3), torch.float32)
    with pytest.raises(RuntimeError, match=message):
        bad(t)
    with pytest.raises(RuntimeError, match=message):
        bad(npy_or_scalar(t))


# --- the registrations themselves ---------------------------------------------


def test_no_kernel_hides_a_composite():
    """A backend kernel for a CompositeImplicitAutograd op would bypass its autograd formula."""
    composite = [
        name
        for name in backend_pkg.registered_ops()
        if torch._C._dispatch_has_kernel_for_dispatch_key(name, "CompositeImplicitAutograd")
    ]
    assert composite == []


def test_gradients_flow_through_elementwise_kernels():
    def fn(x):
        return (torch.where(x > 0, x.exp(), x.sin()) / (1 + x.abs()) + x.clamp(-1, 1) ** 2).sum()

    x = make((3, 4), torch.float64)
    leaves = [x.clone().requires_grad_(), npy_or_scalar(x).requires_grad_()]
    for leaf in leaves:
        fn(leaf).backward()
    assert leaves[1].grad.device.type == "npy"
    torch.testing.assert_close(leaves[1].grad.cpu(), leaves[0].grad)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("out_dtype", OUT_DTYPES, ids=str)
@pytest.mark.parametrize("left, right", [(torch.float32, torch.complex64), (torch.int32, torch.float32)], ids=str)
def test_binary_out_of_another_dtype_casts_before_it_looks_for_a_loop(name, left, right, out_dtype):
    """PyTorch checks that the result casts into ``out=`` before it looks for the dtype's
    loop: a complex ``atan2`` into a float ``out=`` is a cast error, not a missing kernel."""
    write = with_out(ATEN_OUT.get(name, BINARY[name]), None, out_dtype)
    check(write, values((3, 4), left, 1), divisors((3, 4), right, 2))


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
