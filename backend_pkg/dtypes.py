"""The one table between torch dtypes and NumPy dtypes.

A device tensor's dtype is read off its NumPy array, so this table is what
keeps every dtype label honest. A torch dtype NumPy cannot hold (bfloat16,
the float8 family, quantized types) is refused here, by name, instead of
being stored as something else.
"""

import numpy as np
import torch

TORCH_TO_NUMPY = {
    torch.bool: np.dtype(np.bool_),
    torch.uint8: np.dtype(np.uint8),
    torch.uint16: np.dtype(np.uint16),
    torch.uint32: np.dtype(np.uint32),
    torch.uint64: np.dtype(np.uint64),
    torch.int8: np.dtype(np.int8),
    torch.int16: np.dtype(np.int16),
    torch.int32: np.dtype(np.int32),
    torch.int64: np.dtype(np.int64),
    torch.float16: np.dtype(np.float16),
    torch.float32: np.dtype(np.float32),
    torch.float64: np.dtype(np.float64),
    torch.complex64: np.dtype(np.complex64),
    torch.complex128: np.dtype(np.complex128),
}

# The names PyTorch's C++ messages give dtypes ("not implemented for 'Long'"),
# so npy errors read like CPU ones.
SCALAR_TYPE_NAMES = {
    torch.bool: "Bool",
    torch.uint8: "Byte",
    torch.uint16: "UInt16",
    torch.uint32: "UInt32",
    torch.uint64: "UInt64",
    torch.int8: "Char",
    torch.int16: "Short",
    torch.int32: "Int",
    torch.int64: "Long",
    torch.float16: "Half",
    torch.float32: "Float",
    torch.float64: "Double",
    torch.complex64: "ComplexFloat",
    torch.complex128: "ComplexDouble",
}

# The C++ element types (``scalar_t``), which PyTorch's Scalar conversion errors name
# ("value cannot be converted to type int64_t without overflow").
CPP_SCALAR_NAMES = {
    torch.bool: "bool",
    torch.uint8: "uint8_t",
    torch.uint16: "uint16_t",
    torch.uint32: "uint32_t",
    torch.uint64: "uint64_t",
    torch.int8: "int8_t",
    torch.int16: "int16_t",
    torch.int32: "int",
    torch.int64: "int64_t",
    torch.float16: "c10::Half",
    torch.float32: "float",
    torch.float64: "double",
    torch.complex64: "c10::complex<float>",
    torch.complex128: "c10::complex<double>",
}

# The names C++ gives dtypes through caffe2::TypeMeta ("expected dtype float for `end`").
TYPE_META_NAMES = {
    torch.bool: "bool",
    torch.uint8: "unsigned char",
    torch.uint16: "short unsigned int",
    torch.uint32: "unsigned int",
    torch.uint64: "long unsigned int",
    torch.int8: "signed char",
    torch.int16: "short int",
    torch.int32: "int",
    torch.int64: "long int",
    torch.float16: "c10::Half",
    torch.float32: "float",
    torch.float64: "double",
    torch.complex64: "c10::complex<float>",
    torch.complex128: "c10::complex<double>",
}

NUMPY_TO_TORCH = {np_dtype: torch_dtype for torch_dtype, np_dtype in TORCH_TO_NUMPY.items()}

SUPPORTED_DTYPES = tuple(TORCH_TO_NUMPY)


def _supported_names():
    return ", ".join(str(dtype) for dtype in SUPPORTED_DTYPES)


def to_numpy_dtype(dtype):
    """The NumPy dtype that stores ``dtype``; ``None`` means the default dtype."""
    if dtype is None:
        dtype = torch.get_default_dtype()
    try:
        return TORCH_TO_NUMPY[dtype]
    except KeyError:
        raise TypeError(
            f"npy device: {dtype} has no NumPy equivalent, so npy tensors cannot "
            f"hold it. Supported dtypes: {_supported_names()}."
        ) from None


def to_torch_dtype(np_dtype):
    """The torch dtype of a NumPy array's elements."""
    try:
        return NUMPY_TO_TORCH[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(
            f"npy device: NumPy dtype {np.dtype(np_dtype)} has no torch equivalent. "
            f"Supported dtypes: {_supported_names()}."
        ) from None


def compute_dtype(dtype):
    """The dtype to compute ``dtype`` arithmetic in, as PyTorch's CPU kernels do.

    Half precision is computed in float32 and rounded once at the end
    (PyTorch's "opmath" type), so sums and products match CPU results.
    """
    return torch.float32 if dtype == torch.float16 else dtype
