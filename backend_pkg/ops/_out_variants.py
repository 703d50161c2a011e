"""Registering an op's functional kernel together with the ``out=`` and in-place overloads derived from it."""

import functools

from ._numpy_errors import quietly
from ._results import write_in_place, write_out, write_pair
from .registry import aten, implements


def with_out(name, out_overload="out", *, check_out=None):
    """Register the decorated kernel for ``aten.<name>`` and, unless ``out_overload`` is
    None, for ``aten.<name>.<out_overload>``, storing its result(s) into the out
    arguments as PyTorch does (:func:`~._results.write_out`).

    ``check_out(out, *args, **kwargs)`` refuses, before computing, an out
    argument PyTorch refuses although the result could be cast into it
    (see :func:`~.arithmetic.exact_dtype`).

    The kernel runs without NumPy's floating-point warnings: PyTorch gives
    inf and nan silently.
    """
    packet = getattr(aten, name)

    def decorator(compute):
        @functools.wraps(compute)
        def kernel(*args, **kwargs):
            return quietly(compute, *args, **kwargs)

        implements(packet.default)(kernel)
        if out_overload is not None:
            out_op = getattr(packet, out_overload)
            implements(out_op)(_out_kernel(name, kernel, out_op, check_out))
        return compute

    return decorator


def derived_out(functional, out, *, check_out=None, name=None, reads=(), partial=()):
    """Register the decorated kernel for the ``functional`` overload, and for its ``out=``
    overload ``out`` the kernel that stores its result (see :func:`with_out`);
    ``name`` is the op's name in errors, the overload's by default. ``reads`` and
    ``partial`` name the arguments the one ``out`` is checked against once resized
    (see :func:`~._results.check_apart`)."""

    def decorator(kernel):
        implements(functional)(kernel)
        readers = (_arguments(out, reads), _arguments(out, partial)) if reads or partial else None
        implements(out)(_out_kernel(name or functional._opname, kernel, out, check_out, readers))
        return kernel

    return decorator


def derived_in_place(in_place, *, name=None):
    """Register, for the in-place overload ``in_place``, the decorated functional kernel
    with its result stored into ``self`` (:func:`~._results.write_in_place`); ``name``
    is the op's name in errors, the overload's by default."""

    def decorator(kernel):
        op = name or in_place._opname

        def in_place_kernel(self, *args, **kwargs):
            return write_in_place(op, self, kernel(self, *args, **kwargs))

        in_place_kernel.__name__ = f"{kernel.__name__}_in_place"
        in_place_kernel.__wrapped__ = kernel
        implements(in_place)(in_place_kernel)
        return kernel

    return decorator


def _arguments(op, names):
    """A function of a call's ``args`` and ``kwargs`` giving ``op``'s arguments ``names``."""
    schema_names = [argument.name for argument in op._schema.arguments]
    positions = [(schema_names.index(name), name) for name in names]

    def arguments(args, kwargs):
        return [args[index] if index < len(args) else kwargs[name] for index, name in positions]

    return arguments


def _out_kernel(name, kernel, out_op, check_out, readers=None):
    """A kernel for ``out_op`` that stores ``kernel``'s result(s) into the out arguments
    its schema names (``out``, ``grad_input``, or several such as ``output`` and ``buffer``)."""
    out_names = [argument.name for argument in out_op._schema.arguments if argument.is_out]

    def out_kernel(*args, **kwargs):
        outs = [kwargs.pop(out_name) for out_name in out_names]
        if check_out is not None:
            for out in outs:
                check_out(out, *args, **kwargs)
        results = kernel(*args, **kwargs)
        if len(outs) > 1:
            return write_pair(name, outs, results)
        if readers is None:
            return write_out(name, outs[0], results)
        reads, partial = (read(args, kwargs) for read in readers)
        return write_out(name, outs[0], results, reads=reads, partial=partial)

    out_kernel.__name__ = f"{kernel.__name__}_out"
    return out_kernel
