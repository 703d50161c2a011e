"""Attention: the fused multi-head attention and Transformer encoder layer of the fast path.

``F.scaled_dot_product_attention`` picks its kernel in C++: for a device
without a fused SDPA kernel (``_fused_sdp_choice``, a dispatch stub that only
C++ can fill) PyTorch runs ``_scaled_dot_product_attention_math``, a
composite of ``bmm``, ``_safe_softmax``, ``masked_fill``/``add`` and
``native_dropout`` that decomposes before it reaches the backend, forward
and backward (``aten/src/ATen/native/transformers/attention.cpp``): about
twenty ops forward and thirty backward, each a round trip through Python.
npy registers ``scaled_dot_product_attention`` itself at
``AutogradPrivateUse1`` instead: for float32 and float64 4-d inputs without
dropout, grouped heads or a mask that needs a gradient, one NumPy forward
(scores, mask, softmax as ``_safe_softmax``: a row with every position
masked is zeros) and one NumPy backward; everything else runs the
composite, errors included. ``nn.MultiheadAttention`` and the Transformer
layers in training mode (or with gradients) call it.

In eval mode under ``torch.no_grad()``, ``nn.MultiheadAttention`` and
``nn.TransformerEncoderLayer`` take PyTorch's "fast path" on every device
named ``cpu``, ``cuda``, ``xpu`` or the PrivateUse1 backend's name
(``torch/nn/modules/activation.py``, ``_check_arg_device``;
``torch/nn/modules/transformer.py``, ``_supported_device_type``), calling
the fused ops ``_native_multi_head_attention`` and
``_transformer_encoder_layer_fwd``, which exist only as CPU/CUDA kernels.
Their npy kernels follow PyTorch's CPU kernels
(``native_multi_head_attention_cpu``, ``transformer_encoder_layer_forward``)
step by step, in NumPy, half precision in float32 and rounded once:

* q, k, v are the input projections; q is scaled by ``1/sqrt(head_dim)``
  before the product with k, as CPU's ``_transform_bias_rescale_qkv`` does;
* a mask is read as CPU's ``masked_softmax`` reads it: converted to bool,
  so any non-zero float (not only ``-inf``) masks its position out; a
  row with every position masked is NaN, as on CPU; ``mask_type`` 0 is a
  (L, L) attention mask, 1 a (B, L) key padding mask, 2 a mask of the
  scores' own (B, H, L, L) shape;
* the encoder layer's feed-forward activation is relu or exact gelu, its
  layer norms come after each residual sum, or before each block with
  ``norm_first``.

With a ``src_key_padding_mask``, ``nn.TransformerEncoder``'s fast path
(``enable_nested_tensor=True``, the default) asks
``_nested_tensor_from_mask_left_aligned`` whether each sequence's padding is
at its end, packs the batch into a nested tensor without the padding
(``_nested_tensor_from_mask``), runs each layer on it and pads the result
with zeros again (``to_padded_tensor``). A nested tensor over npy memory
dispatches at ``NestedTensorPrivateUse1``: its kernels here are registered
with ``nested=True`` and built on :mod:`._nested`. Each layer runs on the
re-padded batch with the padding masked out of attention, which adds up the
same terms as CPU's per-sequence kernels.
"""

import math
from typing import NamedTuple

import numpy as np
import torch

from ..dtypes import SCALAR_TYPE_NAMES, TYPE_META_NAMES
from ..tensor import unwrap, wrap
from ._dtype_errors import not_implemented_for
from ._nested import nested_from_rows, padded, rows_of
from ._numpy_errors import quietly
from ._operands import in_compute_dtype
from ._whole_ops import composite, differentiable_gradients, plain_npy
from .registry import aten, computed_by, implements
from .unary import exact_erf

# native_multi_head_attention's mask_type: how the mask covers the (B, H, L, L) scores.
_ATTENTION_MASK, _KEY_PADDING_MASK, _SCORES_MASK = 0, 1, 2


# --- the math, in NumPy -------------------------------------------------------


def _linear(x, weight, bias):
    return x @ weight.T + bias


def _layer_norm(x, weight, bias, eps):
    """Layer norm over the last dim, with the biased variance, as ``F.layer_norm``."""
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / np.sqrt(variance + eps) * weight + bias


