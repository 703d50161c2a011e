"""torch.distributed on npy: DDP against one CPU process, and every collective against gloo on CPU.

Two ranks, each a fresh interpreter, on 127.0.0.1 (``ddp_demo.launch.launch``:
a free port, a deadline).
"""

import functools
import os
import re
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as functional
from sitebuild import ROOT

from backend_pkg import distributed
from ddp_demo import workloads
from ddp_demo.launch import launch, process_group_of_one

STEPS = 3
SHAPE = (2, 3)


def ddp_and_collectives(rank, world_size):
    """Both checks in one launch: starting two processes costs more than either check."""
    return {
        "ddp": workloads.train_ddp(rank, world_size, "npy", STEPS),
        "collective mismatches": compare_collectives(rank, world_size),
        "breakdown": workloads.ddp_step_breakdown(rank, world_size, steps=1, rounds=1),
    }


@pytest.fixture(scope="module")
def ranks():
    return launch(ddp_and_collectives, backend="cpu:gloo,npy:npy_gloo")


def test_ddp_on_npy_trains_like_one_cpu_process_on_the_whole_batch(ranks):
    ranks = [rank["ddp"] for rank in ranks]
    reference = workloads.train_single_process(STEPS)
    assert all(rank["buckets"] >= 2 for rank in ranks)
    for name, expected in reference["state"].items():
        torch.testing.assert_close(ranks[0]["state"][name], expected)
        assert torch.equal(ranks[1]["state"][name], ranks[0]["state"][name]), f"ranks diverge on {name}"
        for rank in ranks:
            assert torch.equal(rank["reloaded"][name], ranks[0]["state"][name]), f"checkpoint of {name}"


def test_the_ddp_breakdown_times_every_part_of_the_step_whose_reducer_ops_it_replays(ranks):
    """The page's breakdown replays, as its bucket ops, a mul into the bucket and a copy back per parameter."""
    parameters = len(list(workloads.make_mlp().parameters()))
    for rank in ranks:
        for device, result in rank["breakdown"].items():
            assert result["reducer_ops"] == {
                "torch::distributed::reducer::mul_out": parameters,
                "torch.distributed.ddp.reducer::copy_bucket_to_grad": parameters,
            }, device
            parts = {"forward", "backward", "optimizer", "step", "autograd", "alone", "bucket ops", "all-reduce"}
            assert set(result["seconds"]) == parts, device
            assert all(len(seconds) == 1 and seconds[0] > 0 for seconds in result["seconds"].values()), device


# Each collective as a function of (rank, world_size, the tensor maker, the group, async_op), returning the
# tensors it wrote. ``make(values)`` puts a CPU tensor on the device under test, in the layout under test.


def rank_values(rank, dtype=torch.float32):
    return (torch.arange(6, dtype=dtype).reshape(SHAPE) + 1) * (rank + 2)


def finish(work, outputs):
    if work is not None:
        work.wait()
    return outputs


def all_reduce(op, dtype=torch.float32):
    def run(rank, world_size, make, group, async_op):
        tensor = make(rank_values(rank, dtype))
        return finish(dist.all_reduce(tensor, op=op, group=group, async_op=async_op), [tensor])

    return run


def broadcast(rank, world_size, make, group, async_op):
    tensor = make(rank_values(rank))
    return finish(dist.broadcast(tensor, src=1, group=group, async_op=async_op), [tensor])


def reduce(rank, world_size, make, group, async_op):
    tensor = make(rank_values(rank))
    work = dist.reduce(tensor, dst=0, op=dist.ReduceOp.MAX, group=group, async_op=async_op)
    return finish(work, [tensor] if rank == 0 else [])


def all_gather(rank, world_size, make, group, async_op):
    outputs = [make(torch.zeros(SHAPE)) for _ in range(world_size)]
    return finish(dist.all_gather(outputs, make(rank_values(rank)), group=group, async_op=async_op), outputs)


def deprecated(new_name):
    """The collective under its name before torch 2.13 (an alias that warns), without the warning."""

    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return new_name(*args)

    return run


