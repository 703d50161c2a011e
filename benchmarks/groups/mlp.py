"""``mlp``: a small MLP, one forward (under ``torch.no_grad()``) and one training step (forward,
cross-entropy, backward, SGD step, zero_grad), eager on ``npy``, compiled with ``backend="npy"`` (the
model, the loss function and the optimizer's step, each passed to ``torch.compile``), eager on CPU, and
on CPU compiled with a backend that runs Dynamo's graph as it is (``cpu_dynamo_only``: what compiling
costs before any backend does anything). Without a registered ``npy`` compile backend, or when it fails
on the MLP, the compiled rows hold no number, only the reason. The *Inductor* rows compile the same
three with the default ``torch.compile``.
"""

import torch
import torch.nn.functional as F

import backend_pkg
from benchmarks.shared import MLP_BATCH, QUICK_SKIPS_INDUCTOR, error_reason, make_mlp
from benchmarks.timing import as_timer, measure, unavailable_row

TITLE = "MLP: npy and CPU, eager and compiled"
OWN_SETTINGS = None
MLP_VARIANTS = ("npy_eager", "npy_compiled", "npy_inductor", "cpu_eager", "cpu_inductor", "cpu_dynamo_only")
MLP_INDUCTOR_VARIANTS = ("npy_inductor", "cpu_inductor")


def keep_graph(graph_module, example_inputs):
    """A ``torch.compile`` backend that runs the captured graph as it is: Dynamo's own cost."""
    return graph_module.forward


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
        return None, error_reason('torch.compile(..., backend="npy") failed', error)
    return works, None


def measure_group(settings, quick):
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
    timings = {}
    for step in ("forward", "train_step"):
        rows = measure({variant: as_timer(works[variant][step]) for variant in works}, settings)
        timings[step] = {
            variant: rows.get(variant)
            or unavailable_row(QUICK_SKIPS_INDUCTOR if variant in MLP_INDUCTOR_VARIANTS else reason)
            for variant in MLP_VARIANTS
        }
    return timings, {}


def describe():
    return {
        "model": "Linear(32, 64), ReLU, Linear(64, 10), float32",
        "batch": MLP_BATCH,
        "forward": "model(x) under torch.no_grad()",
        "train_step": "cross_entropy(model(x), y).backward(); SGD step; zero_grad()",
        "compiled": 'torch.compile(..., backend="npy") of the model, the loss and the SGD step',
        "dynamo_only": "CPU, compiled with a backend that runs Dynamo's graph as it is",
        "inductor": "torch.compile's default backend, Inductor, of the model, the loss and the SGD step",
    }
