"""Copies across the npy/CPU boundary: exact, in every direction, never aliasing."""

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import DTYPES, assert_matches_cpu, make, npy

import backend_pkg


def random_bits(shape, dtype, seed):
    """Arbitrary bit patterns of ``dtype`` (NaNs, infinities, subnormals included)."""
    if dtype == torch.bool:
        return make(shape, dtype, seed)
    itemsize = torch.empty((), dtype=dtype).element_size()
    count = int(np.prod(shape, dtype=np.int64))
    generator = torch.Generator().manual_seed(seed)
    raw = torch.randint(0, 256, (count * itemsize,), dtype=torch.uint8, generator=generator)
    return raw.view(dtype).reshape(shape)


def as_bytes(tensor):
    return tensor.numpy().tobytes()


@st.composite
def strided_views(draw):
    """A CPU tensor and a strided view of it: permuted, sliced with steps, offset."""
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(st.lists(st.integers(0, 5), min_size=0, max_size=4))
    base = random_bits(shape, dtype, draw(st.integers(0, 2**16)))
    view = base.permute(draw(st.permutations(range(base.dim()))))
    for dim in range(view.dim()):
        length = view.shape[dim]
        start = draw(st.integers(0, max(length - 1, 0)))
        step = draw(st.integers(1, 3))
        view = view.narrow(dim, start, length - start)[(slice(None),) * dim + (slice(None, None, step),)]
    return view


@settings(max_examples=300, deadline=None)
@given(strided_views())
def test_round_trip_is_bit_exact(view):
    on_device = view.to("npy")
    assert (on_device.dtype, on_device.shape) == (view.dtype, view.shape)
    assert backend_pkg.unwrap(on_device).dtype == backend_pkg.dtypes.to_numpy_dtype(view.dtype)
    back = on_device.cpu()
    assert type(back) is torch.Tensor
    assert (back.dtype, back.shape) == (view.dtype, view.shape)
    assert as_bytes(back) == as_bytes(view)


@settings(max_examples=100, deadline=None)
@given(strided_views())
def test_copy_into_strided_cpu_destination(view):
    source = random_bits(view.shape, view.dtype, seed=1).to("npy")
    expected = view.clone()
    expected.copy_(source.cpu())
    view.copy_(source)
    assert as_bytes(view) == as_bytes(expected)


@pytest.mark.parametrize("target", DTYPES, ids=str)
def test_dtype_conversion_matches_cpu(dtype, target):
    source = make((3, 4), dtype)
    if source.is_complex() and not target.is_complex:
        pytest.skip("complex to real discards the imaginary part with a warning; tested below")
    cpu = source.to(target)
    assert_matches_cpu(source.to("npy", dtype=target), cpu)  # CPU -> npy
    assert_matches_cpu(source.to("npy").to(target), cpu)  # npy -> npy
    torch.testing.assert_close(source.to("npy").to("cpu", dtype=target), cpu)  # npy -> CPU


def test_complex_to_real_warns_like_cpu(warn_always):
    source = torch.tensor([1 + 2j, 3 - 4j])
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        result = source.to("npy").to(torch.float32)
    assert_matches_cpu(result, source.real.float())


def test_copy_between_npy_tensors_broadcasts_and_converts():
    dst = torch.zeros(3, 4, dtype=torch.float64, device="npy")
    src = torch.arange(4, dtype=torch.int32).to("npy")
    dst.copy_(src)
    assert_matches_cpu(dst, torch.arange(4, dtype=torch.float64).expand(3, 4))


def test_copy_from_cpu_into_npy_view():
    dst = torch.zeros(4, 4, device="npy")
    dst[1:3, ::2].copy_(torch.ones(2, 2))
    expected = torch.zeros(4, 4)
    expected[1:3, ::2] = 1
    assert_matches_cpu(dst, expected)


def test_copies_never_alias():
    source = torch.arange(6.0)
    device = source.to("npy")
    source.add_(100)  # changing the source after the copy ...
    assert_matches_cpu(device, torch.arange(6.0))  # ... does not reach the device
    host = device.cpu()
    host.zero_()
    assert_matches_cpu(device, torch.arange(6.0))
    clone = device.clone()
    clone.fill_(5)
    assert_matches_cpu(device, torch.arange(6.0))
    converted = device.to(torch.float64)
    assert not np.shares_memory(backend_pkg.unwrap(converted), backend_pkg.unwrap(device))


def test_to_same_device_returns_the_tensor_itself():
    device = torch.ones(2).to("npy")
    assert device.to("npy") is device


