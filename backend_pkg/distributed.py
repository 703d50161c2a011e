"""torch.distributed for npy: a process group that runs gloo on npy memory.

A process group does collectives (all-reduce, broadcast, ...) over the
tensors of one device type; ``init_process_group`` picks one for each device
by name. PyTorch's built-in groups know CPU and CUDA tensors only: gloo
refuses npy tensors (``ProcessGroupGloo::allreduce: unsupported device type
npy``). npy memory is host memory, though, and
:func:`~backend_pkg.tensor.host_view` gives a CPU tensor over it without
a copy. :class:`NpyProcessGroup` hands those views to a gloo group of its
own, so every byte on the wire is gloo's, and a collective writes its result
straight into the npy tensors.

The C++ base of a backend (``torch._C._distributed_c10d.Backend``) cannot be
subclassed from Python, but ``torch.distributed.ProcessGroup`` can: a pybind
trampoline (torch/csrc/distributed/c10d/PyProcessGroup.hpp) sends the
collectives C++ calls (DDP's all-reduce among them) to the Python methods of
the same name. ``init_process_group`` replaces its own group with one that
is a ``ProcessGroup`` subclass (``_new_process_group_helper`` in
torch/distributed/distributed_c10d.py), so :class:`NpyProcessGroup` serves
CPU tensors too, with the same gloo.

:func:`register` (run by ``import backend_pkg``: a few dictionary entries)
makes the group known as ``npy_gloo``::

    torch.distributed.init_process_group("cpu:gloo,npy:npy_gloo")
    torch.distributed.init_process_group("npy_gloo")  # the same, shorter
    torch.distributed.init_process_group()            # npy is the accelerator
"""

import datetime

import torch
import torch.distributed as dist

from .names import DEVICE_NAME
from .tensor import host_view

BACKEND_NAME = "npy_gloo"


def host_views(value):
    """``value`` with every tensor in it (a tensor, or lists of them, nested) a CPU tensor over the same memory.

    Anything else (options, ranks, split sizes) stays as it is.
    """
    if isinstance(value, torch.Tensor):
        return host_view(value)
    if isinstance(value, list):
        return [host_views(item) for item in value]
    return value


class AllOf(dist.Work):
    """One work for several collectives run one by one.

    The functional collectives (DTensor's) gather and reduce-scatter through
    the coalesced forms, which gloo lacks.
    """

    def __init__(self, works):
        super().__init__()
        self._works = works

    def wait(self, timeout=datetime.timedelta(0)):
        return all([work.wait(timeout) for work in self._works])

    def get_future(self):
        return torch.futures.collect_all([work.get_future() for work in self._works])


def gloo_collective(gloo_method):
    """A process group method that calls the gloo group's ``gloo_method``, every tensor argument as host views."""

    def collective(self, *args, **kwargs):
        return getattr(self._gloo, gloo_method)(
            *map(host_views, args), **{name: host_views(value) for name, value in kwargs.items()}
        )

    return collective


# The collectives the trampoline and torch.distributed call on a group, each with gloo's name for it.
GLOO_COLLECTIVES = {
    name: name
    for name in [
        "allreduce",
        "allreduce_coalesced",
        "broadcast",
        "reduce",
        "allgather",
        "allgather_coalesced",
        "gather",
        "scatter",
        "reduce_scatter",
        "alltoall",
        "barrier",
        "send",
        "recv",
        "recv_anysource",
    ]
} | {
    "all_gather_single": "_allgather_base",
    "reduce_scatter_single": "_reduce_scatter_base",
    "all_to_all_single": "alltoall_base",
}


def _with_gloo_collectives(cls):
    for name, gloo_method in GLOO_COLLECTIVES.items():
        setattr(cls, name, gloo_collective(gloo_method))
    return cls


@_with_gloo_collectives
class NpyProcessGroup(dist.ProcessGroup):
    """Every collective of ``torch.distributed``, run by gloo on host views of npy tensors.

    Each method is the one ``torch.distributed`` (Python) or the C++
    trampoline calls on a group: those of :data:`GLOO_COLLECTIVES` return
    gloo's own work object, so ``async_op=True``, ``wait()`` and
    ``get_future()`` are gloo's; the coalesced single-tensor forms, which
    gloo lacks, run gloo's one by one.
    """

    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        self._gloo = dist.ProcessGroupGloo(store, rank, size, timeout)
        # C++ keeps a group's name in its backends (ProcessGroup::setGroupName), and
        # functional collectives find a group by that name.
        self._register_backend(torch.device("cpu"), dist.ProcessGroup.BackendType.GLOO, self._gloo)

    def getBackendName(self):  # C++ asks, for DDP's logs among others
        return BACKEND_NAME

    def all_gather_single_coalesced(self, outputs, inputs, opts):
        return AllOf([self.all_gather_single(output, input, opts) for output, input in zip(outputs, inputs)])

    def reduce_scatter_single_coalesced(self, outputs, inputs, opts):
        return AllOf([self.reduce_scatter_single(output, input, opts) for output, input in zip(outputs, inputs)])


def create_process_group(store, rank, size, timeout):
    """What ``init_process_group`` calls to make the ``npy_gloo`` group."""
    return NpyProcessGroup(store, rank, size, timeout)


def register():
    """Make ``npy_gloo`` the process group of npy tensors (and an option for CPU ones); idempotent."""
    if dist.is_available() and BACKEND_NAME.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(BACKEND_NAME, create_process_group, devices=[DEVICE_NAME, "cpu"])
