"""What the tests of the elementwise families (arithmetic, unary, comparison) share: the
comparison with CPU, the values they compare on, ``out=`` calls, and the checks every binary op
passes.

Every call runs on CPU first. If CPU raises, npy must raise the same
exception type with the same message, up to the device's own spelling: the
kernel named in dtype errors (``"abs_cpu"``/``"abs_npy"``), the op prefix of
npy messages, and ``torch.float32`` for C++'s ``Float``.
"""

import re
from functools import partial

import pytest
import torch
from reference import PROMOTIONS, assert_matches_cpu, make

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


OUT_DTYPES = [torch.bool, torch.int64, torch.float64, torch.complex64]


def assert_half_precision_matches_cpu_bit_for_bit(fn):
    """float16 computes in float32 and rounds once, and a scalar operand is first
    rounded to float16 (but mul and div read it at float32 precision), as on CPU.

    Any other order misses some of CPU's bits here. (CPU computes the elements
    past its last full vector in float16: 1024 elements leave none.)
    """
    x = torch.linspace(-6, 6, 1024, dtype=torch.float16)
    assert torch.equal(fn(npy_or_scalar(x)).cpu(), fn(x))


SCALARS = [3, -2, 0.5, True, 1 + 2j, 1000]


class BinaryOpChecks:
    """What every binary elementwise op does as on CPU, over one family's ops.

    A family's test file subclasses it as ``Test...`` with its ops in ``OPS`` (name: function) and
    those without an in-place method in ``NO_IN_PLACE``: each test runs once per op (``name``), the
    in-place test once per op with an in-place method (``in_place_name``).
    """

    OPS = {}
    NO_IN_PLACE = frozenset()

    def pytest_generate_tests(self, metafunc):
        if "name" in metafunc.fixturenames:
            metafunc.parametrize("name", list(self.OPS))
        if "in_place_name" in metafunc.fixturenames:
            metafunc.parametrize("in_place_name", [name for name in self.OPS if name not in self.NO_IN_PLACE])

    def in_place(self, name):
        """The in-place form of ``OPS[name]``, as a method call."""
        fn = self.OPS[name]
        method = f"{fn.func.__name__ if isinstance(fn, partial) else name}_"
        keywords = fn.keywords if isinstance(fn, partial) else {}
        return lambda t, other: getattr(t, method)(other, **keywords)

    def test_same_dtype(self, name, dtype):
        check(self.OPS[name], values((3, 4), dtype, 1), divisors((3, 4), dtype, 2))

    @pytest.mark.parametrize("other", [1, 0, True, 2.0, torch.tensor(1), torch.tensor(False)], ids=repr)
    def test_results_never_alias_an_operand(self, name, other):
        x = npy_or_scalar(values((3, 4), torch.int32))
        try:
            result = self.OPS[name](x, other)
        except (TypeError, RuntimeError, NotImplementedError):
            return  # refused: the other binary tests compare the error with CPU's
        assert result.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()

    @pytest.mark.parametrize("left, right", PROMOTIONS, ids=str)
    def test_type_promotion(self, name, left, right):
        check(self.OPS[name], values((2, 4), left, 3), divisors((2, 4), right, 4))

    def test_broadcasts(self, name):
        check(self.OPS[name], values((4, 1, 3), torch.float32, 1), divisors((5, 1), torch.float32, 2))
        check(self.OPS[name], values((2, 3), torch.int32, 1), divisors((3,), torch.int32, 2))

    @pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
    @pytest.mark.parametrize("scalar", SCALARS, ids=repr)
    @pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int8, torch.int64, torch.float32], ids=str)
    def test_python_scalars(self, name, scalar, dtype):
        t = divisors((5,), dtype, 5)
        check(self.OPS[name], t, scalar)
        check(self.OPS[name], scalar, t)

    def test_zero_dim_cpu_tensor_is_a_scalar(self, name):
        check(self.OPS[name], values((2, 3), torch.float32, 1), torch.tensor(2.5, dtype=torch.float64))
        check(self.OPS[name], values((2, 3), torch.int16, 1), torch.tensor(3))

    @pytest.mark.parametrize("dtype", [torch.int32, torch.float32], ids=str)
    def test_out_resizes_an_empty_tensor(self, name, dtype):
        a, b = values((3, 4), dtype, 1), divisors((4,), dtype, 2)
        check(with_out(ATEN_OUT.get(name, self.OPS[name]), [a, b]), a, b)

    @pytest.mark.parametrize(
        "dtype", [torch.bool, torch.int64, torch.float16, torch.float32, torch.complex128], ids=str
    )
    def test_in_place_through_a_view(self, in_place_name, dtype):
        def through_view(base, other):
            self.in_place(in_place_name)(base[1:], other)
            return base

        check(through_view, values((3, 4), dtype, 1), divisors((4,), dtype, 2))

    @pytest.mark.parametrize("out_dtype", OUT_DTYPES, ids=str)
    @pytest.mark.parametrize("dtype", [torch.int32, torch.float32], ids=str)
    def test_out_of_another_dtype(self, name, out_dtype, dtype):
        a, b = values((3, 4), dtype, 1), divisors((4,), dtype, 2)
        check(with_out(ATEN_OUT.get(name, self.OPS[name]), None, out_dtype), a, b)
        check(with_out(self.OPS[name], None, out_dtype), a, 3)

    @pytest.mark.parametrize("out_dtype", OUT_DTYPES, ids=str)
    @pytest.mark.parametrize("left, right", [(torch.float32, torch.complex64), (torch.int32, torch.float32)], ids=str)
    def test_out_of_another_dtype_casts_before_it_looks_for_a_loop(self, name, left, right, out_dtype):
        """PyTorch checks that the result casts into ``out=`` before it looks for the dtype's
        loop: a complex ``atan2`` into a float ``out=`` is a cast error, not a missing kernel."""
        write = with_out(ATEN_OUT.get(name, self.OPS[name]), None, out_dtype)
        check(write, values((3, 4), left, 1), divisors((3, 4), right, 2))
