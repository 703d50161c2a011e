"""Real models train on npy as they do on CPU, with no op falling back.

Each recipe of :mod:`zoo` runs on CPU and on the device a CUDA program would
pick, ``torch.accelerator.current_accelerator()``: the same initial weights,
the same batches, a whole-model checkpoint saved and loaded (with
``torch.load``'s default ``weights_only=True``) halfway through. The
``strict`` fixture turns any CPU fallback into an error, so every op of
every step runs on an npy kernel.

Tolerance: float32, relative 1e-4 and absolute 1e-5. The npy kernels add up
in other orders than PyTorch's CPU kernels (NumPy's pairwise sums and
OpenBLAS against ATen's vectorized loops and oneDNN), so single ops agree to
a few float32 ulps (``assert_close``'s default, 1.3e-6, holds for one call);
four optimizer steps of momentum SGD or Adam carry those differences through
every weight, and the per-op tests already pin each kernel to the default.
"""

import io
import types

import pytest
import torch
import zoo
from torch.utils._pytree import tree_map

import backend_pkg  # noqa: F401  (makes the npy device, as a real program's import would)

TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def checkpoint_globals(model):
    """What ``torch.load(weights_only=True)`` must be told to trust for a whole ``model``, on any device:
    its module classes, and functions kept as attributes (``TransformerEncoderLayer.activation``)."""
    trusted = set()
    for module in model.modules():
        trusted.add(type(module))
        trusted.update(value for value in vars(module).values() if isinstance(value, types.FunctionType))
    return list(trusted)


def save_and_load(model, optimizers, recipe):
    """A resumed run: the whole model and the optimizers' states, through a checkpoint file."""
    checkpoint = io.BytesIO()
    torch.save({"model": model, "optimizers": [optimizer.state_dict() for optimizer in optimizers]}, checkpoint)
    checkpoint.seek(0)
    with torch.serialization.safe_globals(checkpoint_globals(model)):
        loaded = torch.load(checkpoint)
    model = loaded["model"]
    optimizers = recipe.optimizers(model)
    for optimizer, state in zip(optimizers, loaded["optimizers"]):
        optimizer.load_state_dict(state)
    return model, optimizers


def train(recipe, device):
    """The recipe's losses, step by step, and its final weights and buffers, on CPU."""
    torch.manual_seed(0)
    model = recipe.build().to(device)
    optimizers = recipe.optimizers(model)
    losses = []
    for step, batch in enumerate(recipe.batches(device)):
        if step == recipe.steps // 2:
            model, optimizers = save_and_load(model, optimizers, recipe)
        batch = tree_map(lambda value: value.to(device) if isinstance(value, torch.Tensor) else value, batch)
        losses.append(recipe.step(model, optimizers, batch).detach().cpu())
    state = {name: value.cpu() for name, value in model.state_dict().items()}
    return torch.stack(losses), state, model


@pytest.mark.parametrize("name", zoo.RECIPES)
def test_trains_like_cpu(name, strict):
    recipe = zoo.RECIPES[name]
    device = torch.accelerator.current_accelerator()
    assert device.type == "npy"
    npy_losses, npy_state, npy_model = train(recipe, device)
    cpu_losses, cpu_state, _ = train(recipe, torch.device("cpu"))
    assert len(npy_losses) == recipe.steps
    assert all(parameter.device.type == device.type for parameter in npy_model.parameters())
    torch.testing.assert_close(npy_losses, cpu_losses, **TOLERANCE)
    assert npy_state.keys() == cpu_state.keys()
    for key in cpu_state:
        torch.testing.assert_close(npy_state[key], cpu_state[key], **TOLERANCE, msg=lambda m: f"{key}: {m}")
