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

import numpy as np

from ..tensor import is_npy, unwrap, wrap
from ._numpy_errors import ALL_IGNORED, ERROR_STATE

# Complex and half precision are left to the general path: PyTorch scales a
# complex operand by alpha even when it is 1, and computes halves in float32.
NATIVE_DTYPES = frozenset(np.dtype(name) for name in ("float32", "float64", "int8", "int16", "int32", "int64", "uint8"))
# The floats NumPy computes in as PyTorch does (PyTorch computes half precision in float32).
# alpha scales the other operand only for these; integers' checks are the general path's.
FULL_PRECISION_FLOATS = frozenset(np.dtype(name) for name in ("float32", "float64"))


def _scalar_operand(array, other):
    """``other`` as a NumPy scalar of ``array``'s dtype when it is a Python int or float (as a number
    reaches a kernel) and ``array`` is float32 or float64: PyTorch casts the number to the
    array's dtype and computes in it. Else None."""
    if type(other) not in (int, float) or array.dtype not in FULL_PRECISION_FLOATS:
        return None
    token = ERROR_STATE.set(ALL_IGNORED)  # past float32's range is inf, silently as in PyTorch
    try:
        return array.dtype.type(other)
    finally:
        ERROR_STATE.reset(token)


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
        try:
            a, b = self._npy_array, other._npy_array
        except AttributeError:  # a Python number, a CPU scalar, a tensor without a kept view
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
    errors. ``alpha`` is cast to the tensors' dtype first, as PyTorch casts it.
    """

    def kernel(self, other, **options):
        a, b = _view_of_npy(self), _view_of_npy(other)
        if b is None and a is not None and not options:  # CPU fuses a number's alpha product into the sum
            b = _scalar_operand(a, other)
        if a is None or b is None:  # a CPU scalar, a number to promote, a tensor on another device
            return general(self, other, **options)
        alpha = options.get("alpha", 1)
        if (
            a.dtype is not b.dtype
            or a.dtype not in NATIVE_DTYPES
            or options.keys() - {"alpha"}
            or 0 in a.strides
            or np.may_share_memory(a, b)
        ):
            return general(self, other, **options)  # which also refuses partial overlap, as CPU does
        if alpha != 1 or type(alpha) is not int:
            if a.dtype not in FULL_PRECISION_FLOATS or type(alpha) not in (int, float):
                return general(self, other, **options)
            b = b * a.dtype.type(alpha)
        token = ERROR_STATE.set(ALL_IGNORED)
        try:
            numpy_function(a, b, out=a)
        except ValueError:  # other does not broadcast to self's shape
            return general(self, other, **options)
        finally:
            ERROR_STATE.reset(token)
        return self

    return functools.update_wrapper(kernel, general)
