"""Comparisons, logical and bitwise combinations, and selection (``where``, ``masked_fill``)."""

import numpy as np
import torch

from ._dtype_errors import DtypeNotImplemented
from ._operands import computed
from .arithmetic import elementwise, is_integral
from .registry import aten, computed_by, lowers, unchecked

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
        elementwise(
            getattr(functional, overload),
            getattr(functional, f"{overload}_out"),
            getattr(in_place, overload),
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
    elementwise(_packet.default, _packet.out, getattr(aten, f"{_name}_").default)(
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
    elementwise(getattr(aten, _name).Scalar_Tensor, getattr(aten, _name).Scalar_Tensor_out)(_kernel)


# ``where`` and ``masked_fill_`` live with the indexing kernels (ops/indexing.py).
