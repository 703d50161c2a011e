"""Recurrent networks: the fused LSTM and GRU cells and their backward.

PyTorch's RNN code (``aten/src/ATen/native/RNN.cpp``, ``LSTMCell`` and
``GRUCell``) computes a CPU cell from plain ops, but sends a CUDA, XPU or
PrivateUse1 input's gate matmuls to a fused cell op, which has no CPU kernel:
``_thnn_fused_lstm_cell`` for ``nn.LSTM``/``nn.LSTMCell`` and
``_thnn_fused_gru_cell`` for ``nn.GRU``/``nn.GRUCell``. Their gradients
(``tools/autograd/derivatives.yaml``) are ``_thnn_fused_lstm_cell_backward_impl``
(through the composite ``_thnn_fused_lstm_cell_backward``) and
``_thnn_fused_gru_cell_backward``; with ``create_graph=True`` PyTorch uses
the composite ``_thnn_differentiable_*_cell_backward`` instead, made of plain
ops. ``nn.RNN``'s cells are plain ops on every device.

Each cell saves a *workspace* for its backward, laid out as CUDA's kernels
(``aten/src/ATen/native/cuda/RNN.cu``) lay it out, so any code that reads one
finds what it expects: the LSTM's activated gates ``[i, f, g, o]``
(batch, 4 * hidden); the GRU's ``[r, z, n, hx, hn + b_hn]`` (batch, 5 * hidden).
Half precision is computed in float32 and rounded once; the workspace is
stored in the gates' dtype, as on CUDA.
"""

import numpy as np
import torch

from ..dtypes import SCALAR_TYPE_NAMES, compute_dtype, to_numpy_dtype
from ._operands import operand
from ._results import as_result
from .reductions import not_implemented_for
from .registry import aten, implements

_LSTM_GATES = 4  # input, forget, cell, output
_GRU_GATES = 3  # reset, update, new
_GRU_WORKSPACE_PARTS = 5  # r, z, n, hx, hn + b_hn


def _sigmoid(x):
    with np.errstate(over="ignore"):  # exp(-x) overflows to inf for very negative x: sigmoid is 0
        return 1 / (1 + np.exp(-x))


def _gate_split(gates, count):
    """The ``count`` equal column blocks of ``gates``, views in PyTorch's gate order."""
    return np.split(gates, count, axis=1)


# --- the NumPy math -----------------------------------------------------------


def lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    """One LSTM step from precomputed gate matmuls: ``(hy, cy, workspace)``."""
    gates = _summed_gates(input_gates, hidden_gates, input_bias, hidden_bias)
    workspace = _sigmoid(gates)
    ingate, forgetgate, cellgate, outgate = _gate_split(workspace, _LSTM_GATES)
    cellgate[...] = np.tanh(_gate_split(gates, _LSTM_GATES)[2])
    cy = forgetgate * cx + ingate * cellgate
    hy = outgate * np.tanh(cy)
    return hy, cy, workspace


def _summed_gates(input_gates, hidden_gates, input_bias, hidden_bias):
    gates = input_gates + hidden_gates
    for bias in (input_bias, hidden_bias):
        if bias is not None:
            gates += bias
    return gates


def lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace):
    """The gradients of the gates' pre-activations and of ``cx``; a missing grad counts as zeros."""
    ingate, forgetgate, cellgate, outgate = _gate_split(workspace, _LSTM_GATES)
    tanh_cy = np.tanh(cy)
    grad_cell = np.zeros_like(cy) if grad_cy is None else np.array(grad_cy, dtype=cy.dtype)
    if grad_hy is not None:
        grad_cell += grad_hy * outgate * (1 - tanh_cy * tanh_cy)
        grad_out = grad_hy * tanh_cy * (1 - outgate) * outgate
    else:
        grad_out = np.zeros_like(cy)
    grad_gates = np.concatenate(
        [
            grad_cell * cellgate * (1 - ingate) * ingate,
            grad_cell * cx * (1 - forgetgate) * forgetgate,
            grad_cell * ingate * (1 - cellgate * cellgate),
            grad_out,
        ],
        axis=1,
    )
    return grad_gates, grad_cell * forgetgate


def gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    """One GRU step from precomputed gate matmuls: ``(hy, workspace)``.

    The new gate's hidden part (with its bias) is scaled by the reset gate
    before it meets the input part, so the two matmuls stay apart.
    """
    if input_bias is not None:
        input_gates = input_gates + input_bias
    if hidden_bias is not None:
        hidden_gates = hidden_gates + hidden_bias
    input_r, input_z, input_n = _gate_split(input_gates, _GRU_GATES)
    hidden_r, hidden_z, hidden_n = _gate_split(hidden_gates, _GRU_GATES)
    resetgate = _sigmoid(input_r + hidden_r)
    updategate = _sigmoid(input_z + hidden_z)
    newgate = np.tanh(input_n + resetgate * hidden_n)
    hy = newgate + updategate * (hx - newgate)
    workspace = np.concatenate([resetgate, updategate, newgate, hx, hidden_n], axis=1)
    return hy, workspace


