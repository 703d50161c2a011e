"""One table of kernels, one decorator to fill it, one function to install it.

Lookup order, for any aten op called on an npy tensor:

1. the dispatcher's own layers above the backend (autograd, ADInplaceOrView,
   ...) run first, as for every device;
2. at the PrivateUse1 key, a kernel from :data:`KERNELS` runs if the op has one;
3. otherwise PyTorch's own default for the op runs, if it has one: a
   composite (``empty_like`` becomes ``empty_strided``, ``_to_copy`` becomes
   ``empty`` + ``copy_``) or, for a functional op, an allocation followed by
   its ``out=`` variant (``add.Tensor`` becomes ``add.out``); the pieces come
   back to step 2;
4. otherwise the backend fallback that :func:`backend_pkg.backend.install_kernels`
   registers for every op at the PrivateUse1 key runs:
   :func:`backend_pkg.fallback.run_on_cpu`, PyTorch's CPU kernel on the npy
   memory;
5. only without that fallback (``BACKEND_PKG_NO_SETUP=1``, as the tutorial's
   experiments do) does the dispatcher raise ``NotImplementedError`` naming
   the op and the ``PrivateUse1`` key.

A nested tensor whose buffer is npy memory dispatches at its own key,
``NestedTensorPrivateUse1``; its kernels are in :data:`NESTED_KERNELS`
(``@implements(..., nested=True)``), and it has no fallback.

An op that ``torch.compile`` lowers is one NumPy function, on arrays, in
:data:`LOWERINGS` (``@lowers``): the compiled code calls it on the graph's
arrays, and the eager kernel made by :func:`computed_by` calls it on the
arrays of npy tensors. Tensors become arrays, and the result an npy
tensor, once, in that kernel.
"""

import functools
import inspect

import torch

from ..dtypes import to_numpy_dtype
from ..runtime import untraced
from ..tensor import wrap
from ._numpy_errors import ALL_IGNORED, ERROR_STATE
from ._operands import operand

aten = torch.ops.aten

KERNELS = {}
NESTED_KERNELS = {}
AUTOGRAD_KERNELS = {}
LOWERINGS = {}


def _filling(table, ops, clash):
    """A decorator that enters the decorated function into ``table`` for each op of ``ops``,
    refusing an op already there with ``clash`` (formatted with ``op`` and the other's ``name``)."""

    def decorator(function):
        for op in ops:
            if op in table:
                raise ValueError(clash.format(op=op, name=table[op].__name__))
            table[op] = function
        return function

    return decorator


def implements(*ops, nested=False):
    """Register the decorated function as the npy kernel of each aten overload in ``ops``
    (with ``nested=True``, its kernel for nested tensors over npy memory)."""
    table = NESTED_KERNELS if nested else KERNELS
    return _filling(table, ops, "npy device: {op} already has a kernel, {name}")


def implements_autograd(*ops):
    """Register the decorated function as npy's autograd kernel of each aten overload in ``ops``
    (the ``AutogradPrivateUse1`` key): a kernel that records its own backward, for a composite
    op that PyTorch would otherwise run, and differentiate, op by op."""
    return _filling(AUTOGRAD_KERNELS, ops, "npy device: {op} already has an autograd kernel, {name}")


def lowers(*ops):
    """Register the decorated NumPy function as what each aten overload in ``ops`` computes
    in ``torch.compile``'s npy backend (see :mod:`backend_pkg.compiler.codegen`).

    It takes NumPy arrays where the op takes tensors, the op's other
    arguments as they are, and returns arrays. A keyword-only ``out_dtype``
    receives the NumPy dtype (or its name) of the result PyTorch gives, and
    ``common_dtype`` the dtype PyTorch promotes the operands to, where that
    is not the result's (a comparison's result is bool): NumPy promotes
    differently (an int64 array times a Python float is float64 in NumPy,
    float32 in PyTorch), so the function computes in the dtype it is given
    and returns ``out_dtype`` exactly.
    """
    return _filling(LOWERINGS, ops, "npy compiler: {op} already lowers to {name}")


@functools.cache
def dtype_keyword(numpy_function):
    """Which of ``out_dtype`` and ``common_dtype`` ``numpy_function`` takes, if either."""
    parameters = inspect.signature(numpy_function).parameters
    return next((name for name in ("out_dtype", "common_dtype") if name in parameters), None)


