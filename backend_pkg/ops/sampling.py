"""Random numbers, drawn from ``torch.npy``'s own NumPy generator.

``torch.manual_seed(s)`` reaches ``torch.npy.manual_seed_all(s)``, which
reseeds that generator, so npy random ops are reproducible run to run. The
streams differ from the CPU generator's: the same seed gives different
numbers on npy and on CPU, as it does on CUDA.

The factories (``rand``, ``randn``, ``randint``) are composites that fill an
``empty`` tensor with the in-place ops below.
"""

import math

import numpy as np
import torch

from .. import device
from ..dtypes import to_numpy_dtype
from ..tensor import unwrap, wrap
from ._operands import broadcast_shapes
from ._results import write_in_place
from .reductions import not_implemented_for
from .registry import aten, implements


def _check_generator(op, generator):
    if generator is not None:
        raise RuntimeError(
            f"npy device: {op} draws from torch.npy's generator; pass generator=None and seed "
            "with torch.manual_seed or torch.npy.manual_seed"
        )


def _fill(op, self, values):
    """Store freshly drawn ``values`` into ``self`` (always writes whole elements)."""
    return write_in_place(op, self, wrap(np.asarray(values).astype(to_numpy_dtype(self.dtype))))


def _check_inexact(kernel, self):
    """uniform_ and normal_ fill floating-point and complex tensors; CPU's dispatch names its
    kernel for any other dtype."""
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise not_implemented_for(kernel, self.dtype)


def _draw(self, draw, *parameters):
    """``draw(*parameters, shape)`` for each element; a complex tensor gets one draw for its real
    part and one for its imaginary part, as CPU fills the tensor's ``view_as_real``."""
    if not self.dtype.is_complex:
        return draw(*parameters, self.shape)
    parts = draw(*parameters, (*self.shape, 2))
    return parts[..., 0] + 1j * parts[..., 1]


@implements(aten.uniform_.default)
def uniform_(self, from_=0.0, to=1.0, *, generator=None):
    _check_generator("uniform_", generator)
    _check_inexact("check_uniform_bounds", self)
    if from_ > to:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}"
        )
    return _fill("uniform_", self, _draw(self, device.generator.uniform, from_, to))


@implements(aten.normal_.default)
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    _check_generator("normal_", generator)
    _check_inexact("normal_kernel_npy", self)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    if self.dtype.is_complex:
        std /= math.sqrt(2)  # each part gets half the variance (normal_impl_ in DistributionTemplates.h)
    return _fill("normal_", self, _draw(self, device.generator.normal, mean, std))


def _default_upper(dtype):
    """Where ``random_`` without ``to`` stops: the dtype's largest integer, or the
    last integer a float represents exactly, as PyTorch does."""
    if dtype == torch.bool:
        return 2
    if dtype.is_floating_point:
        return 2 ** torch.finfo(dtype).nmant + 1
    return torch.iinfo(dtype).max + 1


@implements(getattr(aten.random_, "from"))  # "from" is a Python keyword
def random_from(self, from_, to=None, *, generator=None):
    _check_generator("random_", generator)
    high = _default_upper(self.dtype) if to is None else to
    if from_ >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={high}")
    return _fill("random_", self, device.generator.integers(from_, high, self.shape))


@implements(aten.random_.to)
def random_to(self, to, *, generator=None):
    return random_from(self, 0, to, generator=generator)


@implements(aten.random_.default)
def random_(self, *, generator=None):
    return random_from(self, 0, None, generator=generator)


def _draw_bernoulli(probability, shape):
    probability = np.asarray(probability, dtype=np.float64)
    if ((probability < 0) | (probability > 1)).any():
        raise RuntimeError("bernoulli: p must be in the range [0, 1]")
    return device.generator.random(shape) < probability


@implements(aten.bernoulli_.float)
def bernoulli_float_(self, p=0.5, *, generator=None):
    _check_generator("bernoulli_", generator)
    return _fill("bernoulli_", self, _draw_bernoulli(p, self.shape))


@implements(aten.bernoulli_.Tensor)
def bernoulli_tensor_(self, p, *, generator=None):
    _check_generator("bernoulli_", generator)
    return _fill("bernoulli_", self, _draw_bernoulli(unwrap(p), self.shape))


@implements(aten.bernoulli.default)
def bernoulli(self, *, generator=None):
    """Each element of ``self`` is the probability of a 1 at its place."""
    _check_generator("bernoulli", generator)
    return wrap(_draw_bernoulli(unwrap(self), self.shape).astype(to_numpy_dtype(self.dtype)))


@implements(aten.native_dropout.default)
def native_dropout(input, p, train):
    """Dropout's forward: zero each element with probability ``p``, scale the rest by 1/(1-p)."""
    array = unwrap(input)
    if not train or p == 0:
        return wrap(array.copy()), wrap(np.ones(array.shape, dtype=np.bool_))
    keep = device.generator.random(array.shape) >= p
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    output = np.where(keep, array * np.asarray(scale, dtype=array.dtype), np.zeros((), dtype=array.dtype))
    return wrap(output.astype(array.dtype, copy=False)), wrap(keep)


@implements(aten.native_dropout_backward.default)
def native_dropout_backward(grad_output, mask, scale):
    # grad_output * mask * scale, promoted as PyTorch promotes: an integer grad times a float scale is float.
    if grad_output.shape != mask.shape:
        broadcast_shapes(grad_output.shape, mask.shape)  # PyTorch's error for shapes that do not broadcast
    dtype = torch.result_type(grad_output, scale)
    np_dtype = to_numpy_dtype(dtype)
    grad = unwrap(grad_output).astype(np_dtype, copy=False)
    return wrap((grad * unwrap(mask) * np.asarray(scale, dtype=np_dtype)).astype(np_dtype, copy=False))
