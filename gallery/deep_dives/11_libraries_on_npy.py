"""
Libraries on npy
================

Most training code reaches a device through a library: Hugging Face
``transformers`` builds the model and generates text, PyTorch Lightning runs
the loop, ``safetensors`` stores the weights. This page runs each on ``npy``
beside CPU, from the same seeds, and shows what each asks of a backend.
Nothing is downloaded: the models are built from tiny configs with random
weights.
"""

# %%
# Setting up
# ----------
# The Hugging Face libraries look for files on the Hub unless told not to;
# the offline switches make sure nothing is fetched. The CPU fallback is off
# for the whole page (``BACKEND_PKG_STRICT=1``): an op without an npy kernel
# would stop the build instead of quietly running on CPU.

import logging
import os
import tempfile
import warnings

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import matplotlib.pyplot as plt  # noqa: E402
import safetensors.torch  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

import backend_pkg  # noqa: E402

os.environ[backend_pkg.fallback.STRICT_ENV] = "1"
transformers.logging.set_verbosity_error()
print("transformers", transformers.__version__, "| torch", torch.__version__)

# %%
# GPT-2 from a config
# -------------------
# ``GPT2LMHeadModel`` ties its output layer to its token embedding: both
# attributes hold the same ``Parameter`` object, so one tensor gets both
# halves of the gradient. Dropout is off, since each device draws its random
# numbers from its own generator. The model is built in the gallery's
# ``_libraries.py``, which the tests train too:
#
# .. literalinclude:: ../../../gallery/deep_dives/_libraries.py
#    :start-at: VOCAB =
#    :end-at: return transformers.GPT2LMHeadModel(config).to(device)

from _libraries import VOCAB, gpt2  # noqa: E402

models = {device: gpt2(device) for device in ("cpu", "npy")}
for device, model in models.items():
    tied = model.lm_head.weight is model.transformer.wte.weight
    print(f"{device}: lm_head.weight is transformer.wte.weight -> {tied}")
    assert tied

# %%
# Training beside CPU
# -------------------
# The same token batch, three SGD steps on each device: the losses agree to
# float32 rounding, and so do the weights.

ids = torch.randint(0, VOCAB - 1, (2, 8), generator=torch.Generator().manual_seed(1))
optimizers = {device: torch.optim.SGD(model.parameters(), lr=0.5) for device, model in models.items()}
print("step   cpu loss   npy loss")
for step in range(3):
    losses = {}
    for device, model in models.items():
        batch = ids.to(device)
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        optimizers[device].step()
        optimizers[device].zero_grad()
        losses[device] = loss.item()
    print(f"{step:4}   {losses['cpu']:.6f}   {losses['npy']:.6f}")
    assert abs(losses["cpu"] - losses["npy"]) < 1e-5

for (name, on_npy), (_, on_cpu) in zip(models["npy"].named_parameters(), models["cpu"].named_parameters()):
    torch.testing.assert_close(on_npy.detach().cpu(), on_cpu.detach(), rtol=1e-4, atol=1e-5, msg=name)
print("weights after training: equal within float32 rounding")

# %%
# Without the tie, nothing fails
# ------------------------------
# A backend that does not answer the shallow-copy question gets a new
# parameter per module from ``.to()``, so the output layer and the embedding
# each keep a copy of the weight and train on their own half of its
# gradient. Untied by hand here, on npy, the same training leaves CPU's
# losses from the second step, with no error and no warning:


def training_losses(model, device, steps=8):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    batch = ids.to(device)
    losses = []
    for _ in range(steps):
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    return losses


untied = gpt2("npy")
untied.lm_head.weight = torch.nn.Parameter(untied.lm_head.weight.detach().clone())
curves = {
    "CPU": training_losses(gpt2("cpu"), "cpu"),
    "npy, tie kept by .to()": training_losses(gpt2("npy"), "npy"),
    "npy, untied": training_losses(untied, "npy"),
}
figure, axes = plt.subplots(figsize=(6, 3.5))
for (label, losses), style in zip(curves.items(), ("-", "--", ":")):
    axes.plot(range(1, len(losses) + 1), losses, style, marker="o", label=label)
