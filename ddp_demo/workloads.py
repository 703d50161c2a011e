"""What the ranks of :func:`ddp_demo.launch.launch` run: an MLP trained and timed with DDP, and what PyTorch refuses.

:func:`train_ddp` trains an MLP with ``DistributedDataParallel`` on the
rank's share of each global batch; :func:`train_single_process` trains the
same MLP on the whole batches in one process, the result DDP must match.
Every function here but those two takes ``rank, world_size`` first, as
:func:`ddp_demo.launch.launch` calls it.
"""

import contextlib
import os
import tempfile
import time
import traceback

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

FEATURES, HIDDEN, CLASSES = 16, 64, 4
GLOBAL_BATCH = 32
MICRO_BATCHES = 2  # per optimizer step: DDP reduces gradients once, after the last (``no_sync``)
BUCKET_CAP_MB = 0.002  # a few kilobytes: the MLP's gradients fill several buckets


def make_mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(FEATURES, HIDDEN),
        torch.nn.ReLU(),
        torch.nn.Linear(HIDDEN, HIDDEN),
        torch.nn.ReLU(),
        torch.nn.Linear(HIDDEN, CLASSES),
    )


def global_batch(step):
    """The step's inputs and labels, the same in every process."""
    generator = torch.Generator().manual_seed(1000 + step)
    return (
        torch.randn(GLOBAL_BATCH, FEATURES, generator=generator),
        torch.randint(0, CLASSES, (GLOBAL_BATCH,), generator=generator),
    )


def micro_batches(inputs, labels):
    return zip(inputs.chunk(MICRO_BATCHES), labels.chunk(MICRO_BATCHES))


def train_single_process(steps):
    """The MLP trained on CPU on whole global batches: per step, the losses of the micro-batches and the weights."""
    model = make_mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(steps):
        for inputs, labels in micro_batches(*global_batch(step)):
            loss = torch.nn.functional.cross_entropy(model(inputs), labels)
            loss.backward()
            losses.append(loss.item())
        optimizer.step()
        optimizer.zero_grad()
    return {"losses": losses, "state": model.state_dict()}


