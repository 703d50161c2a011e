"""How fast the npy device is, side by side with CPU eager, NumPy and the dispatcher floor.

Run ``make bench`` (or ``.venv/bin/python benchmarks/run.py``) to measure and
rewrite ``source/benchmarks.json``, which the Performance gallery page plots
and other pages quote. The file is generated: never edit it by hand.
``--quick`` runs every row with tiny iteration counts (seconds, not
minutes), for the tests; its numbers are too rough to commit.
The ratios it reports, each with the target it passes at or below, are
the rows of ``benchmarks/targets.csv``: a ratio's formula names its
timing rows (``group.case.implementation``, below).

What is measured
----------------
* ``small``: one op on tiny float32 tensors, written as users write it
  (``a + b``), on ``npy``, on CPU eager, on plain NumPy arrays, and the
  *floor* (below);
* ``large``: a 1024x1024 matmul and 1e6-element ``add`` and ``mul``, on
  ``npy``, NumPy and CPU;
* ``mlp``: a small MLP, one forward (under ``torch.no_grad()``) and one
  training step (forward, cross-entropy, backward, SGD step, zero_grad),
  eager on ``npy``, compiled with ``backend="npy"`` (the model, the loss
  function and the optimizer's step, each passed to ``torch.compile``), eager
  on CPU, and on CPU compiled with a backend that runs Dynamo's graph as it
  is (``cpu_dynamo_only``: what compiling costs before any backend does
  anything). Without a registered ``npy`` compile backend, or when it fails
  on the MLP, the compiled rows hold no number, only the reason. The
  *Inductor* rows compile the same three with the default ``torch.compile``;
* ``guard``: the ``mlp`` group's Inductor training step on ``npy`` and on
  CPU, here and in a subprocess (``--guard-in-cpp``) that loads
  ``device_guard_in_cpp.cpp`` before ``backend_pkg``: npy's device guard
  there answers ``type()`` in C++ instead of through Python, which is what
  the change to PyTorch's ``PythonDeviceGuard`` proposed on the limits page
  on autograd's engine would do. The two processes take turns. Beside the step, its
  beginnings (``loss``: the compiled loss's forward; ``loss_backward``: that
  and its backward and ``zero_grad``), whose differences are the step's
  phases; ``guard_calls_per_call`` counts npy's Python guard in each;
* ``eager``: the training step of issue 14's MLP (``Linear(32, 64)``,
  ``ReLU``, ``Linear(64, 64)``, ``ReLU``, ``Linear(64, 10)``, batch 16,
  cross-entropy, SGD), eager on ``npy`` and on CPU: where a Python backend's
  cost per op shows most;
* ``models``: a ResNet basic block (two 3x3 convolutions with batch norm
  and ReLU, and the identity shortcut; batch 8, 64 channels, 56x56, float32)
  forward and backward in training mode, eager on ``npy`` and on CPU. Its
  calls take tens of milliseconds, so it runs fewer repeats
  (:data:`MODEL_SETTINGS`). And a compute-bound MLP's forward (512-2048-512,
  batch 256), compiled by default on ``npy`` and on CPU, and eager on CPU: its calls
  take milliseconds and its target asks the two to be even, so it times one
  call per repeat, in as many repeats as the other groups' rows
  (:data:`LARGE_MLP_SETTINGS`);
* ``backends``: C++ against Python on the same rows (small add, mul and
  matmul, a 1e6-element add, a small MLP's forward and training step with a
  mean-squared-error loss, which every backend here can run): CPU eager, the
  C++ twin of the minimal backend (``minimal/cpp_backend.cpp``), the minimal
  Python backend (``minimal/python_backend.py``) and ``backend_pkg``. The
  two minimal backends run in subprocesses (``--backend``; a process has one
  PrivateUse1 backend) that time one turn when asked, so the four take turns
  as the rows of every other group do. ``cpp_vs_python`` records the twin's
  build time, cold (a new build directory) and cached, and the first-import
  time of each backend, each in a new process.
* ``zoo``: one training step of each family of the model zoo (``tests/zoo.py``: LeNet, a
  ResNet with batch norm, a 2-layer LSTM language model, a bidirectional GRU over packed
  sequences, a TransformerEncoder language model, DCGAN's two steps), on one batch, eager on
  ``npy`` and on CPU, and the same step compiled by the default ``torch.compile``
  (``torch.compile(recipe.step)``) on each; a step that cannot compile is a row's reason.
  The families whose width is a setting (hidden size, channels) run again, eager only, at the
  larger widths of :data:`ZOO_WIDTHS` (``lstm_language_model_width96``...): how the ratio
  falls as each op has more to do. ``zoo_aten_ops_per_step`` counts the aten ops one step
  of each family and width runs on npy and on CPU (a
  ``torch.utils._python_dispatch.TorchDispatchMode`` sees each op after autograd, the
  backward's included): a step's CPU time divided by CPU's count is the work per op.
  Beside them a depthwise and a 3d convolution, forward and backward, eager on both.
  A family's rows take turns, so CPU's step and npy's share every slow spell. The
  steps take milliseconds: :data:`ZOO_SETTINGS`;
* ``distributed``: one ``DistributedDataParallel`` training step of an MLP
  (forward, backward with the gradients' all-reduce, SGD step) in two
  processes on this machine, on ``npy`` through the ``npy_gloo`` process
  group and on CPU through gloo (:func:`backend_pkg.distributed_demo.time_ddp_steps`).
  Each step is timed once (a step includes waiting for the other rank), rank
  0's steps make the row.

The floor
---------
The cost of the dispatcher plus a Python kernel with an empty body. It is
measured in a subprocess (``--floor``) that imports ``backend_pkg`` as usual,
then replaces the PrivateUse1 kernel of exactly the aten overload each small
op reaches (``aten::add.Tensor``, ``aten::mul.Tensor``, ``aten::mm``) with a
Python function returning its first input, and times the same expression.
It then replaces them again with kernels that return a new npy tensor over
memory made beforehand (``floor_with_result``): what any kernel pays to
hand PyTorch a result, before it computes anything.
A subprocess, because the replaced kernels must never serve the other rows.

How it times
------------
Every row is timed with :mod:`timeit` (the expression compiled into the
loop, garbage collection off): a few untimed warm-up calls, then enough
calls per repeat that one repeat lasts :attr:`Settings.seconds`, then many
short repeats. Noise on a shared machine only ever adds time, so the row
reports (``us``, microseconds per call) the fastest repeat, except that the
fastest one in :data:`OUTLIER_SHARE` is passed over: on a virtual machine
the clock now and then makes a repeat look up to twice as fast as the code
can run. The true minimum and the median are recorded beside it. Rows
compared with each other take turns (:attr:`Settings.rounds`), so a slow
spell of the machine cannot fall on one of them alone. Within a turn a row
runs :attr:`Settings.repeat` repeats in a row: for a while after a NumPy
matmul its BLAS threads keep spinning, and a PyTorch CPU op that starts
then shares the two cores with them (measured here: a CPU matmul's median
doubled with 5 repeats a turn, and stayed put with 15).
"""

