"""Joining and rearranging (``backend_pkg/ops/joining.py``) against CPU: ``cat`` and what reaches it,
flips, rolls, triangles and repeats; values, layouts, ``out=`` and in-place forms, errors."""

import pytest
import torch
from reference import assert_fails_like_cpu, check_in_place_like_cpu, check_like_cpu, check_out_like_cpu, make, npy

import backend_pkg


def test_registered_ops_include_this_family():
    expected = {"aten::cat", "aten::cat.out", "aten::flip", "aten::roll", "aten::tril"}
    assert expected <= set(backend_pkg.registered_ops())


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat(dim, dtype):
    a, b = make((2, 3, 4), dtype), make((2, 3, 4), dtype, seed=1)
    check_like_cpu(lambda x, y: torch.cat([x, y[:1, :1, :1].expand(2, 3, 4), x], dim), a, b)
    check_like_cpu(lambda x, y: torch.stack([x, y], dim), a, b)


def test_cat_promotes_skips_legacy_empties_and_writes_out():
    a, b = make((2, 3), torch.int32), make((1, 3), torch.float16, seed=1)
    check_like_cpu(lambda x, y: torch.cat([x, y]), a, b)
    check_like_cpu(lambda x, y: torch.cat([torch.zeros(0, device=x.device), x, y]), a, b)
    check_like_cpu(lambda x: torch.cat([x, x]), torch.zeros(0, dtype=torch.int8))
    check_out_like_cpu(lambda x, y, **out: torch.cat([x, y], **out), a, b)
    check_out_like_cpu(lambda x, y, **out: torch.stack([x, x], 1, **out), a, b)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)], ids=str)
def test_stack_of_npy_tensors_of_one_shape_like_cpu(shape, dtype):
    """The tensors npy's stack kernel joins itself (one shape and dtype, at most two dims), at every
    dim it takes, transposed too; beside them a dim out of range and a tensor of another dtype."""
    a, b = make(shape, dtype), make(shape, dtype, seed=1)
    for dim in range(-len(shape) - 1, len(shape) + 1):
        check_like_cpu(lambda x, y: torch.stack([x, y, x], dim), a, b)
        check_like_cpu(lambda x, y: torch.stack([x.T, y.T], dim), a, b)
    assert_fails_like_cpu(lambda x: torch.stack([x, x], len(shape) + 2), a)
    check_like_cpu(lambda x, y: torch.stack([x, y.to(torch.complex128)]), a, b)


def test_stack_backward_like_cpu():
    grad = make((3, 2, 4), torch.float32, seed=2)
    results = {}
    for device in ("cpu", "npy"):
        a, b, c = (make((2, 4), torch.float32, seed).to(device).requires_grad_() for seed in range(3))
        torch.stack([a, b, c]).backward(grad.to(device))
        results[device] = [tensor.grad.cpu() for tensor in (a, b, c)]
    torch.testing.assert_close(results["npy"], results["cpu"])


@pytest.mark.parametrize("join", [torch.hstack, torch.vstack, torch.dstack, torch.column_stack, torch.row_stack])
def test_stacking_helpers_reach_cat(join):
    check_like_cpu(lambda x, y: join([x, y]), make((2, 3), torch.float64), make((2, 3), torch.float64, seed=1))


@pytest.mark.parametrize(
    "call",
    [
        lambda x: torch.cat([x, x[:, :2]], 0),
        lambda x: torch.cat([x, x[0]]),
        lambda x: torch.cat([x[0, 0], x[0, 0]]),
        lambda x: torch.cat([x, x], 2),
        lambda x: torch.stack([x, x[:1]]),
    ],
    ids=["sizes", "dims", "zero-dim", "dim out of range", "stack sizes"],
)
def test_cat_errors_match_cpu(call):
    assert_fails_like_cpu(call, make((2, 3), torch.float32))


