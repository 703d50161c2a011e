"""A minimal PyTorch backend in Python: the ``mini`` device, whose memory is NumPy arrays.

``import minimal.python_backend`` turns PrivateUse1 into the device named by
``DEVICE_NAME`` (once per process), registers the kernels an MLP's training
step runs, and runs every other op with PyTorch's CPU kernel on the same memory.
"""

import math
import os
import re
import warnings

import numpy as np
import torch
from torch.utils._pytree import tree_map
from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

# LITERALINCLUDE START: DEVICE_NAME
DEVICE_NAME = "mini"  # the one place the device is named
STRICT_ENV = "MINIMAL_BACKEND_STRICT"  # set to 1: an op without a kernel raises instead of running on CPU


def check_device_name(name):
    """Refuse a name the setup would refuse part way through, before anything is renamed."""
    if not re.fullmatch("[a-z_]+", name):  # c10's device-string parser reads letters and "_", in lower case
        raise ValueError(f"device name {name!r}: PyTorch parses only lower-case letters and '_' in a device name")
    owners = (torch.Tensor, torch.nn.Module, torch.nn.utils.rnn.PackedSequence, torch.UntypedStorage)
    attributes = [f"{owner.__name__}.{a}" for owner in owners for a in (name, f"is_{name}") if hasattr(owner, a)]
    taken = attributes + [f"torch.{name}"] * hasattr(torch, name)
    if taken:  # the setup adds these attributes, and refuses to replace one
        raise ValueError(f"device name {name!r}: PyTorch already has {', '.join(taken)}")


# LITERALINCLUDE END: DEVICE_NAME


# LITERALINCLUDE START: MEMORY
DTYPE_NAMES = "bool uint8 int8 int16 int32 int64 float16 float32 float64 complex64 complex128".split()
NUMPY_DTYPES = {getattr(torch, name): np.dtype(name) for name in DTYPE_NAMES}  # each named alike in both
# set_'s CPU kernel only sets a tensor's storage and metadata; it reads no memory.
SET_METADATA = torch.ops.aten.set_.source_Storage_storage_offset
CPU_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)


def tensor_over(storage, dtype, size, stride, offset):
    tensor = torch._C._acc.create_empty_tensor(size, dtype)
    SET_METADATA.redispatch(CPU_KEYS, tensor, storage, offset, size, stride)
    tensor.__class__ = MiniTensor
    return tensor


