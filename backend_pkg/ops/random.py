"""Random numbers, drawn from ``torch.npy``'s own NumPy generator.

``torch.manual_seed(s)`` reaches ``torch.npy.manual_seed_all(s)``, which
reseeds that generator, so npy random ops are reproducible run to run. The
streams differ from the CPU generator's: the same seed gives different
numbers on npy and on CPU, as it does on CUDA.

The factories (``rand``, ``randn``, ``randint``) are composites that fill an
``empty`` tensor with the in-place ops below. Each op is one NumPy function
drawing an array like its input; the in-place ops store it into ``self``
(``@implements(in_place=...)``), and a compiled graph calls the
same function for the functional op (``uniform``, ``normal_functional``,
``bernoulli.p``, ``native_dropout``). ``rand``, ``randn`` and their ``_like``
forms, which compiled graphs keep, draw as the composites do, so a seed
gives compiled and eager code the same numbers.
"""

import math

import numpy as np
import torch

from .. import device
from ..dtypes import SCALAR_TYPE_NAMES, to_torch_dtype
from ._dtype_errors import not_implemented_for
from ._operands import check_broadcastable
from .registry import aten, computed_by, implements, lowers, unchecked


def check_generator(op, generator):
    if generator is not None:
        raise RuntimeError(
            f"npy device: {op} draws from torch.npy's generator; pass generator=None and seed "
            "with torch.manual_seed or torch.npy.manual_seed"
        )


def _check_inexact_fill(op, kernel, self, generator):
    """The checks uniform_ and normal_ share: they draw from torch.npy's generator, and fill floating-point and
    complex tensors only (for any other dtype CPU's dispatch names its kernel, ``kernel``)."""
    check_generator(op, generator)
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise not_implemented_for(kernel, self.dtype)


def _drawn(dtype, shape, draw, *parameters):
    """``draw(*parameters, shape)`` as NumPy's ``dtype``; a complex dtype gets one draw for each
    element's real part and one for its imaginary part, as CPU fills the tensor's ``view_as_real``."""
    if np.dtype(dtype).kind != "c":
        return np.asarray(draw(*parameters, shape)).astype(dtype)
    parts = draw(*parameters, (*shape, 2))
    return (parts[..., 0] + 1j * parts[..., 1]).astype(dtype)


def _uniform(dtype, shape, low, high):
    return _drawn(dtype, tuple(shape), device.generator.uniform, low, high)


def _normal(dtype, shape, mean, std):
    if np.dtype(dtype).kind == "c":
        std /= math.sqrt(2)  # each part gets half the variance (normal_impl_ in DistributionTemplates.h)
    return _drawn(dtype, tuple(shape), device.generator.normal, mean, std)


# The functions below draw from torch.npy's generator: an op's ``generator`` argument,
# which the eager checks refuse unless None, is not read.


@lowers(aten.uniform.default)
def uniform(a, from_=0.0, to=1.0, *, generator=None):
    """An array like ``a`` drawn uniformly from [from_, to)."""
    return _uniform(a.dtype, a.shape, from_, to)


@implements(in_place=aten.uniform_.default)
@computed_by(uniform, name="uniform_")
def uniform_kernel(self, from_=0.0, to=1.0, *, generator=None):
    _check_inexact_fill("uniform_", "check_uniform_bounds", self, generator)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}")


@lowers(aten.normal_functional.default)
def normal(a, mean=0.0, std=1.0, *, generator=None):
    """An array like ``a`` drawn from the normal distribution of ``mean`` and ``std``."""
    return _normal(a.dtype, a.shape, mean, std)


@implements(in_place=aten.normal_.default)
@computed_by(normal, name="normal_")
def normal_kernel(self, mean=0.0, std=1.0, *, generator=None):
    _check_inexact_fill("normal_", "normal_kernel_npy", self, generator)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")


@lowers(aten.rand.default)
def rand(size, *, out_dtype, **_placement):
    return _uniform(out_dtype, size, 0.0, 1.0)


@lowers(aten.rand_like.default)
def rand_like(a, *, out_dtype, **_placement):
    return _uniform(out_dtype, a.shape, 0.0, 1.0)


@lowers(aten.randn.default)
def randn(size, *, out_dtype, **_placement):
    return _normal(out_dtype, size, 0.0, 1.0)


@lowers(aten.randn_like.default)
def randn_like(a, *, out_dtype, **_placement):
    return _normal(out_dtype, a.shape, 0.0, 1.0)


def _default_upper(dtype):
    """Where ``random_`` without ``to`` stops: the dtype's largest integer, or the
    last integer a float represents exactly, as PyTorch does."""
    if dtype == torch.bool:
        return 2
    if dtype.is_floating_point:
        return 2 ** torch.finfo(dtype).nmant + 1
    return torch.iinfo(dtype).max + 1


def random_from(a, from_, to=None, *, generator=None):
    """An array like ``a`` of integers drawn uniformly from [from_, to), ``to`` by default the
    largest ``a``'s dtype holds."""
    high = _default_upper(to_torch_dtype(a.dtype)) if to is None else to
    if from_ >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={high}")
    return device.generator.integers(from_, high, a.shape).astype(a.dtype)


def random_to(a, to, *, generator=None):
    return random_from(a, 0, to)


def random(a, *, generator=None):
    return random_from(a, 0)


def _random_checks(self, *bounds, generator=None):
    check_generator("random_", generator)


