"""Attention on npy against CPU: SDPA, nn.MultiheadAttention and the Transformer layers,
in training (the composite ops, with gradients) and in eval under no_grad (PyTorch's fast
path, the fused ops of backend_pkg/ops/attention.py)."""

import copy

import pytest
import torch
import torch.nn.functional as F
from reference import RecordOps, assert_backward_like_cpu, assert_like_cpu, make, npy
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel

from backend_pkg import fallback

aten = torch.ops.aten

# nn.LayerNorm reaches a backend without a native_layer_norm kernel as PyTorch's
# composite (native_batch_norm, addcmul), backward as native_layer_norm_backward:
# the normalization family's ops. The Transformer tests let exactly these run on
# CPU, so that everything else is checked to be native.
LAYER_NORM_OPS = {"aten::native_batch_norm", "aten::addcmul.out", "aten::native_layer_norm_backward"}


@pytest.fixture
def strict_but_layer_norm(monkeypatch):
    monkeypatch.delenv(fallback.STRICT_ENV, raising=False)
    fallback.calls.clear()
    yield
    assert set(fallback.calls) <= LAYER_NORM_OPS, dict(fallback.calls)


def _on(device, value):
    if isinstance(value, torch.Tensor):
        return value.to(device)
    return value


def _outputs(result):
    result = result if isinstance(result, tuple) else (result,)
    return [value for value in result if value is not None]


# Parameter gradients add up over batch and sequence: NumPy's matmul and PyTorch's
# CPU BLAS sum in different orders, a few float32 ulps apart after a few layers.
GRAD_TOLERANCE = {"atol": 1e-4, "rtol": 1e-4}


def assert_module_like_cpu(module, *inputs, **kwargs):
    """``module`` and an npy deep copy of it agree: outputs, and in training (grad
    enabled) the gradients of the floating-point inputs and of every parameter."""
    npy_module = copy.deepcopy(module).to("npy")
    track = torch.is_grad_enabled()
    cpu_inputs = [x.detach().requires_grad_(track) for x in inputs]
    npy_inputs = [npy(x).detach().requires_grad_(track) for x in inputs]
    cpu_kwargs = {key: _on("cpu", value) for key, value in kwargs.items()}
    npy_kwargs = {key: _on("npy", value) for key, value in kwargs.items()}
    expected = _outputs(module(*cpu_inputs, **cpu_kwargs))
    actual = _outputs(npy_module(*npy_inputs, **npy_kwargs))
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert got.device.type == "npy"
        torch.testing.assert_close(got.detach().cpu(), want.detach(), equal_nan=True)
    if not track:
        return
    seeds = [make(want.shape, want.dtype, seed=index + 1) for index, want in enumerate(expected)]
    cpu_leaves = cpu_inputs + list(module.parameters())
    npy_leaves = npy_inputs + list(npy_module.parameters())
    cpu_grads = torch.autograd.grad(expected, cpu_leaves, seeds, allow_unused=True)
    npy_grads = torch.autograd.grad(actual, npy_leaves, [npy(s) for s in seeds], allow_unused=True)
    for got, want in zip(npy_grads, cpu_grads):
        assert (got is None) == (want is None)
        if want is not None:
            torch.testing.assert_close(got.cpu(), want, equal_nan=True, **GRAD_TOLERANCE)


def _padding_mask(batch, length):
    """A key padding mask whose last sequence is padded at its end (True = padding)."""
    mask = torch.zeros(batch, length, dtype=torch.bool)
    mask[-1, length // 2 :] = True
    return mask


# --- scaled_dot_product_attention -------------------------------------------------


def _qkv(dtype=torch.float32, length=5, key_length=6, heads=2, key_heads=2):
    return (
        make((2, heads, length, 4), dtype, seed=1) / 4,
        make((2, key_heads, key_length, 4), dtype, seed=2) / 4,
        make((2, key_heads, key_length, 4), dtype, seed=3) / 4,
    )


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"is_causal": True},
        {"scale": 0.3},
        {"attn_mask": torch.rand(5, 6, generator=torch.Generator().manual_seed(0)) > 0.3},
        {"attn_mask": make((2, 1, 5, 6), torch.float32, seed=4)},
    ],
    ids=["plain", "causal", "scale", "bool_mask", "float_mask"],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_sdpa_forward_backward(strict, options, dtype):
    mask = options.get("attn_mask")
    if mask is not None and mask.is_floating_point():
        options = {**options, "attn_mask": mask.to(dtype)}

    def attention(q, k, v):
        kwargs = {key: _on(q.device, value) for key, value in options.items()}
        return F.scaled_dot_product_attention(q, k, v, **kwargs)

    assert_backward_like_cpu(attention, *_qkv(dtype, length=6 if options.get("is_causal") else 5))


