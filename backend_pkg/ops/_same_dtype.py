"""The shortcut for the most common small op: two npy tensors of one dtype.

A binary kernel's general path promotes, casts, and checks scalars and
``alpha`` as PyTorch does, which costs several times the NumPy call on a
small tensor. When both operands are npy tensors of the same dtype in
:data:`NATIVE_DTYPES` and the op got no other argument, PyTorch's result is
exactly NumPy's (same dtype, broadcasting, integer wrap-around), so the
kernel returns that directly. ``make bench`` measures the difference.

The in-place kernels (``add_``, ``sub_``, ``mul_``) have the same shortcut,
writing NumPy's result straight into ``self``: ``param.add_(grad,
alpha=-lr)`` is every parameter's SGD step. They take a Python number too
(without ``alpha``) into a float32 or float64 ``self``: ``buf.mul_(momentum)``
is SGD's momentum.
"""

import functools
import math

import numpy as np

from ..tensor import is_npy, unwrap, wrap
from ._numpy_errors import ALL_IGNORED, ERROR_STATE

# Complex and half precision are left to the general path: PyTorch scales a
# complex operand by alpha even when it is 1, and computes halves in float32.
NATIVE_DTYPES = frozenset(np.dtype(name) for name in ("float32", "float64", "int8", "int16", "int32", "int64", "uint8"))
# The floats NumPy computes in as PyTorch does (PyTorch computes half precision in float32).
# alpha scales the other operand only for these; integers' checks are the general path's.
FULL_PRECISION_FLOATS = frozenset(np.dtype(name) for name in ("float32", "float64"))
# The alphas that scale the other operand here, by dtype: those the dtype holds (C++ refuses to convert a
# larger one, c10's ``overflows``); inf and nan are left to the general path for float32. Integers' alphas are
# the general path's.
_LARGEST_ALPHA = {np.dtype("float32"): float(np.finfo(np.float32).max), np.dtype("float64"): math.inf}
# The Python numbers a kernel receives for a number argument (bool is left to the general path).
_NUMBERS = (int, float)


def _view_of_npy(value):
    """The NumPy view of an npy tensor: the one its object keeps or, for an object that keeps none
    (a gradient, see :func:`backend_pkg.tensor.detached`), one made now; None for anything else."""
    array = getattr(value, "_npy_array", None)
    if array is None and is_npy(value):
        return unwrap(value)
    return array


def same_dtype_arrays(*tensors):
    """The tensors' kept NumPy views if all are npy tensors of one dtype in
    :data:`NATIVE_DTYPES`, else ``None``."""
    try:
        arrays = [tensor._npy_array for tensor in tensors]
    except AttributeError:
        return None
    dtype = arrays[0].dtype
    if dtype not in NATIVE_DTYPES or any(array.dtype is not dtype for array in arrays):
        return None
    return arrays


def with_same_dtype_shortcut(numpy_function, general, accepts=None):
    """A binary kernel that computes ``numpy_function(a, b)`` when it can, else runs ``general``.

    ``accepts(a, b)`` narrows the shortcut down to the arrays PyTorch's op
    takes as NumPy's does (``mm`` takes only matrices); errors are left to
    ``general``, which words them as PyTorch does.
    """

    def kernel(self, other, **options):
        # getattr with a default: a raised AttributeError costs 1 µs.
        a, b = getattr(self, "_npy_array", None), getattr(other, "_npy_array", None)
        if a is None or b is None:  # a Python number, a CPU scalar, a tensor without a kept view
            return general(self, other, **options)
        if options or a.dtype is not b.dtype or a.dtype not in NATIVE_DTYPES:
            return general(self, other, **options)
        if accepts is not None and not accepts(a, b):
            return general(self, other, **options)
        # quietly(), inlined: a function call is a tenth of this kernel's own time.
        token = ERROR_STATE.set(ALL_IGNORED)
        try:
            result = numpy_function(a, b)
        except ValueError:  # shapes that do not broadcast: the general path words the error
            return general(self, other, **options)
        finally:
            ERROR_STATE.reset(token)
        return wrap(result)

    return functools.update_wrapper(kernel, general)


def in_place_with_same_dtype_shortcut(numpy_function, general):
    """An in-place kernel that writes ``numpy_function(a, alpha * b)`` into ``self`` when it can,
    else runs ``general``.

    The shortcut needs what :func:`with_same_dtype_shortcut` needs, but takes
    an npy tensor whose object keeps no NumPy view too (a gradient, which
    ``param.add_(grad, alpha=-lr)`` reads; see :func:`backend_pkg.tensor.detached`), and
    ``self`` holding each of its elements once (no stride 0, where PyTorch
    refuses to write), ``other`` apart from ``self``'s memory and broadcasting to ``self``'s shape (NumPy
    refuses the rest before writing anything); ``general`` words PyTorch's
    errors.

    ``alpha``, and ``other`` when it is a Python number (without ``alpha``:
    CPU fuses a number's alpha product into the sum), reach NumPy as Python
    numbers, for a float32 or float64 ``self``: NumPy casts such a number to
    the array's dtype (NEP 50's weak scalars), as PyTorch casts it, and takes
    it at a third of the cost of a NumPy scalar (``buf.mul_(momentum)`` and
    ``param.add_(grad, alpha=-lr)``, every parameter's SGD step, spent 1.3 µs
    each making and reading one).
    """

    def kernel(self, other, **options):
        # The kept view read here first: the call of _view_of_npy is a twentieth of this kernel.
        a = getattr(self, "_npy_array", None)
        if a is None:
            a = _view_of_npy(self)
        if type(other) in _NUMBERS:
            if a is None or options or a.dtype not in FULL_PRECISION_FLOATS or 0 in a.strides:
                return general(self, other, **options)
            b = other
            alpha = 1
        else:
            b = getattr(other, "_npy_array", None)
            if b is None:
                b = _view_of_npy(other)
            if a is None or b is None:  # a CPU scalar, a tensor on another device
                return general(self, other, **options)
            alpha = options.get("alpha", 1)
            if (
                a.dtype is not b.dtype
                or a.dtype not in NATIVE_DTYPES
                or len(options) > ("alpha" in options)
                or 0 in a.strides
                or np.may_share_memory(a, b)
            ):
                return general(self, other, **options)  # which also refuses partial overlap, as CPU does
            if (alpha != 1 or type(alpha) is not int) and (
                type(alpha) not in _NUMBERS or not abs(alpha) <= _LARGEST_ALPHA.get(a.dtype, -1)
            ):
                return general(self, other, **options)  # which refuses an alpha the dtype cannot hold
        token = ERROR_STATE.set(ALL_IGNORED)  # past float32's range is inf, silently as in PyTorch
        try:
            numpy_function(a, b if alpha == 1 and type(alpha) is int else b * alpha, a)  # out= by position
        except ValueError:  # other does not broadcast to self's shape
            return general(self, other, **options)
        finally:
            ERROR_STATE.reset(token)
        return self

    return functools.update_wrapper(kernel, general)
