"""Comparisons, logical and bitwise combinations, and membership (``isin``); selection (``where``,
``masked_fill``) is in :mod:`.indexing`."""

import numpy as np
import torch

from ..dtypes import SCALAR_TYPE_NAMES
from ._dtype_errors import DtypeNotImplemented
from ._operands import computed
from .arithmetic import is_integral, promoted_binary_op
from .registry import aten, computed_by, implements, lowers, unchecked

# --- comparisons: bool results, compared in the promoted dtype --------------


def _comparison(name, compare, *, ordered):
    """The eager kernel of a comparison, computed by its NumPy function (its ``numpy_function``)."""

    def numpy_function(a, b, *, common_dtype):
        x, y = computed(common_dtype, a, b)
        return compare(x, y)

    def checks(self, other):
        dtype = torch.result_type(self, other)
        if ordered and dtype.is_complex:
            raise DtypeNotImplemented(name, dtype, torch.bool)
        return dtype

    numpy_function.__name__ = numpy_function.__qualname__ = name
    checks.__name__ = checks.__qualname__ = f"{name}_kernel"
    return computed_by(numpy_function)(checks)


# CPU orders no complex numbers: all comparisons but eq and ne refuse them.
_COMPARISON_KERNELS = {
    "eq": _comparison("eq", np.equal, ordered=False),
    "ne": _comparison("ne", np.not_equal, ordered=False),
    "lt": _comparison("lt", np.less, ordered=True),
    "le": _comparison("le", np.less_equal, ordered=True),
    "gt": _comparison("gt", np.greater, ordered=True),
    "ge": _comparison("ge", np.greater_equal, ordered=True),
}
# Each comparison's overloads, written out: the functional one, its out= and its in-place overloads for a
# tensor, then the same three for a Python number.
for _overloads in [
    (aten.eq.Tensor, aten.eq.Tensor_out, aten.eq_.Tensor, aten.eq.Scalar, aten.eq.Scalar_out, aten.eq_.Scalar),
    (aten.ne.Tensor, aten.ne.Tensor_out, aten.ne_.Tensor, aten.ne.Scalar, aten.ne.Scalar_out, aten.ne_.Scalar),
    (aten.lt.Tensor, aten.lt.Tensor_out, aten.lt_.Tensor, aten.lt.Scalar, aten.lt.Scalar_out, aten.lt_.Scalar),
    (aten.le.Tensor, aten.le.Tensor_out, aten.le_.Tensor, aten.le.Scalar, aten.le.Scalar_out, aten.le_.Scalar),
    (aten.gt.Tensor, aten.gt.Tensor_out, aten.gt_.Tensor, aten.gt.Scalar, aten.gt.Scalar_out, aten.gt_.Scalar),
    (aten.ge.Tensor, aten.ge.Tensor_out, aten.ge_.Tensor, aten.ge.Scalar, aten.ge.Scalar_out, aten.ge_.Scalar),
]:
    for _op, _out, _in_place in (_overloads[:3], _overloads[3:]):
        _kernel = _COMPARISON_KERNELS[_op._opname]
        lowers(_op)(_kernel.numpy_function)
        implements(_op, out=_out, in_place=_in_place, pointwise=True)(_kernel)


# --- logical and bitwise combinations ---------------------------------------


def _logical(name, combine):
    """The NumPy function of a logical combination: any dtype, complex included, nonzero
    being True; no promotion is needed."""

    def numpy_function(a, b):
        return combine(a, b)

    numpy_function.__name__ = numpy_function.__qualname__ = name
    return numpy_function


# NumPy's functions have the ops' names.
implements(aten.logical_and.default, out=aten.logical_and.out, in_place=aten.logical_and_.default, pointwise=True)(
    unchecked(_logical("logical_and", np.logical_and))
)
implements(aten.logical_or.default, out=aten.logical_or.out, in_place=aten.logical_or_.default, pointwise=True)(
    unchecked(_logical("logical_or", np.logical_or))
)
implements(aten.logical_xor.default, out=aten.logical_xor.out, in_place=aten.logical_xor_.default, pointwise=True)(
    unchecked(_logical("logical_xor", np.logical_xor))
)