def _masked_row(mask):
    """``mask`` with its third query row masked out entirely: ``_safe_softmax`` makes that row zeros."""
    mask = mask.clone()
    mask[..., 2, :] = False if mask.dtype == torch.bool else float("-inf")
    return mask


# Calls the NumPy kernel computes whole (backend_pkg/ops/attention.py, _Attention), where the
# softmax's edge cases live, and one it leaves to the composite (a mask that needs a gradient).
SDPA_EDGES = {
    "bool_row_masked": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=_masked_row(m > 0)),
    "float_row_masked": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=_masked_row(m.detach())),
    "causal_more_keys": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    "mask_per_key": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m.detach()[:1, :1, :1] > 0),
    "value_wider": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, torch.cat([v, v[..., :3]], -1)),
    "mask_with_gradient": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
}


@pytest.mark.parametrize("case", SDPA_EDGES)
def test_sdpa_edges(strict, case):
    q, k, v = _qkv(torch.float64)
    assert_backward_like_cpu(SDPA_EDGES[case], q, k, v, make((2, 1, 5, 6), torch.float64, seed=4))


def test_sdpa_is_one_op_each_way(strict):
    """The whole kernel: no aten op runs for the attention itself, forward or backward (the backward's
    detach is autograd's, unpacking what the forward saved)."""
    q, k, v = (npy(t).requires_grad_() for t in _qkv())
    seed = torch.ones(2, 2, 5, 4, device="npy")
    with RecordOps() as forward:
        output = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    with RecordOps() as backward:
        output.backward(seed)
    assert forward.ops == set() and backward.ops <= {aten.detach.default}, (forward.ops, backward.ops)


def test_sdpa_double_backward(strict):
    """A gradient of a gradient (``create_graph``) is the math composite's, recorded as it runs. (CPU's
    default here, its flash kernel, has no double backward: CPU is told to run the composite.)"""

    def second_gradients(device):
        q, k, v = (t.to(device).requires_grad_() for t in _qkv(torch.float64))
        output = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        grads = torch.autograd.grad((output * output).sum(), (q, k, v), create_graph=True)
        return torch.autograd.grad(sum((g * g).sum() for g in grads), (q, k, v))

    with sdpa_kernel(SDPBackend.MATH):
        expected = second_gradients("cpu")
    for got, want in zip(second_gradients("npy"), expected):
        torch.testing.assert_close(got.cpu(), want)


def test_sdpa_grouped_query_attention(strict):
    def attention(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)

    assert_backward_like_cpu(attention, *_qkv(heads=4, key_heads=2))


def test_sdpa_half(strict):
    # CPU rounds each half step (scores, softmax, product); npy rounds once.
    q, k, v = _qkv(torch.float16)
    expected = F.scaled_dot_product_attention(q, k, v)
    actual = F.scaled_dot_product_attention(npy(q), npy(k), npy(v))
    assert actual.dtype == torch.float16
    torch.testing.assert_close(actual.cpu(), expected, atol=2e-3, rtol=2e-3)


def test_sdpa_refuses_integers_like_cpu(strict):
    q = torch.ones(2, 2, 4, 3, dtype=torch.int64)
    assert_like_cpu(F.scaled_dot_product_attention, q, q, q)


