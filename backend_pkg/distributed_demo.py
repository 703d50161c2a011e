"""DistributedDataParallel on npy, run in several processes: the Scaling out page, its tests and ``make bench``.

:func:`launch` starts one process per rank on 127.0.0.1 (a free port, a
deadline) and returns what each rank's function returned. :func:`train_ddp`
is such a function: an MLP trained with ``DistributedDataParallel`` on the
rank's share of each global batch; :func:`train_single_process` trains the
same MLP on the whole batches in one process, the result DDP must match.
"""

import contextlib
import datetime
import os
import pickle
import socket
import subprocess
import sys
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


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def launch(function, *args, backend="npy_gloo", world_size=2, timeout=60.0):
    """``[function(rank, world_size, *args) for rank in range(world_size)]``, each rank in a process of its own.

    Each process runs this module (``python -m backend_pkg.distributed_demo``),
    joins the default process group, made by ``backend``, then calls
    ``function``, which it imports by name. A fresh interpreter rather than
    ``multiprocessing``'s spawn, which runs the parent's main script again in
    every child: a page or a notebook cell would launch itself.
    """
    if function.__module__ == "__main__":
        raise ValueError(f"launch imports {function.__name__} by name in each process; "
                         "define it in a module, not in the script that calls launch")
    port = free_port()
    with tempfile.TemporaryDirectory() as directory:
        job = os.path.join(directory, "job.pkl")
        with open(job, "wb") as file:
            pickle.dump((function, args), file)
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        ranks = [_start_rank(directory, job, rank, world_size, port, backend, environment)
                 for rank in range(world_size)]
        try:
            finished = _wait([process for process, _ in ranks], time.monotonic() + timeout)
        finally:
            for process, _ in ranks:
                process.kill()
                process.wait()
        if not finished:
            raise TimeoutError(f"{function.__name__} on {world_size} processes took over {timeout} s")
        failures = [_failure(rank, process, output) for rank, (process, output) in enumerate(ranks)
                    if process.returncode != 0]
        if failures:
            raise RuntimeError(f"{function.__name__} failed:\n" + "\n".join(failures))
        return [torch.load(f"{output}.pt") for _, output in ranks]


def _wait(processes, deadline):
    """Until all ``processes`` exit or one fails (the others then wait for it forever); False past the deadline."""
    while time.monotonic() < deadline:
        exit_codes = [process.poll() for process in processes]
        if None not in exit_codes or any(code not in (None, 0) for code in exit_codes):
            return True
        time.sleep(0.02)
    return False


@contextlib.contextmanager
def process_group_of_one(backend="npy_gloo"):
    """This process as the only rank of the default process group: an in-memory store, no other process."""
    dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


def _start_rank(directory, job, rank, world_size, port, backend, environment):
    output = os.path.join(directory, f"rank{rank}")
    with open(f"{output}.log", "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", __name__, job, str(rank), str(world_size), str(port), backend, f"{output}.pt"],
            stdout=log, stderr=subprocess.STDOUT, env=environment,
        )
    return process, output


def _failure(rank, process, output):
    with open(f"{output}.log", encoding="utf-8", errors="replace") as log:
        return f"rank {rank}, exit code {process.returncode}:\n{log.read()[-4000:]}"


def _run_rank(job, rank, world_size, port, backend, output):
    """One process of :func:`launch`: join the group, run the function, save what it returned.

    ``python -m backend_pkg.distributed_demo`` has imported ``backend_pkg``, which registered npy.
    """
    torch.set_num_threads(1)  # what torchrun sets (OMP_NUM_THREADS=1) for several processes on one machine
    with open(job, "rb") as file:
        function, args = pickle.load(file)
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world_size, timeout=datetime.timedelta(seconds=30))
    try:
        torch.save(function(rank, world_size, *args), output)
    finally:
        dist.destroy_process_group()


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


if __name__ == "__main__":
    job_file, rank_arg, world_size_arg, port_arg, backend_arg, output_file = sys.argv[1:]
    _run_rank(job_file, int(rank_arg), int(world_size_arg), int(port_arg), backend_arg, output_file)
