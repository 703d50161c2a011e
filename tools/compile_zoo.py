"""The model zoo under the default ``torch.compile`` (Inductor), on npy against CPU.

For each recipe of ``tests/zoo.py`` and each way a user compiles (the model,
the whole step, the model in eval under ``no_grad``, the optimizer's step...),
the same run is made on npy and on CPU from the same weights and batches, and
the losses (or outputs) and final weights are compared with the zoo's
tolerance. Each line printed is one case: ``PASS``, or ``FAIL`` and why.
A CPU failure as well as npy's is PyTorch's, not the backend's.

    PYTHONPATH=$PWD:$PWD/tests python tools/compile_zoo.py [recipe ...] [--ways model,step,...] [--cpu-eager]

This is a survey, slow (each compile costs seconds to a minute); the tests
keep the findings (``tests/compile/test_compile.py``).
"""

import argparse
import os
import sys
import time
import traceback

os.environ.setdefault("BACKEND_PKG_STRICT", "1")  # no CPU fallback in the eager parts, as the zoo's test

import torch  # noqa: E402
import zoo  # noqa: E402
from torch.utils._pytree import tree_map  # noqa: E402

import backend_pkg  # noqa: E402, F401

TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}
STEPS = 3


def to_device(batch, device):
    return tree_map(lambda value: value.to(device) if isinstance(value, torch.Tensor) else value, batch)


def built(recipe, device):
    torch.manual_seed(0)
    model = recipe.build().to(device)
    return model, recipe.optimizers(model)


def batches(recipe, device):
    return [to_device(batch, device) for _, batch in zip(range(STEPS), recipe.batches(device))]


def weights(model):
    return {name: value.detach().cpu() for name, value in model.state_dict().items()}


def networks(model):
    """The modules a step calls: the model, or DCGAN's two networks (it has no forward of its own)."""
    return [model.generator, model.discriminator] if isinstance(model, zoo.DCGAN) else [model]


def trained(recipe, device, step_of, compile_model=False, **compile_options):
    """Losses of STEPS steps and the final weights; ``step_of(optimizers)`` gives the step function.
    With ``compile_model``, the model is compiled in place (``Module.compile``), its names unchanged."""
    model, optimizers = built(recipe, device)
    if compile_model:
        for network in networks(model):
            network.compile(**compile_options)
    step = step_of(optimizers)
    losses = torch.stack([step(model, optimizers, batch).detach().cpu() for batch in batches(recipe, device)])
    return losses, weights(model)


def forward_calls(name, model, batch):
    """The model's inference calls on one batch (DCGAN has two networks and no forward of its own)."""
    if name == "dcgan":
        real, noise = batch
        return [(model.generator, (noise,)), (model.discriminator, (real,))]
    if name == "gru_classifier":
        sequences, lengths, _ = batch
        return [(model, (sequences, lengths.cpu()))]
    return [(model, (batch[0],))]


def inference(name, recipe, device, **options):
    model, _ = built(recipe, device)
    model.eval()
    outputs = []
    compiled = {}
    with torch.no_grad():
        for batch in batches(recipe, device):
            for module, args in forward_calls(name, model, batch):
                module = compiled.setdefault(id(module), torch.compile(module, **options))
                outputs.append(tree_map(lambda t: t.cpu() if isinstance(t, torch.Tensor) else t, module(*args)))
    return outputs, weights(model)


def eager_step(recipe):
    return lambda optimizers: recipe.step


def compiled_step(recipe, **options):
    return lambda optimizers: torch.compile(recipe.step, **options)


def with_compiled_optimizers(recipe):
    """The eager step, each optimizer's ``step`` compiled (as PyTorch's compiled-optimizer tutorial does)."""

    def step_of(optimizers):
        for optimizer in optimizers:
            optimizer.step = torch.compile(optimizer.step)
        return recipe.step

    return step_of


def with_scheduler(recipe, compile_step):
    """The step and an LR scheduler's step, compiled together or not."""

    def step_of(optimizers):
        schedulers = [torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5) for optimizer in optimizers]

        def step(model, optimizers, batch):
            loss = recipe.step(model, optimizers, batch)
            for scheduler in schedulers:
                scheduler.step()
            return loss

        return torch.compile(step) if compile_step else step

    return step_of


