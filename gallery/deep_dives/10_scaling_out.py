"""
Scaling out
===========

A Python backend has one device per process. Programs that outgrow one
device run several processes, one device each, and let
``torch.distributed`` move gradients between them:
``DistributedDataParallel`` (DDP) keeps a replica of the model in every
process and averages the gradients after each backward pass. This page
gives ``npy`` a process group, the piece of ``torch.distributed`` that
does the communication, trains an MLP with DDP in two processes started
from this page, and shows where PyTorch still stops a Python backend.
"""

# %%
# What torch.distributed offers npy
# ---------------------------------
# ``init_process_group`` creates, for each device type, a process group of
# the backend named for it: ``gloo`` for CPU, ``nccl`` for CUDA. PyTorch
# names nothing for ``npy``, and gloo does not accept its tensors. To see it, this
# process joins a process group as its only rank (an in-memory store, no
# network) and asks two gloo groups for an all-reduce of an npy tensor:

import inspect
import sys
from pathlib import Path

import torch
import torch.distributed as dist

import backend_pkg
from backend_pkg import distributed

# The DDP demo is a folder of the checkout backend_pkg is installed from, not part of the package.
sys.path.insert(0, str(Path(backend_pkg.__file__).resolve().parents[1]))
from benchmarks.timing import timing_row
from ddp_demo import workloads
from ddp_demo.launch import launch, process_group_of_one

with process_group_of_one():
    for backend, outcome in workloads.gloo_on_npy(rank=0, world_size=1).items():
        print(f"new_group(backend={backend!r}): {outcome}")

# %%
# A process group for npy
# -----------------------
# The C++ class gloo and NCCL derive from (``c10d.Backend``) cannot be
# subclassed from Python, but ``torch.distributed.ProcessGroup`` can: a
# pybind trampoline sends each collective that C++ calls on a group, DDP's
# all-reduce among them, to the Python method of the same name. npy memory
# is host memory, so ``backend_pkg.distributed.NpyProcessGroup``
# hands gloo CPU tensors over the same memory (``host_view``, no copy):
# gloo does the communication, and its results land in the npy tensors.
# Every collective is the same line: gloo's collective (three have another
# name in gloo), the tensor arguments as host views:

print(inspect.getsource(distributed.gloo_collective))
print("collectives:", ", ".join(distributed.GLOO_COLLECTIVES))

# %%
# ``import backend_pkg`` registers the group as ``npy_gloo`` for the
# devices ``npy`` and ``cpu`` (a few dictionary entries, so the import does
# not get slower):

print(inspect.getsource(distributed.register))
print("npy_gloo serves:", dist.Backend.backend_capability[distributed.BACKEND_NAME])
print("default for npy:", dist.Backend.default_device_backend_map[backend_pkg.DEVICE_NAME])

# %%
# So ``init_process_group("cpu:gloo,npy:npy_gloo")`` works, and so do the
# shorter ``init_process_group("npy_gloo")`` and, because ``npy`` is the
# accelerator, ``init_process_group()`` with no backend at all: under
# ``torchrun`` a script needs nothing more than ``import backend_pkg``.
# ``init_process_group`` keeps a group that is a ``ProcessGroup`` subclass
# for every device (``_new_process_group_helper`` in
# ``torch/distributed/distributed_c10d.py``), so CPU tensors go through
# ``npy_gloo`` too, to the same gloo. The long spelling also starts a
# second gloo for ``cpu:gloo`` that the subclass then replaces; the short
# ones do not.
#
# Every collective of ``torch.distributed`` works on npy tensors,
# synchronous or with ``async_op=True`` (gloo's own work objects come
# back): ``all_reduce`` with every reduce op gloo has, ``broadcast``,
# ``reduce``, ``all_gather``, ``all_gather_single``
# (``all_gather_into_tensor``), ``reduce_scatter``,
# ``reduce_scatter_single`` (``reduce_scatter_tensor``), ``gather``,
# ``scatter``, ``all_to_all``, ``all_to_all_single``, ``barrier``,
# ``send``/``recv``, and the functional collectives that DTensor uses,
# which find the group by its name and call it from C++. ``tests/core/test_distributed.py`` runs each on npy
# and on CPU through plain gloo, contiguous and transposed, and requires
# the same results, or the same error: gloo refuses non-contiguous tensors
# in ``all_to_all_single`` and ``send``/``recv`` on CPU as on npy.
#
# DDP on npy, against one CPU process
# -----------------------------------
# ``ddp_demo.launch.launch`` (``ddp_demo/`` in the repository) starts two
# processes on 127.0.0.1 (a free port, a deadline), each a fresh interpreter
# that joins the default process group (``npy_gloo``) and runs a function
# of ``ddp_demo.workloads``, and returns what each rank returned.
# ``ddp_demo.workloads.train_ddp`` wraps an MLP moved to
# ``npy`` in ``DistributedDataParallel``, with a bucket size small enough
# for several buckets and gradients that are views into them
# (``gradient_as_bucket_view=True``). Each step has two micro-batches: the
# first under ``no_sync()``, so DDP only accumulates, the second
# all-reduces. Each rank trains on its half of every micro-batch.