import argparse
import csv
import dataclasses
import datetime
import functools
import importlib
import importlib.util
import inspect
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
import torch.utils.cpp_extension
from torch.utils._python_dispatch import TorchDispatchMode

# main() imports them, except in the --backend and --import-time processes, which set up
# another PrivateUse1 backend or time the import itself: a process has one PrivateUse1 backend.
backend_pkg = None
distributed_demo = None
ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "source" / "benchmarks.json"
TARGETS = Path(__file__).with_name("targets.csv")


@dataclass(frozen=True)
class Settings:
    rounds: int  # rows compared with each other take this many turns
    repeat: int  # timed repeats per row and turn
    seconds: float  # the least time one repeat lasts; calls per repeat are calibrated to it
    warmup: int  # untimed calls before calibrating (the first compiled call compiles)


FULL = Settings(rounds=10, repeat=15, seconds=0.01, warmup=5)
QUICK = Settings(rounds=1, repeat=2, seconds=0.001, warmup=1)
MODEL_SETTINGS = Settings(rounds=3, repeat=3, seconds=0.01, warmup=2)
# The compute-bound MLP: a call of a few ms needs no batching for the clock, and the shorter a repeat,
# the likelier a quiet spell of the machine holds all of it. One call per repeat, 150 repeats
# (FULL's count) in 50 turns: about two seconds on a quiet machine. A target of 1.0 asks for more
# than MODEL_SETTINGS' nine repeats of two calls: drawn from 300 calls of each row, timed as here
# in quiet spells (ratio 1.04), nine repeats put 90% of runs' ratios between 1.01 and 1.07, 150
# between 1.03 and 1.05.
LARGE_MLP_SETTINGS = Settings(rounds=50, repeat=3, seconds=0.001, warmup=2)
# The zoo's steps (milliseconds, and tens of them for a compile-less LSTM step on npy): five
# repeats a turn, as a CPU step right after npy's NumPy work shares the cores with NumPy's
# still-spinning BLAS threads for its first repeats (see "How it times").
ZOO_SETTINGS = Settings(rounds=4, repeat=5, seconds=0.02, warmup=2)
# A row reports its fastest repeat but one in OUTLIER_SHARE: on a virtual machine the clock
# now and then makes a repeat look up to twice as fast as the code can run.
OUTLIER_SHARE = 20
CALIBRATION_TRIES = 3


@dataclass(frozen=True)
class Case:
    expression: str  # timed as written, with ``a`` and ``b`` bound to the operands
    shape: tuple
    aten: str = ""  # the overload the expression reaches on npy: the kernel the floor replaces


SMALL = {
    "add": Case("a + b", (4,), "add.Tensor"),
    "mul": Case("a * b", (4,), "mul.Tensor"),
    "matmul": Case("a @ b", (4, 4), "mm"),
}
LARGE = {
    "matmul": Case("a @ b", (1024, 1024)),
    "add": Case("a + b", (1_000_000,)),
    "mul": Case("a * b", (1_000_000,)),
}
# The same CPU operands, as each implementation holds them.
OPERANDS = {
    "npy": lambda tensor: tensor.to(backend_pkg.DEVICE_NAME),
    "cpu": lambda tensor: tensor,
    "numpy": lambda tensor: tensor.numpy(),
}

# The C++ vs Python rows: the expressions are timed with ``a`` and ``b`` on the backend's device.
BACKEND_CASES = {
    "small_add": Case("a + b", (4,)),
    "small_mul": Case("a * b", (4,)),
    "small_matmul": Case("a @ b", (4, 4)),
    "large_add": Case("a + b", (1_000_000,)),
}
BACKEND_MODULES = {"cpp_twin": "minimal.cpp_backend", "minimal_python": "minimal.python_backend"}
BACKENDS = ("cpu", *BACKEND_MODULES, "backend_pkg")

MLP_BATCH = 64
LARGE_MLP_BATCH, LARGE_MLP_FEATURES = 256, (512, 2048, 512)
LARGE_MLP_VARIANTS = ("npy_inductor", "cpu_inductor", "cpu_eager")
# The eager training step the npy overhead is measured on (issue 14): deeper, on a smaller batch.
EAGER_MLP_SIZES = (32, 64, 64, 10)
EAGER_MLP_BATCH = 16
RESNET_BLOCK_INPUT = (8, 64, 56, 56)
MLP_VARIANTS = ("npy_eager", "npy_compiled", "npy_inductor", "cpu_eager", "cpu_inductor", "cpu_dynamo_only")
MESSAGE_LIMIT = 400  # characters of an error kept as a row's reason
ZOO = ROOT / "tests" / "zoo.py"
ZOO_VARIANTS = ("npy_eager", "cpu_eager", "npy_inductor", "cpu_inductor")
# Every family's optimizer steps through one function (``Optimizer.step``'s wrapper in
# torch/optim/optimizer.py), which Dynamo compiles once per optimizer object it meets: past
# ``recompile_limit`` (8) compiles of one function it runs that function eagerly from then on,
# so the later families' compiled steps would run their optimizer eagerly. One process compiles
# every family's step in each compiled variant, and each optimizer's step stays compiled.
ZOO_RECOMPILE_LIMIT = 64
ZOO_EAGER_VARIANTS = ("npy_eager", "cpu_eager")
# The larger widths (the ``width`` argument of the family's model: hidden size or channels) each
# family whose width is a setting is timed at, eager, beside its zoo size. The recurrent and
# attention steps stay small enough at 16x; the convnets' work grows with the square of the width.
ZOO_WIDTHS = {
    "resnet": (64, 128),
    "lstm_language_model": (96, 384),
    "gru_classifier": (64, 256),
    "transformer_language_model": (128, 512),
    "dcgan": (64, 128),
}
# Forward and backward of one convolution layer, eager: module, input shape.
ZOO_CONVOLUTIONS = {
    "depthwise_conv": (lambda: torch.nn.Conv2d(32, 32, 3, padding=1, groups=32), (8, 32, 32, 32)),
    "conv3d": (lambda: torch.nn.Conv3d(8, 16, 3, padding=1), (4, 8, 16, 16, 16)),
}


@dataclass(frozen=True)
class Ratio:
    """A target the backend is measured against: one timing row over others, summed."""

    description: str
    formula: str  # "numerator / denominator": timing rows "group.case.implementation", "(a + b)" for a sum
    target: float  # the ratio passes at or below it

    @property
    def numerator(self):
        return self.formula.split(" / ")[0]

    @property
    def denominator(self):
        return tuple(self.formula.split(" / ")[1].strip("()").split(" + "))


