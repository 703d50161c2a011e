"""How an op is registered: the vocabulary every family uses, and the tables it fills.

The vocabulary is :data:`VOCABULARY`, five names; the first sentence of
each one's docstring says when to use it (the README's "which decorator
when" table and the registering-ops page are made from them). A kernel's
``out=`` and in-place overloads are derived here, in :func:`implements`,
and nowhere else.

Each registration names its overloads literally (``aten.eq.Tensor``), in
the family module that declares the kernel, and every kernel derived here
takes that module and its kernel's name (``eq_kernel_out``), so a
traceback and ``grep`` both land in the family.

Lookup order, for any aten op called on an npy tensor:

1. the dispatcher's own layers above the backend (autograd, ADInplaceOrView,
   ...) run first, as for every device; an op in :data:`AUTOGRAD_KERNELS`
   (``@implements(..., autograd=True)``) runs there, recording its own
   backward;
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
from ._dtype_errors import DtypeNotImplemented
from ._numpy_errors import ALL_IGNORED, ERROR_STATE, quietly
from ._operands import broadcast_shapes, operand, tensor_shapes
from ._results import check_apart, check_castable, check_dtype_of_out, write_in_place, write_out, write_pair
from ._same_dtype import in_place_with_same_dtype_shortcut, with_same_dtype_shortcut

aten = torch.ops.aten

KERNELS = {}
NESTED_KERNELS = {}
AUTOGRAD_KERNELS = {}
LOWERINGS = {}


def implements(
    *ops,
    out=None,
    in_place=None,
    pointwise=False,
    check_out=None,
    same_dtype=None,
    name=None,
    reads=(),
    partial=(),
    nested=False,
    autograd=False,
):
    """Use for every kernel: register the decorated function as the npy kernel of each
    aten overload in ``ops``, and of the ``out=`` and in-place overloads derived from it.

    ``out`` (the ``out=`` overload of the one op in ``ops``) gets a kernel
    that stores the result into the out argument(s) its schema names,
    ``in_place`` one that stores it into ``self``, both under PyTorch's rules
    (:mod:`._results`); ``name`` is the op's name in their errors (the
    overload's by default). ``check_out(out, *args, **kwargs)`` refuses an
    ``out`` PyTorch refuses although the result could be cast into it
    (:func:`~._results.out_of_self_dtype`).

    ``pointwise=True`` is for an op CPU computes with TensorIterator (every
    elementwise op): the kernel runs without NumPy's floating-point warnings
    and with PyTorch's broadcasting error, and its ``out=`` and in-place
    kernels make TensorIterator's overlap check before anything else;
    ``pointwise="exact_dtype"`` is for one whose TensorIterator keeps
    ``check_all_same_dtype`` (``neg``, ``floor``, ``hardtanh``...: the ops
    that do not promote), which refuses an ``out`` not of the result's
    dtype, even one the result casts to;
    ``same_dtype``, a NumPy function, computes the op for two tensors of one
    dtype (:mod:`._same_dtype`). Otherwise ``reads`` and ``partial`` name
    the arguments the ``out`` is checked against once resized
    (:func:`~._results.check_apart`).

    ``nested=True`` registers kernels for nested tensors over npy memory,
    ``autograd=True`` kernels that record their own backward (the
    ``AutogradPrivateUse1`` key), for a composite op PyTorch would
    otherwise run, and differentiate, op by op.

    Stack the decorator to register one kernel for several overload
    families (``.Tensor`` and ``.Scalar``); it returns the function it
    decorates.
    """
    deriving = out is not None or in_place is not None
    if deriving and len(ops) > 1 or out is not None and not ops:
        raise TypeError("implements: out= and in_place= derive from one functional overload")
    if pointwise not in (False, True, "exact_dtype"):
        raise TypeError(f"implements: pointwise is True, False or 'exact_dtype', not {pointwise!r}")
    table = AUTOGRAD_KERNELS if autograd else NESTED_KERNELS if nested else KERNELS

    def decorator(function):
        kernel = _pointwise(function) if pointwise else function
        _enter(table, ops, kernel if same_dtype is None else with_same_dtype_shortcut(same_dtype, kernel))
        if out is not None:
            op = name or ops[0]._opname
            if pointwise:
                _enter(table, [out], _pointwise_out_kernel(op, kernel, check_out, pointwise == "exact_dtype"))
            else:
                _enter(table, [out], _out_kernel(op, kernel, out, check_out, reads, partial))
        if in_place is not None:
            op = name or in_place._opname
            if pointwise:
                _enter(table, [in_place], _pointwise_in_place_kernel(op, kernel, same_dtype))
            else:
                _enter(table, [in_place], _in_place_kernel(op, kernel))
        return function

    return decorator


def _enter(table, ops, kernel):
    for op in ops:
        if op in table:
            raise ValueError(f"npy device: {op} already has a kernel, {table[op].__name__}")
        table[op] = kernel


def _named_after(kernel, suffix):
    """A decorator giving a derived kernel the module and the name of ``kernel`` plus ``suffix``,
    so that a traceback names the family that declared the op, not this module."""

    def naming(derived):
        derived.__module__ = kernel.__module__
        derived.__name__ = f"{kernel.__name__}{suffix}"
        derived.__qualname__ = f"{kernel.__qualname__}{suffix}"
        derived.__wrapped__ = kernel
        return derived

    return naming


# --- out= and in-place kernels derived from a functional kernel ---------------------------


def _out_kernel(op, kernel, out_op, check_out, reads, partial):
    """A kernel for ``out_op`` that stores ``kernel``'s result(s) into the out arguments
    its schema names (``out``, ``grad_input``, or several such as ``output`` and ``buffer``)."""
    out_names = [argument.name for argument in out_op._schema.arguments if argument.is_out]
    readers = (_arguments(out_op, reads), _arguments(out_op, partial)) if reads or partial else None

    @_named_after(kernel, "_out")
    def out_kernel(*args, **kwargs):
        outs = [kwargs.pop(out_name) for out_name in out_names]
        if check_out is not None:
            for target in outs:
                check_out(target, *args, **kwargs)
        results = kernel(*args, **kwargs)
        if len(outs) > 1:
            return write_pair(op, outs, results)
        if readers is None:
            return write_out(op, outs[0], results)
        read, partly_read = (arguments(args, kwargs) for arguments in readers)
        return write_out(op, outs[0], results, reads=read, partial=partly_read)

    return out_kernel


def _arguments(op, names):
    """A function of a call's ``args`` and ``kwargs`` giving ``op``'s arguments ``names``."""
    schema_names = [argument.name for argument in op._schema.arguments]
    positions = [(schema_names.index(name), name) for name in names]

    def arguments(args, kwargs):
        return [args[index] if index < len(args) else kwargs[name] for index, name in positions]

    return arguments


def _in_place_kernel(op, kernel):
    """A kernel for an in-place overload that stores ``kernel``'s result into ``self``."""

    @_named_after(kernel, "_in_place")
    def in_place_kernel(self, *args, **kwargs):
        return write_in_place(op, self, kernel(self, *args, **kwargs))

    return in_place_kernel