def test_sdpa_dropout_changes_the_result_and_repeats_with_the_seed(strict):
    q, k, v = (npy(t) for t in _qkv())
    without = F.scaled_dot_product_attention(q, k, v)
    torch.manual_seed(5)
    dropped = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    torch.manual_seed(5)
    again = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert not torch.allclose(dropped.cpu(), without.cpu())
    assert torch.equal(dropped.cpu(), again.cpu())


def test_mha_dropout_zeroes_weights_and_scales_the_rest(strict):
    """In training, dropout applies to the attention weights MHA returns: each is 0 or
    its value without dropout divided by 1 - p."""
    module = nn.MultiheadAttention(8, 2, dropout=0.5, batch_first=True).to("npy")
    undropped = copy.deepcopy(module)
    undropped.dropout = 0.0
    x = npy(make((2, 5, 8), torch.float32))
    _, weights = module(x, x, x, average_attn_weights=False)
    _, reference = undropped(x, x, x, average_attn_weights=False)
    weights, reference = weights.detach().cpu(), reference.detach().cpu()
    zeroed = weights == 0
    assert zeroed.any() and not zeroed.all()
    torch.testing.assert_close(weights[~zeroed], reference[~zeroed] * 2)


# --- nn.MultiheadAttention in training: the composite path, with gradients -----------


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize(
    "masks",
    [{}, {"key_padding_mask": "bool"}, {"attn_mask": "bool"}, {"attn_mask": "float", "key_padding_mask": "bool"}],
    ids=["none", "padding", "bool_attn", "float_attn_and_padding"],
)
def test_mha_training_forward_backward(strict, batch_first, masks):
    torch.manual_seed(0)
    module = nn.MultiheadAttention(8, 2, batch_first=batch_first)
    x = make((2, 5, 8) if batch_first else (5, 2, 8), torch.float32)
    kwargs = {}
    if "key_padding_mask" in masks:
        kwargs["key_padding_mask"] = _padding_mask(2, 5)
    if masks.get("attn_mask") == "bool":
        kwargs["attn_mask"] = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1)
    elif masks.get("attn_mask") == "float":
        kwargs["attn_mask"] = make((5, 5), torch.float32, seed=9) / 4
    assert_module_like_cpu(module, x, x, x, **kwargs)


def test_mha_training_cross_attention_with_kdim_vdim(strict):
    torch.manual_seed(0)
    module = nn.MultiheadAttention(8, 2, kdim=6, vdim=3, batch_first=True)
    query, key = make((2, 5, 8), torch.float32, 1), make((2, 7, 6), torch.float32, 2)
    value = make((2, 7, 3), torch.float32, 3)
    assert_module_like_cpu(module, query, key, value, average_attn_weights=False)


# --- the fast path: eval under no_grad --------------------------------------------------


def _fast_path_operands(dtype=torch.float32, batch=2, length=5, dim=8):
    torch.manual_seed(0)
    module = nn.MultiheadAttention(dim, 2, batch_first=True).to(dtype)
    weights = [module.in_proj_weight, module.in_proj_bias, module.out_proj.weight, module.out_proj.bias]
    return make((batch, length, dim), dtype), [w.detach() for w in weights]


_MASKS = {
    "none": (None, None),
    "attention": (torch.triu(torch.ones(5, 5, dtype=torch.bool), 1), 0),
    "padding": (_padding_mask(2, 5), 1),
    "scores": (torch.rand(2, 2, 5, 5, generator=torch.Generator().manual_seed(1)) > 0.7, 2),
    "float_scores": (torch.where(torch.arange(5) > 2, -0.5, 0.0).expand(2, 2, 5, 5), 2),
    "all_padding": (torch.ones(2, 5, dtype=torch.bool), 1),
}


@pytest.mark.parametrize("mask_name", list(_MASKS))
@pytest.mark.parametrize("need_weights, average", [(True, True), (True, False), (False, True)])
def test_native_multi_head_attention_like_cpu(strict, mask_name, need_weights, average):
    x, weights = _fast_path_operands()
    mask, mask_type = _MASKS[mask_name]

    def attention(x, w, b, pw, pb, mask):
        output, weights = aten._native_multi_head_attention(
            x, x, x, 8, 2, w, b, pw, pb, mask, need_weights, average, mask_type
        )
        assert (weights is None) == (not need_weights)
        return (output, weights) if need_weights else output

    assert_like_cpu(attention, x, *weights, mask)


