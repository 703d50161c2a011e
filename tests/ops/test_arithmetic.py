"""Elementwise arithmetic (``backend_pkg/ops/arithmetic.py``) against CPU: type promotion,
broadcasting, Python scalars, ``alpha``, in-place forms and their shortcut, division and powers."""

from functools import partial

import pytest
import torch
from elementwise import INF, BinaryOpChecks, assert_half_precision_matches_cpu_bit_for_bit, check, values
from reference import NUMERIC_DTYPES, PROMOTIONS, assert_like_cpu, assert_matches_cpu, make, npy

# --- add, sub, mul and neg: promotion, broadcasting, scalars, alpha, in-place forms ---------------


@pytest.mark.parametrize("op", [torch.add, torch.mul])
def test_binary_op_same_dtype(op, dtype):
    a, b = make((3, 4), dtype, seed=1), make((3, 4), dtype, seed=2)
    assert_matches_cpu(op(npy(a), npy(b)), op(a, b))


@pytest.mark.parametrize("op", [torch.add, torch.sub, torch.mul])
@pytest.mark.parametrize("left, right", PROMOTIONS, ids=str)
def test_binary_op_type_promotion(op, left, right):
    if op is torch.sub and torch.bool in (left, right):
        pytest.skip("sub refuses bool tensors (tested below)")
    a, b = make((2, 3), left, seed=3), make((2, 3), right, seed=4)
    assert_matches_cpu(op(npy(a), npy(b)), op(a, b))


@pytest.mark.parametrize("op", [torch.add, torch.sub, torch.mul])
def test_binary_op_broadcasts(op):
    a, b = make((4, 1, 3), torch.float32, 1), make((5, 1), torch.float32, 2)
    assert_matches_cpu(op(npy(a), npy(b)), op(a, b))


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize("scalar", [2, -3, 0.5, True, 1 + 2j], ids=repr)
@pytest.mark.parametrize("dtype", [torch.int32, torch.float16, torch.float32, torch.bool], ids=str)
def test_python_scalars_promote_like_cpu(scalar, dtype):
    a = make((5,), dtype)
    for op in (torch.add, torch.mul):
        if op(a, scalar).dtype == torch.complex32:
            with pytest.raises(TypeError, match="torch.complex32 has no NumPy equivalent"):
                op(npy(a), scalar)
            continue
        assert_matches_cpu(op(npy(a), scalar), op(a, scalar))
        assert_matches_cpu(op(scalar, npy(a)), op(scalar, a))


def test_zero_dim_cpu_tensor_mixes_in_as_a_scalar():
    a, s = make((3,), torch.float32), torch.tensor(2.5, dtype=torch.float64)
    assert_matches_cpu(npy(a) * s, a * s)


def test_cpu_tensor_with_dims_is_a_device_error():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        npy(torch.ones(3)) + torch.ones(3)


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
def test_add_and_sub_alpha(dtype):
    a, b = make((4,), dtype, 1), make((4,), dtype, 2)
    alpha = 3 if not (dtype.is_floating_point or dtype.is_complex) else 0.25
    assert_matches_cpu(torch.add(npy(a), npy(b), alpha=alpha), torch.add(a, b, alpha=alpha))
    assert_matches_cpu(torch.sub(npy(a), npy(b), alpha=alpha), torch.sub(a, b, alpha=alpha))


@pytest.mark.parametrize(
    "op", [torch.add, torch.sub, torch.rsub, torch.Tensor.add_, torch.Tensor.sub_], ids=lambda op: op.__name__
)
@pytest.mark.parametrize(
    "dtype, alpha",
    [
        (torch.int64, 0.5),
        (torch.float32, True),
        (torch.float32, 1j),
        (torch.float32, 1e39),
        (torch.float32, -1e39),
        (torch.float16, 1e5),
        (torch.int8, 300),
    ],
    ids=str,
)
def test_alpha_errors_are_cpu_errors(op, dtype, alpha):
    """Word for word: an integer tensor with a float alpha, a bool alpha, a complex alpha, an alpha
    the dtype cannot hold (C++ converts it checked)."""
    assert_like_cpu(lambda a: op(a, a, alpha=alpha), make((2,), dtype))


def test_float16_computes_in_float32_like_cpu():
    a = torch.full((8,), 2048.0, dtype=torch.float16)
    b = torch.full((8,), 1.0, dtype=torch.float16)
    # 2048 + 0.5 * 1 in half precision: exact only if computed in float32.
    expected = torch.add(a, b, alpha=0.75)
    assert_matches_cpu(torch.add(npy(a), npy(b), alpha=0.75), expected)
    assert torch.equal(torch.add(npy(a), npy(b), alpha=0.75).cpu(), expected)