axes.set(xlabel="SGD step", ylabel="loss", title="GPT-2 (tiny config) trained on npy beside CPU")
axes.legend()
figure.tight_layout()
for label, losses in curves.items():
    print(f"{label:24} last loss {losses[-1]:.4f}")

# %%
# Greedy and beam-search generation
# ---------------------------------
# ``generate`` picks each next token with ``argmax`` (greedy) or keeps the
# best ``num_beams`` continuations with ``torch.topk`` (beam search), and
# checks stopping tokens with ``torch.isin``. With the weights trained above,
# both devices write the same tokens.

prompt = ids[:, :4]
for beams in (1, 3):
    written = {}
    for device, model in models.items():
        model.eval()
        written[device] = model.generate(
            prompt.to(device),
            attention_mask=torch.ones_like(prompt).to(device),
            max_new_tokens=6,
            num_beams=beams,
            do_sample=False,
            pad_token_id=0,
        ).cpu()
    print(
        f"num_beams={beams}:",
        written["npy"][:, 4:].tolist(),
        "- same as CPU:",
        torch.equal(written["npy"], written["cpu"]),
    )
    assert torch.equal(written["npy"], written["cpu"])

# %%
# What each library asks of a backend
# -----------------------------------
#
# The shallow-copy rule, for tied weights
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``Module.to`` (``Module._apply``) keeps each ``Parameter`` object, and so
# every tie, only when ``torch._has_compatible_shallow_copy_type(param,
# moved)`` says the moved tensor's data can be put into the old object;
# otherwise it makes a new ``Parameter`` per attribute and the tie comes
# apart. PyTorch's ``torch.__future__.set_swap_module_params_on_conversion``
# swaps the objects' contents instead, whatever the answer.

cpu_weight = torch.nn.Parameter(torch.ones(2))
print(
    "_has_compatible_shallow_copy_type(cpu parameter, npy tensor):",
    torch._has_compatible_shallow_copy_type(cpu_weight, torch.ones(2, device="npy")),
)
print("swap_module_params_on_conversion:", torch.__future__.get_swap_module_params_on_conversion())

# %%
# ``topk`` for beam search
# ~~~~~~~~~~~~~~~~~~~~~~~~
# Under strict mode the generation above could only run because npy
# registers the ops it reaches, ``topk`` among them; nothing fell back.
# Sampling (``do_sample=True``) reaches two more, ``sort`` for top-p
# filtering and ``multinomial`` for the draw, also native; its tokens come
# from npy's own generator, so they differ from CPU's, as on CUDA.

wanted = {"aten::topk", "aten::isin.Tensor_Tensor", "aten::sort.stable", "aten::multinomial"}
print("registered:", sorted(wanted & set(backend_pkg.registered_ops())))
print("CPU fallback calls on this page:", dict(backend_pkg.fallback.calls))

# %%
# safetensors: load on CPU, then ``load_state_dict``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``safetensors.torch.load_file(..., device=...)`` accepts the devices it
# knows and refuses any other, ``npy`` included. Loading to CPU and copying
# into the model on npy with ``load_state_dict`` gives the same bits.

torch.manual_seed(0)
mlp = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "mlp.safetensors")
    safetensors.torch.save_file(mlp.state_dict(), path)
    try:
        safetensors.torch.load_file(path, device="npy")
    except Exception as error:  # noqa: BLE001 - the point is which error safetensors raises
        print(f"load_file(device='npy'): {type(error).__name__}: {error}")
    on_npy = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)).to("npy")
    on_npy.load_state_dict(safetensors.torch.load_file(path, device="cpu"))
same = all(torch.equal(a.cpu(), b) for a, b in zip(on_npy.state_dict().values(), mlp.state_dict().values()))
print("loaded on CPU, load_state_dict into the npy model: bit for bit", same)
assert same

# %%
# A Lightning Trainer on npy
# --------------------------
# ``backend_pkg.lightning`` (imported on its own: ``import backend_pkg`` never
# imports Lightning) registers an accelerator and a single-device strategy,
# both named ``"npy"``. The same LightningModule trains on each device from
# the same initial weights, fitted by the same function (``_libraries.py``
# again):
#
# .. literalinclude:: ../../../gallery/deep_dives/_libraries.py
#    :start-at: class Regression