def test_native_multi_head_attention_cross_attention(strict):
    x, weights = _fast_path_operands()
    memory = make(x.shape, x.dtype, seed=7)
    assert_like_cpu(lambda x, m, *w: aten._native_multi_head_attention(x, m, m, 8, 2, *w), x, memory, *weights)


def test_native_multi_head_attention_empty_batch(strict):
    x, weights = _fast_path_operands(batch=0)
    assert_like_cpu(lambda x, *w: aten._native_multi_head_attention(x, x, x, 8, 2, *w)[0], x, *weights)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float64], ids=str)
def test_native_multi_head_attention_dtypes(strict, dtype):
    x, weights = _fast_path_operands(dtype)
    expected = aten._native_multi_head_attention(x, x, x, 8, 2, *weights)
    n = [npy(t) for t in weights]
    actual = aten._native_multi_head_attention(npy(x), npy(x), npy(x), 8, 2, *n)
    # CPU rounds each half step; npy computes in float32 and rounds once.
    tolerance = {"atol": 1e-2, "rtol": 1e-2} if dtype == torch.float16 else {}
    for got, want in zip(actual, expected):
        assert got.dtype == dtype
        torch.testing.assert_close(got.cpu(), want, **tolerance)


def _bad_attention_calls():
    x, (w, b, pw, pb) = _fast_path_operands()
    return {
        "2d_query": lambda: (x[0], x[0], x[0], 8, 2, w, b, pw, pb),
        "embed_dim": lambda: (x, x, x, 4, 2, w, b, pw, pb),
        "key_shape": lambda: (x, x[:, :3], x[:, :3], 8, 2, w, b, pw, pb),
        "weight_rows": lambda: (x, x, x, 8, 2, w[:16], b, pw, pb),
        "bias_length": lambda: (x, x, x, 8, 2, w, b[:8], pw, pb),
        "heads": lambda: (x, x, x, 8, 3, w, b, pw, pb),
        "mask_without_type": lambda: (x, x, x, 8, 2, w, b, pw, pb, torch.zeros(5, 5, dtype=torch.bool)),
        "padding_mask_shape": lambda: (x, x, x, 8, 2, w, b, pw, pb, torch.zeros(3, 5, dtype=torch.bool), True, True, 1),
        "attention_mask_shape": lambda: (
            x,
            x,
            x,
            8,
            2,
            w,
            b,
            pw,
            pb,
            torch.zeros(5, 4, dtype=torch.bool),
            True,
            True,
            0,
        ),
        "scores_mask_shape": lambda: (
            x,
            x,
            x,
            8,
            2,
            w,
            b,
            pw,
            pb,
            torch.zeros(2, 1, 5, 5, dtype=torch.bool),
            True,
            True,
            2,
        ),
        "integers": lambda: (x.long(), x.long(), x.long(), 8, 2, w.long(), b.long(), pw.long(), pb.long()),
        "mixed_dtypes": lambda: (x, x, x, 8, 2, w.double(), b, pw, pb),
    }


@pytest.mark.parametrize("case", list(_bad_attention_calls()))
def test_native_multi_head_attention_errors_like_cpu(strict, case):
    args = _bad_attention_calls()[case]()
    tensors = [(i, a) for i, a in enumerate(args) if isinstance(a, torch.Tensor)]

    def call(*values):
        full = list(args)
        for (i, _), value in zip(tensors, values):
            full[i] = value
        return aten._native_multi_head_attention(*full)

    assert_like_cpu(call, *[a for _, a in tensors])


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("mask", ["none", "padding"])
def test_mha_module_fast_path(strict, need_weights, mask):
    torch.manual_seed(0)
    module = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    x = make((2, 5, 8), torch.float32)
    kwargs = {"need_weights": need_weights}
    if mask == "padding":
        kwargs["key_padding_mask"] = _padding_mask(2, 5)
    with torch.no_grad(), RecordOps() as recorded:
        # one tensor as query, key and value: the fast path's condition
        module_npy = copy.deepcopy(module).to("npy")
        xn = npy(x)
        expected = module(x, x, x, **kwargs)
        actual = module_npy(xn, xn, xn, **{k: _on("npy", v) for k, v in kwargs.items()})
    assert aten._native_multi_head_attention.default in recorded.ops
    torch.testing.assert_close(actual[0].cpu(), expected[0])
    assert (actual[1] is None) == (expected[1] is None)
    if expected[1] is not None:
        torch.testing.assert_close(actual[1].cpu(), expected[1])