def _gelu(x):
    """The exact (erf) gelu, which CPU's ``_addmm_activation(use_gelu=True)`` applies."""
    return x * 0.5 * (1 + exact_erf(x / math.sqrt(2.0)).astype(x.dtype))


def _split_heads(x, num_heads):
    """(B, L, D) as (B, H, L, D / H)."""
    batch, length, dim = x.shape
    return x.reshape(batch, length, num_heads, dim // num_heads).transpose(0, 2, 1, 3)


def _masked_softmax(scores, masked):
    """Softmax over the last dim, leaving out the positions where ``masked`` is True.

    A row with every position left out is NaN (exp of -inf minus -inf), as
    PyTorch's CPU ``_masked_softmax`` makes it.
    """
    if masked is not None:
        scores = np.where(masked, -np.inf, scores)
    with np.errstate(invalid="ignore"):
        exp = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return exp / exp.sum(axis=-1, keepdims=True)


def multi_head_attention(query, key, value, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, masked):
    """Attention of (B, L, D) ``query`` over ``key``/``value``: the projected output,
    and the (B, H, L, L) attention weights.

    ``masked`` is None or a bool array broadcasting to the weights, True where a
    query may not look.
    """
    dim = query.shape[-1]
    w_q, w_k, w_v = np.split(qkv_weight, 3)
    b_q, b_k, b_v = np.split(qkv_bias, 3)
    scale = np.asarray(1 / math.sqrt(dim // num_heads), dtype=query.dtype)
    q = _split_heads(_linear(query, w_q, b_q), num_heads) * scale
    k = _split_heads(_linear(key, w_k, b_k), num_heads)
    v = _split_heads(_linear(value, w_v, b_v), num_heads)
    weights = _masked_softmax(q @ k.transpose(0, 1, 3, 2), masked)
    context = (weights @ v).transpose(0, 2, 1, 3).reshape(query.shape)
    return _linear(context, proj_weight, proj_bias), weights


def transformer_encoder_layer(src, num_heads, attention, norms, feed_forward, use_gelu, norm_first, eps, masked):
    """One ``nn.TransformerEncoderLayer`` (eval mode: no dropout) on (B, L, D) ``src``.

    ``attention`` is (qkv_weight, qkv_bias, proj_weight, proj_bias), ``norms``
    (weight_1, bias_1, weight_2, bias_2), ``feed_forward`` (weight_1, bias_1,
    weight_2, bias_2).
    """
    norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2 = norms
    ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2 = feed_forward

    def self_attention(x):
        return multi_head_attention(x, x, x, num_heads, *attention, masked)[0]

    def ffn(x):
        hidden = _linear(x, ffn_weight_1, ffn_bias_1)
        hidden = _gelu(hidden) if use_gelu else np.maximum(hidden, 0)
        return _linear(hidden, ffn_weight_2, ffn_bias_2)

    if norm_first:
        x = src + self_attention(_layer_norm(src, norm_weight_1, norm_bias_1, eps))
        return x + ffn(_layer_norm(x, norm_weight_2, norm_bias_2, eps))
    x = _layer_norm(src + self_attention(src), norm_weight_1, norm_bias_1, eps)
    return _layer_norm(x + ffn(x), norm_weight_2, norm_bias_2, eps)


def is_left_aligned(kept):
    """Whether each row of the bool (B, L) ``kept`` is some Trues followed only by Falses."""
    return bool(np.all(kept[:, :-1] | ~kept[:, 1:]))


# --- checks, as PyTorch's CPU kernels make them -------------------------------


def _attention_input_checks(query, key, value, embed_dim, num_heads, qkv_weight, qkv_bias):
    """The checks at the top of ``native_multi_head_attention_cpu``, in its order, each
    looked at only once the ones before it hold."""
    yield query.dim() == 3, f"expected 3-D `query`, got {query.dim()}-D tensor"
    yield (
        query.shape[2] == embed_dim,
        f"passed-in embed_dim {embed_dim} didn't match last dim of query {query.shape[2]}",
    )
    yield key.dim() == 3, f"expected 3-D `key`, got {key.dim()}-D tensor"
    yield value.dim() == 3, f"expected 3-D `value`, got {value.dim()}-D tensor"
    yield query.shape == key.shape == value.shape, "expected `query`/`key`/`value` shapes to match"
    yield qkv_weight.dim() == 2, f"expected 2-D `qkv_weight`, got {qkv_weight.dim()}-D tensor"
    yield qkv_weight.shape[0] == 3 * embed_dim, "expected `qkv_weight` first dim to be 3x embed_dim"
    yield qkv_weight.shape[1] == embed_dim, "expected `qkv_weight` second dim to be embed_Dim"
    yield qkv_bias.dim() == 1, f"expected 1-D `qkv_bias`, got {qkv_bias.dim()}-D tensor"
    yield qkv_bias.shape[0] == 3 * embed_dim, "expected `qkv_bias` first dim and first dim of query to be equal"
    yield embed_dim % num_heads == 0, "`embed_dim` must divide evenly by `num_heads`"


def _check_attention_inputs(*arguments):
    for holds, message in _attention_input_checks(*arguments):
        if not holds:
            raise RuntimeError(message)


def _check_same_dtype(tensors):
    """CPU's matmuls refuse operands of different dtypes (the first pair that differs)."""
    first = tensors[0]
    for other in tensors[1:]:
        if other.dtype != first.dtype:
            raise RuntimeError(
                "expected m1 and m2 to have the same dtype, but got: "
                f"{TYPE_META_NAMES[first.dtype]} != {TYPE_META_NAMES[other.dtype]}"
            )


def _check_mask(mask, mask_type, batch, num_heads, length):
    """CPU's ``masked_softmax``'s checks of the mask against the (B, H, L, L) scores:
    a mask that is not 2-D counts as type 2."""
    if mask is None:
        return
    mask_type = _mask_type(mask, mask_type)
    if mask_type is None:
        raise RuntimeError("Mask Type should be defined")
    expected = {
        _SCORES_MASK: ((batch, num_heads, length, length), "For mask_type == 2 mask shape should match input shape"),
        _KEY_PADDING_MASK: ((batch, length), "For mask_type == 1 mask shape should be (B, L)"),
        _ATTENTION_MASK: ((length, length), "For mask_type == 0 mask shape should be (L, L)"),
    }
    if mask_type not in expected:
        raise RuntimeError("Mask Type should be 0 (src_mask) or 1 (src_key_padding_mask), or 2 (default_mask)")
    shape, message = expected[mask_type]
    if tuple(mask.shape) != shape:
        raise RuntimeError(message)


def _mask_type(mask, mask_type):
    return _SCORES_MASK if mask.ndim != 2 else mask_type


def _masked_positions(mask, mask_type):
    """The (checked) mask as a bool array broadcasting to the (B, H, L, L) scores."""
    if mask is None:
        return None
    masked = mask != 0
    return masked[:, None, None, :] if _mask_type(mask, mask_type) == _KEY_PADDING_MASK else masked


def _check_floating(op, tensor):
    """CPU's fused kernels are for floating types only."""
    if not tensor.dtype.is_floating_point:
        raise not_implemented_for(op, tensor.dtype)


# --- the ops, on arrays: results in the query's (or source's) dtype -----------------


class MultiHeadAttentionCall(NamedTuple):
    """A call of ``_native_multi_head_attention``, its arguments in the schema's order: tensors
    for the checks, arrays for the NumPy function."""

    query: object
    key: object
    value: object
    embed_dim: int
    num_head: int
    qkv_weight: object
    qkv_bias: object
    proj_weight: object
    proj_bias: object
    mask: object = None
    need_weights: bool = True
    average_attn_weights: bool = True
    mask_type: object = None

    @property
    def weights(self):
        return self.qkv_weight, self.qkv_bias, self.proj_weight, self.proj_bias


def native_multi_head_attention(*args, **kwargs):
    """The attention's output and, if ``need_weights``, its weights (averaged over the heads
    if ``average_attn_weights``)."""
    call = MultiHeadAttentionCall(*args, **kwargs)
    query = call.query
    if query.size == 0:  # CPU returns before it projects
        return np.empty(query.shape, query.dtype), None
    arrays = in_compute_dtype(query.dtype, query, call.key, call.value, *call.weights)
    masked = _masked_positions(call.mask, call.mask_type)
    output, weights = multi_head_attention(*arrays[:3], call.num_head, *arrays[3:], masked)
    if not call.need_weights:
        return output.astype(query.dtype, copy=False), None
    if call.average_attn_weights:
        weights = weights.mean(axis=1)
    return output.astype(query.dtype, copy=False), weights.astype(query.dtype, copy=False)


class EncoderLayerCall(NamedTuple):
    """A call of ``_transformer_encoder_layer_fwd``, its arguments in the schema's order: tensors
    for the checks and the nested kernel, arrays for the NumPy function."""

    src: object
    embed_dim: int
    num_heads: int
    qkv_weight: object
    qkv_bias: object
    proj_weight: object
    proj_bias: object
    use_gelu: bool
    norm_first: bool
    eps: float
    norm_weight_1: object
    norm_bias_1: object
    norm_weight_2: object
    norm_bias_2: object
    ffn_weight_1: object
    ffn_bias_1: object
    ffn_weight_2: object
    ffn_bias_2: object
    mask: object = None
    mask_type: object = None

    @property
    def attention(self):
        return self.qkv_weight, self.qkv_bias, self.proj_weight, self.proj_bias

    @property
    def norms(self):
        return self.norm_weight_1, self.norm_bias_1, self.norm_weight_2, self.norm_bias_2

    @property
    def feed_forward(self):
        return self.ffn_weight_1, self.ffn_bias_1, self.ffn_weight_2, self.ffn_bias_2


def transformer_encoder_layer_fwd(*args, **kwargs):
    layer = EncoderLayerCall(*args, **kwargs)
    src = layer.src
    if src.size == 0:
        return src.copy()
    arrays = in_compute_dtype(src.dtype, src, *layer.attention, *layer.norms, *layer.feed_forward)
    result = transformer_encoder_layer(
        arrays[0],
        layer.num_heads,
        arrays[1:5],
        arrays[5:9],
        arrays[9:],
        layer.use_gelu,
        layer.norm_first,
        layer.eps,
        _masked_positions(layer.mask, layer.mask_type),
    )
    return result.astype(src.dtype, copy=False)


# --- kernels: the checks, then the op on arrays -----------------------------------


def _multi_head_attention_checks(*args, **kwargs):
    call = MultiHeadAttentionCall(*args, **kwargs)
    query = call.query
    _check_attention_inputs(query, call.key, call.value, call.embed_dim, call.num_head, *call.weights[:2])
    _check_same_dtype((query, call.key, call.value, *call.weights))
    if query.numel() == 0:  # CPU returns before it looks at the mask
        return
    _check_mask(call.mask, call.mask_type, query.shape[0], call.num_head, query.shape[1])
    _check_floating("transform_bias_rescale_qkv", query)


def _encoder_layer_checks(*args, **kwargs):
    layer = EncoderLayerCall(*args, **kwargs)
    src = layer.src
    if src.numel() == 0:
        return
    _check_attention_inputs(src, src, src, layer.embed_dim, layer.num_heads, layer.qkv_weight, layer.qkv_bias)
    _check_same_dtype((src, *layer.attention, *layer.feed_forward, *layer.norms))
    _check_mask(layer.mask, layer.mask_type, src.shape[0], layer.num_heads, src.shape[1])
    _check_floating("transform_bias_rescale_qkv", src)


implements(aten._native_multi_head_attention.default, out=aten._native_multi_head_attention.out)(
    computed_by(native_multi_head_attention, name="_native_multi_head_attention")(_multi_head_attention_checks)
)
_encoder_layer_kernel = implements(
    aten._transformer_encoder_layer_fwd.default,
    out=aten._transformer_encoder_layer_fwd.out,
)(computed_by(transformer_encoder_layer_fwd, name="_transformer_encoder_layer_fwd")(_encoder_layer_checks))


# --- the nested path: TransformerEncoder with a src_key_padding_mask -------------


def _check_kept_mask(t, mask):
    """The checks of CPU's ``_nested_tensor_from_mask`` and its left-alignment test."""
    checks = [
        (
            mask.dtype == torch.bool,
            f"Expected mask to be of ScalarType Bool, but got {SCALAR_TYPE_NAMES[mask.dtype]} instead.",
        ),
        (mask.dim() == 2, "Padding mask should be 2D"),
        (t.dim() == 3, "Input should be a 3D tensor, N * L * D"),
        (tuple(t.shape[:2]) == tuple(mask.shape), "Mask size should match input size"),
    ]
    for holds, message in checks:
        if not holds:
            raise RuntimeError(message)


@implements(aten._nested_tensor_from_mask_left_aligned.default)
def nested_tensor_from_mask_left_aligned(t, mask):
    """Whether each sequence's padding is all at its end, which the nested path needs."""
    _check_kept_mask(t, mask)
    return is_left_aligned(unwrap(mask))


@implements(aten._nested_tensor_from_mask.default)
def nested_tensor_from_mask(t, mask, mask_check=True):
    """The batch as a nested tensor of its sequences, each as long as its count of kept
    (True) positions, taken from its start as CPU takes them."""
    _check_kept_mask(t, mask)
    kept = unwrap(mask)
    if mask_check and not is_left_aligned(kept):
        raise RuntimeError("Mask must be left-aligned without gaps")
    lengths = kept.sum(axis=1)
    present = np.arange(kept.shape[1]) < lengths[:, None]
    return nested_from_rows(unwrap(t)[present], lengths)


@implements(aten._transformer_encoder_layer_fwd.default, nested=True)
def nested_transformer_encoder_layer_fwd(*args, **kwargs):
    """The layer on each sequence of a nested ``src``: the padded batch with the padding
    masked out of attention (the same sums), unpadded again."""
    layer = EncoderLayerCall(*args, **kwargs)
    if layer.mask is not None:
        raise RuntimeError("NestedTensor with mask is not supported yet")
    rows, lengths = rows_of(layer.src)
    if rows.size == 0:
        return nested_from_rows(rows.copy(), lengths)
    batch, present = padded(rows, lengths, lengths.max(), 0)
    result = _encoder_layer_kernel(*layer._replace(src=wrap(batch), mask=wrap(~present), mask_type=_KEY_PADDING_MASK))
    return nested_from_rows(unwrap(result)[present], lengths)


@implements(aten.to_padded_tensor.default, nested=True)
def nested_to_padded_tensor(self, padding, output_size=None):
    rows, lengths = rows_of(self)
    if rows.size == 0:
        raise RuntimeError("to_padded_tensor: at least one constituent tensor should have non-zero numel")
    shape = (len(lengths), lengths.max(), rows.shape[1])
    if output_size is not None:
        if len(output_size) != len(shape):
            raise RuntimeError("Length of output_size does not match NestedTensor dims. Broadcasting is not supported.")
        if any(wanted < needed for wanted, needed in zip(output_size, shape)):
            raise RuntimeError(
                "Value in output_size is less than NestedTensor padded size. Truncation is not supported."
            )
        shape = tuple(output_size)
    result = np.full(shape, padding, dtype=rows.dtype)
    result[: len(lengths), :, : rows.shape[1]][np.arange(shape[1]) < lengths[:, None]] = rows
    return wrap(result)


# --- scaled_dot_product_attention, whole ---------------------------------------


def _attention_probabilities(q, k, scale, masked, bias):
    """``softmax(q k^T scale + bias)`` with the ``masked`` positions left out, (B, H, L, S); a row
    with every position masked is zeros, as ``_safe_softmax`` makes it."""
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) * q.dtype.type(scale)
    if bias is not None:
        scores = scores + bias
    if masked is not None:
        scores = np.where(masked, -np.inf, scores)
    top = scores.max(axis=-1, keepdims=True)
    exp = np.exp(scores - np.where(np.isneginf(top), 0, top))
    total = exp.sum(axis=-1, keepdims=True)
    return np.divide(exp, total, out=np.zeros_like(exp), where=total != 0)  # NaN stays NaN


def _attention_backward(grad, q, k, v, probabilities, scale):
    """The gradients of ``probabilities @ v`` with respect to q, k and v."""
    grad_v = np.matmul(np.swapaxes(probabilities, -1, -2), grad)
    grad_probabilities = np.matmul(grad, np.swapaxes(v, -1, -2))
    grad_scores = probabilities * (grad_probabilities - (grad_probabilities * probabilities).sum(-1, keepdims=True))
    grad_scores *= q.dtype.type(scale)
    return np.matmul(grad_scores, k), np.matmul(np.swapaxes(grad_scores, -1, -2), q), grad_v


class _Attention(torch.autograd.Function):
    """SDPA of npy q, k, v (B, H, L, E) with a constant mask: ``masked`` (bool, True = left out) or
    ``bias`` (added to the scores), either broadcasting to (B, H, L, S), or None."""

    @staticmethod
    def forward(ctx, q, k, v, masked, bias, scale):
        probabilities = quietly(_attention_probabilities, unwrap(q), unwrap(k), scale, masked, bias)
        ctx.save_for_backward(q, k, v)
        ctx.probabilities, ctx.masked, ctx.bias, ctx.scale = probabilities, masked, bias, scale
        return wrap(np.matmul(probabilities, unwrap(v)))

    @staticmethod
    def backward(ctx, grad):
        q, k, v = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph: the composite's backward, itself differentiable
            return (*_differentiable_backward(grad, q, k, v, ctx), None, None, None)
        grads = quietly(
            _attention_backward, unwrap(grad), unwrap(q), unwrap(k), unwrap(v), ctx.probabilities, ctx.scale
        )
        return (*(wrap(np.ascontiguousarray(array)) for array in grads), None, None, None)


def _differentiable_backward(grad, q, k, v, ctx):
    """The gradients of q, k and v as PyTorch's composite computes them, recorded for a second backward."""
    mask = None
    if ctx.masked is not None:
        mask = wrap(np.ascontiguousarray(~ctx.masked))
    elif ctx.bias is not None:
        mask = wrap(np.ascontiguousarray(ctx.bias))
    return differentiable_gradients(lambda: _composite(q, k, v, mask, 0.0, False, ctx.scale, False), (q, k, v), grad)


def _composite(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """PyTorch's own ``scaled_dot_product_attention``: the math composite, on any device."""
    return composite(
        aten.scaled_dot_product_attention.default,
        query,
        key,
        value,
        attn_mask,
        dropout_p,
        is_causal,
        scale=scale,
        enable_gqa=enable_gqa,
    )


_WHOLE_DTYPES = (torch.float32, torch.float64)


def _takes_whole(q, k, v, attn_mask, dropout_p, is_causal, enable_gqa):
    """Whether the NumPy kernel computes this call: anything else, errors included, is the composite's."""
    if q.dtype not in _WHOLE_DTYPES or not all(plain_npy(t) and t.dim() == 4 and t.dtype == q.dtype for t in (q, k, v)):
        return False
    batch_heads, key_length, embedding = q.shape[:2], k.shape[2], q.shape[3]
    if k.shape != (*batch_heads, key_length, embedding) or v.shape[:3] != k.shape[:3] or 0 in q.shape + v.shape:
        return False
    if dropout_p != 0 or enable_gqa or (is_causal and attn_mask is not None):
        return False
    if attn_mask is None:
        return True
    broadcastable = attn_mask.dim() <= 4 and all(
        size in (1, full) for size, full in zip(reversed(attn_mask.shape), (key_length, q.shape[2], *batch_heads[::-1]))
    )
    return (
        plain_npy(attn_mask)
        and broadcastable
        and not attn_mask.requires_grad
        and attn_mask.dtype in (torch.bool, q.dtype)
    )


def _constant_mask(attn_mask, is_causal, length, key_length):
    """The mask as ``(masked, bias)`` arrays for :class:`_Attention`."""
    if is_causal:
        return ~np.tri(length, key_length, dtype=bool), None
    if attn_mask is None:
        return None, None
    array = unwrap(attn_mask)
    return (~array, None) if attn_mask.dtype == torch.bool else (None, array)


@implements(aten.scaled_dot_product_attention.default, autograd=True)
def scaled_dot_product_attention(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False
):
    if not _takes_whole(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa):
        return _composite(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    masked, bias = _constant_mask(attn_mask, is_causal, query.shape[2], key.shape[2])
    return _Attention.apply(query, key, value, masked, bias, scale)