REARRANGEMENTS = {
    "flip": lambda t: t.flip(0, -1),
    "flip none": lambda t: t.flip(()),
    "flip zero-dim": lambda t: t[0, 0, 0].flip(0),
    "roll zero-dim": lambda t: t[0, 0, 0].roll(3),
    "fliplr": torch.fliplr,
    "rot90": lambda t: t.rot90(1, (1, 2)),
    "roll": lambda t: t.roll(1, 1),
    "roll negative, two dims": lambda t: t.roll((-5, 2), (2, 0)),
    "roll flat": lambda t: t.roll(-7),
    "repeat": lambda t: t.repeat(2, 1, 3),
    "repeat more dims": lambda t: t.repeat(2, 1, 1, 2),
    "tile": lambda t: t.tile(2),
    "tril": lambda t: t.tril(),
    "tril offset": lambda t: t.tril(-1),
    "triu offset": lambda t: t.triu(2),
    "triu wide": lambda t: t[0].triu(-5),
    "repeat_interleave": lambda t: t.repeat_interleave(2, 1),
    "diag_embed": torch.diag_embed,
}


@pytest.mark.parametrize("name", REARRANGEMENTS)
def test_rearrangements_match_cpu(name, dtype):
    check_like_cpu(REARRANGEMENTS[name], make((2, 3, 4), dtype))
    base = npy(make((2, 3, 4), dtype))
    assert REARRANGEMENTS[name](base).untyped_storage().data_ptr() != base.untyped_storage().data_ptr()


@pytest.mark.parametrize("name", REARRANGEMENTS)
def test_rearrangements_of_a_permuted_input_lay_out_like_cpu(name):
    check_like_cpu(REARRANGEMENTS[name], make((4, 3, 2), torch.float32).permute(2, 1, 0))  # check compares strides


@pytest.mark.parametrize(
    "inputs",
    [
        lambda: [make((3, 4), torch.float32).t()] * 2,
        lambda: [make((2, 3, 4, 5), torch.float32).to(memory_format=torch.channels_last)] * 2,
        lambda: [
            make((2, 3, 4, 5), torch.float32).to(memory_format=torch.channels_last),
            make((2, 3, 4, 5), torch.float32),
        ],
    ],
    ids=["transposed", "channels_last", "mixed"],
)
def test_cat_lays_out_like_cpu(inputs):
    check_like_cpu(lambda *ts: torch.cat(ts, 1), *inputs())


def test_rearrangements_in_place_and_out():
    a = make((3, 4), torch.float32)
    check_in_place_like_cpu(lambda t: t.tril_(1), a)
    check_in_place_like_cpu(lambda t: t.triu_(), a)
    for op in (torch.tril, torch.triu):
        check_out_like_cpu(lambda t, op=op, **out: op(t, -1, **out), a)
    # Python has no out= for these; the CompositeExplicit out overloads call the kernels.
    check_out_like_cpu(lambda t, **out: torch.ops.aten.flip(t, [0], **out), a)
    check_out_like_cpu(lambda t, **out: torch.ops.aten.roll(t, [2], [1], **out), a)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.flip(0, -2),
        lambda t: t.flip(2),
        lambda t: t.roll((1, 2), (0,)),
        lambda t: t.roll((1, 2)),
        lambda t: t.roll(1, 2),
        lambda t: t[0].tril(),
        lambda t: t[0].triu(),
        lambda t: t.repeat(2),
        lambda t: t[0, 0].flip(1),
        lambda t: t[0, 0].flip(0, 0),
        lambda t: t[0, 0].roll(1, 0),
    ],
    ids=[
        "flip twice",
        "flip dim",
        "roll misaligned",
        "roll no dims",
        "roll dim",
        "tril 1-dim",
        "triu 1-dim",
        "repeat too few",
        "zero-dim flip dim",
        "zero-dim flip twice",
        "zero-dim roll",
    ],
)
def test_rearrangement_errors_match_cpu(call):
    assert_fails_like_cpu(call, make((2, 3), torch.float32))
