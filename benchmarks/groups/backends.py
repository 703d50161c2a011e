"""``backends``: C++ against Python on the same rows (small add, mul and matmul, a 1e6-element add, a small
MLP's forward and training step with a mean-squared-error loss, which every backend here can run): CPU
eager, the C++ twin of the minimal backend (``minimal/cpp_backend.cpp``), the minimal Python backend
(``minimal/python_backend.py``) and ``backend_pkg``. The two minimal backends run in subprocesses
(``--backend``; a process has one PrivateUse1 backend) that time one turn when asked, so the four take
turns as the rows of every other group do. ``cpp_vs_python`` records the twin's build time, cold (a new
build directory) and cached, and the first-import time of each backend, each in a new process.

This module does not import ``backend_pkg``: the ``--backend`` processes import it with another backend.
"""

import importlib
import subprocess
import tempfile
import time

import torch

from benchmarks.shared import (
    MLP_BATCH,
    ROOT,
    Case,
    cpu_operands,
    describe_case,
    make_mlp,
    run_turn_process,
    script_command,
    subprocess_environment,
)
from benchmarks.timing import as_timer, calibrate, one_turn, serve_turns, timing_row

TITLE = "C++ vs Python: CPU, the C++ twin, the minimal Python backend, backend_pkg"
OWN_SETTINGS = None
# The expressions are timed with ``a`` and ``b`` on the backend's device.
BACKEND_CASES = {
    "small_add": Case("a + b", (4,)),
    "small_mul": Case("a * b", (4,)),
    "small_matmul": Case("a @ b", (4, 4)),
    "large_add": Case("a + b", (1_000_000,)),
}
BACKEND_MODULES = {"cpp_twin": "minimal.cpp_backend", "minimal_python": "minimal.python_backend"}
BACKENDS = ("cpu", *BACKEND_MODULES, "backend_pkg")


def mse_mlp_works(device):
    """The MLP's forward and a training step with a mean-squared-error loss, as callables.

    The loss is written with the ops every backend compared here has kernels for
    (the minimal Python backend has no cross-entropy and no fallback).
    """
    model = make_mlp().to(device)
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(MLP_BATCH, 32, generator=generator).to(device)
    y = torch.randn(MLP_BATCH, 10, generator=generator).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def forward():
        with torch.no_grad():
            return model(x)

    def train_step():
        ((model(x) - y) ** 2).mean().backward()
        optimizer.step()
        optimizer.zero_grad()

    return {"mlp_forward": forward, "mlp_train_step": train_step}


def backend_timers(device):
    """The C++ vs Python rows on ``device``: case -> Timer."""
    timers = {}
    for name, case in BACKEND_CASES.items():
        a, b = cpu_operands(case.shape)
        timers[name] = as_timer(case.expression, {"a": a.to(device), "b": b.to(device)})
    timers.update({name: as_timer(work) for name, work in mse_mlp_works(device).items()})
    return timers


def serve_backend_turns(module_name, settings):
    """The ``--backend`` process: import the backend, then time one turn of its rows per line read.

    Prints, one JSON line each: the import's seconds and the calls per repeat, then
    each turn's samples (:func:`benchmarks.timing.one_turn`), so the parent can interleave this
    backend's turns with the other backends' (:func:`measure_group`).
    """
    start = time.perf_counter()
    module = importlib.import_module(module_name)
    seconds = round(time.perf_counter() - start, 3)
    serve_turns(backend_timers(module.DEVICE_NAME), settings, import_seconds=seconds)


def import_seconds(module, environment=None):
    """How long ``import module`` takes in a new process, torch already imported there."""
    result = subprocess.run(
        script_command("--import-time", module),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=subprocess_environment(environment),
    )
    if result.returncode:
        raise RuntimeError(f"benchmarks/run.py --import-time {module} failed:\n{result.stderr[-3000:]}")
    return round(float(result.stdout), 3)


def measure_group(settings, quick):
    """CPU eager, the C++ twin, the minimal Python backend and backend_pkg on the same rows, and the
    twin's build and first-import times."""
    import backend_pkg  # here, not at the top: the --backend processes import this module with another backend

    cold_build = None  # minutes on a busy machine: --quick skips it
    if not quick:
        with tempfile.TemporaryDirectory() as build_directory:
            cold_build = import_seconds(BACKEND_MODULES["cpp_twin"], {"MINIMAL_TWIN_BUILD_DIR": build_directory})
    import_seconds(BACKEND_MODULES["cpp_twin"])  # builds the twin in _build/ if it has no build yet
    import_times = {"backend_pkg": import_seconds("backend_pkg")}
    # The four take turns, as the rows of the other groups do: the two minimal backends in processes of
    # their own (one PrivateUse1 backend per process), waiting for their turn while the others run.
    local = {"cpu": backend_timers("cpu"), "backend_pkg": backend_timers(backend_pkg.DEVICE_NAME)}
    numbers = {backend: calibrate(timers, settings) for backend, timers in local.items()}
    processes = {backend: run_turn_process(["--backend", backend], quick) for backend in BACKEND_MODULES}
    try:
        for backend, process in processes.items():
            import_times[backend] = process.started["import_seconds"]
            numbers[backend] = process.started["calls_per_repeat"]
        samples = {backend: {case: [] for case in numbers["cpu"]} for backend in BACKENDS}
        for _ in range(settings.rounds):
            for backend in BACKENDS:
                turn = (
                    one_turn(local[backend], numbers[backend], settings.repeat)
                    if backend in local
                    else processes[backend].one_turn()
                )
                for case, per_call_us in turn.items():
                    samples[backend][case].extend(per_call_us)
    finally:
        for process in processes.values():
            process.close()
    timings = {
        case: {backend: timing_row(samples[backend][case], numbers[backend][case]) for backend in BACKENDS}
        for case in numbers["cpu"]
    }
    build = {"cold": cold_build, "cached": import_times["cpp_twin"]}
    return timings, {"cpp_vs_python": {"twin_build_seconds": build, "first_import_seconds": import_times}}


def describe():
    return {
        **{name: describe_case(case) for name, case in BACKEND_CASES.items()},
        "mlp": "the mlp model and batch; train_step: ((model(x) - y) ** 2).mean().backward(); SGD step; zero_grad()",
        "modules": BACKEND_MODULES,
    }
