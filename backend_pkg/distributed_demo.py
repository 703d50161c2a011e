"""DistributedDataParallel on npy, run in several processes: the Scaling out page, its tests and ``make bench``.

:func:`launch` starts one process per rank on 127.0.0.1 (a free port, a
deadline) and returns what each rank's function returned. :func:`train_ddp`
is such a function: an MLP trained with ``DistributedDataParallel`` on the
rank's share of each global batch; :func:`train_single_process` trains the
same MLP on the whole batches in one process, the result DDP must match.
"""

import contextlib
import datetime
import io
import os
import socket
import tempfile
import time
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel

FEATURES, HIDDEN, CLASSES = 16, 64, 4
GLOBAL_BATCH = 32
MICRO_BATCHES = 2  # per optimizer step: DDP reduces gradients once, after the last (``no_sync``)
BUCKET_CAP_MB = 0.002  # a few kilobytes: the MLP's gradients fill several buckets
PROCESS_GROUPS = {"npy": "cpu:gloo,npy:npy_gloo", "cpu": "gloo"}


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _run_rank(rank, world_size, port, backend, function, args, results):
    """One process: join the group, run ``function(rank, world_size, *args)``, hand back its result."""
    import backend_pkg  # noqa: F401  (a spawned process starts without the npy device)

    torch.set_num_threads(1)  # what torchrun sets (OMP_NUM_THREADS=1) for several processes on one machine
    try:
        dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=world_size, timeout=datetime.timedelta(seconds=30))
        outcome = ("ok", function(rank, world_size, *args))
    except Exception:  # the parent raises it, with this traceback
        outcome = ("error", traceback.format_exc())
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    # As bytes: a tensor put on a queue as it is lives in this process's shared memory, gone when it exits.
    serialized = io.BytesIO()
    torch.save(outcome, serialized)
    results.put((rank, serialized.getvalue()))


def launch(function, *args, backend=PROCESS_GROUPS["npy"], world_size=2, timeout=60.0):
    """``[function(rank, world_size, *args) for rank in range(world_size)]``, each rank in a process of its own.

    Each process first joins the default process group, made by ``backend``.
    ``function`` must be importable by name: a spawned process imports it.
    """
    context = mp.get_context("spawn")
    results = context.SimpleQueue()
    port = free_port()
    processes = [
        context.Process(target=_run_rank, args=(rank, world_size, port, backend, function, args, results), daemon=True)
        for rank in range(world_size)
    ]
    for process in processes:
        process.start()
    deadline = time.monotonic() + timeout
    outcomes = {}
    try:
        while len(outcomes) < world_size:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{function.__name__} on {world_size} processes took over {timeout} s")
            if results.empty():
                if any(process.exitcode not in (None, 0) for process in processes):
                    raise RuntimeError(f"a rank of {function.__name__} died: exit codes "
                                       f"{[process.exitcode for process in processes]}")
                time.sleep(0.01)
                continue
            rank, serialized = results.get()
            outcomes[rank] = torch.load(io.BytesIO(serialized))
    finally:
        for process in processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
    failures = [f"rank {rank}:\n{value}" for rank, (status, value) in sorted(outcomes.items()) if status == "error"]
    if failures:
        raise RuntimeError("\n".join(failures))
    return [outcomes[rank][1] for rank in range(world_size)]


def make_mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(),
        torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
        torch.nn.Linear(HIDDEN, CLASSES),
    )


def global_batch(step):
    """The step's inputs and labels, the same in every process."""
    generator = torch.Generator().manual_seed(1000 + step)
    return (torch.randn(GLOBAL_BATCH, FEATURES, generator=generator),
            torch.randint(0, CLASSES, (GLOBAL_BATCH,), generator=generator))


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
    model = DistributedDataParallel(make_mlp().to(device), bucket_cap_mb=BUCKET_CAP_MB,
                                    gradient_as_bucket_view=True)
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
    return {"losses": losses, "buckets": len(model.reducer._get_zeros_like_grad_buckets()),
            "state": {name: value.cpu() for name, value in model.module.state_dict().items()},
            "reloaded": _checkpoint_round_trip(model.module, rank, device)}


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
