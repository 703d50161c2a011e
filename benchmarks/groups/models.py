"""``models``: a ResNet basic block (two 3x3 convolutions with batch norm and ReLU, and the identity
shortcut; batch 8, 64 channels, 56x56, float32) forward and backward in training mode, eager on ``npy``
and on CPU. Its calls take tens of milliseconds, so it runs fewer repeats (:data:`OWN_SETTINGS`). And a
compute-bound MLP's forward (512-2048-512, batch 256), compiled by default on ``npy`` and on CPU, and
eager on CPU: its calls take milliseconds and its target asks the two to be even, so it times one call
per repeat, in as many repeats as the other groups' rows (:data:`LARGE_MLP_SETTINGS`).
"""

import torch
import torch.nn.functional as F

import backend_pkg
from benchmarks.shared import QUICK_SKIPS_INDUCTOR
from benchmarks.timing import Settings, as_timer, measure, unavailable_row

TITLE = "models: a ResNet basic block, npy and CPU; a compute-bound MLP, Inductor on npy and CPU eager"
OWN_SETTINGS = Settings(rounds=3, repeat=3, seconds=0.01, warmup=2)
# The compute-bound MLP: a call of a few ms needs no batching for the clock, and the shorter a repeat,
# the likelier a quiet spell of the machine holds all of it. One call per repeat, 150 repeats
# (FULL's count) in 50 turns: about two seconds on a quiet machine. A target of 1.0 asks for more
# than OWN_SETTINGS' nine repeats of two calls: drawn from 300 calls of each row, timed as here
# in quiet spells (ratio 1.04), nine repeats put 90% of runs' ratios between 1.01 and 1.07, 150
# between 1.03 and 1.05.
LARGE_MLP_SETTINGS = Settings(rounds=50, repeat=3, seconds=0.001, warmup=2)
LARGE_MLP_BATCH, LARGE_MLP_FEATURES = 256, (512, 2048, 512)
LARGE_MLP_VARIANTS = ("npy_inductor", "cpu_inductor", "cpu_eager")
RESNET_BLOCK_INPUT = (8, 64, 56, 56)


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


def measure_group(settings, quick):
    works = {device: as_timer(resnet_block_step(device)) for device in (backend_pkg.DEVICE_NAME, "cpu")}
    large = {"cpu_eager": as_timer(large_mlp_forward("cpu"))}
    if not quick:
        large["npy_inductor"] = as_timer(large_mlp_forward(backend_pkg.DEVICE_NAME, backend="inductor"))
        large["cpu_inductor"] = as_timer(large_mlp_forward("cpu", backend="inductor"))
    large_rows = measure(large, settings if quick else LARGE_MLP_SETTINGS)
    timings = {
        "resnet_block": measure(works, settings),
        "large_mlp_forward": {
            variant: large_rows.get(variant) or unavailable_row(QUICK_SKIPS_INDUCTOR) for variant in LARGE_MLP_VARIANTS
        },
    }
    return timings, {}


def describe():
    return {
        "resnet_block": {
            "model": "conv3x3-BN-ReLU-conv3x3-BN, identity shortcut, ReLU; no conv bias; training mode",
            "input": list(RESNET_BLOCK_INPUT),
            "step": "block(x).sum().backward() with x requiring grad; zero_grad()",
        },
        "large_mlp_forward": {
            "model": "Linear({}, {}), ReLU, Linear({}, {}), float32".format(
                *LARGE_MLP_FEATURES[:2], *LARGE_MLP_FEATURES[1:]
            ),
            "batch": LARGE_MLP_BATCH,
            "npy_inductor": "torch.compile(model) (Inductor) on npy, under torch.no_grad()",
            "cpu_inductor": "torch.compile(model) (Inductor) on CPU, under torch.no_grad()",
            "cpu_eager": "model(x) on CPU under torch.no_grad()",
        },
    }
