"""Several processes on 127.0.0.1, one rank each: the launcher of the Scaling out page, its tests and ``make bench``.

:func:`launch` starts one process per rank (a free port, a deadline) and
returns what each rank's function returned; :mod:`ddp_demo.workloads` holds
such functions. :func:`process_group_of_one` makes this process the only rank.
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

import torch
import torch.distributed as dist

import backend_pkg  # noqa: F401  (each rank's process: the npy device and the npy_gloo process group)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def launch(function, *args, backend="npy_gloo", world_size=2, timeout=60.0):
    """``[function(rank, world_size, *args) for rank in range(world_size)]``, each rank in a process of its own.

    Each process runs this module (``python -m ddp_demo.launch``),
    joins the default process group, made by ``backend``, then calls
    ``function``, which it imports by name. A fresh interpreter rather than
    ``multiprocessing``'s spawn, which runs the parent's main script again in
    every child: a page or a notebook cell would launch itself.
    """
    if function.__module__ == "__main__":
        raise ValueError(
            f"launch imports {function.__name__} by name in each process; "
            "define it in a module, not in the script that calls launch"
        )
    port = free_port()
    with tempfile.TemporaryDirectory() as directory:
        job = os.path.join(directory, "job.pkl")
        with open(job, "wb") as file:
            pickle.dump((function, args), file)
        # Each rank runs ``-m ddp_demo.launch``: the folder holding ddp_demo first, whatever this
        # process's sys.path is now (sphinx-gallery restores it after each cell of a page).
        path = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), *sys.path]
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
        ranks = [
            _start_rank(directory, job, rank, world_size, port, backend, environment) for rank in range(world_size)
        ]
        try:
            finished = _wait([process for process, _ in ranks], time.monotonic() + timeout)
        finally:
            for process, _ in ranks:
                process.kill()
                process.wait()
        if not finished:
            raise TimeoutError(f"{function.__name__} on {world_size} processes took over {timeout} s")
        failures = [
            _failure(rank, process, output) for rank, (process, output) in enumerate(ranks) if process.returncode != 0
        ]
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
            stdout=log,
            stderr=subprocess.STDOUT,
            env=environment,
        )
    return process, output


def _failure(rank, process, output):
    with open(f"{output}.log", encoding="utf-8", errors="replace") as log:
        return f"rank {rank}, exit code {process.returncode}:\n{log.read()[-4000:]}"


def _run_rank(job, rank, world_size, port, backend, output):
    """One process of :func:`launch`: join the group, run the function, save what it returned.

    Importing this module imported ``backend_pkg``, which registered npy and ``npy_gloo``.
    """
    torch.set_num_threads(1)  # what torchrun sets (OMP_NUM_THREADS=1) for several processes on one machine
    with open(job, "rb") as file:
        function, args = pickle.load(file)
    dist.init_process_group(
        backend,
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world_size,
        timeout=datetime.timedelta(seconds=30),
    )
    try:
        torch.save(function(rank, world_size, *args), output)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    job_file, rank_arg, world_size_arg, port_arg, backend_arg, output_file = sys.argv[1:]
    _run_rank(job_file, int(rank_arg), int(world_size_arg), int(port_arg), backend_arg, output_file)