def computed_by(numpy_function, name=None):
    """Make the decorated function, PyTorch's checks of an op's arguments, the op's eager
    kernel, computed by ``numpy_function`` (see :func:`lowers`).

    The checks see the tensors, raise PyTorch's errors and return the torch
    dtype ``numpy_function`` takes (its ``out_dtype`` or ``common_dtype``;
    ``None`` if it takes neither), or a tuple of them, one per result, for an
    op with several. Then each npy tensor argument becomes its
    array (a zero-dim CPU tensor its value, any other tensor the device
    error, naming the op ``name``, by default ``numpy_function``'s name),
    ``numpy_function`` runs without NumPy's floating-point warnings (PyTorch
    gives inf and nan silently), and its array becomes the npy tensor returned
    (a tuple of arrays a tuple of tensors, None staying None).
    The kernel's ``numpy_function`` attribute names the function; a kernel
    made so must still be registered (``tests/test_kernel_registry.py``
    fails on one that is not).
    """
    return _computing(numpy_function, name, returns_self=False)


def computed_in_place_by(numpy_function, name=None):
    """:func:`computed_by` for an in-place op whose ``numpy_function`` writes into the array
    of its first argument, ``self``, and returns it: the kernel returns ``self`` (or None,
    for an op of no results, whose function returns None).

    For ops that write only the elements they select, straight into
    ``self`` (``index_put_``, ``masked_fill_``), as CPU's kernels do: an
    expanded ``self`` is written element by element, never refused.
    """
    return _computing(numpy_function, name, returns_self=True)


def _computing(numpy_function, name, *, returns_self):
    """The decorator of :func:`computed_by` (``returns_self``: of :func:`computed_in_place_by`)."""

    def decorator(checks):
        op = name or numpy_function.__name__
        keyword = dtype_keyword(numpy_function)

        @functools.wraps(checks)
        def kernel(*args, **kwargs):
            dtype = checks(*args, **kwargs)
            arrays = [operand(op, value) for value in args]
            if kwargs:
                kwargs = {key: operand(op, value) for key, value in kwargs.items()}
            if keyword is not None:
                kwargs[keyword] = to_numpy_dtype(dtype) if not isinstance(dtype, tuple) else _numpy_dtypes(dtype)
            token = ERROR_STATE.set(ALL_IGNORED)
            try:
                result = numpy_function(*arrays, **kwargs)
            finally:
                ERROR_STATE.reset(token)
            if returns_self:
                return None if result is None else args[0]
            return wrap(result) if not isinstance(result, tuple) else _wrapped(result)

        kernel.numpy_function = numpy_function
        return kernel

    return decorator


def _numpy_dtypes(dtypes):
    return tuple(None if dtype is None else to_numpy_dtype(dtype) for dtype in dtypes)


def _wrapped(results):
    """An op's several results as npy tensors, None (a result not asked for) staying None."""
    return tuple(None if result is None else wrap(result) for result in results)


def unchecked(numpy_function, name=None):
    """The eager kernel of an op that PyTorch checks nothing of, computed by ``numpy_function``."""
    kernel = computed_by(numpy_function, name)(no_checks)
    kernel.__name__ = f"{numpy_function.__name__}_kernel"
    kernel.__module__ = numpy_function.__module__
    return kernel


def no_checks(*args, **kwargs):
    """The checks of an op that PyTorch checks nothing of before computing."""
    return None


def install(library):
    """Register every kernel of :data:`KERNELS` with ``library`` for the PrivateUse1 key
    (and of :data:`NESTED_KERNELS` for NestedTensorPrivateUse1, of :data:`AUTOGRAD_KERNELS`
    for AutogradPrivateUse1).

    The key keeps its C++ name, ``PrivateUse1``, whatever the backend is
    renamed to: renaming changes the device string, not the dispatch key.
    Each kernel is marked :func:`~backend_pkg.runtime.untraced`: C++ calls it
    during eager code inside a compiled function too, and Dynamo must run it,
    not compile it.
    """
    for op, kernel in KERNELS.items():
        library.impl(op, untraced(kernel), "PrivateUse1")
    for op, kernel in NESTED_KERNELS.items():
        library.impl(op, untraced(kernel), "NestedTensorPrivateUse1")
    for op, kernel in AUTOGRAD_KERNELS.items():
        library.impl(op, untraced(kernel), "AutogradPrivateUse1")


def registered_ops():
    """The qualified names (``aten::add.Tensor``) of the ops with an npy kernel."""
    return sorted(op.name() for op in KERNELS)

