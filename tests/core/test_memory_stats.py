"""``torch.npy``'s memory statistics with ``torch.cuda``'s meaning: the current bytes, the peak
since the last reset (never lowered by a free, set to the current bytes by a reset), and the
counts of ``memory_stats()``, through frees, views and in-place ops.

npy counts the exact bytes of each storage (CUDA rounds to its blocks), so each expected number is
the sum of the tensors' ``nbytes``.
"""

import pytest
import torch

pytestmark = pytest.mark.usefixtures("no_collection")


def allocated():
    return torch.npy.memory_allocated()


def peak():
    return torch.npy.max_memory_allocated()


def test_a_reset_sets_the_peak_to_the_current_bytes():
    kept = torch.ones(300, device="npy")
    bigger = torch.ones(1000, device="npy")
    del bigger
    torch.npy.reset_peak_memory_stats()
    assert peak() == allocated()
    assert torch.npy.max_memory_reserved() == peak()
    assert torch.npy.memory_stats()["allocated_bytes.all.peak"] == allocated()
    del kept


def test_the_peak_outlives_a_free_and_counts_only_what_was_held_at_once():
    torch.npy.reset_peak_memory_stats()
    before = allocated()
    big = torch.ones(1000, device="npy")  # 4000 bytes
    del big
    assert (allocated(), peak()) == (before, before + 4000)
    small = torch.ones(250, device="npy")  # 1000 bytes, after the free
    assert (allocated(), peak()) == (before + 1000, before + 4000)
    larger = torch.ones(1500, device="npy")  # 6000 more, with the small one still held
    assert (allocated(), peak()) == (before + 7000, before + 7000)
    del small, larger
    assert (allocated(), peak()) == (before, before + 7000)


def test_a_reset_after_a_free_forgets_the_old_peak():
    big = torch.ones(1000, device="npy")
    del big
    torch.npy.reset_peak_memory_stats()
    before = allocated()
    small = torch.ones(100, dtype=torch.float64, device="npy")
    assert peak() == before + 800
    del small


@pytest.mark.parametrize(
    "view",
    [
        lambda t: t.t(),
        lambda t: t[1:, ::2],
        lambda t: t.view(-1),
        lambda t: t.unsqueeze(1).expand(-1, 3, -1),
        lambda t: t.diagonal(),
        lambda t: t.select(1, 2),
        lambda t: t.view(torch.int32),
    ],
    ids=["t", "slice", "view", "expand", "diagonal", "select", "view(dtype)"],
)
def test_views_hold_no_memory_of_their_own(view):
    tensor = torch.ones(4, 5, device="npy")
    before, stats_before = allocated(), torch.npy.memory_stats()
    views = [view(tensor), view(tensor)]
    assert allocated() == before
    assert torch.npy.memory_stats()["allocation.all.allocated"] == stats_before["allocation.all.allocated"]
    del tensor
    assert allocated() == before, "a view keeps its base's memory"
    del views
    assert allocated() == before - 80


@pytest.mark.parametrize(
    "in_place",
    [
        lambda t: t.add_(1),
        lambda t: t.mul_(t),
        lambda t: t.t().zero_(),
        lambda t: t[:, 1::2].fill_(3),
        lambda t: t.copy_(torch.zeros(4, 5)),
        lambda t: t.clamp_(0, 0.5),
    ],
    ids=["add_", "mul_ self", "zero_ of a transpose", "fill_ of a slice", "copy_ from CPU", "clamp_"],
)
def test_in_place_ops_leave_the_memory_as_it_was(in_place):
    tensor = torch.ones(4, 5, device="npy")
    before = allocated()
    in_place(tensor)
    assert allocated() == before
    del tensor


def test_each_result_is_one_allocation_freed_with_it():
    tensor = torch.ones(4, 5, device="npy")
    before = torch.npy.memory_stats()
    result = tensor + 1
    after = torch.npy.memory_stats()
    assert after["allocated_bytes.all.current"] == before["allocated_bytes.all.current"] + 80
    assert after["allocation.all.current"] >= before["allocation.all.current"] + 1
    del result
    freed = torch.npy.memory_stats()
    assert freed["allocated_bytes.all.current"] == before["allocated_bytes.all.current"]
    assert freed["allocation.all.freed"] - before["allocation.all.freed"] == (
        freed["allocation.all.allocated"] - before["allocation.all.allocated"]
    )
    del tensor
