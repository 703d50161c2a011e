"""Comparisons, logical and bitwise combinations, membership (``isin``), and selection (``where``,
``masked_fill``)."""

import numpy as np
import torch

from ..dtypes import SCALAR_TYPE_NAMES
from ._dtype_errors import DtypeNotImplemented
from ._operands import computed
from .arithmetic import is_integral
from .registry import aten, computed_by, implements, lowers, unchecked

# --- comparisons: bool results, compared in the promoted dtype --------------


def _comparison(name, compare, *, ordered):
    """The NumPy function of a comparison, and its eager kernel."""

    def numpy_function(a, b, *, common_dtype):
        x, y = computed(common_dtype, a, b)
        return compare(x, y)

    def checks(self, other):
        dtype = torch.result_type(self, other)
        if ordered and dtype.is_complex:
            raise DtypeNotImplemented(name, dtype, torch.bool)
        return dtype

    numpy_function.__name__ = checks.__name__ = name
    lowers(getattr(aten, name).Tensor, getattr(aten, name).Scalar)(numpy_function)
    return numpy_function, computed_by(numpy_function)(checks)


def _register_tensor_and_scalar(name, kernel):
    """Register ``kernel`` for ``<name>.Tensor`` and ``<name>.Scalar``, with their out= and in-place forms."""
    functional, in_place = getattr(aten, name), getattr(aten, f"{name}_")
    for overload in ("Tensor", "Scalar"):
        implements(
            getattr(functional, overload),
            out=getattr(functional, f"{overload}_out"),
            in_place=getattr(in_place, overload),
            pointwise=True,
        )(kernel)


_COMPARISONS = {
    "eq": (np.equal, False),
    "ne": (np.not_equal, False),
    "lt": (np.less, True),
    "le": (np.less_equal, True),
    "gt": (np.greater, True),
    "ge": (np.greater_equal, True),
}
COMPARISONS = {}
for _name, (_compare, _ordered) in _COMPARISONS.items():
    COMPARISONS[_name], _kernel = _comparison(_name, _compare, ordered=_ordered)
    _register_tensor_and_scalar(_name, _kernel)


# --- logical and bitwise combinations ---------------------------------------


def _logical(name, combine):
    """The NumPy function of a logical combination: any dtype, complex included, nonzero
    being True; no promotion is needed."""

    def numpy_function(a, b):
        return combine(a, b)

    numpy_function.__name__ = name
    return numpy_function


# NumPy's functions have the ops' names.
for _name in ("logical_and", "logical_or", "logical_xor"):
    _packet = getattr(aten, _name)
    implements(_packet.default, out=_packet.out, in_place=getattr(aten, f"{_name}_").default, pointwise=True)(
        unchecked(_logical(_name, getattr(np, _name)))
    )


def _bitwise(name, combine):
    """The NumPy function of a bitwise combination, and its eager kernel: integers and bools only."""

    def numpy_function(a, b, *, out_dtype):
        x, y = computed(out_dtype, a, b)
        return combine(x, y).astype(out_dtype, copy=False)

    def checks(self, other):
        dtype = torch.result_type(self, other)
        if not (is_integral(dtype) or dtype == torch.bool):
            raise DtypeNotImplemented(name, dtype)
        return dtype

    numpy_function.__name__ = checks.__name__ = name
    return computed_by(numpy_function)(checks)


for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    _kernel = _bitwise(_name, getattr(np, _name))
    _register_tensor_and_scalar(_name, _kernel)
    implements(getattr(aten, _name).Scalar_Tensor, out=getattr(aten, _name).Scalar_Tensor_out, pointwise=True)(_kernel)


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
for _functional, _out in (("Tensor_Tensor", "Tensor_Tensor_out"), ("Tensor_Scalar", "Tensor_Scalar_out"),
                          ("Scalar_Tensor", "Scalar_Tensor_out")):
    implements(getattr(aten.isin, _functional), out=getattr(aten.isin, _out), name="isin")(_isin_kernel)
