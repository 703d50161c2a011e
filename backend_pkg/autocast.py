"""``torch.autocast("npy")``: mixed precision on the npy device, with CPU autocast's policy.

Autocast is a dispatcher layer. While ``torch.autocast(device)`` is active,
an op on that device's tensors first reaches the device's autocast key
(``AutocastPrivateUse1`` for npy), where a kernel casts the inputs and calls
the op again with that key excluded. PyTorch registers those kernels, and a
fallthrough for every other op, only for its own devices
(aten/src/ATen/autocast_mode.cpp: ``AutocastCPU``, ``AutocastCUDA``,
``AutocastXPU``...; nothing for ``AutocastPrivateUse1``). Without this
module every op under ``torch.autocast("npy")`` fails with "Could not run
... from the 'Autocastnpy' backend". ``torch.autocast`` itself also needs
``torch.npy.get_amp_supported_dtype`` (torch/amp/autocast_mode.py).

npy computes on the host CPU, so it takes CPU autocast's lists: the ops
that have an ``AutocastCPU`` kernel in torch 2.13 or 2.14, sorted into
PyTorch's three cast policies, of which :func:`install` registers those the
running torch's CPU autocast has (2.14 removed ``aten::cholesky`` and
``aten::qr`` and added ``linalg_matrix_sqrth`` to the float32 list):

* lower precision: matrix products, convolutions and attention run in the
  autocast dtype (float16, the one reduced-precision dtype NumPy has);
* float32: losses, pooling and padding in 3-D, FFTs and linear algebra run
  in float32, where float16 loses too much;
* promote: ops joining tensors (``cat``, ``stack``, ``index_copy``) run in
  the widest floating dtype among their inputs and the autocast dtype.

Only floating-point npy tensors other than float64 are cast, as PyTorch's
``is_eligible`` decides. One difference from the C++ kernels: they cache the
float16 copy of a float32 weight for the rest of the autocast region, and
these cast it again at each call (same values, one more copy per call).
"""

import functools

import torch

from .names import DEVICE_NAME
from .runtime import untraced

LOWER_PRECISION = """
    _addmm_activation _convolution.deprecated _native_multi_head_attention addbmm addmm baddbmm
    bmm conv1d conv1d.padding conv2d conv2d.padding conv3d conv3d.padding conv_tbc
    conv_transpose1d conv_transpose2d.input conv_transpose3d.input linalg_vecdot linear matmul
    mkldnn_rnn_layer mm prelu scaled_dot_product_attention
""".split()

FLOAT32 = """
    _grid_sampler_2d_cpu_fallback _lu_with_info adaptive_avg_pool3d adaptive_max_pool3d avg_pool3d
    binary_cross_entropy binary_cross_entropy_with_logits cdist cholesky cholesky_inverse
    cholesky_solve cosine_embedding_loss cross_entropy_loss ctc_loss.IntList ctc_loss.Tensor
    fake_quantize_per_tensor_affine fft_fft fft_fft2 fft_fftn fft_hfft fft_ifft fft_ifft2 fft_ifftn
    fft_ihfft fft_irfft fft_irfft2 fft_irfftn fft_rfft fft_rfft2 fft_rfftn fractional_max_pool2d
    fractional_max_pool3d geqrf grid_sampler grid_sampler_2d grid_sampler_3d hinge_embedding_loss
    huber_loss inverse kl_div l1_loss linalg_cholesky linalg_cholesky_ex linalg_cond
    linalg_cond.p_str linalg_eig linalg_eigh linalg_eigvals linalg_eigvalsh
    linalg_householder_product linalg_inv linalg_inv_ex linalg_lstsq linalg_matrix_rank
    linalg_matrix_rank.atol_rtol_float linalg_matrix_rank.atol_rtol_tensor
    linalg_matrix_rank.tol_tensor linalg_matrix_sqrth linalg_qr linalg_solve linalg_svd linalg_svdvals
    linalg_tensorinv linalg_tensorsolve lu_solve margin_ranking_loss max_pool3d max_unpool2d max_unpool3d
    mse_loss multi_margin_loss multilabel_margin_loss multilabel_margin_loss_forward nanquantile
    nanquantile.scalar nll_loss nll_loss2d orgqr ormqr pinverse poisson_nll_loss polar prod
    prod.dim_int qr quantile quantile.scalar reflection_pad1d reflection_pad2d replication_pad1d
    replication_pad2d replication_pad3d smooth_l1_loss soft_margin_loss stft stft.center svd trace
    triangular_solve triplet_margin_loss view_as_complex
""".split()

PROMOTE = ["cat", "index_copy", "stack"]

_AUTOCAST_KEY = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastPrivateUse1)


def _is_eligible(value):
    return (
        isinstance(value, torch.Tensor)
        and value.is_floating_point()
        and value.device.type == DEVICE_NAME
        and value.dtype != torch.float64
    )


def _eligible_tensors(values):
    for value in values:
        if isinstance(value, (list, tuple)):
            yield from _eligible_tensors(value)
        elif _is_eligible(value):
            yield value


def _cast(value, dtype):
    if _is_eligible(value):
        return value.to(dtype)
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(item, dtype) for item in value)
    return value


def _lower_precision(values):
    return torch.get_autocast_dtype(DEVICE_NAME)


def _float32(values):
    return torch.float32


def _widest(values):
    dtypes = (tensor.dtype for tensor in _eligible_tensors(values))
    return functools.reduce(torch.promote_types, dtypes, torch.get_autocast_dtype(DEVICE_NAME))


def _autocast_kernel(op, target_dtype):
    """A kernel that runs ``op`` on inputs cast to ``target_dtype(inputs)``, below the autocast layer."""

    def kernel(*args, **kwargs):
        dtype = target_dtype(args + tuple(kwargs.values()))
        with torch._C._ExcludeDispatchKeyGuard(_AUTOCAST_KEY):
            return op(*_cast(args, dtype), **{name: _cast(value, dtype) for name, value in kwargs.items()})

    return untraced(kernel)


def _overload(name):
    """The aten overload ``name`` (``conv1d.padding``), or None where this torch has no such op."""
    op_name, _, overload = name.partition(".")
    packet = getattr(torch.ops.aten, op_name, None)
    return getattr(packet, overload or "default", None)


def install(library, fallback_library):
    """Register the autocast kernels with ``library`` (``aten``) and the fallthrough for
    every other op with ``fallback_library`` (``_``)."""
    fallback_library.fallback(torch.library.fallthrough_kernel, "AutocastPrivateUse1")
    for names, target_dtype in ((LOWER_PRECISION, _lower_precision), (FLOAT32, _float32), (PROMOTE, _widest)):
        for name in names:
            op = _overload(name)
            if op is not None and torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "AutocastCPU"):
                library.impl(name, _autocast_kernel(op, target_dtype), "AutocastPrivateUse1")
