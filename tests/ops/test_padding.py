"""Reflection and replication padding on npy against CPU: forward, backward, dtypes, errors."""

import pytest
import torch
import torch.nn.functional as F
from reference import assert_backward_like_cpu, assert_like_cpu, make

pytestmark = pytest.mark.usefixtures("strict")

aten = torch.ops.aten
MODES = ["reflect", "replicate"]

# (input shape, F.pad padding): batched and unbatched, 1d to 3d, negative pads crop.
CASES = {
    "1d": ((2, 3, 7), (2, 3)),
    "1d-unbatched": ((3, 7), (0, 6)),
    "1d-crop": ((2, 3, 7), (-2, 1)),
    "2d": ((2, 3, 5, 6), (1, 2, 3, 0)),
    "2d-unbatched": ((3, 5, 6), (2, 2, 1, 1)),
    "2d-crop": ((2, 3, 5, 6), (-1, 2, 1, -3)),
    "2d-empty-batch": ((0, 3, 5, 6), (1, 1, 1, 1)),
    "3d": ((2, 2, 4, 5, 3), (1, 2, 0, 3, 2, 1)),
    "3d-unbatched": ((2, 4, 5, 3), (2, 1, 1, 1, -1, 3)),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES)
def test_forward_and_backward(mode, case):
    shape, padding = CASES[case]
    assert_backward_like_cpu(lambda x: F.pad(x, padding, mode=mode), make(shape, torch.float64))


# CPU adds half-precision gradients up in half, npy in float32 rounded once:
# an edge value that gathers many gradients can differ by a few ulps (0.0078 at ~16).
HALF_TOLERANCE = {"atol": 0.05, "rtol": 1e-3}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.complex64], ids=str)
def test_inexact_dtypes(mode, dtype):
    shape, padding = CASES["2d"]
    tolerance = HALF_TOLERANCE if dtype == torch.float16 else {}
    assert_backward_like_cpu(lambda x: F.pad(x, padding, mode=mode), make(shape, dtype), **tolerance)


# Forward only: integers have no gradient (and assert_backward_like_cpu would
# leave them on CPU).
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8], ids=str)
def test_integer_dtypes(mode, dtype):
    shape, padding = CASES["2d-crop"]
    assert_like_cpu(lambda x: F.pad(x, padding, mode=mode), make(shape, dtype))


@pytest.mark.parametrize("mode", MODES)
def test_large_replication_and_reflection_to_the_edge(mode):
    """Replication pads past the input's size; reflection up to one less than it."""
    padding = (5, 5, 4, 4) if mode == "reflect" else (9, 2, 7, 8)
    assert_backward_like_cpu(lambda x: F.pad(x, padding, mode=mode), make((1, 2, 5, 6), torch.float64))


BAD_CALLS = {
    "negative-output-dim": (
        lambda x: F.pad(x, (1, 2, -4, -3), mode="reflect"),
        make((2, 3, 5, 6), torch.float32),
    ),
    "negative-output-dim-replicate": (
        lambda x: F.pad(x, (-2, -5, 1, 1), mode="replicate"),
        make((2, 3, 5, 6), torch.float32),
    ),
    "negative-output-dim-3d": (
        lambda x: F.pad(x, (1, 1, -3, -3, 0, 0), mode="reflect"),
        make((1, 2, 3, 4, 5), torch.float32),
    ),
    "bool": (lambda x: F.pad(x, (1, 1), mode="reflect"), make((2, 3, 5), torch.bool)),
    "bool-replicate": (lambda x: F.pad(x, (1, 1, 1, 1), mode="replicate"), make((2, 3, 5, 5), torch.bool)),
    "too-much-reflection": (
        lambda x: F.pad(x, (1, 2, 5, 1), mode="reflect"),
        make((2, 3, 5, 6), torch.float32),
    ),
    "too-much-reflection-3d": (
        lambda x: F.pad(x, (1, 2, 0, 1, 4, 1), mode="reflect"),
        make((1, 1, 4, 5, 6), torch.float32),
    ),
    "cropped-away-1d": (lambda x: F.pad(x, (-4, -3), mode="replicate"), make((2, 3, 6), torch.float32)),
    "cropped-away-2d": (
        lambda x: F.pad(x, (-4, -3, -3, -3), mode="reflect"),
        make((2, 3, 6, 6), torch.float32),
    ),
    "cropped-away-2d-replicate": (
        lambda x: F.pad(x, (-4, -3, -3, -3), mode="replicate"),
        make((2, 3, 6, 6), torch.float32),
    ),
    "cropped-away-3d": (
        lambda x: F.pad(x, (-4, -3, -3, -3, -2, -2), mode="replicate"),
        make((1, 1, 4, 6, 6), torch.float32),
    ),
    "one-dim-cropped-away": (
        lambda x: F.pad(x, (1, 2, -3, -2), mode="reflect"),
        make((2, 3, 5, 6), torch.float32),
    ),
    "empty-channels": (lambda x: F.pad(x, (1, 1, 1, 1), mode="reflect"), make((2, 0, 5, 6), torch.float32)),
    "empty-spatial": (lambda x: F.pad(x, (1, 1), mode="replicate"), make((2, 3, 0), torch.float32)),
    "direct-wrong-dims": (lambda x: aten.reflection_pad2d(x, [1, 1, 1, 1]), make((5, 6), torch.float32)),
    "direct-wrong-padding": (lambda x: aten.reflection_pad2d(x, [1, 1, 1]), make((3, 5, 6), torch.float32)),
    "direct-wrong-padding-replicate": (
        lambda x: aten.replication_pad3d(x, [1, 1, 1]),
        make((3, 5, 6, 2), torch.float32),
    ),
    "backward-wrong-grad": (
        lambda g, x: aten.reflection_pad2d_backward(g, x, [1, 1, 1, 1]),
        make((3, 7, 7), torch.float32),
        make((3, 5, 6), torch.float32),
    ),
    "backward-wrong-grad-1d": (
        lambda g, x: aten.replication_pad1d_backward(g, x, [1, 1]),
        make((3, 5), torch.float32),
        make((3, 5), torch.float32),
    ),
    "backward-wrong-grad-reflect-1d": (
        lambda g, x: aten.reflection_pad1d_backward(g, x, [1, 1]),
        make((3, 5), torch.float32),
        make((3, 5), torch.float32),
    ),
    "backward-wrong-grad-reflect-3d": (
        lambda g, x: aten.reflection_pad3d_backward(g, x, [1, 1, 1, 1, 1, 1]),
        make((1, 4, 5, 4), torch.float32),
        make((1, 2, 3, 2), torch.float32),
    ),
    "backward-wrong-grad-replicate-2d": (
        lambda g, x: aten.replication_pad2d_backward(g, x, [1, 1, 0, 0]),
        make((1, 4, 5), torch.float32),
        make((1, 2, 3), torch.float32),
    ),
    "uint16": (lambda x: F.pad(x, (1, 1), mode="replicate"), make((2, 3, 5), torch.uint16)),
    "backward-wrong-grad-3d": (
        lambda g, x: aten.replication_pad3d_backward(g, x, [1, 1, 1, 1, 1, 1]),
        make((1, 4, 4, 4), torch.float32),
        make((1, 2, 3, 2), torch.float32),
    ),
}


@pytest.mark.parametrize("case", BAD_CALLS)
def test_errors_like_cpu(case):
    fn, *args = BAD_CALLS[case]
    assert_like_cpu(fn, *args)