# aten.random_.from is spelled with getattr: "from" is a Python keyword.
implements(in_place=getattr(aten.random_, "from"))(computed_by(random_from, name="random_")(_random_checks))
implements(in_place=aten.random_.to)(computed_by(random_to, name="random_")(_random_checks))
implements(in_place=aten.random_.default)(computed_by(random, name="random_")(_random_checks))


def _bernoulli_draws(probability, shape):
    probability = np.asarray(probability, dtype=np.float64)
    if ((probability < 0) | (probability > 1)).any():
        raise RuntimeError("bernoulli: p must be in the range [0, 1]")
    return device.generator.random(shape) < probability


@lowers(aten.bernoulli.p)
def bernoulli_p(a, p=0.5, *, generator=None):
    """An array like ``a`` of ones, each with probability ``p`` (a number or an array), and zeros."""
    return _bernoulli_draws(p, a.shape).astype(a.dtype)


def _bernoulli_checks(self, p=0.5, *, generator=None):
    check_generator("bernoulli_", generator)


implements(in_place=aten.bernoulli_.float)(computed_by(bernoulli_p, name="bernoulli_")(_bernoulli_checks))
implements(in_place=aten.bernoulli_.Tensor)(computed_by(bernoulli_p, name="bernoulli_")(_bernoulli_checks))


def bernoulli(a, *, generator=None):
    """Each element of ``a`` is the probability of a 1 at its place."""
    return _bernoulli_draws(a, a.shape).astype(a.dtype)


@implements(aten.bernoulli.default)
@computed_by(bernoulli)
def bernoulli_kernel(self, *, generator=None):
    check_generator("bernoulli", generator)


@lowers(aten.native_dropout.default)
def native_dropout(input, p, train):
    """Dropout's forward: zero each element with probability ``p``, scale the rest by 1/(1-p)."""
    input = np.asarray(input)
    if not train or p == 0:
        return input.copy(), np.ones(input.shape, dtype=np.bool_)
    keep = device.generator.random(input.shape) >= p
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    output = np.where(keep, input * np.asarray(scale, dtype=input.dtype), np.zeros((), dtype=input.dtype))
    return output.astype(input.dtype, copy=False), keep


native_dropout_kernel = implements(aten.native_dropout.default)(unchecked(native_dropout))


def native_dropout_backward(grad_output, mask, scale, *, out_dtype):
    # grad_output * mask * scale, promoted as PyTorch promotes: an integer grad times a float scale is float.
    grad = grad_output.astype(out_dtype, copy=False)
    return (grad * mask * np.asarray(scale, dtype=out_dtype)).astype(out_dtype, copy=False)


@implements(aten.native_dropout_backward.default)
@computed_by(native_dropout_backward)
def native_dropout_backward_kernel(grad_output, mask, scale):
    check_broadcastable(grad_output, mask)
    return torch.result_type(grad_output, scale)


# --- multinomial: transformers' generate(do_sample=True) draws its tokens with it ------------


def _check_distributions(rows, replacement, num_samples):
    """The CPU's refusals of bad probabilities, in its order: without replacement (or for one
    sample) over the whole tensor, else row by row, element by element."""
    if not replacement or num_samples == 1:
        if rows.size and not (np.max(rows) < np.inf and np.min(rows) >= 0):  # NaN fails both
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (np.sum(rows, axis=1) == 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        return
    for row in rows:
        bad = ~(row >= 0) | ~np.isfinite(row)
        if bad.any():
            first = row[np.argmax(bad)]
            what = "< 0" if not first >= 0 else "= infinity or NaN"
            raise RuntimeError(f"invalid multinomial distribution (encountering probability entry {what})")
        if not np.sum(row) > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def multinomial(a, num_samples, replacement=False, *, generator=None):
    """``num_samples`` category indices per row of ``a``'s (unnormalized) probabilities, as int64.

    Without replacement (or for one sample) as PyTorch's CPU kernel: the ``num_samples``
    largest ``p / E`` with ``E`` drawn from Exp(1). With replacement: uniform draws looked up
    in each row's cumulative distribution."""
    rows = np.asarray(a, dtype=np.float64).reshape(-1, a.shape[-1])
    _check_distributions(rows, replacement, num_samples)
    if not replacement or num_samples == 1:
        keys = rows / device.generator.exponential(1.0, rows.shape)
        picks = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    else:
        cumulative = np.cumsum(rows, axis=1)
        draws = device.generator.random((rows.shape[0], num_samples)) * cumulative[:, -1:]
        # The first category whose cumulative sum passes the draw: never one of probability 0.
        picks = np.stack([np.searchsorted(row, draw, side="right") for row, draw in zip(cumulative, draws)])
        picks = np.minimum(picks.reshape(rows.shape[0], num_samples), rows.shape[1] - 1)
    shape = (*a.shape[:-1], num_samples)
    return np.ascontiguousarray(picks, dtype=np.int64).reshape(shape) if picks.size else np.empty(shape, np.int64)


def _check_multinomial_out(out, *args, **kwargs):
    if out.dtype != torch.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {SCALAR_TYPE_NAMES[out.dtype]}")


@implements(aten.multinomial.default, out=aten.multinomial.out, check_out=_check_multinomial_out)
@computed_by(multinomial)
def multinomial_kernel(self, num_samples, replacement=False, *, generator=None):
    check_generator("multinomial", generator)
    if not 1 <= self.dim() <= 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not self.dtype.is_floating_point:
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got: {SCALAR_TYPE_NAMES[self.dtype]}"
        )
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > self.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if self.shape[-1] > 2**24:  # float32 counts categories exactly up to there
        raise RuntimeError("number of categories cannot exceed 2^24")