def optimizer_recipe(recipe, optimizer_class, **options):
    """``recipe`` with another optimizer (LeNet with Adam, AdamW, momentum SGD)."""
    return zoo.Recipe(
        build=recipe.build,
        batches=recipe.batches,
        step=recipe.step,
        optimizers=lambda model: [optimizer_class(model.parameters(), **options)],
    )


# Each way: (its recipes or None for all, a function of (name, recipe, device) -> (losses or outputs, weights)).
WAYS = {
    "model": lambda name, recipe, device: trained(recipe, device, eager_step(recipe), compile_model=True),
    "step": lambda name, recipe, device: trained(recipe, device, compiled_step(recipe)),
    "inference": lambda name, recipe, device: inference(name, recipe, device),
    "model-dynamic": lambda name, recipe, device: trained(recipe, device, eager_step(recipe), True, dynamic=True),
    "model-reduce-overhead": lambda name, recipe, device: trained(
        recipe, device, eager_step(recipe), True, mode="reduce-overhead"
    ),
    "inference-dynamic": lambda name, recipe, device: inference(name, recipe, device, dynamic=True),
    "optimizer": lambda name, recipe, device: trained(recipe, device, with_compiled_optimizers(recipe)),
    "step-scheduler": lambda name, recipe, device: trained(recipe, device, with_scheduler(recipe, True)),
}

OPTIMIZERS = {
    "adam": (torch.optim.Adam, {"lr": 1e-3}),
    "adamw": (torch.optim.AdamW, {"lr": 1e-3, "weight_decay": 0.01}),
    "sgd-momentum": (torch.optim.SGD, {"lr": 0.05, "momentum": 0.9, "nesterov": True}),
}


def compare(run, name, recipe, cpu_eager=False):
    """One case on npy and on CPU (compiled the same way, or eager): 'PASS', or 'FAIL' and why."""
    results = {}
    for device in ("npy", "cpu"):
        torch._dynamo.reset()
        started = time.perf_counter()
        try:
            with torch._dynamo.config.patch(disable=cpu_eager and device == "cpu"):
                results[device] = run(name, recipe, torch.device(device))
        except Exception as error:  # a survey: every failure is recorded, none stops it
            where = traceback.extract_tb(error.__traceback__)[-1]
            message = str(error).splitlines()[0][:300]
            return f"FAIL on {device}: {type(error).__name__}: {message} ({where.filename}:{where.lineno})"
        finally:
            print(f"    {device}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    try:
        (npy_outputs, npy_weights), (cpu_outputs, cpu_weights) = results["npy"], results["cpu"]
        torch.testing.assert_close(npy_outputs, cpu_outputs, **TOLERANCE)
        for key in cpu_weights:
            torch.testing.assert_close(npy_weights[key], cpu_weights[key], **TOLERANCE, msg=lambda m: f"{key}: {m}")
    except AssertionError as mismatch:
        return "FAIL mismatch: " + " ".join(str(mismatch).split())[:400]
    return "PASS"


def cases(names, ways):
    for way in ways:
        if way.startswith("optimizer-"):
            optimizer_class, options = OPTIMIZERS[way.removeprefix("optimizer-")]
            yield way, "lenet", optimizer_recipe(zoo.LENET, optimizer_class, **options), WAYS["optimizer"]
            continue
        for name in names:
            yield way, name, zoo.RECIPES[name], WAYS[way]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipes", nargs="*", default=list(zoo.RECIPES))
    parser.add_argument("--ways", default="model,step,inference")
    parser.add_argument("--cpu-eager", action="store_true", help="compare with eager CPU (compiled CPU otherwise)")
    arguments = parser.parse_args()
    for way, name, recipe, run in cases(arguments.recipes, arguments.ways.split(",")):
        print(f"{name:28} {way:22} {compare(run, name, recipe, arguments.cpu_eager)}", flush=True)


if __name__ == "__main__":
    main()
