"""Reading kernel inputs: npy tensors, CPU scalars, and PyTorch's promotion rules."""

import numpy as np
import torch

from ..names import DEVICE_NAME
from ..tensor import unwrap


def operand(op, value):
    """The NumPy value of a kernel input.

    npy tensors give their array and Python numbers themselves. A zero-dim
    CPU tensor (which PyTorch lets every device mix in, as a scalar) gives
    its value; any other CPU tensor is the usual device mismatch. A list of
    tensors (``Tensor[]``, ``Tensor?[]``) gives the list of their values.
    """
    array = getattr(value, "_npy_array", None)  # an npy tensor's kept view, without reading its device
    if array is not None:
        return array
    if not isinstance(value, torch.Tensor):
        # The first item tells a list of tensors from a list of sizes, which stays as it is.
        if type(value) is list and value and (value[0] is None or isinstance(value[0], torch.Tensor)):
            return [None if item is None else operand(op, item) for item in value]
        return value
    if value.device.type == DEVICE_NAME:
        return unwrap(value)
    if value.device.type == "cpu" and value.dim() == 0:
        return value.numpy(force=True)
    raise RuntimeError(
        f"{op}: Expected all tensors to be on the same device, but found at least two "
        f"devices, {DEVICE_NAME}:0 and {value.device}!"
    )


_NP_FLOAT16 = np.dtype(np.float16)
_NP_FLOAT32 = np.dtype(np.float32)


def numpy_compute_dtype(out_dtype):
    """:func:`~backend_pkg.dtypes.compute_dtype` for a NumPy dtype (or its name): float32 for half."""
    out_dtype = np.dtype(out_dtype)
    return _NP_FLOAT32 if out_dtype == _NP_FLOAT16 else out_dtype


def in_compute_dtype(dtype, *arrays):
    """``arrays`` (None staying None) in the dtype a ``dtype`` (NumPy's) result is computed in:
    float32 for half."""
    np_compute = numpy_compute_dtype(dtype)
    return [None if array is None else array.astype(np_compute, copy=False) for array in arrays]


def computed(out_dtype, *values, exact=False):
    """``values`` (arrays and Python numbers) as arrays in the dtype PyTorch computes an
    ``out_dtype`` result in.

    Each is converted to ``out_dtype`` first (a Python 0.7 becomes float16's
    0.69970703), then to the compute dtype, float32 for half. Python numbers
    convert as C++ converts them (``uint8 < -1`` compares with 255), where
    ``np.asarray(number, dtype=...)`` refuses out-of-range ones. With
    ``exact=True`` each goes straight to the compute dtype, for the ops that
    read their operands at that precision (``addcmul``'s ``value``, ``where``).
    """
    out_dtype = np.dtype(out_dtype)
    np_compute = _NP_FLOAT32 if out_dtype == _NP_FLOAT16 else out_dtype
    if exact or np_compute == out_dtype:
        # An array already in the compute dtype is used as it is: most operands are.
        return [
            value
            if type(value) is np.ndarray and value.dtype == np_compute
            else np.asarray(value).astype(np_compute, copy=False)
            for value in values
        ]
    return [np.asarray(value).astype(out_dtype, copy=False).astype(np_compute, copy=False) for value in values]


def broadcast_shapes(*shapes):
    """The shape ``shapes`` broadcast to, folded pairwise as PyTorch's ``infer_size`` does,
    which words the error (NumPy's would be a ``ValueError`` of its own words)."""
    result = ()
    for shape in shapes:
        ndim = max(len(result), len(shape))
        a = (1,) * (ndim - len(result)) + tuple(result)
        b = (1,) * (ndim - len(shape)) + tuple(shape)
        for dim, (size_a, size_b) in enumerate(zip(a, b)):
            if size_a != size_b and 1 not in (size_a, size_b):
                raise RuntimeError(
                    f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) "
                    f"at non-singleton dimension {dim}"
                )
        result = tuple(size_b if size_a == 1 else size_a for size_a, size_b in zip(a, b))
    return result


def tensor_shapes(values):
    """The shapes of the tensors among ``values``, in order."""
    return [tuple(value.shape) for value in values if isinstance(value, torch.Tensor)]


def _category(dtype):
    """bool < integers < floating < complex: a higher category wins promotion whatever the dims."""
    return 3 if dtype.is_complex else 2 if dtype.is_floating_point else 0 if dtype == torch.bool else 1


def _number_dtype(value):
    if isinstance(value, bool):
        return torch.bool
    if isinstance(value, int):
        return torch.int64
    if isinstance(value, float):
        return torch.get_default_dtype()
    return torch.complex128 if torch.get_default_dtype() == torch.float64 else torch.complex64


def _promoted(dtypes):
    result = None
    for dtype in dtypes:
        result = dtype if result is None else torch.promote_types(result, dtype)
    return result


_COMPLEX_OF = {torch.float16: torch.complex32, torch.float32: torch.complex64, torch.float64: torch.complex128}


def _over(higher, lower):
    """c10's ``combine_categories``: a lower-priority group's dtype counts only in a higher category."""
    if higher is None:
        return lower
    if lower is None or _category(higher) >= _category(lower):
        return higher
    if lower.is_complex and higher.is_floating_point:
        return _COMPLEX_OF[higher]
    if higher == torch.bool or lower.is_floating_point:
        return torch.promote_types(higher, lower)
    return lower


def result_type(*values):
    """PyTorch's result dtype for any number of operands (``torch.result_type`` takes two).

    Tensors with dimensions promote among themselves; zero-dim tensors, then
    Python numbers, count only where their category is higher.
    """
    tensors = [value for value in values if isinstance(value, torch.Tensor)]
    dimensioned = _promoted(tensor.dtype for tensor in tensors if tensor.dim() > 0)
    zero_dim = _promoted(tensor.dtype for tensor in tensors if tensor.dim() == 0)
    numbers = _promoted(_number_dtype(value) for value in values if not isinstance(value, torch.Tensor))
    return _over(dimensioned, _over(zero_dim, numbers))


def check_broadcastable(*tensors):
    """PyTorch's error, in its operand order, for tensors whose shapes do not broadcast
    (NumPy would raise a ``ValueError`` of its own words)."""
    shapes = tensor_shapes(tensors)
    if len(set(shapes)) > 1:
        broadcast_shapes(*shapes)


def promoted_dtype(a, b):
    """``torch.result_type(a, b)``, without asking it when the dtypes are one (the usual case)."""
    dtype = a.dtype
    return dtype if b.dtype == dtype else torch.result_type(a, b)