print(inspect.getsource(workloads.train_ddp))

# %%
# Two processes train for five steps (two losses a step, one per
# micro-batch); one process trains the same MLP on CPU on the whole
# batches:

STEPS = 5
ranks = launch(workloads.train_ddp, "npy", STEPS)
reference = workloads.train_single_process(STEPS)
for rank, result in enumerate(ranks):
    print(
        f"rank {rank} losses:",
        " ".join(f"{loss:.4f}" for loss in result["losses"]),
        f"({result['buckets']} gradient buckets)",
    )
print("one CPU process, whole batches:", " ".join(f"{loss:.4f}" for loss in reference["losses"]))

# %%
# Each rank's losses are its own half batch's; the weights are what must
# agree. They are bit for bit the same on both ranks, and equal to the
# single CPU process's within float32 rounding (the two halves' gradients
# are averaged instead of the whole batch's summed in one go). After
# training, rank 0 saved a checkpoint and each rank loaded it onto ``npy``
# in a fresh model:

for name, expected in reference["state"].items():
    same_on_ranks = torch.equal(ranks[0]["state"][name], ranks[1]["state"][name])
    largest_difference = (ranks[0]["state"][name] - expected).abs().max().item()
    reloaded = all(torch.equal(rank["reloaded"][name], ranks[0]["state"][name]) for rank in ranks)
    print(
        f"{name:9} ranks identical: {same_on_ranks}, vs one CPU process: {largest_difference:.1e}, "
        f"checkpoint reloaded on every rank: {reloaded}"
    )

# %%
# Where PyTorch stops npy
# -----------------------
# Two DDP options fail in the first backward pass, in a group of one
# process as in a group of two, so this process shows it alone:

options = {"find_unused_parameters=True": {"find_unused_parameters": True}, "static_graph=True": {"static_graph": True}}
with process_group_of_one():
    for option, outcome in workloads.try_ddp_options(rank=0, world_size=1, options=options).items():
        print(f"{option}: {outcome}")

# %%
# With either option DDP's reducer all-reduces a map of the parameters
# each rank used. For a CUDA or any PrivateUse1 device it first copies that
# map into pinned memory, ``at::native::empty_like(..., pinned_memory=true)``
# in ``Reducer::all_reduce_local_used_map``
# (``torch/csrc/distributed/c10d/reducer.cpp``). Pinned memory for
# PrivateUse1 comes from ``PrivateUse1HooksInterface::getPinnedMemoryAllocator``
# (``aten/src/ATen/detail/PrivateUse1HooksInterface.h``), which the hooks
# of a Python backend cannot provide. ``backend_pkg.pinned`` makes
# ``Tensor.pin_memory()`` work through the dispatcher; the reducer calls
# the allocator directly, below the dispatcher, so nothing a Python
# backend registers reaches it.
#
# .. dropdown:: Issue: DDP's find_unused_parameters and static_graph fail on Python-registered backends
#
#    **What fails.** ``DistributedDataParallel(model, find_unused_parameters=True)``
#    and ``static_graph=True`` on a PrivateUse1 device registered from
#    Python (``torch.utils.backend_registration._setup_privateuseone_for_python_backend``)
#    raise ``NotImplementedError: You should register
#    PrivateUse1HooksInterface ... and implement getPinnedMemoryAllocator``
#    in the first backward pass, even when the backend's process group
#    handles every collective (plain DDP trains).
#
#    **Where.** ``torch/csrc/distributed/c10d/reducer.cpp``,
#    ``Reducer::all_reduce_local_used_map``: for
#    ``local_used_map_dev_.is_privateuseone()`` it stages the map through
#    ``at::native::empty_like(..., /*pinned_memory=*/true)`` and asserts
#    ``is_pinned()``. The pinned allocator comes from
#    ``PrivateUse1HooksInterface::getPinnedMemoryAllocator``, whose default
#    throws; ``torch/csrc/acc/Module.cpp`` does not forward it to Python
#    hooks.
#
#    **Proposed change.** Stage through pinned memory only when the device
#    has a pinned allocator: for PrivateUse1, ask the hooks (a
#    ``hasPinnedMemoryAllocator()`` defaulting to false, true in backends
#    that implement ``getPinnedMemoryAllocator``), and otherwise copy
#    ``local_used_map_`` to ``local_used_map_dev_`` with a blocking copy,
#    which has no race to guard against. Alternatively let Python hooks
#    declare that their device memory is host memory, in which case the
#    map needs no device copy at all.
#
# FSDP2 (``fully_shard``) overlaps communication with computation on
# separate streams, and makes them through the device module, found by the
# device type's name: ``torch.npy.Stream()``, ``torch.npy.stream(...)``,
# ``torch.npy.current_stream()``, as ``torch.cuda``'s. ``backend_pkg.device``
# gives it ``torch.Stream`` and ``torch.Event`` objects on npy; every npy
# stream is the default one, since an npy kernel has finished when it
# returns and there is nothing to overlap. FSDP2 stops in its first forward
# pass:

with process_group_of_one():
    print(workloads.try_fully_shard(rank=0, world_size=1))

# %%
# FSDP2 frees the memory of gathered parameters by resizing their storage
# to zero bytes, and allocates it again by resizing it back
# (``free_storage`` and ``alloc_storage`` in
# ``torch/distributed/fsdp/_fully_shard/_fsdp_param.py``). For a
# PrivateUse1 storage ``UntypedStorage.resize_`` asks the device's C++
# hooks (``resizePrivateUse1Bytes``), which Python hooks do not forward
# (``torch/csrc/acc/Module.cpp`` forwards ``is_built``, ``is_available``
# and ``has_primary_context``): the same wall as DDP's pinned memory, one
# hook further on.
#
# The cost of a DDP step
# ----------------------
# ``ddp_demo.workloads.ddp_step_breakdown`` times a DDP step (forward,
# backward with the all-reduce, SGD step) on npy through ``npy_gloo`` and
# on CPU through gloo, in the same two processes, taking turns, each step
# after a barrier as ``make bench`` times it (row ``distributed.ddp_step``
# of ``source/benchmarks.json``). It times each phase of the step, and,
# between steps, the parts of the backward: the same backward without DDP
# (``autograd``), DDP's backward in a process group of this rank alone
# (``DDP alone``: the reducer's work and an all-reduce with no other rank),
# what the reducer does per gradient (``bucket ops``, replayed on views of
# one flat buffer) and the all-reduce of a bucket between the two ranks
# (``all-reduce``). One profiled step shows the reducer's ops, six
# parameters each written into the bucket divided by the world size
# (``mul``) and copied back from it once reduced (``copy_``):

ranks = launch(workloads.ddp_step_breakdown, 10, 3)
print("reducer ops in one step:", ranks[0]["npy"]["reducer_ops"])

# %%
# Each row is the bench's statistic over the steps, the fastest but one in
# twenty (``benchmarks.timing.timing_row``), in microseconds. Two rows are
# differences: DDP's own work on top of autograd (``alone - autograd``)
# and what the backward takes beyond DDP alone and the all-reduce
# (``backward - alone - all-reduce``):

ROWS = {
    "step": "step",
    "forward": "  forward",
    "backward": "  backward",
    "optimizer": "  optimizer",
    "autograd": "backward's parts: autograd",
    "alone": "DDP alone",
    "own work": "  alone - autograd",
    "bucket ops": "  bucket ops",
    "all-reduce": "all-reduce",
    "rest": "backward - alone - all-reduce",
}


def microseconds(rank, device):
    times = {name: timing_row([s * 1e6 for s in steps], 1)["us"] for name, steps in rank[device]["seconds"].items()}
    return times | {
        "own work": times["alone"] - times["autograd"],
        "rest": times["backward"] - times["alone"] - times["all-reduce"],
    }


columns = {
    f"rank {index} {device}": microseconds(rank, device)
    for index, rank in enumerate(ranks)
    for device in ("cpu", "npy")
}
columns["npy - CPU, rank 0"] = {row: columns["rank 0 npy"][row] - columns["rank 0 cpu"][row] for row in ROWS}
print(f"{'':30}" + "".join(f"{column:>19}" for column in columns))
for row, label in ROWS.items():
    print(f"{label:30}" + "".join(f"{times[row]:19.0f}" for times in columns.values()))
print(f"npy / CPU per step, rank 0: {columns['rank 0 npy']['step'] / columns['rank 0 cpu']['step']:.2f}x")

# %%
# npy runs the same aten ops as CPU, each a Python kernel against a C++
# one, as in a single process (see the Performance page): the rows
# forward, autograd, optimizer and bucket ops are that cost. DDP's own work
# on top of autograd (``alone - autograd``) is the bucket ops and the
# hand-off of the bucket to the process group and back, through the
# trampoline and host views on npy (not broken down further here). The
# all-reduce between the two ranks is gloo's, on the same bytes on both
# devices. The last row is what the backward takes beyond DDP alone and
# the all-reduce: an all-reduce ends only when every rank's bucket is in,
# so it is the time a rank waits for the slower one, which differs from
# rank to rank and from run to run (each row is a statistic of its own, so
# when the wait is short the difference can fall below zero).

# sphinx_gallery_thumbnail_path = "../_build/diagrams/scaling_out.png"