def wrap(array, dtype):
    """A tensor of ``dtype`` on the device over ``array``, a new array no other tensor uses."""
    if dtype not in NUMPY_DTYPES:
        raise TypeError(f"{DEVICE_NAME} device: {dtype} is not supported (NumPy has no such dtype)")
    root = np.asarray(array, dtype=NUMPY_DTYPES[dtype], order="C")
    storage = torch._C._construct_storage_from_data_pointer(root.ctypes.data, torch.device(DEVICE_NAME, 0), root.nbytes)
    storage.root = root.reshape(-1)  # the memory lives as long as the storage
    return tensor_over(storage, dtype, root.shape, [step // root.itemsize for step in root.strides], 0)


def unwrap(tensor):
    """The NumPy view of a tensor's memory (on the device, or a CPU operand such as a 0-d tensor): an alias."""
    if tensor.device.type == "cpu":
        return tensor.numpy()
    root = tensor.untyped_storage().root
    strides = [step * root.itemsize for step in tensor.stride()]
    return np.lib.stride_tricks.as_strided(root[tensor.storage_offset() :], tensor.shape, strides)


def host_view(value):  # a CPU tensor over the same memory, for PyTorch's CPU kernels
    on_device = isinstance(value, torch.Tensor) and value.device.type == DEVICE_NAME
    return torch.from_numpy(unwrap(value)) if on_device else value


# LITERALINCLUDE END: MEMORY


# LITERALINCLUDE START: EXIT
class MiniTensor(torch.Tensor):
    """A tensor on the device: its storage holds the NumPy array that owns its memory."""

    # Results keep the class the kernel gave them (else .cpu() would return a MiniTensor).
    __torch_function__ = torch._C._disabled_torch_function_impl

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        # PyTorch runs a device's backward on an engine thread, which can drop the last reference to a Python
        # object of the backward (the context torch.autograd.graph._engine_run_backward stashes) after backward()
        # returns; if Python is finalizing by then, taking the GIL ends that thread inside C++ and the process
        # aborts ("terminate called without an active exception"). Run on the calling thread, as CPU's is, it can't.
        with torch.autograd.set_multithreading_enabled(False):
            super().backward(gradient, retain_graph, create_graph, inputs=inputs)

    # LITERALINCLUDE END: EXIT

    def __repr__(self, *, tensor_contents=None):  # digits from a CPU copy, as for XLA tensors
        contents = torch._tensor_str._tensor_str(self.detach().cpu(), indent=len("tensor("))
        self.__class__ = torch.Tensor  # else the printer writes "MiniTensor(...)"
        try:
            return torch._tensor_str._str(self, tensor_contents=contents)
        finally:
            self.__class__ = MiniTensor


# LITERALINCLUDE START: RUNTIME
class Hooks(torch._C._acc.PrivateUse1Hooks):  # what PyTorch's C++ side asks of the device
    is_built = is_available = lambda self: True
    has_primary_context = lambda self, index: index == 0  # autograd asks before backward


class Guard(torch._C._acc.DeviceGuard):  # the C++ side supplies one device, one stream
    type_ = lambda self: torch._C._autograd.DeviceType.PrivateUse1


if torch._C._get_privateuse1_backend_name() != DEVICE_NAME:  # a second import finds the device set up
    check_device_name(DEVICE_NAME)
    _setup_privateuseone_for_python_backend(DEVICE_NAME, hook=Hooks(), device_guard=Guard())
library = torch.library.Library("aten", "IMPL")  # the kernels live as long as this object


def kernel(name):  # registers a Python function as the device's kernel of the aten op ``name``
    return lambda function: library.impl(name, function, "PrivateUse1") or function


# LITERALINCLUDE END: RUNTIME


# LITERALINCLUDE START: COPY
@kernel("empty.memory_format")
def empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    if device is not None and device.index not in (None, 0):  # the Python guard's C++ side has one device
        raise RuntimeError(f"{DEVICE_NAME} device: no device {device}; there is one, {DEVICE_NAME}:0")
    dtype = dtype or torch.get_default_dtype()
    return wrap(np.empty(size, NUMPY_DTYPES.get(dtype)), dtype)


@kernel("empty_strided")
def empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    return empty(size, dtype, device=device)  # contiguous whatever the stride: callers accept that


@kernel("_copy_from")
def copy_from(source, destination, non_blocking=False):  # to the device, from it, within it
    host_view(destination).copy_(host_view(source))  # PyTorch's CPU copy: its casts, into new memory
    return destination


# LITERALINCLUDE END: COPY


# LITERALINCLUDE START: VIEWS
@kernel("as_strided")
def as_strided(self, size, stride, storage_offset=None):  # every view shares its base's storage
    offset = self.storage_offset() if storage_offset is None else storage_offset
    return tensor_over(self.untyped_storage(), self.dtype, size, stride, offset)


@kernel("view")
def view(self, size):  # the meta device computes the strides, or raises as CPU would
    layout = torch.empty_strided(self.shape, self.stride(), dtype=self.dtype, device="meta").view(size)
    return as_strided(self, layout.shape, layout.stride())


@kernel("resize_")
def resize_(self, size, memory_format=None):  # out= kernels resize their out; NumPy memory cannot grow in place
    storage, offset = self.untyped_storage(), self.storage_offset()
    if (offset + math.prod(size)) * self.element_size() > storage.nbytes():  # outgrown: new memory, old values first
        grown = np.empty(math.prod(size), NUMPY_DTYPES[self.dtype])
        kept = storage.root[offset : offset + grown.size]
        grown[: kept.size] = kept
        storage, offset = wrap(grown, self.dtype).untyped_storage(), 0
    SET_METADATA.redispatch(CPU_KEYS, self, storage, offset, size, torch.empty(size, device="meta").stride())
    return self


kernel("detach")(lambda self: as_strided(self, self.shape, self.stride()))  # nn.Parameter wants the class kept
# LITERALINCLUDE END: VIEWS


# LITERALINCLUDE START: KERNELS
def writes_out(name, function):
    """Register ``function`` of NumPy arrays as the out= form ``name``. PyTorch makes the functional and
    in-place forms of these ops from it, ``out`` already of the result's dtype and shape (NumPy casts into it,
    as PyTorch casts a result): so ``sin`` of an int tensor is a float tensor, as on CPU."""

    def run(*args, out, **kwargs):
        function(*[unwrap(a) if isinstance(a, torch.Tensor) else a for a in args], out=unwrap(out), **kwargs)
        return out

    library.impl(name, run, "PrivateUse1")


def scaled(array, factor):  # add's and addmm's alpha and beta: no multiplication when they are 1
    return array if factor == 1 else factor * array


def addmm(bias, a, b, beta=1, alpha=1, *, out):
    np.matmul(a, b, out=out, casting="unsafe")
    np.add(scaled(out, alpha), scaled(bias, beta), out=out, casting="unsafe")


writes_out("add.out", lambda a, b, alpha=1, *, out: np.add(a, scaled(b, alpha), out=out, casting="unsafe"))
writes_out("sub.out", lambda a, b, alpha=1, *, out: np.subtract(a, scaled(b, alpha), out=out, casting="unsafe"))
writes_out("mul.out", lambda a, b, *, out: np.multiply(a, b, out=out, casting="unsafe"))
writes_out("pow.Tensor_Scalar_out", lambda a, exponent, *, out: np.power(a, exponent, out=out, casting="unsafe"))
writes_out("sin.out", lambda a, *, out: np.sin(a, out=out, casting="unsafe"))
writes_out("mm.out", lambda a, b, *, out: np.matmul(a, b, out=out, casting="unsafe"))
writes_out("addmm.out", addmm)


def reduce_dims(reduce):  # sum and mean: an empty ``dim`` is every dimension
    def run(a, dim, keepdim=False, dtype=None, *, out):
        return reduce(a, tuple(dim or ()) or None, keepdims=keepdim, out=out)

    return run


writes_out("sum.IntList_out", reduce_dims(np.sum))
writes_out("mean.out", reduce_dims(np.mean))

# relu has no out= form: its kernel makes the result, of the input's dtype as relu's always is.
kernel("relu")(lambda self: wrap(np.maximum(unwrap(self), 0), self.dtype))
relu_backward = lambda grad, self, threshold: wrap(np.where(unwrap(self) <= threshold, 0, unwrap(grad)), grad.dtype)
kernel("threshold_backward")(relu_backward)
kernel("fill_.Scalar")(lambda self, value: np.copyto(unwrap(self), value, casting="unsafe") or self)
kernel("_local_scalar_dense")(lambda self: unwrap(self).item())  # item(), float(tensor)
# LITERALINCLUDE END: KERNELS


# LITERALINCLUDE START: FALLBACK
warned = set()  # the ops the fallback has named in a warning


def run_on_cpu(op, *args, **kwargs):
    """Every op without a kernel: PyTorch's CPU kernel on CPU views of the same memory, so in-place ops
    write the device's memory; results in new memory are copied to the device."""
    if os.environ.get(STRICT_ENV) == "1":
        message = f"{DEVICE_NAME} device: {op.name()} has no kernel, and {STRICT_ENV}=1 forbids the CPU fallback"
        raise NotImplementedError(message)
    if op not in warned:
        warned.add(op)
        warnings.warn(f"{DEVICE_NAME} device: {op.name()} has no kernel; it runs on CPU (warned once per op)")
    arguments = {}  # each CPU view, by id, to the argument it views: a result that is a view is that argument

    def to_host(value):
        arguments[id(view := host_view(value))] = value
        return torch.device("cpu") if isinstance(value, torch.device) and value.type == DEVICE_NAME else view

    # The CPU kernel may resize an out= tensor, and NumPy memory cannot grow in place: it gets a CPU tensor,
    # copied into the resized out= tensor after.
    outs = [argument.name for argument in op._schema.arguments if argument.is_out]
    cpu_outs = {name: torch.empty(0, dtype=kwargs[name].dtype) for name in outs if torch.is_tensor(kwargs.get(name))}
    result = op(*tree_map(to_host, args), **{**tree_map(to_host, kwargs), **cpu_outs})
    for name, cpu_out in cpu_outs.items():
        arguments[id(cpu_out)] = kwargs[name].resize_(cpu_out.shape).copy_(cpu_out)

    to_device = lambda value: value.to(DEVICE_NAME) if isinstance(value, torch.Tensor) else value  # new memory
    return tree_map(lambda value: arguments[id(value)] if id(value) in arguments else to_device(value), result)


fallback_library = torch.library.Library("_", "IMPL")  # "_": a fallback serves every namespace
fallback_library.fallback(run_on_cpu, "PrivateUse1")
# LITERALINCLUDE END: FALLBACK


# LITERALINCLUDE START: PARAMETERS
def shallow_copy_compatible(self, other):
    """Whether ``self``'s tensor may be swapped for ``other``'s (``param.data = other``). ``Module.to`` keeps a
    parameter object only when it may; c10 answers for CPU and CUDA and asks a PrivateUse1 backend. Dense
    tensors here are plain TensorImpls, as CPU's are, so the answer is CUDA's: yes, when both are dense."""
    dense = [t.layout == torch.strided and not t.is_quantized for t in (self, other)]
    return all(dense) and {self.device.type, other.device.type} <= {"cpu", DEVICE_NAME}


# The op is composite: a call with a tensor on the device arrives at the device's autograd key.
library.impl("_has_compatible_shallow_copy_type", shallow_copy_compatible, "AutogradPrivateUse1")
# LITERALINCLUDE END: PARAMETERS
