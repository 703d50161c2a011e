"""Every op without an npy kernel runs PyTorch's CPU kernel, on the npy memory itself.

npy memory is host memory, so the fallback needs no copies: each npy
argument is handed to the CPU kernel as a CPU tensor over the same NumPy
memory (:func:`~backend_pkg.tensor.host_view`). In-place ops therefore
write straight into the npy tensor, and a result that aliases an argument
(a view) comes back as an npy view of that argument's storage. Results in
new memory become npy tensors without a copy either. ``out=`` tensors are
the exception: PyTorch may resize them, and NumPy memory cannot grow in
place, so the CPU kernel writes into a CPU tensor that is then copied into
the (resized) npy ``out``.

Each op warns once when it first falls back. ``BACKEND_PKG_STRICT=1`` turns
the fallback into a ``NotImplementedError`` naming the op, for finding out
what a workload would need natively. :data:`calls` counts fallback calls
per op.
"""

import collections
import os
import warnings

import torch
from torch.utils._pytree import tree_leaves, tree_map

from .memory import storage_root
from .names import DEVICE_NAME
from .ops._layout import storage_extent
from .tensor import host_view, is_npy, unwrap, wrap

STRICT_ENV = "BACKEND_PKG_STRICT"

calls = collections.Counter()


def run_on_cpu(op, *args, **kwargs):
    """The boxed fallback for the PrivateUse1 key: ``op`` with ``args`` run by the CPU kernel."""
    name = op.name()
    if os.environ.get(STRICT_ENV) == "1":
        raise NotImplementedError(f"npy device: {name} has no npy kernel, and {STRICT_ENV}=1 forbids the CPU fallback")
    if name not in calls:
        warnings.warn(
            f"npy device: {name} has no npy kernel; running PyTorch's CPU kernel on npy memory (warned once per op)",
            stacklevel=2,
        )
    calls[name] += 1
    _check_devices(name, args, kwargs)
    outs = _out_arguments(op, kwargs)
    host_kwargs = {key: tree_map(_to_host, value) for key, value in kwargs.items()}
    host_kwargs.update({key: cpu for key, (_, cpu) in outs.items()})
    result = op(*tree_map(_to_host, args), **host_kwargs)
    for npy_out, cpu_out in outs.values():
        _store_out(npy_out, cpu_out)
    written = _written_arguments(op, args, kwargs)
    _check_strided(name, result)
    returns = op._schema.returns
    if not returns:  # an op that only checks, as _assert_async does
        return None
    if len(returns) == 1:
        return _from_host(result, returns[0], written, args, kwargs)
    return tuple(_from_host(r, schema, written, args, kwargs) for r, schema in zip(result, returns))


def _to_host(value):
    if is_npy(value):
        return host_view(value)
    if isinstance(value, torch.device) and value.type == DEVICE_NAME:
        return torch.device("cpu")
    return value


def _check_devices(name, args, kwargs):
    """A CPU tensor with dimensions among npy arguments is PyTorch's usual device error."""
    for value in tree_leaves((args, kwargs)):
        if isinstance(value, torch.Tensor) and value.device.type == "cpu" and value.dim() > 0:
            raise RuntimeError(
                f"{name}: Expected all tensors to be on the same device, but found at least "
                f"two devices, {DEVICE_NAME}:0 and cpu!"
            )


def _check_strided(name, result):
    """A sparse (or other non-strided) CPU result has no memory an npy tensor could hold."""
    for value in tree_leaves(result):
        if isinstance(value, torch.Tensor) and value.layout != torch.strided:
            raise NotImplementedError(
                f"npy device: {name} gives a tensor of layout {value.layout}, and npy tensors are strided only"
            )


def _out_arguments(op, kwargs):
    """``out=`` npy tensors, each paired with a CPU tensor the kernel may resize."""
    outs = {}
    for argument in op._schema.arguments:
        value = kwargs.get(argument.name)
        if argument.is_out and is_npy(value):
            outs[argument.name] = (value, torch.empty_like(host_view(value)))
    return outs


def _store_out(npy_out, cpu_out):
    if npy_out.shape != cpu_out.shape:
        npy_out.resize_(cpu_out.shape)
    host_view(npy_out).copy_(cpu_out)


def _written_arguments(op, args, kwargs):
    """The arguments an op writes to, by alias set: what its ``Tensor(a!)`` returns are."""
    written = {}
    for position, argument in enumerate(op._schema.arguments):
        if argument.alias_info is not None and argument.alias_info.is_write:
            value = args[position] if position < len(args) else kwargs.get(argument.name)
            written[frozenset(argument.alias_info.before_set)] = value
    return written


def _from_host(result, schema, written, args, kwargs):
    if schema.alias_info is not None and schema.alias_info.is_write:
        return written[frozenset(schema.alias_info.before_set)]
    inputs = [value for value in tree_leaves((args, kwargs)) if is_npy(value)]
    return tree_map(lambda value: _to_npy(value, inputs), result)


def _to_npy(value, inputs):
    """A CPU result as an npy tensor: a view of the npy input it aliases, or its own memory."""
    if not isinstance(value, torch.Tensor):
        return value
    value = value.resolve_conj().resolve_neg()
    for source in inputs:
        if _inside(value, source):
            return wrap(value.numpy(), base=source)
    if storage_extent(value.shape, value.stride()) != value.numel():
        value = value.clone()  # the array becomes a storage root: it must span exactly its elements
    return wrap(value.numpy())


def _inside(value, source):
    """Whether ``value``'s memory lies within ``source``'s npy storage."""
    if value.numel() == 0:
        return False
    root = storage_root(unwrap(source))
    start = root.ctypes.data
    return start <= value.data_ptr() < start + root.nbytes
