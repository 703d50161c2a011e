"""What several groups of the benchmarks share: the operands, the small MLP, and how a group starts
another process of ``benchmarks/run.py``.

Nothing here imports ``backend_pkg``: the ``--backend`` processes import it after setting up
another PrivateUse1 backend (a process has one).
"""

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from benchmarks.timing import TurnProcess

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "run.py"
MESSAGE_LIMIT = 400  # characters of an error kept as a row's reason
QUICK_SKIPS_INDUCTOR = "--quick leaves out Inductor, whose compiles take most of a minute"
MLP_BATCH = 64


@dataclass(frozen=True)
class Case:
    expression: str  # timed as written, with ``a`` and ``b`` bound to the operands
    shape: tuple
    aten: str = ""  # the overload the expression reaches on npy: the kernel the floor replaces


def describe_case(case):
    """A case of expressions as the JSON describes it."""
    described = {"expression": case.expression, "shape": list(case.shape), "dtype": "float32"}
    return {**described, "floor_replaces": f"aten::{case.aten}"} if case.aten else described


def cpu_operands(shape):
    generator = torch.Generator().manual_seed(0)
    return torch.randn(shape, generator=generator), torch.randn(shape, generator=generator)


def make_mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))


def error_reason(prefix, error):
    """A row's reason: ``prefix`` and the error on one line, cut at :data:`MESSAGE_LIMIT` characters."""
    message = " ".join(f"{type(error).__name__}: {error}".split())
    return f"{prefix}: {message[:MESSAGE_LIMIT]}"


def subprocess_environment(environment=None):
    # The minimal backends are imported from the checkout: minimal/ is not an installed package.
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **(environment or {})}


def script_command(*options, quick=False):
    """``benchmarks/run.py`` with ``options`` (one of its internal modes), in this interpreter."""
    return [sys.executable, str(SCRIPT), *options, *(["--quick"] if quick else [])]


def run_turn_process(options, quick, environment=None):
    """A process of ``benchmarks/run.py`` that times one turn when asked (``--backend``, ``--guard-in-cpp``,
    ``--zoo-cases``), with ``environment`` added to this one's."""
    return TurnProcess(
        f"benchmarks/run.py {' '.join(options)}",
        script_command(*options, quick=quick),
        subprocess_environment(environment),
        ROOT,
    )