def load_ratios(path=TARGETS):
    """The targets of ``benchmarks/targets.csv``, by name: a table, so that a target is one row to read or change."""
    with open(path, newline="") as table:
        return {row["name"]: Ratio(row["description"], row["formula"], float(row["target"]))
                for row in csv.DictReader(table)}


RATIOS = load_ratios()


# Timing.

def as_timer(work, bindings=None):
    """A :class:`timeit.Timer` of an expression string (with ``bindings``) or of a callable."""
    return timeit.Timer(work, globals=bindings) if isinstance(work, str) else timeit.Timer(work)


def calls_per_repeat(timer, seconds):
    """The smallest power of two of calls that lasts ``seconds``, in the fastest of a few tries.

    One try is not enough: a call that waits for the scheduler (another process on
    the core, or a CPU op's worker thread not yet running) would end the search at
    one call per repeat, and each repeat would then time one cold call.
    """
    number = 1
    while min(timer.timeit(number) for _ in range(CALIBRATION_TRIES)) < seconds:
        number *= 2
    return number


def timing_row(per_call_us, number):
    fastest_first = sorted(per_call_us)
    return {
        "us": round(fastest_first[len(fastest_first) // OUTLIER_SHARE], 3),
        "min_us": round(fastest_first[0], 3),
        "median_us": round(statistics.median(fastest_first), 3),
        "calls_per_repeat": number,
        "repeats": len(per_call_us),
        "unavailable": None,
    }


def unavailable_row(reason):
    return {"us": None, "min_us": None, "median_us": None, "calls_per_repeat": 0, "repeats": 0, "unavailable": reason}


def calibrate(works, settings):
    """Warm up each of ``works`` (name -> Timer); name -> calls per repeat."""
    numbers = {}
    for name, timer in works.items():
        timer.timeit(settings.warmup)
        numbers[name] = calls_per_repeat(timer, settings.seconds)
    return numbers


def one_turn(works, numbers, repeat):
    """``repeat`` repeats of each of ``works``, one work after the other; name -> µs per call of each repeat."""
    return {name: [timer.timeit(numbers[name]) / numbers[name] * 1e6 for _ in range(repeat)]
            for name, timer in works.items()}


def measure(works, settings):
    """Time each of ``works`` (name -> Timer), taking turns round by round; name -> timing row."""
    numbers = calibrate(works, settings)
    per_call_us = {name: [] for name in works}
    for _ in range(settings.rounds):
        for name, samples in one_turn(works, numbers, settings.repeat).items():
            per_call_us[name].extend(samples)
    return {name: timing_row(per_call_us[name], numbers[name]) for name in works}


# What is timed.

def cpu_operands(shape):
    generator = torch.Generator().manual_seed(0)
    return torch.randn(shape, generator=generator), torch.randn(shape, generator=generator)


def operand_bindings(case, implementation):
    a, b = cpu_operands(case.shape)
    convert = OPERANDS[implementation]
    return {"a": convert(a), "b": convert(b)}


def measure_cases(cases, settings):
    """Each case on every implementation of :data:`OPERANDS`: case -> implementation -> row."""
    return {
        name: measure(
            {implementation: as_timer(case.expression, operand_bindings(case, implementation))
             for implementation in OPERANDS},
            settings,
        )
        for name, case in cases.items()
    }


def keep_graph(graph_module, example_inputs):
    """A ``torch.compile`` backend that runs the captured graph as it is: Dynamo's own cost."""
    return graph_module.forward


def return_first_input(*args, **kwargs):
    """The no-op kernel: no NumPy, no new tensor."""
    return args[0]


def return_a_new_tensor(array):
    """A kernel that only makes its result: an npy tensor over ``array``, as every kernel does."""

    def kernel(*args, **kwargs):
        return backend_pkg.wrap(array)

    return kernel


def replace_npy_kernels(overloads, kernel):
    """Make :func:`return_first_input` the PrivateUse1 kernel of each aten overload, for this process.

    The returned library holds the registrations: keep it alive while timing.
    """
    library = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():
        # Replacing a registered kernel is the point here, not an accident to warn about.
        warnings.filterwarnings("ignore", message=".*Overriding a previously registered kernel")
        for overload in overloads:
            library.impl(overload, kernel, "PrivateUse1")
    return library


def measure_floor(settings):
    """The small ops with their npy kernels replaced: case -> {"floor": row, "floor_with_result": row}.

    ``floor``: kernels that return their first input; ``floor_with_result``:
    kernels that return a new npy tensor (over memory made beforehand). Run
    only in a subprocess.
    """
    bindings = {name: operand_bindings(case, "npy") for name, case in SMALL.items()}  # before the swap
    overloads = [case.aten for case in SMALL.values()]
    library = replace_npy_kernels(overloads, return_first_input)
    for name, case in SMALL.items():
        if eval(case.expression, dict(bindings[name])) is not bindings[name]["a"]:
            raise RuntimeError(f"the no-op kernel of aten::{case.aten} did not run for {case.expression!r}")
    timers = {name: as_timer(SMALL[name].expression, bindings[name]) for name in SMALL}
    floor = measure(timers, settings)
    result = backend_pkg.unwrap(bindings["matmul"]["a"]).copy()
    library = replace_npy_kernels(overloads, return_a_new_tensor(result))
    with_result = measure(timers, settings)
    del library
    return {name: {"floor": floor[name], "floor_with_result": with_result[name]} for name in SMALL}


def floor_in_subprocess(quick):
    command = [sys.executable, str(Path(__file__).resolve()), "--floor", *(["--quick"] if quick else [])]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"measuring the floor failed:\n{result.stderr}")
    return json.loads(result.stdout)


def make_mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))


def npy_compiled_works():
    """The MLP works compiled with ``torch.compile(..., backend="npy")``, or None and why not."""
    # exclude_tags=(): a backend tagged "experimental" is registered all the same.
    if backend_pkg.DEVICE_NAME not in torch._dynamo.list_backends(exclude_tags=()):
        return None, 'no torch.compile backend named "npy" is registered (not in torch._dynamo.list_backends())'
    works = mlp_works(backend_pkg.DEVICE_NAME, backend=backend_pkg.DEVICE_NAME)
    try:
        for work in works.values():
            work()  # the first call compiles
    except Exception as error:  # noqa: BLE001  (a backend that cannot compile the MLP yet is a row's reason)
        message = " ".join(f"{type(error).__name__}: {error}".split())
        return None, f'torch.compile(..., backend="npy") failed: {message[:MESSAGE_LIMIT]}'
    return works, None


