"""The two ops ``torch.amp.GradScaler`` runs on the device of the gradients.

``scaler.unscale_``/``scaler.step`` call
``_amp_foreach_non_finite_check_and_unscale_`` on each device's gradients,
and ``scaler.update`` calls ``_amp_update_scale_`` on the scale and the
growth tracker, which live on that device too (torch/amp/grad_scaler.py).
Both are in-place ops with one kernel per backend
(aten/src/ATen/native/cpu/AmpGradScalerKernels.cpp for CPU); the checks
and messages below are that kernel's.
"""

import numpy as np
import torch

from ..dtypes import compute_dtype, to_numpy_dtype
from ..tensor import unwrap
from ._dtype_errors import not_implemented_for
from .registry import aten, implements


def unscale_and_check_finite(gradients, inv_scale):
    """Each gradient times ``inv_scale``, and whether any gradient held an inf or a nan."""
    found_inf = not all(np.isfinite(gradient).all() for gradient in gradients)
    return [gradient * inv_scale for gradient in gradients], found_inf


def _as_float32(value):
    with np.errstate(over="ignore"):  # a scale past float32's range becomes inf, as in C++
        return np.float32(value)


def updated_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """The next loss scale (float32, the product taken in double) and growth tracker."""
    if found_inf:
        return _as_float32(float(scale) * backoff_factor), 0
    successful = growth_tracker + 1
    if successful < growth_interval:
        return scale, successful
    grown = _as_float32(float(scale) * growth_factor)
    return (grown if np.isfinite(grown) else scale), 0


def _check_one_element(name, tensor):
    if tensor.numel() != 1:
        raise RuntimeError(f"{name} must be a 1-element tensor.")


def _check_dtype(name, tensor, dtype):
    if tensor.dtype != dtype:
        kind = "an int" if dtype == torch.int32 else "a float"
        raise RuntimeError(f"{name} must be {kind} tensor.")


def _check_scalars(*named):
    """PyTorch's order: every size first, then every dtype."""
    for name, tensor, _ in named:
        _check_one_element(name, tensor)
    for name, tensor, dtype in named:
        _check_dtype(name, tensor, dtype)


def _scalar(tensor):
    return unwrap(tensor).reshape(()).item()


@implements(aten._amp_foreach_non_finite_check_and_unscale_.default)
def amp_foreach_non_finite_check_and_unscale_(self, found_inf, inv_scale):
    _check_scalars(("inv_scale", inv_scale, torch.float32), ("found_inf", found_inf, torch.float32))
    if not self:
        return
    for gradient in self:
        if not gradient.dtype.is_floating_point:
            raise not_implemented_for("_amp_foreach_non_finite_check_and_unscale_cpu", gradient.dtype)
    # Half gradients are computed in float32 and rounded once, when stored back.
    arrays = [np.asarray(unwrap(g), dtype=to_numpy_dtype(compute_dtype(g.dtype))) for g in self]
    unscaled, found = unscale_and_check_finite(arrays, np.float32(_scalar(inv_scale)))
    for gradient, values in zip(self, unscaled):
        unwrap(gradient)[...] = values
    if found:
        unwrap(found_inf)[...] = 1.0


@implements(aten._amp_update_scale_.default)
def amp_update_scale_(self, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor, growth_interval):
    _check_scalars(
        ("growth_tracker", growth_tracker, torch.int32),
        ("current_scale", self, torch.float32),
        ("found_inf", found_inf, torch.float32),
    )
    scale, tracker = updated_scale(
        np.float32(_scalar(self)),
        _scalar(growth_tracker),
        _scalar(found_inf) != 0,
        scale_growth_factor,
        scale_backoff_factor,
        growth_interval,
    )
    unwrap(self)[...] = scale
    unwrap(growth_tracker)[...] = tracker
    return self
