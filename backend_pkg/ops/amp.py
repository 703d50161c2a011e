"""The two ops ``torch.amp.GradScaler`` runs on the device of the gradients.

``scaler.unscale_``/``scaler.step`` call
``_amp_foreach_non_finite_check_and_unscale_`` on each device's gradients,
and ``scaler.update`` calls ``_amp_update_scale_`` on the scale and the
growth tracker, which live on that device too (torch/amp/grad_scaler.py).
Both are in-place ops with one kernel per backend
(aten/src/ATen/native/cpu/AmpGradScalerKernels.cpp for CPU); the checks
and messages below are that kernel's. Each is a NumPy function of the
functional op, which a compiled graph calls, and the in-place kernel writes
its results back.
"""

import numpy as np
import torch

from ._dtype_errors import not_implemented_for
from ._operands import numpy_compute_dtype
from .registry import aten, computed_in_place_by, implements, lowers


def _as_float32(value):
    with np.errstate(over="ignore"):  # a scale past float32's range becomes inf, as in C++
        return np.float32(value)


def _scalar(array):
    return array.reshape(()).item()


@lowers(aten._amp_foreach_non_finite_check_and_unscale.default)
def amp_foreach_non_finite_check_and_unscale(gradients, found_inf, inv_scale):
    """Each gradient times ``inv_scale``, and ``found_inf`` set to 1 if any gradient held an
    inf or a nan. Half gradients are computed in float32 and rounded once, at the end."""
    computed = [gradient.astype(numpy_compute_dtype(gradient.dtype), copy=False) for gradient in gradients]
    found = not all(np.isfinite(gradient).all() for gradient in computed)
    factor = np.float32(_scalar(inv_scale))
    unscaled = [(values * factor).astype(gradient.dtype, copy=False) for values, gradient in zip(computed, gradients)]
    return unscaled, np.ones_like(found_inf) if found else np.array(found_inf, copy=True)


def amp_foreach_non_finite_check_and_unscale_(gradients, found_inf, inv_scale):
    unscaled, found = amp_foreach_non_finite_check_and_unscale(gradients, found_inf, inv_scale)
    for gradient, values in zip(gradients, unscaled):
        gradient[...] = values
    found_inf[...] = found


@implements(aten._amp_foreach_non_finite_check_and_unscale_.default)
@computed_in_place_by(amp_foreach_non_finite_check_and_unscale_)
def amp_foreach_non_finite_check_and_unscale_kernel(self, found_inf, inv_scale):
    _check_scalars(("inv_scale", inv_scale, torch.float32), ("found_inf", found_inf, torch.float32))
    for gradient in self:
        if not gradient.dtype.is_floating_point:
            raise not_implemented_for("_amp_foreach_non_finite_check_and_unscale_cpu", gradient.dtype)


@lowers(aten._amp_update_scale.default)
def amp_update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """The next loss scale (float32, the product taken in double) and growth tracker."""
    current, successful = float(_scalar(scale)), _scalar(growth_tracker) + 1
    if _scalar(found_inf) != 0:
        current, successful = _as_float32(current * backoff_factor), 0
    elif successful >= growth_interval:
        grown = _as_float32(current * growth_factor)
        current, successful = (grown if np.isfinite(grown) else current), 0
    return np.full_like(scale, current), np.full_like(growth_tracker, successful)


def amp_update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    new_scale, new_tracker = amp_update_scale(
        scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval
    )
    scale[...], growth_tracker[...] = new_scale, new_tracker
    return scale


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


@implements(aten._amp_update_scale_.default)
@computed_in_place_by(amp_update_scale_)
def amp_update_scale_kernel(
    self, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor, growth_interval
):
    _check_scalars(
        ("growth_tracker", growth_tracker, torch.int32),
        ("current_scale", self, torch.float32),
        ("found_inf", found_inf, torch.float32),
    )