def mlp_works(device, backend=None):
    """The forward and the training step of a fresh MLP on ``device``, and the step's beginnings
    (the ``guard`` group's cases), as callables.

    With a ``torch.compile`` ``backend``, the model, the loss and the
    optimizer's step are each compiled, as a training loop compiles them.
    """
    model = make_mlp().to(device)
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(MLP_BATCH, 32, generator=generator).to(device)
    y = torch.randint(0, 10, (MLP_BATCH,), generator=generator).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def loss_of(x, y):
        return F.cross_entropy(model(x), y)

    run, loss, step = model, loss_of, optimizer.step
    if backend is not None:
        run, loss, step = (torch.compile(work, backend=backend) for work in (model, loss_of, optimizer.step))

    def forward():
        with torch.no_grad():
            return run(x)

    def loss_only():
        loss(x, y)

    def loss_backward():
        loss(x, y).backward()
        optimizer.zero_grad()

    def train_step():
        loss(x, y).backward()
        step()
        optimizer.zero_grad()

    return {"forward": forward, "loss": loss_only, "loss_backward": loss_backward, "train_step": train_step}


# The compiled training step in a process whose npy device guard answers in C++ (``--guard-in-cpp``).
GUARD_IN_CPP = "_guard_in_cpp"
# The step and its beginnings, whose differences are its phases: the loss's forward; then its
# backward and zero_grad; then the optimizer's step.
GUARD_CASES = ("loss", "loss_backward", "train_step")
INDUCTOR_VARIANTS = ("npy_inductor", "cpu_inductor", *(f"{variant}{GUARD_IN_CPP}" for variant in ("npy_inductor", "cpu_inductor")))
GUARD_SOURCE = Path(__file__).with_name("device_guard_in_cpp.cpp")
GUARD_BUILD_DIRECTORY = ROOT / "_build" / "device_guard_in_cpp"
QUICK_SKIPS_INDUCTOR = "--quick leaves out Inductor, whose compiles take most of a minute"


def measure_mlp(settings, quick):
    """forward and train_step -> variant -> row; compiled rows that cannot run say why."""
    works = {
        "npy_eager": mlp_works(backend_pkg.DEVICE_NAME),
        "cpu_eager": mlp_works("cpu"),
        "cpu_dynamo_only": mlp_works("cpu", backend=keep_graph),
    }
    if not quick:
        works["npy_inductor"] = mlp_works(backend_pkg.DEVICE_NAME, backend="inductor")
        works["cpu_inductor"] = mlp_works("cpu", backend="inductor")
    compiled, reason = npy_compiled_works()
    if compiled:
        works["npy_compiled"] = compiled
    results = {}
    for step in ("forward", "train_step"):
        rows = measure({variant: as_timer(works[variant][step]) for variant in works}, settings)
        results[step] = {
            variant: rows.get(variant) or unavailable_row(QUICK_SKIPS_INDUCTOR if variant in INDUCTOR_VARIANTS else reason)
            for variant in MLP_VARIANTS
        }
    return results


def eager_train_step(device):
    """One training step of the :data:`EAGER_MLP_SIZES` MLP on ``device``: forward, cross-entropy,
    backward, SGD step, zero_grad."""
    torch.manual_seed(0)
    layers = []
    for inputs, outputs in zip(EAGER_MLP_SIZES, EAGER_MLP_SIZES[1:]):
        layers += [torch.nn.Linear(inputs, outputs), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1]).to(device)
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(EAGER_MLP_BATCH, EAGER_MLP_SIZES[0], generator=generator).to(device)
    y = torch.randint(0, EAGER_MLP_SIZES[-1], (EAGER_MLP_BATCH,), generator=generator).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()

    return step


def measure_eager(settings):
    works = {device: as_timer(eager_train_step(device)) for device in (backend_pkg.DEVICE_NAME, "cpu")}
    return {"mlp_train_step": measure(works, settings)}


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
    each turn's samples (:func:`one_turn`), so the parent can interleave this
    backend's turns with the other backends' (:func:`measure_backends`).
    """
    start = time.perf_counter()
    module = importlib.import_module(module_name)
    seconds = round(time.perf_counter() - start, 3)
    serve_turns(backend_timers(module.DEVICE_NAME), settings, import_seconds=seconds)


def serve_turns(timers, settings, **started):
    """Calibrate ``timers``, print ``started`` and the calls per repeat, then time one turn per line read."""
    numbers = calibrate(timers, settings)
    print(json.dumps({**started, "calls_per_repeat": numbers}), flush=True)
    for _ in sys.stdin:
        print(json.dumps(one_turn(timers, numbers, settings.repeat)), flush=True)


def subprocess_environment(environment=None):
    # The minimal backends are imported from the checkout: minimal/ is not an installed package.
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **(environment or {})}


class TurnProcess:
    """A process of this script that times one turn when asked (:func:`serve_turns`): ``--backend``
    or ``--guard-in-cpp``, given in ``options``."""

    def __init__(self, options, quick):
        command = [sys.executable, str(Path(__file__).resolve()), *options, *(["--quick"] if quick else [])]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        cwd=ROOT, env=subprocess_environment())
        self.started = self.read()
        self.numbers = self.started["calls_per_repeat"]

    def read(self):
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"benchmarks/run.py {' '.join(self.process.args[2:])} exited: {self.process.wait()}")
        return json.loads(line)

    def one_turn(self):
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        return self.read()

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)


def import_seconds(module, environment=None):
    """How long ``import module`` takes in a new process, torch already imported there."""
    command = [sys.executable, str(Path(__file__).resolve()), "--import-time", module]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=subprocess_environment(environment))
    if result.returncode:
        raise RuntimeError(f"benchmarks/run.py --import-time {module} failed:\n{result.stderr[-3000:]}")
    return round(float(result.stdout), 3)


def measure_backends(settings, quick):
    """CPU eager, the C++ twin, the minimal Python backend and backend_pkg on the same rows, and the
    twin's build and first-import times."""
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
    processes = {backend: TurnProcess(["--backend", backend], quick) for backend in BACKEND_MODULES}
    try:
        for backend, process in processes.items():
            import_times[backend], numbers[backend] = process.started["import_seconds"], process.numbers
        samples = {backend: {case: [] for case in numbers["cpu"]} for backend in BACKENDS}
        for _ in range(settings.rounds):
            for backend in BACKENDS:
                turn = (one_turn(local[backend], numbers[backend], settings.repeat) if backend in local
                        else processes[backend].one_turn())
                for case, per_call_us in turn.items():
                    samples[backend][case].extend(per_call_us)
    finally:
        for process in processes.values():
            process.close()
    timings = {case: {backend: timing_row(samples[backend][case], numbers[backend][case]) for backend in BACKENDS}
               for case in numbers["cpu"]}
    build = {"cold": cold_build, "cached": import_times["cpp_twin"]}
    return timings, {"twin_build_seconds": build, "first_import_seconds": import_times}