def _pointwise(compute):
    """``compute`` without NumPy's warnings, NumPy's broadcasting error in PyTorch's words."""

    @functools.wraps(compute)
    def kernel(*args, **kwargs):
        try:
            return quietly(compute, *args, **kwargs)
        except ValueError:
            broadcast_shapes(*tensor_shapes(args))
            raise

    return kernel


def _pointwise_out_kernel(op, compute, check_out, exact_dtype):
    @_named_after(compute, "_out")
    def out_kernel(*args, out, **kwargs):
        _check_iterator_overlaps(out, args, kwargs)
        try:
            result = compute(*args, **kwargs)
        except DtypeNotImplemented as error:
            if exact_dtype:
                check_dtype_of_out(out, error.result_dtype)
            _refuse_target_first(op, error, out, check_out, args, kwargs)
            raise
        if check_out is not None:
            check_out(out, *args, **kwargs)
        if exact_dtype:
            check_dtype_of_out(out, result.dtype)
        return write_out(op, out, result)

    return out_kernel


def _pointwise_in_place_kernel(op, compute, same_dtype):
    @_named_after(compute, "_")
    def in_place_kernel(self, *args, **kwargs):
        _check_iterator_overlaps(self, args, kwargs)
        try:
            result = compute(self, *args, **kwargs)
        except DtypeNotImplemented as error:
            _refuse_target_first(op, error, self)
            raise
        return write_in_place(op, self, result)

    if same_dtype is None:
        return in_place_kernel
    return in_place_with_same_dtype_shortcut(same_dtype, in_place_kernel)


