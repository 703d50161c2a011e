"""torch.distributed for npy: a process group that runs gloo on npy memory.

A process group does collectives (all-reduce, broadcast, ...) over the
tensors of one device type; ``init_process_group`` picks one for each device
by name. PyTorch's built-in groups know CPU and CUDA tensors only: gloo
refuses npy tensors (``ProcessGroupGloo::allreduce: unsupported device type
npy``). npy memory is host memory, though, and
:func:`~backend_pkg.ops.copies.host_view` gives a CPU tensor over it without
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

from .ops.copies import host_view
from .tensor import DEVICE_NAME

BACKEND_NAME = "npy_gloo"


def host_views(tensors):
    """``tensors`` (a tensor, or lists of them, nested) as CPU tensors over the same memory."""
    if isinstance(tensors, torch.Tensor):
        return host_view(tensors)
    return [host_views(item) for item in tensors]


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


class NpyProcessGroup(dist.ProcessGroup):
    """Every collective of ``torch.distributed``, run by gloo on host views of npy tensors.

    Each method is the one ``torch.distributed`` (Python) or the C++
    trampoline calls on a group; it returns gloo's own work object, so
    ``async_op=True``, ``wait()`` and ``get_future()`` are gloo's.
    """

    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        self._gloo = dist.ProcessGroupGloo(store, rank, size, timeout)
        # C++ keeps a group's name in its backends (ProcessGroup::setGroupName), and
        # functional collectives find a group by that name.
        self._register_backend(torch.device("cpu"), dist.ProcessGroup.BackendType.GLOO, self._gloo)

    def getBackendName(self):  # C++ asks, for DDP's logs among others
        return BACKEND_NAME

    def allreduce(self, tensors, opts):
        return self._gloo.allreduce(host_views(tensors), opts)

    def allreduce_coalesced(self, tensors, opts):
        return self._gloo.allreduce_coalesced(host_views(tensors), opts)

    def broadcast(self, tensors, opts):
        return self._gloo.broadcast(host_views(tensors), opts)

    def reduce(self, tensors, opts):
        return self._gloo.reduce(host_views(tensors), opts)

    def allgather(self, output_lists, inputs, opts):
        return self._gloo.allgather(host_views(output_lists), host_views(inputs), opts)

    def all_gather_single(self, output, input, opts):
        return self._gloo._allgather_base(host_view(output), host_view(input), opts)

    def all_gather_single_coalesced(self, outputs, inputs, opts):
        return AllOf([self.all_gather_single(output, input, opts) for output, input in zip(outputs, inputs)])

    def allgather_coalesced(self, output_lists, inputs, opts):
        return self._gloo.allgather_coalesced(host_views(output_lists), host_views(inputs), opts)

    def gather(self, output_lists, inputs, opts):
        return self._gloo.gather(host_views(output_lists), host_views(inputs), opts)

    def scatter(self, outputs, input_lists, opts):
        return self._gloo.scatter(host_views(outputs), host_views(input_lists), opts)

    def reduce_scatter(self, outputs, input_lists, opts):
        return self._gloo.reduce_scatter(host_views(outputs), host_views(input_lists), opts)

    def reduce_scatter_single(self, output, input, opts):
        return self._gloo._reduce_scatter_base(host_view(output), host_view(input), opts)

    def reduce_scatter_single_coalesced(self, outputs, inputs, opts):
        return AllOf([self.reduce_scatter_single(output, input, opts) for output, input in zip(outputs, inputs)])

    def alltoall(self, outputs, inputs, opts):
        return self._gloo.alltoall(host_views(outputs), host_views(inputs), opts)

    def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes, opts):
        return self._gloo.alltoall_base(
            host_view(output), host_view(input), output_split_sizes, input_split_sizes, opts
        )

    def barrier(self, opts):
        return self._gloo.barrier(opts)

    def send(self, tensors, dst, tag):
        return self._gloo.send(host_views(tensors), dst, tag)

    def recv(self, tensors, src, tag):
        return self._gloo.recv(host_views(tensors), src, tag)

    def recv_anysource(self, tensors, tag):
        return self._gloo.recv_anysource(host_views(tensors), tag)


def create_process_group(store, rank, size, timeout):
    """What ``init_process_group`` calls to make the ``npy_gloo`` group."""
    return NpyProcessGroup(store, rank, size, timeout)


def register():
    """Make ``npy_gloo`` the process group of npy tensors (and an option for CPU ones); idempotent."""
    if dist.is_available() and BACKEND_NAME.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(BACKEND_NAME, create_process_group, devices=[DEVICE_NAME, "cpu"])