def gru_cell_backward(grad_hy, workspace):
    """The gradients of the input gates, the hidden gates and ``hx``."""
    resetgate, updategate, newgate, hx, hidden_n = _gate_split(workspace, _GRU_WORKSPACE_PARTS)
    grad_update = grad_hy * (hx - newgate) * (1 - updategate) * updategate
    grad_new = grad_hy * (1 - updategate) * (1 - newgate * newgate)
    grad_reset = grad_new * hidden_n * (1 - resetgate) * resetgate
    grad_input_gates = np.concatenate([grad_reset, grad_update, grad_new], axis=1)
    grad_hidden_gates = np.concatenate([grad_reset, grad_update, grad_new * resetgate], axis=1)
    return grad_input_gates, grad_hidden_gates, grad_hy * updategate


# --- checks, as CUDA's kernels make them (RNN.cu and ATen/TensorUtils.cpp) ----


def _described(position, name):
    return f"argument #{position} '{name}'"


def _check_dim(op, tensor, position, name, dim):
    if tensor.dim() != dim:
        raise RuntimeError(
            f"Expected {dim}-dimensional tensor, but got {tensor.dim()}-dimensional tensor for "
            f"{_described(position, name)} (while checking arguments for {op})"
        )


def _check_numel(op, tensor, position, name, numel):
    if tensor.numel() != numel:
        raise RuntimeError(
            f"Expected tensor for {_described(position, name)} to have {numel} elements; but it "
            f"actually has {tensor.numel()} elements (while checking arguments for {op})"
        )


def _check_size(op, tensor, position, name, size):
    _check_dim(op, tensor, position, name, len(size))
    if tuple(tensor.shape) != tuple(size):
        raise RuntimeError(
            f"Expected tensor of size {list(size)}, but got tensor of size {list(tensor.shape)} "
            f"for {_described(position, name)} (while checking arguments for {op})"
        )


def _check_same_size(op, first, second):
    (tensor, position, name), (other, other_position, other_name) = first, second
    if tensor.shape != other.shape:
        raise RuntimeError(
            f"Expected tensor for {_described(position, name)} to have same size as tensor for "
            f"{_described(other_position, other_name)}; but {list(tensor.shape)} does not equal "
            f"{list(other.shape)} (while checking arguments for {op})"
        )


def _check_cell_sizes(op, input_gates, hidden_gates, input_bias, hidden_bias, gate_count, hidden):
    """RNN.cu's ``checkSizes``: 2-d gates of one shape, 1-d biases as wide, a matching hidden state."""
    _check_dim(op, input_gates, 1, "input_gates", 2)
    _check_same_size(op, (input_gates, 1, "input_gates"), (hidden_gates, 2, "hidden_gates"))
    gates_size = input_gates.shape[1]
    if input_bias is not None:
        _check_dim(op, input_bias, 3, "input_bias", 1)
        _check_numel(op, input_bias, 3, "input_bias", gates_size)
        if hidden_bias is not None:
            _check_same_size(op, (input_bias, 3, "input_bias"), (hidden_bias, 4, "hidden_bias"))
    _check_dim(op, hidden, 5, "prev_hidden", 2)
    _check_numel(op, hidden, 5, "prev_hidden", input_gates.shape[0] * gates_size // gate_count)


def _refuse_integer_gates(gates):
    """CPU's cell gets as far as the in-place sigmoid of integer gates, which refuses them;
    the fused cell refuses them with the same error, so a cell fails alike on both devices.
    (Complex gates, which CPU's plain ops take, are refused as CUDA refuses them.)"""
    if not (gates.dtype.is_floating_point or gates.dtype.is_complex):
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type {SCALAR_TYPE_NAMES[gates.dtype]}"
        )


def _floating_arrays(op, *tensors):
    """The arrays of ``tensors`` (``None`` stays ``None``) in the first one's compute dtype.

    Like CUDA's kernels, the first tensor's dtype picks the kernel, and every
    other tensor must have that dtype.
    """
    dtype = tensors[0].dtype
    if not dtype.is_floating_point:
        raise not_implemented_for(op, dtype)
    for tensor in tensors:
        if tensor is not None and tensor.dtype != dtype:
            raise RuntimeError(
                f"expected scalar type {SCALAR_TYPE_NAMES[dtype]} but found {SCALAR_TYPE_NAMES[tensor.dtype]}"
            )
    np_compute = to_numpy_dtype(compute_dtype(dtype))
    return [None if t is None else np.asarray(operand(op, t), dtype=np_compute) for t in tensors], dtype