# --- Transformer layers -----------------------------------------------------------------


def _encoder(activation="relu", norm_first=False, **options):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, activation=activation, norm_first=norm_first, batch_first=True
    )
    return nn.TransformerEncoder(layer, 2, **options)


@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("mask", ["none", "padding", "causal"])
def test_transformer_encoder_training(strict_but_layer_norm, activation, norm_first, mask):
    model = _encoder(activation, norm_first, enable_nested_tensor=False)
    x = make((2, 5, 8), torch.float32)
    kwargs = {}
    if mask == "padding":
        kwargs["src_key_padding_mask"] = _padding_mask(2, 5)
    elif mask == "causal":
        kwargs.update(mask=nn.Transformer.generate_square_subsequent_mask(5), is_causal=True)
    assert_module_like_cpu(model, x, **kwargs)


@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("mask", ["none", "padding", "causal"])
@pytest.mark.parametrize("nested", [True, False], ids=["nested", "not_nested"])
def test_transformer_encoder_fast_path(strict, activation, norm_first, mask, nested):
    """Eval under no_grad: each layer is one _transformer_encoder_layer_fwd, nothing falls back.

    With a padding mask (and nested tensors enabled, which norm_first disables) the
    encoder packs the batch into a nested tensor first, and pads its output with zeros.
    """
    model = _encoder(activation, norm_first, enable_nested_tensor=nested).eval()
    x = make((3, 5, 8), torch.float32)
    kwargs = {}
    if mask == "padding":
        padding = _padding_mask(3, 5)
        padding[0, 1:] = True  # sequences of 1, 5 and 2 tokens
        kwargs["src_key_padding_mask"] = padding
    elif mask == "causal":
        kwargs.update(mask=nn.Transformer.generate_square_subsequent_mask(5), is_causal=True)
    with torch.no_grad(), RecordOps() as recorded:
        assert_module_like_cpu(model, x, **kwargs)
    assert aten._transformer_encoder_layer_fwd.default in recorded.ops
    packed = mask == "padding" and nested and not norm_first
    assert (aten._nested_tensor_from_mask.default in recorded.ops) == packed


def test_transformer_encoder_nested_path_with_an_empty_sequence(strict):
    model = _encoder(enable_nested_tensor=True).eval()
    padding = _padding_mask(3, 5)
    padding[1] = True
    with torch.no_grad():
        assert_module_like_cpu(model, make((3, 5, 8), torch.float32), src_key_padding_mask=padding)


def test_nested_tensor_from_mask_round_trip_like_cpu(strict):
    x = make((3, 5, 4), torch.float32)
    kept = ~_padding_mask(3, 5)
    kept[0, 2:] = False
    gap = kept.clone()
    gap[1, 2] = False
    assert_like_cpu(lambda x, m: torch._nested_tensor_from_mask(x, m).to_padded_tensor(-1.0), x, kept)
    assert_like_cpu(lambda x, m: torch._nested_tensor_from_mask(x, m).to_padded_tensor(0.0, (4, 6, 5)), x, kept)
    assert_like_cpu(lambda x, m: torch._nested_tensor_from_mask(x, m, mask_check=False).to_padded_tensor(0.0), x, gap)
    assert_like_cpu(lambda x, m: torch._nested_tensor_from_mask(x, m), x, gap)
    assert_like_cpu(lambda x, m: torch._nested_tensor_from_mask(x, m).to_padded_tensor(0.0, (3, 2, 4)), x, kept)
    assert_like_cpu(lambda x, m: torch._nested_tensor_from_mask(x, m).to_padded_tensor(0.0, (3, 5)), x, kept)
    assert_like_cpu(lambda x, m: torch._nested_tensor_from_mask(x, m).to_padded_tensor(0.0), x, kept & False)
    assert_like_cpu(lambda x, m: torch._nested_tensor_from_mask(x, m), x, kept.float())


