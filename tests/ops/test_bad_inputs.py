"""Random shapes, dtypes and dims, good and bad, thrown at the most used ops (hypothesis).

Whatever the CPU does, npy must do: raise where the CPU raises, with the same
exception type (a NumPy ``ValueError`` or ``IndexError`` reaching the user is
the bug this finds), and otherwise return the CPU's result (values, dtype,
shape).
"""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import backend_pkg

DTYPES = [torch.float32, torch.float64, torch.int64, torch.int32, torch.bool, torch.complex64]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)
dims = st.integers(-4, 3)
dtypes = st.sampled_from(DTYPES)
seeds = st.integers(0, 2**16)


def tensor(shape, dtype, seed):
    """A CPU tensor of small values, the same for the same arguments."""
    generator = torch.Generator().manual_seed(seed)
    values = torch.randint(-3, 4, shape, generator=generator)
    return values.to(dtype)


def _to_npy(value):
    if isinstance(value, torch.Tensor):
        return value.to(backend_pkg.DEVICE_NAME)
    if isinstance(value, (list, tuple)):
        return type(value)(_to_npy(item) for item in value)
    return value


def assert_like_cpu(function, *args):
    """``function(*args)`` on npy copies of ``args`` behaves as on the CPU."""
    try:
        expected = function(*args)
    except Exception as error:
        with pytest.raises(type(error)) as caught:
            function(*_to_npy(args))
        # The exact type, not a subclass: an ``except IndexError`` must catch both or neither.
        assert type(caught.value) is type(error), (caught.value, error)
        return
    actual = function(*_to_npy(args))
    if isinstance(expected, torch.Tensor):
        assert actual.device.type == backend_pkg.DEVICE_NAME
        torch.testing.assert_close(actual.cpu(), expected, equal_nan=True)
    else:
        torch.testing.assert_close(actual, expected, equal_nan=True)


@pytest.mark.parametrize("op", [torch.add, torch.sub, torch.mul, torch.div, torch.maximum, torch.matmul, torch.eq])
@SETTINGS
@given(shape_a=shapes, shape_b=shapes, dtype_a=dtypes, dtype_b=dtypes, seed=seeds)
def test_binary_ops(op, shape_a, shape_b, dtype_a, dtype_b, seed):
    assert_like_cpu(op, tensor(shape_a, dtype_a, seed), tensor(shape_b, dtype_b, seed + 1))


@pytest.mark.parametrize(
    "op",
    [torch.sum, torch.mean, torch.softmax, torch.argmax, torch.cumsum, torch.squeeze, torch.unsqueeze, torch.flatten],
)
@SETTINGS
@given(shape=shapes, dtype=dtypes, dim=dims, seed=seeds)
def test_ops_along_a_dim(op, shape, dtype, dim, seed):
    assert_like_cpu(op, tensor(shape, dtype, seed), dim)


@SETTINGS
@given(shape=shapes, dtype=dtypes, dim0=dims, dim1=dims, seed=seeds)
def test_transpose(shape, dtype, dim0, dim1, seed):
    assert_like_cpu(torch.transpose, tensor(shape, dtype, seed), dim0, dim1)


@pytest.mark.parametrize("op", [torch.Tensor.view, torch.reshape])
@SETTINGS
@given(shape=shapes, new_shape=st.lists(st.integers(-2, 6), max_size=3).map(tuple), dtype=dtypes, seed=seeds)
def test_view_and_reshape(op, shape, new_shape, dtype, seed):
    assert_like_cpu(op, tensor(shape, dtype, seed), new_shape)


@SETTINGS
@given(shape_a=shapes, shape_b=shapes, dtype_a=dtypes, dtype_b=dtypes, dim=dims, seed=seeds)
def test_cat(shape_a, shape_b, dtype_a, dtype_b, dim, seed):
    assert_like_cpu(lambda a, b: torch.cat([a, b], dim), tensor(shape_a, dtype_a, seed), tensor(shape_b, dtype_b, seed))


@pytest.mark.parametrize("op", [torch.index_select, torch.gather])
@SETTINGS
@given(
    shape=shapes,
    index_shape=shapes,
    index_dtype=st.sampled_from([torch.int64, torch.int32, torch.float32]),
    dtype=dtypes,
    dim=dims,
    high=st.integers(0, 6),
    seed=seeds,
)
def test_indexing_ops(op, shape, index_shape, index_dtype, dtype, dim, high, seed):
    generator = torch.Generator().manual_seed(seed)
    index = torch.randint(-1, high + 1, index_shape, generator=generator).to(index_dtype)
    assert_like_cpu(op, tensor(shape, dtype, seed), dim, index)