import lightning  # noqa: E402
from _libraries import lightning_fit  # noqa: E402

import backend_pkg.lightning  # noqa: E402

logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
# Lightning 2.6.6 still calls a torch.utils._pytree spelling that torch 2.13 deprecates.
warnings.filterwarnings("ignore", ".*isinstance.treespec, LeafSpec.*")


def fit(**trainer_arguments):
    trainer, weights = lightning_fit(**trainer_arguments)
    print(f"{trainer_arguments}: trained on {trainer.strategy.root_device}")
    return weights


npy_weights = fit(accelerator="npy", strategy="npy", devices=1)
cpu_weights = fit(accelerator="cpu", devices=1)
for on_npy, on_cpu in zip(npy_weights, cpu_weights):
    torch.testing.assert_close(on_npy, on_cpu)
print("weights after fit: npy matches CPU")

# %%
# Why the strategy is named too
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# With ``strategy="auto"`` (the default), Lightning's connector picks the
# strategy in ``_AcceleratorConnector._choose_strategy``. For one device, this
# is the branch that decides, printed from the installed Lightning:

import inspect  # noqa: E402
import textwrap  # noqa: E402

from lightning.pytorch.trainer.connectors.accelerator_connector import _AcceleratorConnector  # noqa: E402

chooser = inspect.getsource(_AcceleratorConnector._choose_strategy)
branch = chooser[chooser.index("        if len(self._parallel_devices) <= 1:") :]
decision = "return SingleDeviceStrategy(device=device)"
print(f"lightning {lightning.__version__}:\n" + textwrap.dedent(branch[: branch.index(decision) + len(decision)]))

# %%
# Only an accelerator that is an instance of Lightning's CUDA or MPS
# accelerator, or is named ``"cuda"``, ``"gpu"`` or ``"mps"``, gets its own
# device (``_determine_root_gpu_device`` returns the first of
# ``_parallel_devices``); any other accelerator gets ``"cpu"``. Nothing else
# a registered accelerator defines changes that: its name is only compared
# with those three, and ``get_parallel_devices``, whose answer is
# ``_parallel_devices``, is counted there, its first device used only for
# CUDA and MPS. Subclassing ``CUDAAccelerator`` would pass the test, and make
# Lightning treat npy as CUDA wherever else it asks ``isinstance``. So the package keeps the
# ``"npy"`` strategy, and the npy accelerator refuses the CPU device rather
# than train there silently:

from lightning.pytorch.utilities.exceptions import MisconfigurationException  # noqa: E402

try:
    fit(accelerator="npy", devices=1)
except MisconfigurationException as error:
    print("accelerator='npy' alone:", error)

# %%
# .. dropdown:: Upstream: a custom accelerator's own device for one device
#
#    **What happens.** ``Trainer(accelerator=<a registered custom
#    accelerator>, devices=1)`` builds ``SingleDeviceStrategy(device="cpu")``
#    and trains on CPU, whatever ``get_parallel_devices`` returns.
#
#    **Where.** ``_AcceleratorConnector._choose_strategy``
#    (``lightning/pytorch/trainer/connectors/accelerator_connector.py``,
#    printed above), and its twin in ``lightning/fabric/connector.py``.
#
#    **Proposed change.** In the one-device branch, give every accelerator
#    other than CPU the first of its parallel devices,
#    ``SingleDeviceStrategy(device=self._parallel_devices[0])`` unless
#    ``isinstance(self.accelerator, CPUAccelerator)``: for CUDA and MPS that
#    is what ``_determine_root_gpu_device`` returns today, and an accelerator
#    registered for a PyTorch device then needs no strategy of its own.

# %%
# ``accelerator="auto"``
# ~~~~~~~~~~~~~~~~~~~~~~
# Lightning's ``"auto"`` tries XLA, MPS and CUDA, then CPU. It never asks
# ``torch.accelerator``, which does answer ``npy`` in this process:

print("torch.accelerator.current_accelerator():", torch.accelerator.current_accelerator())
auto_weights = fit(accelerator="auto")
