"""
Where the CPU reference is wrong
================================

npy is checked against PyTorch's CPU kernels: same values, dtypes, shapes
and strides. Where a CPU kernel is wrong, npy cannot simply copy it. Each
case is run here on CPU, with what npy does instead and the report to file.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

import backend_pkg

# %%
# ``embedding_bag`` with a last offset short of the indices
# ---------------------------------------------------------
# With ``include_last_offset=True`` the offsets hold one more entry than there
# are bags: where the last bag ends, normally ``len(indices)``. PyTorch checks
# only that it is not larger, and when it is smaller, CPU's paths disagree
# about the indices past it. The fast path (sum or mean of float32, float16 or
# bfloat16 weights with contiguous rows, no ``padding_idx``, per-sample weights
# if any of unit stride) ends the last bag at the last offset; the other paths
# (float64, a ``padding_idx``, max mode) run it to the end of the indices. Here
# the last offset is 6 of 8 indices:

indices = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
offsets = torch.tensor([0, 2, 2, 5, 6])  # bags [1, 2], [], [4, 5, 4], and [3] or [3, 2, 9]
weight = torch.randn(10, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))


def bags(weight, count=len(indices), **options):
    """The sums of the bags of the first ``count`` indices, the last offset included."""
    device = weight.device
    return F.embedding_bag(
        indices[:count].to(device), weight, offsets.to(device), mode="sum", include_last_offset=True, **options
    )


def last_bag(weight, **options):
    """The indices the last bag summed, found by comparing it with the sums of the candidates."""
    last = bags(weight, **options)[-1].double()
    for end in range(offsets[-1], len(indices) + 1):
        if torch.allclose(last, weight.double()[indices[offsets[-2] : end]].sum(0), atol=1e-2):
            return indices[offsets[-2] : end].tolist()


last_bags = {
    "float32 (fast path)": last_bag(weight.float()),
    "float64": last_bag(weight),
    "float32, padding_idx=0": last_bag(weight.float(), padding_idx=0),
}
for path, summed in last_bags.items():
    print(f"{path}:", summed)

# %%
# The bag each index fell in, from the last bags found above (blank: in none):


def bag_of_each_index(last_bag_length):
    """Each index's bag when the last bag holds ``last_bag_length`` indices; -1 for an index in none."""
    ends = [*offsets[1:-1].tolist(), offsets[-2].item() + last_bag_length]
    membership = np.full(len(indices), -1)
    for bag, (start, end) in enumerate(zip(offsets[:-1].tolist(), ends)):
        membership[start:end] = bag
    return membership


membership = np.stack([bag_of_each_index(len(summed)) for summed in last_bags.values()])
figure, axis = plt.subplots(figsize=(7, 2))
axis.imshow(np.ma.masked_less(membership, 0), cmap="Pastel1", vmin=0, vmax=8, aspect="auto")
for (row, column), bag in np.ndenumerate(membership):
    axis.text(column, row, f"{indices[column].item()}" + (f"\nbag {bag}" if bag >= 0 else ""), ha="center", va="center")
axis.set_xticks(range(len(indices)), [f"position {i}" for i in range(len(indices))], fontsize=7)
axis.set_yticks(range(len(last_bags)), list(last_bags))
figure.tight_layout()

# %%
# The backward of the fast sum is worse. It needs each index's bag, which
# the fast forward does not compute, so it rebuilds it from all the offsets,
# the last included: the indices past the last offset land in bag 4, one past
# the last, and their gradient is read from row 4 of a 4-row output
# gradient, past its end. To make that read visible and harmless here, the
# output gradient below is the first 4 rows of a 5-row tensor: the row
# after it is known, ``[12, 13, 14]``.

weight32 = weight.float().requires_grad_()
rows = torch.arange(15.0).reshape(5, 3)
output_grad = rows[:4]
(weight_grad,) = torch.autograd.grad(bags(weight32), weight32, output_grad)
(grad_of_what_was_summed,) = torch.autograd.grad(bags(weight32, count=offsets[-1]), weight32, output_grad)
print("equals the gradient of the sum the forward computed:", torch.equal(weight_grad, grad_of_what_was_summed))
print("weight.grad[9] is the row after the output gradient:", torch.equal(weight_grad[9], rows[4]))

# %%
# The per-sample weights' gradient reads the same row: index 9's is its
# row of ``weight`` times ``rows[4]``, where the forward never used it.

