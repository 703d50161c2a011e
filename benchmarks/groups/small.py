"""``small``: one op on tiny float32 tensors, written as users write it (``a + b``), on ``npy``, on CPU
eager, on plain NumPy arrays, and at the *floor*.

The floor is the cost of the dispatcher plus a Python kernel with an empty body. It is measured in a
subprocess (``--floor``) that imports ``backend_pkg`` as usual, then replaces the PrivateUse1 kernel of
exactly the aten overload each small op reaches (``aten::add.Tensor``, ``aten::mul.Tensor``,
``aten::mm``) with a Python function returning its first input, and times the same expression. It then
replaces them again with kernels that return a new npy tensor over memory made beforehand
(``floor_with_result``): what any kernel pays to hand PyTorch a result, before it computes anything.
A subprocess, because the replaced kernels must never serve the other rows.
"""

import json
import subprocess
import warnings

import torch

import backend_pkg
from benchmarks.shared import Case, cpu_operands, describe_case, script_command
from benchmarks.timing import as_timer, measure

TITLE = "small ops: npy, CPU, NumPy, and the no-op floor in a subprocess"
OWN_SETTINGS = None
SMALL = {
    "add": Case("a + b", (4,), "add.Tensor"),
    "mul": Case("a * b", (4,), "mul.Tensor"),
    "matmul": Case("a @ b", (4, 4), "mm"),
}
# The same CPU operands, as each implementation holds them.
OPERANDS = {
    "npy": lambda tensor: tensor.to(backend_pkg.DEVICE_NAME),
    "cpu": lambda tensor: tensor,
    "numpy": lambda tensor: tensor.numpy(),
}


def operand_bindings(case, implementation):
    a, b = cpu_operands(case.shape)
    convert = OPERANDS[implementation]
    return {"a": convert(a), "b": convert(b)}


def measure_cases(cases, settings):
    """Each case on every implementation of :data:`OPERANDS`: case -> implementation -> row."""
    return {
        name: measure(
            {
                implementation: as_timer(case.expression, operand_bindings(case, implementation))
                for implementation in OPERANDS
            },
            settings,
        )
        for name, case in cases.items()
    }


def return_first_input(*args, **kwargs):
    """The no-op kernel: no NumPy, no new tensor."""
    return args[0]


def return_a_new_tensor(array):
    """A kernel that only makes its result: an npy tensor over ``array``, as every kernel does."""

    def kernel(*args, **kwargs):
        return backend_pkg.wrap(array)

    return kernel


def replace_npy_kernels(overloads, kernel):
    """Make ``kernel`` the PrivateUse1 kernel of each aten overload, for this process.

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
    only in a subprocess (``run.py --floor``).
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
    result = subprocess.run(script_command("--floor", quick=quick), capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"measuring the floor failed:\n{result.stderr}")
    return json.loads(result.stdout)


def measure_group(settings, quick):
    timings = measure_cases(SMALL, settings)
    for name, rows in floor_in_subprocess(quick).items():
        timings[name].update(rows)
    return timings, {}


def describe():
    return {name: describe_case(case) for name, case in SMALL.items()}