def _bitwise(name, combine):
    """The eager kernel of a bitwise combination: integers and bools only."""

    def refuse_inexact(dtype):
        if not (is_integral(dtype) or dtype == torch.bool):
            raise DtypeNotImplemented(name, dtype)

    return promoted_binary_op(name, combine, refuse_inexact)


# Each op's overloads, written out: the functional one, its out= and its in-place overloads.
_BITWISE_OVERLOADS = {
    "bitwise_and": (
        np.bitwise_and,
        (
            (aten.bitwise_and.Tensor, aten.bitwise_and.Tensor_out, aten.bitwise_and_.Tensor),
            (aten.bitwise_and.Scalar, aten.bitwise_and.Scalar_out, aten.bitwise_and_.Scalar),
            (aten.bitwise_and.Scalar_Tensor, aten.bitwise_and.Scalar_Tensor_out, None),
        ),
    ),
    "bitwise_or": (
        np.bitwise_or,
        (
            (aten.bitwise_or.Tensor, aten.bitwise_or.Tensor_out, aten.bitwise_or_.Tensor),
            (aten.bitwise_or.Scalar, aten.bitwise_or.Scalar_out, aten.bitwise_or_.Scalar),
            (aten.bitwise_or.Scalar_Tensor, aten.bitwise_or.Scalar_Tensor_out, None),
        ),
    ),
    "bitwise_xor": (
        np.bitwise_xor,
        (
            (aten.bitwise_xor.Tensor, aten.bitwise_xor.Tensor_out, aten.bitwise_xor_.Tensor),
            (aten.bitwise_xor.Scalar, aten.bitwise_xor.Scalar_out, aten.bitwise_xor_.Scalar),
            (aten.bitwise_xor.Scalar_Tensor, aten.bitwise_xor.Scalar_Tensor_out, None),
        ),
    ),
}
for _name, (_numpy_function, _overloads) in _BITWISE_OVERLOADS.items():
    _kernel = _bitwise(_name, _numpy_function)
    for _op, _out, _in_place in _overloads:
        implements(_op, out=_out, in_place=_in_place, pointwise=True)(_kernel)


# ``where`` and ``masked_fill_`` live with the indexing kernels (ops/indexing.py).


# --- membership: isin ---------------------------------------------------------

# PyTorch refuses these: its sorting route for long test lists has no kernel for them.
_NO_ISIN = (torch.bool, torch.bfloat16, torch.complex64, torch.complex128)


def isin(elements, test_elements, *, assume_unique=False, invert=False, common_dtype):
    """Whether each of ``elements`` equals one of ``test_elements``, compared in the promoted
    dtype (NaN equals nothing); ``assume_unique`` only lets PyTorch's CPU kernel go faster."""
    x, y = computed(common_dtype, elements, test_elements)
    return np.asarray(np.isin(x, y, invert=invert))


def _check_isin_dtype(value):
    if isinstance(value, torch.Tensor) and value.dtype in _NO_ISIN:
        raise RuntimeError(f"Unsupported input type encountered for isin(): {SCALAR_TYPE_NAMES[value.dtype]}")


def _isin_checks(elements, test_elements, *, assume_unique=False, invert=False):
    _check_isin_dtype(elements)
    _check_isin_dtype(test_elements)
    return torch.result_type(elements, test_elements)


_isin_kernel = computed_by(isin)(_isin_checks)
implements(aten.isin.Tensor_Tensor, out=aten.isin.Tensor_Tensor_out, name="isin")(_isin_kernel)
implements(aten.isin.Tensor_Scalar, out=aten.isin.Tensor_Scalar_out, name="isin")(_isin_kernel)
implements(aten.isin.Scalar_Tensor, out=aten.isin.Scalar_Tensor_out, name="isin")(_isin_kernel)