sample_weights = torch.ones(len(indices), requires_grad=True)
summed = bags(weight32, per_sample_weights=sample_weights)
(sample_weights_grad,) = torch.autograd.grad(summed, sample_weights, output_grad)
print("sample_weights.grad[7] is weight[9] . rows[4]:", torch.allclose(sample_weights_grad[7], weight32[9] @ rows[4]))

# %%
# With an output gradient of its own allocation, as in training, that row is
# whatever memory follows it, and no error is raised: five runs of this case
# with ``torch.ones_like`` as the output gradient gave ``weight.grad[9]``
# entries from ``1.6e-43`` to ``7.0e28`` and per-sample weight gradients up
# to ``1.4e29``, changing from run to run (not run here, since they vary).
#
# npy follows each path's forward, so its results match CPU's, and in the
# fast sum's backward it gives the indices past the last offset no gradient:
# the gradient of the sum it computed, the only defined answer, which is
# what CPU gives when the indices stop at the last offset.
# ``tests/ops/test_embedding.py`` checks every path against CPU that way,
# and checks the read past the output gradient shown above, to fail the day
# PyTorch changes it.

on_npy = weight.float().to("npy").requires_grad_()
(npy_grad,) = torch.autograd.grad(bags(on_npy), on_npy, output_grad.to("npy"))
print("npy: the gradient of the sum it computed:", torch.equal(npy_grad.cpu(), grad_of_what_was_summed))

# %%
# .. dropdown:: Upstream: embedding_bag's fast sum backward reads past the output gradient
#
#    **What happens.** With ``include_last_offset=True`` and
#    ``offsets[-1] < len(indices)``, the CPU forward of ``embedding_bag`` in
#    sum or mean mode on its fast path ends the last bag at ``offsets[-1]``,
#    while its other paths end it at ``len(indices)``. In the fast sum's
#    backward the indices from ``offsets[-1]`` on are given bag number
#    ``len(offsets) - 1``, one past the last bag, and their gradients (for
#    ``weight`` and ``per_sample_weights``) are read from that row of the
#    output gradient, past the end of its buffer. No error is raised. The
#    fast mean divides the last bag by the count up to ``len(indices)``, so
#    it disagrees with both.
#
#    **Where.** All in ``aten/src/ATen/native/EmbeddingBag.cpp`` (as read
#    from pytorch/pytorch's source; the behaviour above is 2.13.0's, run
#    here). The fast forward, ``index_select_add`` and
#    ``index_select_scale_add`` when ``is_fast_path_index_select(_scale)``
#    holds, hands the fbgemm or caffe2 kernel the caller's offsets as they
#    are when ``include_last_offset`` is set (only without it does it append
#    ``select_indices.numel()`` as the end), so bag ``b`` runs from
#    ``offsets[b]`` to ``offsets[b + 1]``. ``make_offset2bag_out`` skips
#    ``offset2bag`` for the fast sum, "since it is not going to be used",
#    and for the other paths builds it from the offsets without the last
#    one (the fix for pytorch/pytorch#89677, in pytorch/pytorch#90358), so
#    their last bag runs to the end. ``make_bag_size_out`` sets the last
#    bag's size to ``indices.size(0) - offsets[num_bags - 1]``, which the
#    mean divides by. Backward, ``_embedding_bag_backward_symint`` finds
#    ``offset2bag`` empty and rebuilds it with
#    ``make_offset2bag(offsets, ...)`` from all the offsets, without the
#    narrowing ``make_offset2bag_out`` does;
#    ``_embedding_bag_dense_backward_cpu_sum_mean`` then adds
#    ``gd + ddim * source`` for each index, ``source`` being its bag, with
#    no bound check. ``_embedding_bag_per_sample_weights_backward_cpu_template``
#    rebuilds ``offset2bag`` the same way and takes ``dot_impl`` of
#    ``grad_data + grad_stride0 * bag_idx``.
#
#    **Proposed change.** Either reject such offsets, as
#    pytorch/pytorch#52851 asks: ``check_arguments`` already reads
#    ``offsets[-1]`` and requires it to be at most ``indices.size(0)``; with
#    ``include_last_offset`` it can require equality. Or give all paths the slow paths'
#    meaning: the fast forward passes ``indices.numel()`` as the last bag's
#    end, as it already does without ``include_last_offset``, and both
#    backward rebuilds narrow the offsets as ``make_offset2bag_out`` does,
#    recognising ``include_last_offset`` the way it does, by
#    ``grad.size(0) == offsets.size(0) - 1``. Either way, the dense backward
#    should check that each ``source`` is below ``grad.size(0)`` rather than
#    read past it.