def load_guard_in_cpp():
    """Build ``device_guard_in_cpp.cpp`` (once; cached under ``_build/``) and load it: its guard
    takes PrivateUse1's slot, so ``import backend_pkg`` after it leaves npy's Python guard out."""
    GUARD_BUILD_DIRECTORY.mkdir(parents=True, exist_ok=True)
    torch.utils.cpp_extension.load(name="npy_device_guard_in_cpp", sources=[str(GUARD_SOURCE)],
                                   build_directory=str(GUARD_BUILD_DIRECTORY), extra_cflags=["-O2"])


def inductor_steps():
    """The ``mlp`` group's training step compiled by default (Inductor), and its beginnings
    (:data:`GUARD_CASES`), on npy and on CPU: "case variant" -> Timer."""
    works = {f"{device}_inductor": mlp_works(device, backend="inductor") for device in (backend_pkg.DEVICE_NAME, "cpu")}
    return {f"{case} {variant}": as_timer(steps[case]) for case in GUARD_CASES for variant, steps in works.items()}


def serve_guard_in_cpp_turns(settings):
    """The ``--guard-in-cpp`` process (:func:`load_guard_in_cpp` ran before ``import backend_pkg``):
    time turns of :func:`inductor_steps`, once a step shows that npy's Python guard is never called."""
    steps = inductor_steps()
    for step in steps.values():
        step.timeit(1)  # compiles
    if backend_pkg.runtime.guard_calls():
        raise RuntimeError("npy's Python device guard answered: the C++ guard did not take PrivateUse1's slot")
    serve_turns(steps, settings)


def guard_calls_per_call(steps):
    """How many times npy's Python guard answers during one call of each npy case of ``steps``."""
    calls = {}
    for case in GUARD_CASES:
        before = backend_pkg.runtime.guard_calls()
        steps[f"{case} npy_inductor"].timeit(1)
        calls[case] = backend_pkg.runtime.guard_calls() - before
    return calls


def measure_guard(settings, quick):
    """The Inductor training step and its beginnings in this process and in a ``--guard-in-cpp`` one,
    taking turns; and the guard's calls in each case here.

    Each process times npy against CPU, so each ratio's two rows share a
    process and a turn; the processes' turns alternate, so a quiet or busy
    spell of the machine falls on both guards alike.
    """
    if quick:
        rows = {case: {row: unavailable_row(QUICK_SKIPS_INDUCTOR) for row in INDUCTOR_VARIANTS} for case in GUARD_CASES}
        return rows, dict.fromkeys(GUARD_CASES)
    local = inductor_steps()
    numbers = calibrate(local, settings)
    calls = guard_calls_per_call(local)
    process = TurnProcess(["--guard-in-cpp"], quick)
    numbers.update({name + GUARD_IN_CPP: number for name, number in process.numbers.items()})
    samples = {name: [] for name in numbers}
    try:
        for _ in range(settings.rounds):
            for turn, suffix in ((one_turn(local, numbers, settings.repeat), ""), (process.one_turn(), GUARD_IN_CPP)):
                for name, per_call_us in turn.items():
                    samples[name + suffix].extend(per_call_us)
    finally:
        process.close()
    rows = {case: {row: timing_row(samples[f"{case} {row}"], numbers[f"{case} {row}"]) for row in INDUCTOR_VARIANTS}
            for case in GUARD_CASES}
    return rows, calls


class BasicBlock(torch.nn.Module):
    """ResNet's basic block, with the identity shortcut."""

    def __init__(self, channels):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(channels)
        self.conv2 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(channels)

    def forward(self, x):
        return F.relu(self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))) + x)


def resnet_block_step(device):
    """Forward and backward of a fresh basic block on ``device``, the input's gradient included."""
    torch.manual_seed(0)
    block = BasicBlock(RESNET_BLOCK_INPUT[1]).to(device)
    x = torch.randn(RESNET_BLOCK_INPUT).to(device).requires_grad_()

    def step():
        block(x).sum().backward()
        block.zero_grad()
        x.grad = None

    return step


def large_mlp_forward(device, backend=None):
    """The forward of a compute-bound MLP on ``device`` (compiled with ``backend``, if given)."""
    torch.manual_seed(0)
    inner, hidden, outer = LARGE_MLP_FEATURES
    model = torch.nn.Sequential(torch.nn.Linear(inner, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, outer))
    model = model.to(device)
    x = torch.randn(LARGE_MLP_BATCH, inner, generator=torch.Generator().manual_seed(0)).to(device)
    run = model if backend is None else torch.compile(model, backend=backend)

    def forward():
        with torch.no_grad():
            return run(x)

    return forward


def measure_models(settings, quick):
    works = {device: as_timer(resnet_block_step(device)) for device in ("npy", "cpu")}
    large = {"cpu_eager": as_timer(large_mlp_forward("cpu"))}
    if not quick:
        large["npy_inductor"] = as_timer(large_mlp_forward(backend_pkg.DEVICE_NAME, backend="inductor"))
        large["cpu_inductor"] = as_timer(large_mlp_forward("cpu", backend="inductor"))
    large_rows = measure(large, settings if quick else LARGE_MLP_SETTINGS)
    return {
        "resnet_block": measure(works, settings),
        "large_mlp_forward": {
            variant: large_rows.get(variant) or unavailable_row(QUICK_SKIPS_INDUCTOR) for variant in LARGE_MLP_VARIANTS
        },
    }


def load_zoo():
    """``tests/zoo.py``, the model zoo the tests train on npy and on CPU."""
    spec = importlib.util.spec_from_file_location("zoo", ZOO)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def zoo_step(recipe, device, backend=None):
    """One training step of ``recipe`` on its first batch, on ``device``; compiled by ``backend``
    (``torch.compile(recipe.step, backend=...)``) if given."""
    torch.manual_seed(0)
    model = recipe.build().to(device)
    optimizers = recipe.optimizers(model)
    batch = next(iter(recipe.batches(device)))
    batch = tuple(value.to(device) if isinstance(value, torch.Tensor) else value for value in batch)
    step = recipe.step if backend is None else torch.compile(recipe.step, backend=backend)

    def train_step():
        step(model, optimizers, batch)

    return train_step


def compiled_zoo_step(recipe, device):
    """The step compiled by default and run once (it compiles), or None and why not."""
    work = zoo_step(recipe, device, backend="inductor")
    try:
        work()
    except Exception as error:  # noqa: BLE001  (a step that does not compile yet is a row's reason)
        message = " ".join(f"{type(error).__name__}: {error}".split())
        return None, f"torch.compile of the step failed on {device}: {message[:MESSAGE_LIMIT]}"
    return work, None


