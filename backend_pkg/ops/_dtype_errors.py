"""PyTorch's errors for a dtype an op has no kernel for, worded as CPU words them."""

from ..dtypes import SCALAR_TYPE_NAMES


def scalar_type_name(dtype):
    """C++'s name for ``dtype`` (``Long``, ``ComplexFloat``), which PyTorch's dtype errors use."""
    return SCALAR_TYPE_NAMES[dtype]


def not_implemented_for(op, dtype):
    """The error PyTorch's per-dtype dispatch raises for a dtype an op has no kernel for,
    naming the CPU kernel ``op`` as CPU does."""
    return NotImplementedError(f"\"{op}\" not implemented for '{scalar_type_name(dtype)}'")


class DtypeNotImplemented(NotImplementedError):
    """PyTorch's error for a dtype an elementwise kernel has no loop for.

    CPU names its kernel ``"fmod_cpu"``, CUDA ``"fmod_cuda"``; npy, ``"fmod_npy"``.
    ``result_dtype`` is the dtype the op would have given.
    """

    def __init__(self, kernel, dtype, result_dtype=None):
        super().__init__(f"\"{kernel}_npy\" not implemented for '{scalar_type_name(dtype)}'")
        self.result_dtype = dtype if result_dtype is None else result_dtype


def check_scalar_type(expected, tensor):
    """The check PyTorch's kernels make when they read ``tensor`` as ``expected``'s dtype."""
    if tensor.dtype != expected.dtype:
        raise RuntimeError(
            f"expected scalar type {SCALAR_TYPE_NAMES[expected.dtype]} but found {SCALAR_TYPE_NAMES[tensor.dtype]}"
        )