def _as_rows(hidden, gates, gate_count):
    """The hidden state as one row per batch element: CUDA reads it by element index,
    having checked only its element count."""
    return hidden.reshape(gates.shape[0], gates.shape[1] // gate_count)


def _bias_grad(grad_gates, has_bias, dtype):
    return as_result(grad_gates.sum(axis=0), dtype) if has_bias else None


# --- kernels ------------------------------------------------------------------


@implements(aten._thnn_fused_lstm_cell.default)
def fused_lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    op = "_thnn_fused_lstm_cell"
    _check_cell_sizes(op, input_gates, hidden_gates, input_bias, hidden_bias, _LSTM_GATES, cx)
    _refuse_integer_gates(input_gates)
    arrays, dtype = _floating_arrays(op, input_gates, hidden_gates, cx, input_bias, hidden_bias)
    gates_in, gates_hidden, c, bias_in, bias_hidden = arrays
    c = _as_rows(c, gates_in, _LSTM_GATES)
    hy, cy, workspace = lstm_cell(gates_in, gates_hidden, c, bias_in, bias_hidden)
    return tuple(as_result(array, dtype) for array in (hy.reshape(cx.shape), cy.reshape(cx.shape), workspace))


@implements(aten._thnn_fused_lstm_cell_backward_impl.default)
def fused_lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    if grad_hy is None and grad_cy is None:
        return None, None, None
    _check_lstm_backward_sizes(grad_hy, grad_cy, cx, cy, workspace)
    op = "_thnn_fused_lstm_cell_backward"
    (space, grad_h, grad_c, c_prev, c_next), dtype = _floating_arrays(op, workspace, grad_hy, grad_cy, cx, cy)
    batch, hidden = c_prev.shape
    gate_rows = space.reshape(batch, hidden * _LSTM_GATES)
    grad_gates, grad_cx = lstm_cell_backward(grad_h, grad_c, c_prev, c_next, gate_rows)
    return as_result(grad_gates, dtype), as_result(grad_cx, dtype), _bias_grad(grad_gates, has_bias, dtype)


def _check_lstm_backward_sizes(grad_hy, grad_cy, cx, cy, workspace):
    op = "fused_lstm_cell_backward"
    defined, position, name = (grad_hy, 1, "grad_hy") if grad_hy is not None else (grad_cy, 2, "grad_cy")
    _check_dim(op, defined, position, name, 2)
    size = defined.shape
    named = ((grad_hy, 1, "grad_hy"), (grad_cy, 2, "grad_cy"), (cx, 3, "cx"), (cy, 4, "cy"))
    for tensor, position, name in named:
        if tensor is not None:
            _check_size(op, tensor, position, name, size)
    _check_dim(op, workspace, 5, "workspace", 2)
    _check_numel(op, workspace, 5, "workspace", size[0] * size[1] * _LSTM_GATES)


@implements(aten._thnn_fused_gru_cell.default)
def fused_gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    op = "_thnn_fused_gru_cell"
    _check_cell_sizes(op, input_gates, hidden_gates, input_bias, hidden_bias, _GRU_GATES, hx)
    _refuse_integer_gates(input_gates)
    arrays, dtype = _floating_arrays(op, input_gates, hidden_gates, hx, input_bias, hidden_bias)
    gates_in, gates_hidden, h, bias_in, bias_hidden = arrays
    h = _as_rows(h, gates_in, _GRU_GATES)
    hy, workspace = gru_cell(gates_in, gates_hidden, h, bias_in, bias_hidden)
    return as_result(hy.reshape(hx.shape), dtype), as_result(workspace, dtype)


@implements(aten._thnn_fused_gru_cell_backward.default)
def fused_gru_cell_backward(grad_hy, workspace, has_bias):
    op = "fused_gru_cell_backward"
    _check_dim(op, grad_hy, 1, "grad_hy", 2)
    batch, hidden = grad_hy.shape
    _check_size(op, workspace, 2, "workspace", (batch, hidden * _GRU_WORKSPACE_PARTS))
    (grad_h, space), dtype = _floating_arrays("_thnn_fused_gru_cell_backward", grad_hy, workspace)
    grad_input_gates, grad_hidden_gates, grad_hx = gru_cell_backward(grad_h, space)
    return (
        as_result(grad_input_gates, dtype),
        as_result(grad_hidden_gates, dtype),
        as_result(grad_hx, dtype),
        _bias_grad(grad_input_gates, has_bias, dtype),
        _bias_grad(grad_hidden_gates, has_bias, dtype),
    )