def convolution_step(case, device):
    """Forward and backward of one of :data:`ZOO_CONVOLUTIONS` on ``device``, the input's gradient included."""
    make_layer, shape = ZOO_CONVOLUTIONS[case]
    torch.manual_seed(0)
    layer = make_layer().to(device)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(device).requires_grad_()

    def step():
        layer(x).sum().backward()
        layer.zero_grad()
        x.grad = None

    return step


class OpCounter(TorchDispatchMode):
    """Counts the aten ops that reach it: every op after autograd, the backward's included."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


def aten_ops_per_step(recipe, device):
    """How many aten ops one training step of ``recipe`` runs on ``device`` (after a first step, which
    makes the optimizer's state)."""
    step = zoo_step(recipe, device)
    step()
    with OpCounter() as counter:
        step()
    return counter.calls


def zoo_width(recipe):
    """The width the recipe's model is built with (its ``width`` argument), or None if it has none."""
    build = recipe.build
    if isinstance(build, functools.partial):
        return build.keywords["width"]
    parameter = inspect.signature(build).parameters.get("width")
    return None if parameter is None else parameter.default


def zoo_cases():
    """Each family at its zoo size, and the families of :data:`ZOO_WIDTHS` at their larger widths:
    case -> (family, recipe, whether it is timed compiled too)."""
    cases = {}
    for family, recipe in load_zoo().RECIPES.items():
        cases[family] = (family, recipe, True)
        for width in ZOO_WIDTHS.get(family, ()):
            wider = dataclasses.replace(recipe, build=functools.partial(recipe.build, width=width))
            cases[f"{family}_width{width}"] = (family, wider, False)
    return cases


def zoo_works(recipe, quick):
    """A family's steps by variant, and why each missing variant is missing."""
    works = {"npy_eager": zoo_step(recipe, backend_pkg.DEVICE_NAME), "cpu_eager": zoo_step(recipe, "cpu")}
    reasons = dict.fromkeys(("npy_inductor", "cpu_inductor"), QUICK_SKIPS_INDUCTOR)
    if not quick:
        for variant, device in (("npy_inductor", backend_pkg.DEVICE_NAME), ("cpu_inductor", "cpu")):
            work, reasons[variant] = compiled_zoo_step(recipe, device)
            if work is not None:
                works[variant] = work
    return works, reasons


def eager_zoo_works(recipe):
    return {"npy_eager": zoo_step(recipe, backend_pkg.DEVICE_NAME), "cpu_eager": zoo_step(recipe, "cpu")}, {}


def measure_zoo(settings, quick):
    """case -> variant -> row, eager and compiled steps taking turns; then the convolutions. And
    case -> device -> aten ops per step, for every family and width.

    Every family compiles before any is timed: Inductor's first compile starts its pool of
    compiling processes, whose start would otherwise fall on the first family's timings."""
    cases = zoo_cases()
    with torch._dynamo.config.patch(recompile_limit=ZOO_RECOMPILE_LIMIT):
        works_by_case = {case: zoo_works(recipe, quick) if compiled else eager_zoo_works(recipe)
                         for case, (_, recipe, compiled) in cases.items()}
    results = {}
    for case, (works, reasons) in works_by_case.items():
        rows = measure({variant: as_timer(work) for variant, work in works.items()}, settings)
        variants = ZOO_VARIANTS if cases[case][2] else ZOO_EAGER_VARIANTS
        results[case] = {variant: rows.get(variant) or unavailable_row(reasons[variant]) for variant in variants}
    for case in ZOO_CONVOLUTIONS:
        works = {variant: convolution_step(case, device)
                 for variant, device in (("npy_eager", backend_pkg.DEVICE_NAME), ("cpu_eager", "cpu"))}
        results[case] = measure({variant: as_timer(work) for variant, work in works.items()}, settings)
    devices = {"npy": backend_pkg.DEVICE_NAME, "cpu": "cpu"}
    return results, {case: {name: aten_ops_per_step(recipe, device) for name, device in devices.items()}
                     for case, (_, recipe, _) in cases.items()}


def measure_distributed(settings):
    """The DDP step on npy and on CPU, from rank 0 of two processes; a step is slow enough to time alone."""
    steps_per_turn = settings.repeat
    seconds = distributed_demo.launch(distributed_demo.time_ddp_steps, steps_per_turn, settings.rounds,
                                      timeout=300)[0]
    return {"ddp_step": {device: timing_row([step * 1e6 for step in steps], 1) for device, steps in seconds.items()}}


# Results.

def row_at(timings, path):
    group, case, implementation = path.split(".")
    return timings[group][case][implementation]


def evaluate(ratio, timings):
    numerator = row_at(timings, ratio.numerator)
    denominator = [row_at(timings, path) for path in ratio.denominator]
    result = {"description": ratio.description, "formula": ratio.formula, "target": ratio.target}
    missing = [row["unavailable"] for row in (numerator, *denominator) if row["us"] is None]
    if missing:
        return {**result, "value": None, "status": "unavailable", "reason": missing[0]}
    value = numerator["us"] / sum(row["us"] for row in denominator)
    return {**result, "value": round(value, 3), "status": "PASS" if value <= ratio.target else "FAIL",
            "reason": None}


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def numpy_blas():
    """NumPy's BLAS library, the kernel it chose for this CPU, and its threads (threadpoolctl)."""
    from threadpoolctl import threadpool_info

    for pool in threadpool_info():
        if pool["user_api"] == "blas":
            return f"{pool['internal_api']} {pool.get('architecture', '')}, {pool['num_threads']} threads".strip()
    return "unknown"


def describe_cases():
    def small_or_large(case):
        described = {"expression": case.expression, "shape": list(case.shape), "dtype": "float32"}
        return {**described, "floor_replaces": f"aten::{case.aten}"} if case.aten else described

    return {
        "small": {name: small_or_large(case) for name, case in SMALL.items()},
        "large": {name: small_or_large(case) for name, case in LARGE.items()},
        "mlp": {
            "model": "Linear(32, 64), ReLU, Linear(64, 10), float32",
            "batch": MLP_BATCH,
            "forward": "model(x) under torch.no_grad()",
            "train_step": "cross_entropy(model(x), y).backward(); SGD step; zero_grad()",
            "compiled": 'torch.compile(..., backend="npy") of the model, the loss and the SGD step',
            "dynamo_only": "CPU, compiled with a backend that runs Dynamo's graph as it is",
            "inductor": "torch.compile's default backend, Inductor, of the model, the loss and the SGD step",
        },
        "eager": {
            "mlp_train_step": {
                "model": ", ".join(f"Linear({a}, {b})" for a, b in zip(EAGER_MLP_SIZES, EAGER_MLP_SIZES[1:]))
                + " with ReLU between, float32",
                "batch": EAGER_MLP_BATCH,
                "step": "cross_entropy(model(x), y).backward(); SGD step; zero_grad()",
            },
        },
        "models": {
            "resnet_block": {
                "model": "conv3x3-BN-ReLU-conv3x3-BN, identity shortcut, ReLU; no conv bias; training mode",
                "input": list(RESNET_BLOCK_INPUT),
                "step": "block(x).sum().backward() with x requiring grad; zero_grad()",
            },
            "large_mlp_forward": {
                "model": "Linear({}, {}), ReLU, Linear({}, {}), float32".format(*LARGE_MLP_FEATURES[:2], *LARGE_MLP_FEATURES[1:]),
                "batch": LARGE_MLP_BATCH,
                "npy_inductor": "torch.compile(model) (Inductor) on npy, under torch.no_grad()",
                "cpu_inductor": "torch.compile(model) (Inductor) on CPU, under torch.no_grad()",
                "cpu_eager": "model(x) on CPU under torch.no_grad()",
            },
        },
        "backends": {
            **{name: small_or_large(case) for name, case in BACKEND_CASES.items()},
            "mlp": "the mlp model and batch; train_step: ((model(x) - y) ** 2).mean().backward(); SGD step; zero_grad()",
            "modules": BACKEND_MODULES,
        },
        "guard": {
            "train_step": "the mlp group's train_step compiled by default (Inductor), on npy and on CPU",
            "loss": "the train_step's compiled loss alone: its forward (the result is dropped)",
            "loss_backward": "the train_step without the optimizer's step: loss(x, y).backward(); zero_grad()",
            "guard_in_cpp": "the same in a process that loaded benchmarks/device_guard_in_cpp.cpp before "
                            "backend_pkg: npy's device guard answers type() in C++, as the change to "
                            "torch/csrc/acc/Module.cpp proposed on the Limitations page would",
        },
        "zoo": {
            "families": "the recipes of tests/zoo.py, each on its first batch, float32",
            "npy_eager": "recipe.step(model, optimizers, batch) on npy",
            "cpu_eager": "the same on CPU",
            "npy_inductor": "torch.compile(recipe.step) (Inductor) on npy",
            "cpu_inductor": "torch.compile(recipe.step) (Inductor) on CPU",
            "widths": {case: {"family": family, "width": zoo_width(recipe)}
                       for case, (family, recipe, _) in zoo_cases().items()},
            "wider": "a family at a larger width (its model's width argument): npy_eager and cpu_eager only",
            "aten_ops_per_step": "zoo_aten_ops_per_step: the aten ops one eager step runs on npy and on CPU, counted "
                                 "by a TorchDispatchMode (after autograd, the backward's ops included), after a first "
                                 "step",
            **{case: {"layer": repr(make_layer()), "input": list(shape),
                      "step": "layer(x).sum().backward() with x requiring grad; zero_grad()"}
               for case, (make_layer, shape) in ZOO_CONVOLUTIONS.items()},
        },
        "distributed": {
            "ddp_step": {
                "model": f"Linear({distributed_demo.FEATURES}, {distributed_demo.HIDDEN}), ReLU, "
                         f"Linear({distributed_demo.HIDDEN}, {distributed_demo.HIDDEN}), ReLU, "
                         f"Linear({distributed_demo.HIDDEN}, {distributed_demo.CLASSES}), float32",
                "processes": 2,
                "batch_per_rank": distributed_demo.GLOBAL_BATCH // 2,
                "step": "DDP: cross_entropy(model(x), y).backward() (gradients all-reduced); SGD step; zero_grad()",
                "process_groups": {"npy": "npy_gloo (backend_pkg.distributed)", "cpu": "gloo"},
            },
        },
    }


GROUPS = ("small", "large", "mlp", "guard", "eager", "models", "backends", "zoo", "distributed")


def run(settings, quick, groups=GROUPS, progress=print):
    """Measure ``groups`` (all of :data:`GROUPS` for ``make bench``): the JSON ``make bench`` writes."""
    # Other work on the machine slows every row: the reader of the numbers should know of it.
    load_at_start = round(os.getloadavg()[0], 2)
    start = time.perf_counter()
    model_settings = settings if quick else MODEL_SETTINGS
    timings, cpp_vs_python, guard_calls, zoo_ops = {}, None, None, None
    with warnings.catch_warnings():
        # The CPU fallback warns once per op; which ops fall back is the Op coverage page's story.
        warnings.filterwarnings("ignore", message="npy device")
        if "small" in groups:
            progress("small ops: npy, CPU, NumPy")
            timings["small"] = measure_cases(SMALL, settings)
            progress("small ops: the no-op floor, in a subprocess")
            for name, rows in floor_in_subprocess(quick).items():
                timings["small"][name].update(rows)
        if "large" in groups:
            progress("large ops: npy, CPU, NumPy")
            timings["large"] = measure_cases(LARGE, settings)
        if "mlp" in groups:
            progress("MLP: npy and CPU, eager and compiled")
            timings["mlp"] = measure_mlp(settings, quick)
        if "guard" in groups:
            progress("guard: the Inductor training step, and the same with npy's device guard in C++ (a subprocess)")
            timings["guard"], guard_calls = measure_guard(settings, quick)
        if "eager" in groups:
            progress("eager: issue 14's MLP training step, npy and CPU")
            timings["eager"] = measure_eager(settings)
        if "models" in groups:
            progress("models: a ResNet basic block, npy and CPU; a compute-bound MLP, Inductor on npy and CPU eager")
            timings["models"] = measure_models(model_settings, quick)
        if "backends" in groups:
            progress("C++ vs Python: CPU, the C++ twin, the minimal Python backend, backend_pkg")
            timings["backends"], cpp_vs_python = measure_backends(settings, quick)
        if "zoo" in groups:
            progress("zoo: each model family's training step, eager and compiled, npy and CPU; "
                     "larger widths, eager; two convolutions")
            timings["zoo"], zoo_ops = measure_zoo(settings if quick else ZOO_SETTINGS, quick)
        if "distributed" in groups:
            progress("distributed: a DDP step in two processes, npy and CPU")
            timings["distributed"] = measure_distributed(settings)
    ratios = {name: ratio for name, ratio in RATIOS.items()
              if {path.split(".")[0] for path in (ratio.numerator, *ratio.denominator)} <= timings.keys()}
    return {
        "generated_by": "benchmarks/run.py (make bench); do not edit by hand",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "quick": quick,
        "versions": {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__},
        "machine": {"cpu_count": os.cpu_count(), "cpu_model": cpu_model(), "torch_threads": torch.get_num_threads(),
                    "numpy_blas": numpy_blas(), "load_average_at_start": load_at_start},
        "settings": {**asdict(settings), "outlier_share": OUTLIER_SHARE},
        "model_settings": asdict(model_settings),
        "zoo_settings": asdict(settings if quick else ZOO_SETTINGS),
        "cases": describe_cases(),
        "timings_us": timings,
        "cpp_vs_python": cpp_vs_python,
        "guard_calls_per_call": guard_calls,
        "zoo_aten_ops_per_step": zoo_ops,
        "ratios": {name: evaluate(ratio, timings) for name, ratio in ratios.items()},
        "merged_groups": [],
        "seconds": round(time.perf_counter() - start, 1),
    }


def merged(committed, data):
    """``committed`` (a full run's JSON) with the groups of ``data`` (a run of some groups) in place
    of its own, every ratio evaluated again, and a note of each merged group's date, machine (its load
    included) and versions."""
    timings = {**committed["timings_us"], **data["timings_us"]}
    notes = [note for note in committed.get("merged_groups", []) if note["group"] not in data["timings_us"]]
    notes += [{"group": group, "date": data["date"], "machine": data["machine"], "versions": data["versions"]}
              for group in data["timings_us"]]
    return {**committed, "cases": data["cases"],  # a run of some groups describes every group
            "timings_us": {group: timings[group] for group in GROUPS if group in timings},
            "zoo_settings": data["zoo_settings"], "merged_groups": notes,
            "zoo_aten_ops_per_step": data["zoo_aten_ops_per_step"] if "zoo" in data["timings_us"]
            else committed.get("zoo_aten_ops_per_step"),
            "ratios": {name: evaluate(ratio, timings) for name, ratio in RATIOS.items()}}


def format_us(value):
    return "-" if value is None else f"{value:,.1f}"


def report(data):
    """The timings and the ratio table, as text."""
    lines = []
    for group, cases in data["timings_us"].items():
        implementations = list(dict.fromkeys(name for rows in cases.values() for name in rows))
        settings = data["zoo_settings" if group == "zoo" else "model_settings" if group == "models" else "settings"]
        lines.append(f"\n{group} (µs per call, {settings['rounds'] * settings['repeat']} repeats)")
        widths = [max(12, len(name)) + 2 for name in implementations]
        case_width = max(12, *map(len, cases))
        lines.append(f"  {'':{case_width}}" + "".join(f"{name:>{width}}" for name, width in zip(implementations, widths)))
        for case, rows in cases.items():
            lines.append(f"  {case:{case_width}}" + "".join(
                f"{format_us(rows[name]['us']) if name in rows else '':>{width}}"
                for name, width in zip(implementations, widths)))
    if data["cpp_vs_python"]:
        build, imports = data["cpp_vs_python"]["twin_build_seconds"], data["cpp_vs_python"]["first_import_seconds"]
        lines.append(f"\nC++ twin build: cold {build['cold']} s, cached {build['cached']} s; first import (s): "
                     + ", ".join(f"{name} {seconds}" for name, seconds in imports.items()))
    lines.append(f"\n{'ratio':48}{'value':>8}  {'target':>8}  result")
    for ratio in data["ratios"].values():
        value = "-" if ratio["value"] is None else f"{ratio['value']:.2f}"
        lines.append(f"{ratio['description']:48}{value:>8}  {'<= ' + str(ratio['target']):>8}  {ratio['status']}")
    for ratio in data["ratios"].values():
        if ratio["reason"]:
            lines.append(f"  {ratio['description']}: {ratio['reason']}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=OUTPUT, help="where to write the JSON (default: %(default)s)")
    parser.add_argument("--quick", action="store_true", help="tiny iteration counts: checks the script, not the speed")
    parser.add_argument("--groups", nargs="+", choices=GROUPS, default=GROUPS,
                        help="measure only these groups (then pass --output: the committed JSON holds every group)")
    parser.add_argument("--merge", action="store_true",
                        help=f"with --groups: measure them and put them in place of their rows in {OUTPUT.name}, "
                             "which keeps the others (its merged_groups notes when, on what machine, under what load)")
    parser.add_argument("--merge-from", type=Path, metavar="JSON",
                        help=f"put the groups of JSON (written by a --groups run, not --quick) in place of theirs in "
                             f"{OUTPUT.name}, then exit")
    parser.add_argument("--floor", action="store_true",
                        help="internal: time the small ops over no-op kernels, print the rows as JSON")
    parser.add_argument("--backend", choices=BACKEND_MODULES,
                        help="internal: import this minimal backend, then time one turn of the C++ vs Python rows per line of input")
    parser.add_argument("--guard-in-cpp", action="store_true",
                        help="internal: load device_guard_in_cpp.cpp, import backend_pkg, then time one turn of "
                             "the Inductor training step per line of input")
    parser.add_argument("--import-time", metavar="MODULE", help="internal: print how long importing MODULE takes")
    options = parser.parse_args(argv)
    settings = QUICK if options.quick else FULL
    if options.backend:
        serve_backend_turns(BACKEND_MODULES[options.backend], settings)
        return 0
    if options.import_time:
        start = time.perf_counter()
        importlib.import_module(options.import_time)
        print(time.perf_counter() - start)
        return 0
    global backend_pkg, distributed_demo
    if options.guard_in_cpp:
        load_guard_in_cpp()  # before backend_pkg registers its guard
    backend_pkg = importlib.import_module("backend_pkg")
    distributed_demo = importlib.import_module("backend_pkg.distributed_demo")
    if options.floor:
        print(json.dumps(measure_floor(settings)))
        return 0
    if options.guard_in_cpp:
        serve_guard_in_cpp_turns(settings)
        return 0
    if options.quick and options.output.resolve() == OUTPUT:
        parser.error(f"--quick numbers are too rough for {OUTPUT.relative_to(ROOT)}: pass --output")
    if options.merge_from:
        data = json.loads(options.merge_from.read_text())
        if data["quick"]:
            parser.error(f"--quick numbers are too rough for {OUTPUT.relative_to(ROOT)}")
        return write(merged(json.loads(OUTPUT.read_text()), data), OUTPUT)
    if options.merge and (options.quick or options.output.resolve() != OUTPUT):
        parser.error(f"--merge writes full-run numbers into {OUTPUT.relative_to(ROOT)}: no --quick, no --output")
    if set(options.groups) != set(GROUPS) and options.output.resolve() == OUTPUT and not options.merge:
        parser.error(f"{OUTPUT.relative_to(ROOT)} holds every group: pass --output with --groups, or --merge")
    data = run(settings, options.quick, options.groups, progress=lambda text: print(text, file=sys.stderr))
    if options.merge:
        data = merged(json.loads(OUTPUT.read_text()), data)
    return write(data, options.output)


def write(data, output):
    output.write_text(json.dumps(data, indent=1) + "\n")
    print(report(data))
    print(f"\n{data['seconds']} s; wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