def test_transformer_encoder_layer_fwd_errors_like_cpu(strict):
    model = _encoder()
    layer = model.layers[0]
    attention = layer.self_attn
    weights = [
        attention.in_proj_weight,
        attention.in_proj_bias,
        attention.out_proj.weight,
        attention.out_proj.bias,
        layer.norm1.weight,
        layer.norm1.bias,
        layer.norm2.weight,
        layer.norm2.bias,
        layer.linear1.weight,
        layer.linear1.bias,
        layer.linear2.weight,
        layer.linear2.bias,
    ]
    weights = [w.detach() for w in weights]

    def layer_fwd(src, *w, embed_dim=8, heads=2, mask=None, mask_type=None):
        return aten._transformer_encoder_layer_fwd(
            src, embed_dim, heads, *w[:4], False, False, 1e-5, *w[4:], mask, mask_type
        )

    x = make((2, 5, 8), torch.float32)
    assert_like_cpu(layer_fwd, x, *weights)
    assert_like_cpu(layer_fwd, x[:0], *weights)
    assert_like_cpu(lambda *a: layer_fwd(*a, heads=3), x, *weights)
    assert_like_cpu(lambda *a: layer_fwd(*a, embed_dim=4), x, *weights)
    assert_like_cpu(lambda x, m, *w: layer_fwd(x, *w, mask=m, mask_type=1), x, _padding_mask(3, 5), *weights)


def test_transformer_encoder_nested_path_left_alignment_check(strict):
    """The check the nested path starts with has an npy kernel; packing does not (see the module)."""
    x = make((2, 5, 8), torch.float32)
    left_aligned = ~_padding_mask(2, 5)
    gap = left_aligned.clone()
    gap[0, 1] = False
    for mask, expected in ((left_aligned, True), (gap, False)):
        assert torch._nested_tensor_from_mask_left_aligned(x, mask) is expected
        assert torch._nested_tensor_from_mask_left_aligned(npy(x), npy(mask)) is expected
    assert_like_cpu(torch._nested_tensor_from_mask_left_aligned, x, left_aligned.float())
    assert_like_cpu(torch._nested_tensor_from_mask_left_aligned, x[0], left_aligned)


def _transformer():
    torch.manual_seed(0)
    return nn.Transformer(8, 2, 1, 2, 16, dropout=0.0, batch_first=True)


def test_transformer_training(strict_but_layer_norm):
    source, target = make((2, 5, 8), torch.float32, 1), make((2, 4, 8), torch.float32, 2)
    causal = nn.Transformer.generate_square_subsequent_mask(4)
    assert_module_like_cpu(
        _transformer(),
        source,
        target,
        tgt_mask=causal,
        tgt_is_causal=True,
        src_key_padding_mask=_padding_mask(2, 5),
        memory_key_padding_mask=_padding_mask(2, 5),
    )


def test_transformer_eval(strict_but_layer_norm):
    source, target = make((2, 5, 8), torch.float32, 1), make((2, 4, 8), torch.float32, 2)
    with torch.no_grad():
        assert_module_like_cpu(
            _transformer().eval(), source, target, tgt_mask=nn.Transformer.generate_square_subsequent_mask(4)
        )


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("train", [True, False])
def test_transformer_decoder_layer(strict_but_layer_norm, norm_first, train):
    torch.manual_seed(0)
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, norm_first=norm_first, batch_first=True)
    layer.train(train)
    target, memory = make((2, 4, 8), torch.float32, 1), make((2, 5, 8), torch.float32, 2)
    with torch.set_grad_enabled(train):
        assert_module_like_cpu(
            layer,
            target,
            memory,
            tgt_mask=nn.Transformer.generate_square_subsequent_mask(4),
            memory_key_padding_mask=_padding_mask(2, 5),
        )