def test_sub_and_neg_refuse_bool_like_cpu():
    m = torch.tensor([True, False])
    for fn in (lambda t: t - t, lambda t: -t):
        with pytest.raises(RuntimeError) as cpu_error:
            fn(m)
        with pytest.raises(RuntimeError) as npy_error:
            fn(npy(m))
        assert str(npy_error.value) == str(cpu_error.value)


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
def test_neg(dtype):
    a = make((2, 3), dtype)
    if dtype == torch.uint8:
        pytest.skip("unsigned negation wraps; covered by int8")
    assert_matches_cpu(-npy(a), -a)


IN_PLACE = {
    "add_": lambda t, o: t.add_(o, alpha=2),
    "sub_": lambda t, o: t.sub_(o),
    "mul_": lambda t, o: t.mul_(o),
}


@pytest.mark.parametrize("name", IN_PLACE)
@pytest.mark.parametrize("dtype", [torch.int32, torch.float32, torch.complex64], ids=str)
def test_in_place_arithmetic_writes_through_views(name, dtype):
    base, other = make((3, 4), dtype, 1), make((4,), dtype, 2)
    on_device = npy(base)
    result = IN_PLACE[name](on_device[1:], npy(other))
    IN_PLACE[name](base[1:], other)
    assert result.data_ptr() == on_device[1:].data_ptr()
    assert_matches_cpu(on_device, base)


@pytest.mark.parametrize(
    "bad, message",
    [
        (lambda t: t.add_(torch.ones(3, device=t.device)), "can't be cast to the desired output type"),
        (lambda t: t.mul_(torch.ones(2, 3, dtype=torch.int64, device=t.device)), "doesn't match the broadcast shape"),
        (lambda t: t[:1].expand(2, 3).add_(1), "more than one element of the written-to tensor"),
    ],
    ids=["float into int", "broadcasts past self", "writes one element twice"],
)
def test_in_place_errors_like_cpu(bad, message):
    cpu = torch.arange(3, dtype=torch.int64)
    with pytest.raises(RuntimeError, match=message):
        bad(cpu)
    with pytest.raises(RuntimeError, match=message):
        bad(npy(cpu))


# --- every binary arithmetic op, by the checks of every binary elementwise op ---------------------


ARITHMETIC = {
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
    "rsub": torch.rsub,
}


class TestArithmeticBinaryOps(BinaryOpChecks):
    OPS = ARITHMETIC
    NO_IN_PLACE = {"maximum", "minimum", "rsub"}


# --- the in-place shortcut for one dtype ----------------------------------------------------------


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
    "mul_ integer past float32's precision": lambda t, other: t.mul_(2**24 + 1),
    "add_ alpha past float32's range": lambda t, other: t.add_(other, alpha=1e39),
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


def _gradient_of(cpu):
    """``cpu`` on npy as the plain ``torch.Tensor`` object ``AccumulateGrad`` stores as a gradient,
    which keeps no NumPy view (backend_pkg.tensor.detached)."""
    leaf = torch.zeros(cpu.shape, dtype=cpu.dtype, device="npy", requires_grad=True)
    (leaf * npy(cpu)).sum().backward()
    assert type(leaf.grad) is torch.Tensor
    return leaf.grad


SAME_DTYPE_OUT_OF_PLACE = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "mm": lambda a, b: torch.mm(a, b.T),
    "addmm": lambda a, b: torch.addmm(a[:, :1], a, b.T),
}


@pytest.mark.parametrize("fn", SAME_DTYPE_OUT_OF_PLACE.values(), ids=SAME_DTYPE_OUT_OF_PLACE)
def test_same_dtype_shortcuts_read_a_gradient_as_it_is_now(fn):
    """A gradient's view is made from its metadata at each call, also after C++ changed the metadata
    (``.data =`` on a plain object is C++'s setter, which no npy code sees)."""
    a, b = values((3, 4), torch.float32, 1), values((3, 4), torch.float32, 2)
    gradient = _gradient_of(a)
    assert_matches_cpu(fn(gradient, npy(b)), fn(a, b))
    assert_matches_cpu(fn(npy(b), gradient), fn(b, a))
    gradient.data = npy(b.T.contiguous().T)
    assert_matches_cpu(fn(gradient, npy(a)), fn(b, a))


# --- division and powers --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["div_trunc", "div_floor", "floor_divide", "remainder", "fmod"])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.int64, torch.float32], ids=str)
def test_division_by_zero(name, dtype):
    """Integers raise ZeroDivisionError as on CPU; floats give inf and nan."""
    check(ARITHMETIC[name], values((4,), dtype, 1), torch.tensor([1, 0, 2, 0], dtype=dtype))
    check(ARITHMETIC[name], values((4,), dtype, 1), 0)


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


# --- half precision -------------------------------------------------------------------------------


HALF_PRECISION = {
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
    assert_half_precision_matches_cpu_bit_for_bit(HALF_PRECISION[name])