def test_conjugate_and_negative_views_are_resolved_on_the_way_in():
    source = torch.tensor([1 + 2j, 3 - 4j])
    assert_matches_cpu(source.conj().to("npy"), source.conj().resolve_conj())
    assert_matches_cpu(source.conj().imag.to("npy"), torch.tensor([-2.0, 4.0]))


@pytest.mark.parametrize(
    "make_bfloat16",
    [
        lambda: torch.ones(2, dtype=torch.bfloat16).to("npy"),
        lambda: torch.empty(2, dtype=torch.bfloat16, device="npy"),
        lambda: torch.ones(2, device="npy").to(torch.bfloat16),
        lambda: torch.zeros(2, device="npy", dtype=torch.bfloat16),
    ],
)
def test_bfloat16_is_refused_by_name(make_bfloat16):
    with pytest.raises(TypeError, match=r"torch\.bfloat16 has no NumPy equivalent"):
        make_bfloat16()


def test_bfloat16_source_can_be_converted_on_the_way():
    source = torch.tensor([1.5, -2.25], dtype=torch.bfloat16)
    assert_matches_cpu(source.to("npy", dtype=torch.float32), source.float())


def test_conjugate_npy_views_copy_out_resolved():
    """A conjugate view is a bit on the tensor; every copy out of it must apply it."""
    source = torch.tensor([1 + 2j, 3 - 4j])
    expected = source.conj().resolve_conj()
    on_device = source.to("npy").conj()
    assert on_device.is_conj()
    torch.testing.assert_close(on_device.cpu(), expected)
    assert_matches_cpu(on_device.to(torch.complex128), expected.to(torch.complex128))
    host = torch.zeros(2, dtype=torch.complex64)
    host.copy_(on_device)
    torch.testing.assert_close(host, expected)


def test_copy_into_a_conjugate_npy_view():
    target = torch.zeros(2, dtype=torch.complex64, device="npy")
    target.conj().copy_(torch.tensor([1 + 2j, 3 - 4j]).to("npy"))
    assert_matches_cpu(target, torch.tensor([1 - 2j, 3 + 4j]))


def test_views_of_a_conjugate_view_stay_conjugate():
    source = torch.tensor([1 + 2j, 3 - 4j, 5 + 6j])
    on_device = source.to("npy").conj()
    for view in (lambda t: t.detach(), lambda t: t[1:], lambda t: t.view(3, 1), lambda t: t.expand(2, 3)):
        assert view(on_device).is_conj()
        torch.testing.assert_close(view(on_device).cpu(), view(source.conj()).resolve_conj())


# --- copies between npy tensors: NumPy's copy for one dtype, CPU's for the rest ------------


@st.composite
def copy_pairs(draw):
    """A destination and a source, each a CPU base and the view of it to copy between: dims
    laid out in any order, sliced with steps, offset; the source broadcastable to the destination."""
    dtype = draw(st.sampled_from(DTYPES))
    source_dtype = draw(st.sampled_from([dtype, dtype, draw(st.sampled_from(DTYPES))]))
    shape = draw(st.lists(st.integers(0, 4), min_size=0, max_size=3))
    source_shape = [draw(st.sampled_from([length, 1])) for length in shape][draw(st.integers(0, len(shape))) :]
    pairs = []
    for view_shape, view_dtype, seed in ((shape, dtype, 1), (source_shape, source_dtype, 2)):
        steps = [draw(st.integers(1, 2)) for _ in view_shape]
        order = draw(st.permutations(range(len(view_shape))))  # the memory order of the view's dims
        base = random_bits([view_shape[dim] * steps[dim] + 1 for dim in order], view_dtype, seed)
        index = tuple(slice(1, None, steps[dim]) for dim in order)
        inverse = sorted(range(len(order)), key=order.__getitem__)
        pairs.append((base, lambda tensor, index=index, inverse=inverse: tensor[index].permute(inverse)))
    return pairs


