"""What the npy tensor's Python object model costs: the shipped design against prototypes of others.

``.venv/bin/python benchmarks/object_model.py`` writes ``source/object_model.json``,
which the tensor-subclass page prints. Each design is this checkout's
``backend_pkg`` with a few edits (:data:`DESIGNS`, none for the shipped one),
copied to a temporary directory and imported from there by a process of its
own. Every process builds the same works and times one turn of each when
asked; the parent asks the designs in turn, round after round, so a drift in
the machine's speed reaches all of them alike. Each process also reports
which of the refusals that PyTorch's object rules cause it lifts
(:data:`REFUSALS`).

``--trees NAME=DIRECTORY ...`` times other checkouts' ``backend_pkg`` the same
way (the first is the reference of the ratios) and prints the table without
writing the file: old against new in one run.

The prototypes are enough to time, not to ship: they change only what their
design changes, and leave the rest of the package as it is.
"""

import argparse
import datetime
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# After the design's tree (PYTHONPATH), so that its backend_pkg is the one imported: benchmarks.* is this checkout's.
sys.path.append(str(ROOT))

from benchmarks.timing import Settings, TurnProcess, as_timer, serve_turns  # noqa: E402

OUTPUT = ROOT / "source" / "object_model.json"
SHIPPED = "subclass, views on the object"

# Design -> file of backend_pkg -> (text, replacement) pairs, each text found exactly once.
DESIGNS = {
    SHIPPED: {},
    "subclass, views per storage": {
        "tensor.py": [
            (
                "    tensor.__class__ = NpyTensor\n    tensor._npy_array = array\n    return tensor",
                "    tensor.__class__ = NpyTensor\n    _views_of(tensor)[_view_key(tensor)] = array\n    return tensor",
            ),
            (
                '    array = getattr(tensor, "_npy_array", None)\n'
                "    return array if array is not None else _view_of_storage(tensor)",
                "    return _view_of_storage(tensor)",
            ),
            (
                "    if type(tensor) is NpyTensor:\n        tensor._npy_array = array\n    return array",
                "    _views_of(tensor)[_view_key(tensor)] = array\n    return array\n\n\n"
                "def _views_of(tensor):\n"
                "    return _npy_storage(tensor).__dict__.setdefault('_npy_views', {})\n\n\n"
                "def _view_key(tensor):\n"
                "    return tensor.dtype, tuple(tensor.shape), tensor.stride(), tensor.storage_offset()",
            ),
            (
                "    array = _array_over(\n        _root_of(tensor),",
                "    array = _views_of(tensor).get(_view_key(tensor))\n"
                "    if array is not None:\n        return array\n"
                "    array = _array_over(\n        _root_of(tensor),",
            ),
        ],
    },
    "plain torch.Tensor, views on the object": {
        "tensor.py": [
            (
                "    tensor.__class__ = NpyTensor\n    tensor._npy_array = array\n    return tensor",
                "    tensor._npy_array = array\n    return tensor",
            ),
            ("    if type(tensor) is NpyTensor:\n        tensor._npy_array = array", "    tensor._npy_array = array"),
        ],
        "compiler/host.py": [("    if type(tensor) is NpyTensor:  # PyTorch", "    if True:  # PyTorch")],
        "parameters.py": [("if moving and type(tensor) in _CLASSES_NPY_REPLACES:", "if False:")],
    },
}

# What each refusal runs; "lifted" when it returns.
REFUSALS = {
    "nn.Parameter(npy tensor)": "torch.nn.Parameter(torch.ones(2, device='npy'))",
    "Tensor._make_subclass": "torch.Tensor._make_subclass(torch.nn.Parameter, torch.ones(2, device='npy'))",
    "as_subclass": "torch.ones(2, device='npy').as_subclass(torch.nn.Parameter)",
    "nn.LazyLinear(3, device='npy')": "torch.nn.LazyLinear(3, device='npy')",
    "UninitializedParameter(device='npy')": "torch.nn.UninitializedParameter(device='npy')",
    "tied weights after Module.to('npy')": "tied_after_move()",
    "first compiled call detaching a computed input": "first_call_detaching('inductor')",
    "aot_eager": "first_call_detaching('aot_eager')",
}
CASES = ("small add", "eager MLP step", 'compiled MLP step (backend="npy")', "compiled MLP step (Inductor)")
# Short turns, many rounds: the machine is shared, and a turn's fastest repeat is the one least disturbed.
SETTINGS = Settings(rounds=15, repeat=5, seconds=0.005, warmup=5)


def tied_after_move():
    import torch

    embed, head = torch.nn.Embedding(5, 3), torch.nn.Linear(3, 5, bias=False)
    head.weight = embed.weight
    model = torch.nn.Sequential(embed, head).to("npy")
    if model[1].weight is not model[0].weight:
        raise RuntimeError("the tie came apart")


