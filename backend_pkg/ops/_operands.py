"""Reading kernel inputs: npy tensors, CPU scalars, and PyTorch's promotion rules."""

import numpy as np
import torch

from ..dtypes import compute_dtype, to_numpy_dtype
from ..tensor import DEVICE_NAME, unwrap


def operand(op, value):
    """The NumPy value of a kernel input.

    npy tensors give their array and Python numbers themselves. A zero-dim
    CPU tensor (which PyTorch lets every device mix in, as a scalar) gives
    its value; any other CPU tensor is the usual device mismatch.
    """
    if not isinstance(value, torch.Tensor):
        return value
    if value.device.type == DEVICE_NAME:
        return unwrap(value)
    if value.device.type == "cpu" and value.dim() == 0:
        return value.numpy(force=True)
    raise RuntimeError(
        f"{op}: Expected all tensors to be on the same device, but found at least two "
        f"devices, {DEVICE_NAME}:0 and {value.device}!"
    )


def promoted(op, *tensors):
    """The inputs as NumPy arrays in PyTorch's compute dtype, and the result dtype."""
    result = torch.result_type(*tensors) if len(tensors) > 1 else tensors[0].dtype
    np_compute = to_numpy_dtype(compute_dtype(result))
    arrays = [np.asarray(operand(op, tensor), dtype=np_compute) for tensor in tensors]
    return arrays, result


def check_alpha(op, dtype, alpha):
    """PyTorch's checks of an ``alpha`` Scalar against the result dtype."""
    if isinstance(alpha, bool) and dtype != torch.bool:
        raise RuntimeError(f"{op}: Boolean alpha only supported for Boolean results.")
    if not (dtype.is_floating_point or dtype.is_complex) and not isinstance(alpha, int):
        raise RuntimeError(
            f"{op}: For integral input tensors, argument alpha must not be a floating point number."
        )
    if not dtype.is_complex and isinstance(alpha, complex):
        raise RuntimeError(
            f"{op}: For non-complex input tensors, argument alpha must not be a complex number."
        )