@settings(max_examples=200, deadline=None)
@given(copy_pairs())
def test_copy_between_npy_views_matches_cpu(views):
    (destination_base, destination_of), (source_base, source_of) = views
    on_device = destination_base.to("npy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex to real discards the imaginary part on both
        destination_of(on_device).copy_(source_of(source_base.to("npy")))
        destination_of(destination_base).copy_(source_of(source_base))
    assert as_bytes(on_device.cpu()) == as_bytes(destination_base)


def test_same_dtype_copy_between_npy_tensors_is_numpys(monkeypatch):
    """A same-dtype copy between npy tensors never runs PyTorch's threaded CPU copy (see copies.py)."""
    from backend_pkg.ops import copies

    def refuse(tensor):
        raise AssertionError("reached PyTorch's CPU copy")

    destination = torch.zeros(4, 3, device="npy")
    source = torch.arange(4.0).to("npy")
    on_device = torch.arange(12.0).reshape(3, 4).to("npy")
    monkeypatch.setattr(copies, "host_view", refuse)
    destination[:, ::2].copy_(source[:, None])
    moved = on_device.t().to(torch.float32, memory_format=torch.contiguous_format, copy=True)
    monkeypatch.undo()
    expected = torch.zeros(4, 3)
    expected[:, ::2] = torch.arange(4.0)[:, None]
    assert_matches_cpu(destination, expected)
    assert_matches_cpu(moved, torch.arange(12.0).reshape(3, 4).t().contiguous())


@st.composite
def as_strided_layouts(draw):
    """Any layout over a CPU buffer: sizes, strides (0 and repeats, so overlapping, included) and offset."""
    dim = draw(st.integers(0, 4))
    size = draw(st.lists(st.integers(0, 4), min_size=dim, max_size=dim))
    stride = draw(st.lists(st.sampled_from([0, 1, 2, 3, 4, 6, 12, 24]), min_size=dim, max_size=dim))
    return size, stride, draw(st.integers(0, 5))


CLONES = {
    "clone": lambda t: t.clone(),
    "contiguous": lambda t: t.contiguous(),
    "clone_contiguous_format": lambda t: t.clone(memory_format=torch.contiguous_format),
    "clone_channels_last": lambda t: t.clone(memory_format=torch.channels_last) if t.dim() == 4 else t.clone(),
}


@pytest.mark.parametrize("clone", CLONES.values(), ids=CLONES.keys())
@settings(max_examples=150, deadline=None)
@given(layout=as_strided_layouts())
def test_clone_lays_out_its_copy_as_cpu_does(clone, layout):
    """``clone`` keeps the strides of a tensor without gaps or overlaps and lays any other out as
    ``memory_format`` says, as CPU does; its copy never aliases its input."""
    size, stride, offset = layout
    base = torch.arange(400.0)
    on_cpu = base.as_strided(size, stride, offset)
    on_npy = base.to("npy").as_strided(size, stride, offset)
    expected, result = clone(on_cpu), clone(on_npy)
    assert_matches_cpu(result, expected)
    assert result.stride() == expected.stride()
    shares = expected.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    assert (result.untyped_storage().data_ptr() == on_npy.untyped_storage().data_ptr()) == shares


def test_clone_resolves_conjugate_and_negative_views_like_cpu():
    values = torch.arange(6.0).reshape(2, 3).to(torch.complex64) * (1 + 1j)
    for view in (lambda t: t.conj(), lambda t: t.conj().t(), lambda t: torch._neg_view(t)):
        expected, result = view(values).clone(), view(npy(values)).clone()
        assert (result.is_conj(), result.is_neg()) == (expected.is_conj(), expected.is_neg())
        assert result.stride() == expected.stride()
        assert_matches_cpu(result.resolve_conj().resolve_neg(), expected.resolve_conj().resolve_neg())


OVERLAPPING_COPIES = {
    "self": lambda x: x.copy_(x),
    "forward_by_step": lambda x: x[2::2].copy_(x[:-2:2]),
    "backward_by_step": lambda x: x[:-2:2].copy_(x[2::2]),
    "rows_with_step": lambda x: x.view(3, 4)[1:, ::2].copy_(x.view(3, 4)[:2, ::2]),
    "transposed_block": lambda x: x.view(3, 4)[:, :3].t()[:, ::2].copy_(x.view(3, 4)[::2, 1:].t()),
}


@pytest.mark.parametrize("copy", OVERLAPPING_COPIES.values(), ids=OVERLAPPING_COPIES.keys())
def test_copies_within_one_tensor_match_cpu(copy):
    """Overlaps PyTorch does not refuse: each element is read as CPU reads it, in order."""
    expected = torch.arange(12.0)
    on_device = expected.to("npy")
    copy(expected)
    copy(on_device)
    assert_matches_cpu(on_device, expected)


def test_partially_overlapping_copy_is_refused_like_cpu():
    for device in ("cpu", "npy"):
        tensor = torch.arange(6.0).to(device)
        with pytest.raises(RuntimeError, match="unsupported operation: some elements of the input tensor"):
            tensor[1:].copy_(tensor[:-1])


def test_item():
    for value in (torch.tensor(2.5), torch.tensor(-3), torch.tensor(True), torch.tensor(1 + 2j)):
        assert npy(value).item() == value.item()
        assert type(npy(value).item()) is type(value.item())