def all_gather_single(rank, world_size, make, group, async_op, gather=dist.all_gather_single):
    output = make(torch.zeros(SHAPE[0] * world_size, SHAPE[1]))
    work = gather(output, make(rank_values(rank)), group=group, async_op=async_op)
    return finish(work, [output])


def reduce_scatter(rank, world_size, make, group, async_op):
    output = make(torch.zeros(SHAPE))
    inputs = [make(rank_values(rank) * (index + 1)) for index in range(world_size)]
    return finish(dist.reduce_scatter(output, inputs, group=group, async_op=async_op), [output])


def reduce_scatter_single(rank, world_size, make, group, async_op, reduce_scatter=dist.reduce_scatter_single):
    output = make(torch.zeros(SHAPE))
    whole = make(torch.cat([rank_values(rank) * (index + 1) for index in range(world_size)]))
    return finish(reduce_scatter(output, whole, group=group, async_op=async_op), [output])


def gather(rank, world_size, make, group, async_op):
    outputs = [make(torch.zeros(SHAPE)) for _ in range(world_size)] if rank == 0 else None
    work = dist.gather(make(rank_values(rank)), outputs, dst=0, group=group, async_op=async_op)
    return finish(work, outputs or [])


def scatter(rank, world_size, make, group, async_op):
    output = make(torch.zeros(SHAPE))
    inputs = [make(rank_values(index)) for index in range(world_size)] if rank == 0 else None
    return finish(dist.scatter(output, inputs, src=0, group=group, async_op=async_op), [output])


def all_to_all(rank, world_size, make, group, async_op):
    outputs = [make(torch.zeros(SHAPE)) for _ in range(world_size)]
    inputs = [make(rank_values(rank) + index) for index in range(world_size)]
    return finish(dist.all_to_all(outputs, inputs, group=group, async_op=async_op), outputs)


def all_to_all_single(rank, world_size, make, group, async_op):
    output = make(torch.zeros(SHAPE[0] * world_size, SHAPE[1]))
    whole = make(torch.cat([rank_values(rank) + index for index in range(world_size)]))
    return finish(dist.all_to_all_single(output, whole, group=group, async_op=async_op), [output])


def barrier(rank, world_size, make, group, async_op):
    return finish(dist.barrier(group=group, async_op=async_op), [])


def send_recv(rank, world_size, make, group, async_op):
    tensor = make(rank_values(rank))
    peer = dist.get_global_rank(group, 1 - rank)
    if async_op:
        work = dist.isend(tensor, peer, group=group) if rank == 0 else dist.irecv(tensor, peer, group=group)
        return finish(work, [tensor])
    dist.send(tensor, peer, group=group) if rank == 0 else dist.recv(tensor, peer, group=group)
    return [tensor]


def functional_all_reduce(rank, world_size, make, group, async_op):
    return [functional.all_reduce(make(rank_values(rank)), "sum", group).wait()]


def functional_all_gather_single(rank, world_size, make, group, async_op, gather=functional.all_gather_single):
    return [gather(make(rank_values(rank)), 0, group).wait()]


def functional_reduce_scatter_single(
    rank, world_size, make, group, async_op, reduce_scatter=functional.reduce_scatter_single
):
    whole = make(torch.cat([rank_values(rank) * (index + 1) for index in range(world_size)]))
    return [reduce_scatter(whole, "sum", 0, group).wait()]