def first_call_detaching(backend):
    import torch

    def loss_of_detached(x, w):
        return (x.detach() * w).sum()

    w = torch.ones(3, device="npy", requires_grad=True)
    torch.compile(loss_of_detached, backend=backend)(w * 2, w)


RUNNERS = {runner.__name__: runner for runner in (tied_after_move, first_call_detaching)}


def works():
    """The timed callables, built as ``make bench`` builds them (its groups, benchmarks/groups/)."""
    from benchmarks.groups.eager import eager_train_step
    from benchmarks.groups.mlp import mlp_works
    from benchmarks.shared import cpu_operands

    a, b = (tensor.to("npy") for tensor in cpu_operands((4,)))
    return {
        CASES[0]: lambda: a + b,
        CASES[1]: eager_train_step("npy"),
        CASES[2]: mlp_works("npy", backend="npy")["train_step"],
        CASES[3]: mlp_works("npy", backend="inductor")["train_step"],
    }


def refusals_lifted():
    import torch

    lifted = {}
    for name, expression in REFUSALS.items():
        try:
            eval(expression, {"torch": torch, **RUNNERS})  # noqa: S307 (our own table)
            lifted[name] = True
        except Exception:  # noqa: BLE001 (any refusal counts as one)
            lifted[name] = False
    return lifted


def serve():
    """A design's process: report the refusals lifted and the calls per repeat, then time a turn per line."""
    import torch

    import backend_pkg

    torch.set_num_threads(1)  # Inductor's CPU code would otherwise take both cores from the other process
    timers = {name: as_timer(work) for name, work in works().items()}
    serve_turns(timers, SETTINGS, backend_pkg=backend_pkg.__file__, refusals_lifted=refusals_lifted())


def design_tree(edits, directory):
    """A copy of this checkout's backend_pkg in ``directory`` with ``edits`` made."""
    package = Path(directory) / "backend_pkg"
    shutil.copytree(ROOT / "backend_pkg", package, ignore=shutil.ignore_patterns("__pycache__"))
    for name, replacements in edits.items():
        path = package / name
        text = path.read_text()
        for old, new in replacements:
            if text.count(old) != 1:
                raise RuntimeError(f"{name}: the prototype's edit no longer applies: {old[:60]!r}")
            text = text.replace(old, new)
        path.write_text(text)
    return directory


def design_process(name, tree):
    """A process of this script (``--serve``) that imports ``tree``'s backend_pkg and times a turn when asked."""
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    process = TurnProcess(name, [sys.executable, __file__, "--serve"], environment, cwd=tree)
    if not process.started["backend_pkg"].startswith(str(tree)):
        process.close()
        raise RuntimeError(f"{name}: imported {process.started['backend_pkg']}, not the tree's")
    return process


def measure(trees):
    """name -> tree, the first the reference: per design, each case's µs (the median over turns of
    a turn's fastest repeat), its median ratio to the reference's turn by turn, and the refusals it lifts."""
    designs = [design_process(name, tree) for name, tree in trees.items()]
    samples = {design.name: {case: [] for case in CASES} for design in designs}
    ratios = {design.name: {case: [] for case in CASES} for design in designs}
    try:
        for _ in range(SETTINGS.rounds):
            turns = {design.name: design.one_turn() for design in designs}
            reference = turns[designs[0].name]
            for name, turn in turns.items():
                for case in CASES:
                    samples[name][case].append(min(turn[case]))
                    ratios[name][case].append(min(turn[case]) / min(reference[case]))
    finally:
        for design in designs:
            design.close()
    return {
        design.name: {
            "us": {case: round(statistics.median(samples[design.name][case]), 2) for case in CASES},
            "ratio": {case: round(statistics.median(ratios[design.name][case]), 3) for case in CASES},
            "refusals_lifted": design.started["refusals_lifted"],
        }
        for design in designs
    }


def report(results):
    for name, row in results.items():
        print(name)
        for case in CASES:
            print(f"  {case:38} {row['us'][case]:10.2f} us  x{row['ratio'][case]:.3f}")
        print("  lifts:", ", ".join(refusal for refusal, lifted in row["refusals_lifted"].items() if lifted) or "none")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", nargs="+", metavar="NAME=DIRECTORY", help="time these checkouts' backend_pkg")
    parser.add_argument("--serve", action="store_true", help="internal: a design's process")
    options = parser.parse_args()
    if options.serve:
        serve()
        return
    if options.trees:
        report(measure(dict(tree.split("=", 1) for tree in options.trees)))
        return
    started = {
        "measured": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "load_average": round(os.getloadavg()[0], 2),
    }
    with tempfile.TemporaryDirectory() as scratch:
        trees = {
            name: design_tree(edits, Path(scratch) / str(index)) for index, (name, edits) in enumerate(DESIGNS.items())
        }
        results = measure(trees)
    report(results)
    recorded = {**started, "rounds": SETTINGS.rounds, "repeat": SETTINGS.repeat, "designs": results}
    OUTPUT.write_text(json.dumps(recorded, indent=1) + "\n")


if __name__ == "__main__":
    main()
