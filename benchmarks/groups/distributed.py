"""``distributed``: one ``DistributedDataParallel`` training step of an MLP (forward, backward with the
gradients' all-reduce, SGD step) in two processes on this machine, on ``npy`` through the ``npy_gloo``
process group and on CPU through gloo (:func:`ddp_demo.workloads.time_ddp_steps`). Each step is timed
once (a step includes waiting for the other rank), rank 0's steps make the row.
"""

from benchmarks.timing import timing_row
from ddp_demo import workloads
from ddp_demo.launch import launch

TITLE = "distributed: a DDP step in two processes, npy and CPU"
OWN_SETTINGS = None


def measure_group(settings, quick):
    """The DDP step on npy and on CPU, from rank 0 of two processes; a step is slow enough to time alone."""
    seconds = launch(workloads.time_ddp_steps, settings.repeat, settings.rounds, timeout=300)[0]
    rows = {device: timing_row([step * 1e6 for step in steps], 1) for device, steps in seconds.items()}
    return {"ddp_step": rows}, {}


def describe():
    return {
        "ddp_step": {
            "model": f"Linear({workloads.FEATURES}, {workloads.HIDDEN}), ReLU, "
            f"Linear({workloads.HIDDEN}, {workloads.HIDDEN}), ReLU, "
            f"Linear({workloads.HIDDEN}, {workloads.CLASSES}), float32",
            "processes": 2,
            "batch_per_rank": workloads.GLOBAL_BATCH // 2,
            "step": "DDP: cross_entropy(model(x), y).backward() (gradients all-reduced); SGD step; zero_grad()",
            "process_groups": {"npy": "npy_gloo (backend_pkg.distributed)", "cpu": "gloo"},
        },
    }