COLLECTIVES = {
    **{f"all_reduce {op}": all_reduce(getattr(dist.ReduceOp, op)) for op in ("SUM", "PRODUCT", "MIN", "MAX", "AVG")},
    **{f"all_reduce {op} int": all_reduce(getattr(dist.ReduceOp, op), torch.int32) for op in ("BAND", "BOR", "BXOR")},
    "broadcast": broadcast,
    "reduce": reduce,
    "all_gather": all_gather,
    "all_gather_single": all_gather_single,
    "all_gather_into_tensor": deprecated(functools.partial(all_gather_single, gather=dist.all_gather_into_tensor)),
    "reduce_scatter": reduce_scatter,
    "reduce_scatter_single": reduce_scatter_single,
    "reduce_scatter_tensor": deprecated(
        functools.partial(reduce_scatter_single, reduce_scatter=dist.reduce_scatter_tensor)
    ),
    "gather": gather,
    "scatter": scatter,
    "all_to_all": all_to_all,
    "all_to_all_single": all_to_all_single,
    "barrier": barrier,
    "send/recv": send_recv,
    "functional all_reduce": functional_all_reduce,
    "functional all_gather_single": functional_all_gather_single,
    "functional all_gather_tensor": deprecated(
        functools.partial(functional_all_gather_single, gather=functional.all_gather_tensor)
    ),
    "functional reduce_scatter_single": functional_reduce_scatter_single,
    "functional reduce_scatter_tensor": deprecated(
        functools.partial(functional_reduce_scatter_single, reduce_scatter=functional.reduce_scatter_tensor)
    ),
}


def maker(device, contiguous):
    def make(values):
        if contiguous or values.dim() != 2:
            return values.to(device)
        # The same values in a transposed layout: strides (1, rows).
        return values.t().contiguous().to(device).t()

    return make


def outcome(collective, rank, world_size, make, group, async_op):
    """The tensors a collective wrote (on CPU, with their strides), or the exception it raised."""
    try:
        return [tensor.cpu() for tensor in collective(rank, world_size, make, group, async_op)]
    except Exception as error:
        return (type(error).__name__, re.sub(r"0x[0-9a-f]+", "0x...", str(error)))


def compare_collectives(rank, world_size):
    """Each collective on npy through npy_gloo, and on CPU through a gloo group: mismatches, described."""
    gloo = dist.new_group(backend="gloo")
    mismatches = []
    for name, collective in COLLECTIVES.items():
        for contiguous in (True, False):
            for async_op in (False, True):
                case = f"{name} contiguous={contiguous} async_op={async_op}"
                expected = outcome(collective, rank, world_size, maker("cpu", contiguous), gloo, async_op)
                actual = outcome(collective, rank, world_size, maker("npy", contiguous), dist.group.WORLD, async_op)
                if isinstance(expected, tuple) or isinstance(actual, tuple):
                    if expected != actual:
                        mismatches.append(f"{case}: CPU {expected}, npy {actual}")
                    continue
                try:
                    for got, want in zip(actual, expected, strict=True):
                        torch.testing.assert_close(got, want)
                        assert got.stride() == want.stride(), (got.stride(), want.stride())
                except (AssertionError, ValueError) as error:
                    mismatches.append(f"{case}: {error}")
    return mismatches


def test_every_collective_on_npy_matches_gloo_on_cpu(ranks):
    mismatches = [rank["collective mismatches"] for rank in ranks]
    assert mismatches == [[], []], "\n".join(mismatches[0] + mismatches[1])


@pytest.mark.parametrize("backend", ["cpu:gloo,npy:npy_gloo", "npy:npy_gloo", "npy_gloo", None])
def test_every_spelling_gives_npy_tensors_the_npy_group(backend):
    """One rank in this process: init_process_group with each spelling, or with none (npy is the accelerator)."""
    with process_group_of_one(backend):
        assert type(dist.group.WORLD) is distributed.NpyProcessGroup
        tensor = torch.arange(3.0, device="npy")
        dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
        torch.testing.assert_close(tensor, torch.arange(3.0, device="npy"))


def test_ranks_import_ddp_demo_when_the_callers_sys_path_no_longer_names_it(tmp_path):
    """As on a gallery page: sphinx-gallery restores ``sys.path`` after each cell, so the entry a page
    added for ``ddp_demo`` is gone when a later cell launches the ranks."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from ddp_demo import workloads
        from ddp_demo.launch import launch
        sys.path.remove({str(ROOT)!r})
        print(launch(workloads.gloo_on_npy, backend="cpu:gloo,npy:npy_gloo")[0])
    """)
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=environment
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "gloo" in result.stdout