def train_ddp(rank, world_size, device, steps):
    """The MLP trained with DDP on ``device`` (in the default process group), this rank's share of each micro-batch.

    Several gradient buckets, gradients that are views of them, and
    ``no_sync`` on every micro-batch but the last. Rank 0 then saves a
    checkpoint and every rank loads it into a fresh model.
    """
    model = DistributedDataParallel(make_mlp().to(device), bucket_cap_mb=BUCKET_CAP_MB, gradient_as_bucket_view=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(steps):
        for index, (inputs, labels) in enumerate(micro_batches(*global_batch(step))):
            inputs, labels = inputs.chunk(world_size)[rank].to(device), labels.chunk(world_size)[rank].to(device)
            last = index == MICRO_BATCHES - 1
            with contextlib.nullcontext() if last else model.no_sync():
                loss = torch.nn.functional.cross_entropy(model(inputs), labels)
                loss.backward()
            losses.append(loss.item())
        optimizer.step()
        optimizer.zero_grad()
    return {
        "losses": losses,
        "buckets": len(model.reducer._get_zeros_like_grad_buckets()),
        "state": {name: value.cpu() for name, value in model.module.state_dict().items()},
        "reloaded": _checkpoint_round_trip(model.module, rank, device),
    }


def _checkpoint_round_trip(module, rank, device):
    """Rank 0 saves the weights; every rank loads them onto ``device`` in a fresh model; returned on CPU."""
    directory = [tempfile.mkdtemp() if rank == 0 else None]
    dist.broadcast_object_list(directory, src=0)
    path = os.path.join(directory[0], "checkpoint.pt")
    if rank == 0:
        torch.save(module.state_dict(), path)
    dist.barrier()
    fresh = make_mlp().to(device)
    fresh.load_state_dict(torch.load(path, map_location=device))
    return {name: value.cpu() for name, value in fresh.state_dict().items()}


def time_ddp_steps(rank, world_size, steps, rounds=5):
    """Seconds of each DDP training step (forward, backward with the all-reduce, SGD step), on npy and on CPU.

    npy's model reduces through the default group (``npy_gloo``), CPU's
    through a plain gloo group; the two take turns, ``rounds`` times
    ``steps`` steps each, so that a slow spell of the machine falls on both.
    """
    groups = {"npy": dist.group.WORLD, "cpu": dist.new_group(backend="gloo")}
    steppers = {device: _ddp_stepper(rank, world_size, device, group) for device, group in groups.items()}
    times = {device: [] for device in steppers}
    for step in steppers.values():
        step()  # the first step builds DDP's buckets
    for _ in range(rounds):
        for device, step in steppers.items():
            for _ in range(steps):
                dist.barrier()
                start = time.perf_counter()
                step()
                times[device].append(time.perf_counter() - start)
    return times


def _ddp_stepper(rank, world_size, device, group):
    model = DistributedDataParallel(make_mlp().to(device), process_group=group)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs, labels = (tensor.chunk(world_size)[rank].to(device) for tensor in global_batch(0))

    def step():
        torch.nn.functional.cross_entropy(model(inputs), labels).backward()
        optimizer.step()
        optimizer.zero_grad()

    return step


def ddp_step_breakdown(rank, world_size, steps, rounds=3):
    """Where a DDP step's time goes, on npy and on CPU, taking turns as :func:`time_ddp_steps` does.

    Each step (after a barrier, as there) is timed in its phases: forward (DDP's forward and the
    loss), backward (the gradients' all-reduce included) and optimizer (SGD step and
    ``zero_grad``); between steps, the parts of the backward are timed (:class:`StepParts`).
    Returns, per device, the seconds of each phase and part, one entry per step, and
    ``reducer_ops``: how many times one profiled step ran each op the profiler files under DDP's
    reducer.
    """
    groups = {"npy": (dist.group.WORLD, "npy_gloo"), "cpu": (dist.new_group(backend="gloo"), "gloo")}
    parts = {
        device: StepParts(rank, world_size, device, group, _group_of_one(rank, world_size, backend))
        for device, (group, backend) in groups.items()
    }
    results = {device: {"seconds": {}, "reducer_ops": part.reducer_ops()} for device, part in parts.items()}
    for _ in range(rounds):
        for device, part in parts.items():
            for _ in range(steps):
                dist.barrier()
                for name, seconds in (part.timed_step() | part.timed_parts()).items():
                    results[device]["seconds"].setdefault(name, []).append(seconds)
    return results


def _group_of_one(rank, world_size, backend):
    """A process group whose only member is this rank (every rank makes every group: ``new_group`` asks)."""
    return [dist.new_group([member], backend=backend) for member in range(world_size)][rank]


def _seconds(function):
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


class StepParts:
    """A DDP training step on one device, timed in phases, and the parts of its backward.

    The parts: ``autograd``, the same backward without DDP (a twin MLP, the same weights and
    inputs); ``alone``, the backward of DDP in a group of this rank alone (the reducer's work and
    a one-rank all-reduce, no other rank to wait for); ``bucket ops``, what DDP's reducer does per
    gradient (the profiled step shows it: it writes each gradient divided by the world size into
    the bucket with ``mul`` and copies the reduced bucket back with ``copy_``), on views of one
    flat buffer as the reducer's bucket; ``all-reduce``, the all-reduce of that buffer between the
    ranks (the DDP model's group), after a barrier.
    """

    def __init__(self, rank, world_size, device, group, group_of_one):
        self.world_size, self.group = world_size, group
        self.inputs, self.labels = (tensor.chunk(world_size)[rank].to(device) for tensor in global_batch(0))
        self.model = DistributedDataParallel(make_mlp().to(device), process_group=group)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.model_alone = DistributedDataParallel(make_mlp().to(device), process_group=group_of_one)
        self.twin = make_mlp().to(device)
        sizes = [parameter.numel() for parameter in self.twin.parameters()]
        self.bucket = torch.zeros(sum(sizes), device=device)
        self.bucket_views = [view.view_as(p) for view, p in zip(self.bucket.split(sizes), self.twin.parameters())]
        self.timed_step()  # the first steps build DDP's buckets
        self.timed_parts()

    def loss(self, model):
        return torch.nn.functional.cross_entropy(model(self.inputs), self.labels)

    def timed_step(self):
        start = time.perf_counter()
        loss = self.loss(self.model)
        forward = time.perf_counter()
        loss.backward()
        backward = time.perf_counter()
        self.optimizer.step()
        self.optimizer.zero_grad()
        end = time.perf_counter()
        return {
            "forward": forward - start,
            "backward": backward - forward,
            "optimizer": end - backward,
            "step": end - start,
        }

    def timed_parts(self):
        parts = {"autograd": _seconds(self.loss(self.twin).backward), "bucket ops": _seconds(self._bucket_ops)}
        parts["alone"] = _seconds(self.loss(self.model_alone).backward)
        for model in self.twin, self.model_alone:
            model.zero_grad()
        dist.barrier()
        parts["all-reduce"] = _seconds(self._all_reduce)
        return parts

    def _bucket_ops(self):
        gradients = [parameter.grad for parameter in self.twin.parameters()]
        for gradient, view in zip(gradients, self.bucket_views):
            torch.mul(gradient, 1 / self.world_size, out=view)
        for gradient, view in zip(gradients, self.bucket_views):
            gradient.copy_(view)

    def _all_reduce(self):
        dist.all_reduce(self.bucket, group=self.group)

    def reducer_ops(self):
        """How many times one step ran each op the profiler files under DDP's reducer."""
        with torch.profiler.profile() as profile:
            self.timed_step()
        return {event.key: event.count for event in profile.key_averages() if "reducer" in event.key}


def _error_text(error):
    return f"{type(error).__name__}: {error}".splitlines()[0]


def gloo_on_npy(rank, world_size):
    """What gloo groups say to an npy tensor: backend spelling -> the error of an all-reduce."""
    outcomes = {}
    for backend in ("gloo", "cpu:gloo,npy:gloo"):
        try:
            dist.all_reduce(torch.ones(2, device="npy"), group=dist.new_group(backend=backend))
            outcomes[backend] = "works"
        except RuntimeError as error:
            outcomes[backend] = _error_text(error)
    return outcomes


def try_ddp_options(rank, world_size, options):
    """For each set of DistributedDataParallel keyword arguments: "trains", or the error of the first step."""
    outcomes = {}
    for name, kwargs in options.items():
        model = DistributedDataParallel(make_mlp().to("npy"), **kwargs)
        inputs, labels = (tensor.chunk(world_size)[rank].to("npy") for tensor in global_batch(0))
        try:
            torch.nn.functional.cross_entropy(model(inputs), labels).backward()
            outcomes[name] = "trains"
        except Exception as error:
            outcomes[name] = _error_text(error)
    return outcomes


def try_fully_shard(rank, world_size):
    """FSDP2 on npy: "trains", or the error, with the PyTorch file and line that raised it."""
    from torch.distributed.fsdp import fully_shard

    model = make_mlp().to("npy")
    try:
        fully_shard(model)
        inputs, labels = (tensor.chunk(world_size)[rank].to("npy") for tensor in global_batch(0))
        torch.nn.functional.cross_entropy(model(inputs), labels).backward()
        return "trains"
    except Exception as error:
        frame = traceback.extract_tb(error.__traceback__)[-1]
        where = frame.filename.split("site-packages/")[-1]
        return f"{_error_text(error)}\n  raised at {where}:{frame.lineno}, in {frame.name}"
