"""``guard``: the ``mlp`` group's Inductor training step on ``npy`` and on CPU, here and in a subprocess
(``--guard-in-cpp``) that loads ``device_guard_in_cpp.cpp`` before ``backend_pkg``: npy's device guard
there answers ``type()`` in C++ instead of through Python, which is what the change to PyTorch's
``PythonDeviceGuard`` proposed on the limits page on autograd's engine would do. The two processes take
turns. Beside the step, its beginnings (``loss``: the compiled loss's forward; ``loss_backward``: that
and its backward and ``zero_grad``), whose differences are the step's phases; ``guard_calls_per_call``
counts npy's Python guard in each.
"""

import backend_pkg
from benchmarks.groups.mlp import mlp_works
from benchmarks.shared import QUICK_SKIPS_INDUCTOR, run_turn_process
from benchmarks.timing import as_timer, calibrate, one_turn, serve_turns, timing_row, unavailable_row

TITLE = "guard: the Inductor training step, and the same with npy's device guard in C++ (a subprocess)"
OWN_SETTINGS = None
# The compiled training step in a process whose npy device guard answers in C++ (``--guard-in-cpp``).
GUARD_IN_CPP = "_guard_in_cpp"
# The step and its beginnings, whose differences are its phases: the loss's forward; then its
# backward and zero_grad; then the optimizer's step.
GUARD_CASES = ("loss", "loss_backward", "train_step")
INDUCTOR_VARIANTS = (
    "npy_inductor",
    "cpu_inductor",
    *(f"{variant}{GUARD_IN_CPP}" for variant in ("npy_inductor", "cpu_inductor")),
)


def inductor_steps():
    """The ``mlp`` group's training step compiled by default (Inductor), and its beginnings
    (:data:`GUARD_CASES`), on npy and on CPU: "case variant" -> Timer."""
    works = {f"{device}_inductor": mlp_works(device, backend="inductor") for device in (backend_pkg.DEVICE_NAME, "cpu")}
    return {f"{case} {variant}": as_timer(steps[case]) for case in GUARD_CASES for variant, steps in works.items()}


def serve_guard_in_cpp_turns(settings):
    """The ``--guard-in-cpp`` process (``load_guard_in_cpp`` ran before ``import backend_pkg``):
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


def measure_group(settings, quick):
    """The Inductor training step and its beginnings in this process and in a ``--guard-in-cpp`` one,
    taking turns; and the guard's calls in each case here.

    Each process times npy against CPU, so each ratio's two rows share a
    process and a turn; the processes' turns alternate, so a quiet or busy
    spell of the machine falls on both guards alike.
    """
    if quick:
        rows = {case: {row: unavailable_row(QUICK_SKIPS_INDUCTOR) for row in INDUCTOR_VARIANTS} for case in GUARD_CASES}
        return rows, {"guard_calls_per_call": dict.fromkeys(GUARD_CASES)}
    local = inductor_steps()
    numbers = calibrate(local, settings)
    calls = guard_calls_per_call(local)
    process = run_turn_process(["--guard-in-cpp"], quick)
    numbers.update({name + GUARD_IN_CPP: number for name, number in process.started["calls_per_repeat"].items()})
    samples = {name: [] for name in numbers}
    try:
        for _ in range(settings.rounds):
            for turn, suffix in ((one_turn(local, numbers, settings.repeat), ""), (process.one_turn(), GUARD_IN_CPP)):
                for name, per_call_us in turn.items():
                    samples[name + suffix].extend(per_call_us)
    finally:
        process.close()
    rows = {
        case: {row: timing_row(samples[f"{case} {row}"], numbers[f"{case} {row}"]) for row in INDUCTOR_VARIANTS}
        for case in GUARD_CASES
    }
    return rows, {"guard_calls_per_call": calls}


def describe():
    return {
        "train_step": "the mlp group's train_step compiled by default (Inductor), on npy and on CPU",
        "loss": "the train_step's compiled loss alone: its forward (the result is dropped)",
        "loss_backward": "the train_step without the optimizer's step: loss(x, y).backward(); zero_grad()",
        "guard_in_cpp": "the same in a process that loaded benchmarks/device_guard_in_cpp.cpp before "
        "backend_pkg: npy's device guard answers type() in C++, as the change to "
        "torch/csrc/acc/Module.cpp proposed on the Limitations page would",
    }
