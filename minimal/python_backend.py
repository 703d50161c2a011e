"""A minimal PyTorch backend in Python: the ``mini`` device, whose memory is NumPy arrays.

``import minimal.python_backend`` turns PrivateUse1 into ``mini`` (once per process)
and registers the kernels an MLP's training step with SGD runs.
"""

import numpy as np
import torch
from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

# LITERALINCLUDE START: DEVICE_NAME
DEVICE_NAME = "mini"
DEVICE = torch.device("privateuseone", 0)  # prints as mini:0 once renamed
# LITERALINCLUDE END: DEVICE_NAME
# LITERALINCLUDE START: MEMORY
NUMPY_DTYPES = {dtype: torch.empty(0, dtype=dtype).numpy().dtype for dtype in (
    torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
    torch.float16, torch.float32, torch.float64, torch.complex64, torch.complex128)}
# set_'s CPU kernel only sets a tensor's storage and metadata; it reads no memory.
SET_METADATA = torch.ops.aten.set_.source_Storage_storage_offset
CPU_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)


class MiniTensor(torch.Tensor):
    """A mini tensor: its storage holds the NumPy array that owns its memory."""

    # Results keep the class the kernel gave them (else .cpu() would return a MiniTensor).
    __torch_function__ = torch._C._disabled_torch_function_impl

    def __repr__(self, *, tensor_contents=None):  # digits from a CPU copy, as for XLA tensors
        contents = torch._tensor_str._tensor_str(self.detach().cpu(), indent=len("tensor("))
        self.__class__ = torch.Tensor  # else the printer writes "MiniTensor(...)"
        try:
            return torch._tensor_str._str(self, tensor_contents=contents)
        finally:
            self.__class__ = MiniTensor


def tensor_over(storage, dtype, size, stride, offset):
    tensor = torch._C._acc.create_empty_tensor(size, dtype)
    SET_METADATA.redispatch(CPU_KEYS, tensor, storage, offset, size, stride)
    tensor.__class__ = MiniTensor
    return tensor


def wrap(array, dtype):
    """A mini tensor of ``dtype`` over ``array``, a new array no other tensor uses."""
    if dtype not in NUMPY_DTYPES:
        raise TypeError(f"mini device: {dtype} is not supported (NumPy has no such dtype)")
    root = np.asarray(array, dtype=NUMPY_DTYPES[dtype], order="C")
    storage = torch._C._construct_storage_from_data_pointer(root.ctypes.data, DEVICE, root.nbytes)
    storage.root = root.reshape(-1)  # the memory lives as long as the storage
    return tensor_over(storage, dtype, root.shape, [step // root.itemsize for step in root.strides], 0)


def unwrap(tensor):
    """The NumPy view of a tensor's memory (mini, or a CPU operand such as a 0-d tensor): an alias."""
    if tensor.device.type == "cpu":
        return tensor.numpy()
    root = tensor.untyped_storage().root
    return np.lib.stride_tricks.as_strided(root[tensor.storage_offset():], tensor.shape,
                                           [step * root.itemsize for step in tensor.stride()])
# LITERALINCLUDE END: MEMORY


# LITERALINCLUDE START: RUNTIME
class Hooks(torch._C._acc.PrivateUse1Hooks):  # what PyTorch's C++ side asks of the device
    is_built = is_available = lambda self: True
    has_primary_context = lambda self, index: index == 0  # autograd asks before backward


class Guard(torch._C._acc.DeviceGuard):  # the C++ side supplies one device, one stream
    type_ = lambda self: torch._C._autograd.DeviceType.PrivateUse1


if torch._C._get_privateuse1_backend_name() != "mini":
    _setup_privateuseone_for_python_backend("mini", hook=Hooks(), device_guard=Guard())
library = torch.library.Library("aten", "IMPL")  # the kernels live as long as this object


def kernel(name):
    return lambda function: library.impl(name, function, "PrivateUse1") or function
# LITERALINCLUDE END: RUNTIME


# LITERALINCLUDE START: COPY
@kernel("empty.memory_format")
def empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    if device is not None and device.index not in (None, 0):  # the Python guard's C++ side has one device
        raise RuntimeError(f"mini device: no device {device}; there is one, mini:0")
    dtype = dtype or torch.get_default_dtype()
    return wrap(np.empty(size, NUMPY_DTYPES.get(dtype)), dtype)


@kernel("empty_strided")
def empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    return empty(size, dtype, device=device)  # contiguous whatever the stride: callers accept that


@kernel("_copy_from")
def copy_from(source, destination, non_blocking=False):  # CPU to mini, mini to CPU, mini to mini
    host_view(destination).copy_(host_view(source))  # PyTorch's CPU copy: its casts, into new memory
    return destination


def host_view(tensor):  # a CPU tensor over the same memory
    return tensor if tensor.device.type == "cpu" else torch.from_numpy(unwrap(tensor))
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


@kernel("detach")
def detach(self):  # a MiniTensor, as nn.Parameter requires of a subclass's detach()
    return as_strided(self, self.shape, self.stride())
# LITERALINCLUDE END: VIEWS


# LITERALINCLUDE START: KERNELS
def writes_out(name, function):
    """Register ``function`` of NumPy arrays as the out= form ``name``: it computes into ``out=``, an array
    over the result's memory. PyTorch makes the functional and in-place forms of these ops from it, with
    ``out`` already of the result's dtype and shape (NumPy casts into it, as PyTorch casts a result)."""
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
writes_out("div.out", lambda a, b, *, out: np.true_divide(a, b, out=out, casting="unsafe"))
writes_out("pow.Tensor_Scalar_out", lambda a, exponent, *, out: np.power(a, exponent, out=out, casting="unsafe"))
writes_out("mm.out", lambda a, b, *, out: np.matmul(a, b, out=out, casting="unsafe"))
writes_out("addmm.out", addmm)
writes_out("sum.IntList_out", lambda a, dim, keepdim=False, dtype=None, *, out:
           np.sum(a, tuple(dim or ()) or None, keepdims=keepdim, out=out))
writes_out("mean.out", lambda a, dim, keepdim=False, dtype=None, *, out:
           np.mean(a, tuple(dim or ()) or None, keepdims=keepdim, out=out))

kernel("relu")(lambda self: wrap(np.maximum(unwrap(self), 0), self.dtype))
kernel("threshold_backward")(lambda grad, self, threshold:  # relu's backward
                             wrap(np.where(unwrap(self) <= threshold, 0, unwrap(grad)), grad.dtype))
kernel("fill_.Scalar")(lambda self, value: np.copyto(unwrap(self), value, casting="unsafe") or self)
kernel("_local_scalar_dense")(lambda self: unwrap(self).item())  # item(), float(tensor)
# LITERALINCLUDE END: KERNELS

# LITERALINCLUDE START: FALLBACK
# Not in this version of the template yet: a CPU fallback for ops without a kernel.
# LITERALINCLUDE END: FALLBACK

# LITERALINCLUDE START: PARAMETERS
# Not in this version of the template yet: the kernel that keeps parameter objects through Module.to.
# LITERALINCLUDE END: PARAMETERS

# LITERALINCLUDE START: EXIT
# Not in this version of the template yet: a clean exit after backward.
# LITERALINCLUDE END: EXIT