def _check_iterator_overlaps(target, args, kwargs):
    """What CPU's TensorIterator checks first (``compute_mem_overlaps``), before it resizes
    ``out=`` or looks at dtypes: the tensor written holds no element twice, and shares with
    each input all of its memory or none (``x.add_(x)`` is fine, ``x.add_(x.T)`` is refused)."""
    check_apart(target, partial=(*args, *kwargs.values()))


def _refuse_target_first(op, error, target, check_out=None, args=(), kwargs=None):
    """PyTorch checks the tensor it writes to before it looks for a loop for the dtype."""
    if check_out is not None:
        check_out(target, *args, **kwargs)
    check_castable(op, torch.empty(0, dtype=error.result_dtype, device="meta"), target)


def lowers(*ops):
    """Use for an op compiled with the npy backend: register the decorated NumPy function as what
    each aten overload in ``ops`` computes in ``torch.compile(backend="npy")``'s code
    (:mod:`backend_pkg.compiler.codegen`).

    It takes NumPy arrays where the op takes tensors, the op's other
    arguments as they are, and returns arrays. A keyword-only ``out_dtype``
    receives the NumPy dtype (or its name) of the result PyTorch gives, and
    ``common_dtype`` the dtype PyTorch promotes the operands to, where that
    is not the result's (a comparison's result is bool): NumPy promotes
    differently (an int64 array times a Python float is float64 in NumPy,
    float32 in PyTorch), so the function computes in the dtype it is given
    and returns ``out_dtype`` exactly.
    """

    def decorator(function):
        for op in ops:
            if op in LOWERINGS:
                raise ValueError(f"npy compiler: {op} already lowers to {LOWERINGS[op].__name__}")
            LOWERINGS[op] = function
        return function

    return decorator


@functools.cache
def dtype_keyword(numpy_function):
    """Which of ``out_dtype`` and ``common_dtype`` ``numpy_function`` takes, if either."""
    parameters = inspect.signature(numpy_function).parameters
    return next((name for name in ("out_dtype", "common_dtype") if name in parameters), None)


def computed_by(numpy_function, name=None):
    """Use for an op computed by a NumPy function: make the decorated function, PyTorch's checks
    of the op's arguments, its eager kernel, computed by ``numpy_function`` (see :func:`lowers`).

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
    made so must still be registered (``tests/ops/test_registry.py``
    fails on one that is not).
    """
    return _computing(numpy_function, name, returns_self=False)


def computed_in_place_by(numpy_function, name=None):
    """Use for an in-place op that writes only the elements it selects: :func:`computed_by`
    for a ``numpy_function`` that writes into the array of its first argument, ``self``, and
    returns it; the kernel returns ``self`` (or None, for an op of no results, whose function
    returns None).

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
    """Use for an op PyTorch checks nothing of: its eager kernel, computed by ``numpy_function``
    (:func:`computed_by` with no checks), to register with :func:`implements`."""
    kernel = computed_by(numpy_function, name)(no_checks)
    kernel.__module__ = numpy_function.__module__
    kernel.__name__ = f"{numpy_function.__name__}_kernel"
    kernel.__qualname__ = f"{numpy_function.__qualname__}_kernel"
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


VOCABULARY = (implements, computed_by, computed_in_place_by, unchecked, lowers)


def when_to_use(verb):
    """When to use ``verb`` of :data:`VOCABULARY`: its docstring up to the first colon."""
    return verb.__doc__.split(":", 1)[0].strip()


def registered_ops():
    """The qualified names (``aten::add.Tensor``) of the ops with an npy kernel."""
    return sorted(op.name() for op in KERNELS)
