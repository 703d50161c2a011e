"""
Performance
===========

How fast ``npy`` is, next to PyTorch's CPU eager mode and to plain NumPy:
tiny ops, where the fixed cost of each call shows, large ops, where the
arithmetic does, and a small MLP, eager and compiled. The numbers are not
measured while this page is built: ``make bench`` (``benchmarks/run.py``)
measures them and writes ``source/benchmarks.json``, and this page reads
that file. They describe the machine and the code of the last
``make bench``.
"""

# %%
# The measurements
# ----------------
# Each number is the time of one call in microseconds: the fastest of many
# short repeats (noise only ever adds time), passing over the fastest one in
# twenty, which on a virtual machine can be a trick of the clock. The file
# also records the median of the repeats and the machine it ran on, with
# its load average when the run began: other work on the machine slows
# every row, and rows that use all cores most.

import matplotlib.pyplot as plt

# Reading source/benchmarks.json, printing rows and drawing grouped bars: gallery/deep_dives/_measurements.py.
from _measurements import LABELS, grouped_bars, load_benchmarks, print_rows, speed_bars
from matplotlib.ticker import ScalarFormatter

results = load_benchmarks()
timings = results["timings_us"]
machine, versions = results["machine"], results["versions"]
print(f"measured {results['date']} with torch {versions['torch']} and NumPy {versions['numpy']}")
print(
    f"on {machine['cpu_count']} CPUs ({machine['cpu_model']}), torch using {machine['torch_threads']} threads,"
    f" load average {machine['load_average_at_start']} at the start"
)
print(f"NumPy's BLAS: {machine['numpy_blas']}")

# %%
# Small ops
# ---------
# One op on four float32 elements (``a @ b`` on 4x4), written as users
# write it: ``a + b``. The *no-op floor* is the same expression on ``npy``
# in a separate process where the ``npy`` kernel of that exact aten
# overload (``aten::add.Tensor``, ``aten::mul.Tensor``, ``aten::mm``) was
# replaced with a Python function that returns its first input: the cost of
# the dispatcher and of calling a Python kernel whose body is empty, which
# every op of a Python backend pays. *floor + new result* replaces them
# with kernels that only return a new ``npy`` tensor over memory made
# beforehand: what handing PyTorch a result costs, before any arithmetic.

print_rows(timings, "small")
figure, axes = plt.subplots(figsize=(7, 3.5))
grouped_bars(axes, timings, "small", "µs per call (log scale)")
axes.set_yscale("log")
axes.set_title("One op on tiny tensors")
figure.tight_layout()

# %%
# Where the time of a small op goes
# ---------------------------------
# Split the ``npy`` time into four parts: the floor, which no Python kernel
# avoids; making the result, which no kernel that returns a new tensor
# avoids (a Python object for the tensor and one for its storage, which
# keeps the NumPy memory alive); the NumPy operation on arrays alone, which
# is the arithmetic; and the rest, the kernel's own work around the
# arithmetic: reading its arguments as arrays and checking them.

for case, rows in timings["small"].items():
    floor, numpy, total = rows["floor"]["us"], rows["numpy"]["us"], rows["npy"]["us"]
    result = rows["floor_with_result"]["us"] - floor
    rest = total - floor - result - numpy
    print(
        f"{case:7} npy {total:5.1f} µs = floor {floor:4.1f} + result {result:4.1f} + NumPy {numpy:4.1f}"
        f" + the rest {rest:4.1f}; CPU eager {rows['cpu']['us']:4.1f}"
    )

# %%
# The floor, the result and NumPy's share are what a Python backend cannot
# go below; the rest is what a faster kernel can win back. A CPU eager op
# does its arithmetic in C++ and never enters Python, so it pays neither
# floor nor Python objects.
#
# Large tensors
# -------------
# A 1024x1024 float32 matmul and 1e6-element ``add`` and ``mul``. Here the
# arithmetic takes most of the time and the fixed cost of a call matters
# little. Speed relative to NumPy on the same data (above 1 is faster than
# NumPy):

print_rows(timings, "large")
figure, axes = plt.subplots(figsize=(7, 3.5))
speed_bars(axes, results, "large", ["npy", "cpu"], baseline="numpy")
axes.set_title("Large tensors")
figure.tight_layout()

# %%
# A small MLP
# -----------
# ``Linear(32, 64)``, ``ReLU``, ``Linear(64, 10)`` on a batch of 64 float32
# rows: one forward under ``torch.no_grad()``, and one training step
# (forward, cross-entropy, ``backward()``, an SGD step, ``zero_grad()``).
# *npy compiled* passes the model, the loss function and the optimizer's
# ``step`` to ``torch.compile(..., backend="npy")``, as a training loop
# does; where no such backend could run, the row says why instead of
# showing a number. *Inductor* rows compile the same three with the default
# ``torch.compile``, on npy (Inductor's C++ on npy memory) and on CPU.
# *CPU, Dynamo only* compiles the CPU model with a backend
# that runs the graph Dynamo captured as it is: what ``torch.compile``
# itself costs per call (guards, wrappers) before a backend does anything.

print_rows(timings, "mlp")
for step, rows in timings["mlp"].items():
    for name, row in rows.items():
        if row["unavailable"]:
            print(f"{step}, {LABELS[name]}: {row['unavailable']}")
figure, axes = plt.subplots(figsize=(7, 3.5))
grouped_bars(axes, timings, "mlp", "µs per call (log scale)")
axes.set_yscale("log")
axes.set_title("A small MLP")
figure.tight_layout()

# %%
# Where an eager training step's time goes
# ----------------------------------------
# Unlike the numbers above, these are measured while this page is built. A
# training step of a slightly deeper MLP (``Linear(32, 64)``, ``ReLU``,
# ``Linear(64, 64)``, ``ReLU``, ``Linear(64, 10)``, batch 16, cross-entropy,
# SGD: the ``eager`` row of ``make bench``), split by
# :func:`benchmarks.profiling.step_parts` (``benchmarks/profiling.py`` in the
# repository, beside the benchmarks) into the time inside the ``npy``
# kernels' Python and the rest: PyTorch's dispatcher and autograd engine,
# the Python of ``torch.nn`` and ``torch.optim``, each crossing from C++
# into a Python kernel and back, and the calls C++ makes into the device
# guard around autograd's work (counted; the guard's answer runs no Python
# code, so a call costs pybind11's work to find and call it). CPU eager runs
# the same step with C++ kernels.

import sys
from pathlib import Path

import torch
import torch.nn.functional as F

import backend_pkg

# The profiler lives beside the benchmarks, in the checkout backend_pkg is installed from, not in the package.
sys.path.insert(0, str(Path(backend_pkg.__file__).resolve().parents[1]))
from benchmarks.profiling import step_parts


def training_phases(device, backward=lambda loss: loss.backward()):
    """Forward with the loss, backward, and the optimizer's step, as a training loop runs them."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)
    ).to(device)
    x, y = torch.randn(16, 32).to(device), torch.randint(0, 10, (16,)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    state = {}
    return {
        "forward": lambda: state.update(loss=F.cross_entropy(model(x), y)),
        "backward": lambda: backward(state["loss"]),
        "optimizer": lambda: (optimizer.step(), optimizer.zero_grad()),
    }


npy_parts, cpu_parts = step_parts(training_phases("npy")), step_parts(training_phases("cpu"))
print(f"{'µs per step':12}{'npy':>8}{'kernels':>9}{'rest':>7}{'CPU eager':>11}")
for phase, parts in npy_parts.items():
    print(
        f"{phase:12}{parts.total_us:8.1f}{parts.kernels_us:9.1f}{parts.rest_us:7.1f}{cpu_parts[phase].total_us:11.1f}"
    )
npy_step = sum(parts.total_us for parts in npy_parts.values())
cpu_step = sum(parts.total_us for parts in cpu_parts.values())
print(f"{'step':12}{npy_step:8.1f}{'':16}{cpu_step:11.1f}  npy / CPU eager {npy_step / cpu_step:.1f}")
calls = sum(sum(parts.kernel_calls.values()) for parts in npy_parts.values())
guard_calls = sum(parts.guard_calls for parts in npy_parts.values())
fallbacks = sum(sum(parts.fallback_calls.values()) for parts in npy_parts.values())
print(f"{calls} npy kernel calls, {guard_calls} guard calls, {fallbacks} ops on the CPU fallback per step")

# %%
# The kernels that take longest, over the whole step:

kernel_us, kernel_calls = {}, {}
for parts in npy_parts.values():
    for op, op_us in parts.kernel_us.items():
        kernel_us[op] = kernel_us.get(op, 0) + op_us
        kernel_calls[op] = kernel_calls.get(op, 0) + parts.kernel_calls[op]
for op in sorted(kernel_us, key=kernel_us.get, reverse=True)[:8]:
    per_call = kernel_us[op] / kernel_calls[op]
    print(f"{op:34} {kernel_calls[op]:3} calls {kernel_us[op]:6.1f} µs  ({per_call:.1f} per call)")

# %%
# ``t`` is ``Linear`` transposing its weight forward, and its backward
# transposing gradients and inputs (npy's kernel swaps two sizes and strides;
# without it, PyTorch's composite reaches ``as_strided``), ``detach`` is autograd
# handing each parameter its gradient. The ``rest`` is mostly PyTorch's own
# work, which CPU eager pays too, plus a crossing into Python per kernel call.
#
# Backward runs on the calling thread: ``loss.backward()`` on an npy tensor
# turns the autograd engine's device threads off for that call
# (:meth:`backend_pkg.NpyTensor.backward`). ``torch.autograd.backward`` keeps
# PyTorch's default, a thread of the engine's own for the device, on which
# every npy kernel waits for the GIL:

# Timed as make bench times its rows (benchmarks/timing.py): the two steps take turns, so that a slow
# spell of the machine hits both, and each reports its fastest repeat but one in twenty.
from benchmarks.timing import Settings, as_timer, measure

backward_calls = {
    "loss.backward()": lambda loss: loss.backward(),
    "torch.autograd.backward(loss)": lambda loss: torch.autograd.backward(loss),
}
steps = {}
for name, backward in backward_calls.items():
    phases = training_phases("npy", backward)
    steps[name] = as_timer(lambda phases=phases: [phase() for phase in phases.values()])
for name, row in measure(steps, Settings(rounds=40, repeat=1, seconds=0.001, warmup=1)).items():
    print(f"{name:30} step {row['us']:7.1f} µs")

# %%
# A ResNet block
# --------------
# A real layer's worth of work: ResNet's basic block (two 3x3 convolutions
# with batch norm and ReLU, and the identity shortcut) on a batch of 8
# images of 64 channels, 56x56, forward and backward in training mode, the
# input's gradient included. Here the arithmetic dominates, and a
# convolution's matrix products run in NumPy's BLAS on ``npy`` and in
# oneDNN on CPU.

block = timings["models"]["resnet_block"]
print(f"npy {block['npy']['us'] / 1e3:.1f} ms | CPU eager {block['cpu']['us'] / 1e3:.1f} ms per step")

# %%
# The model zoo: the ratio against the work per op
# ------------------------------------------------
# One training step of each family of the model zoo (``tests/zoo.py``, the
# models the tests train on ``npy`` and on CPU) on one batch, eager on ``npy``
# and on CPU, taking turns in a process of the family's own, whose malloc
# keeps the memory it frees: no step pays to page its memory in again, as
# it would after glibc returned it to the system. The families whose width
# is a setting (hidden size, channels) run again at two larger widths, each
# in its own process too. Each point is one family
# at one width. Across: CPU's step time divided by the number of aten ops
# the step runs on CPU, which ``make bench`` counts once with a
# ``TorchDispatchMode`` (it sees each op after autograd, the backward's
# included): how much work one op does. Up: npy's step time over CPU's.
# The bench counts npy's ops too: the same models do not always run the
# same ops on the two devices.
#
# sphinx_gallery_thumbnail_number = 4

zoo = timings["zoo"]
ops_per_step = results["zoo_aten_ops_per_step"]
zoo_widths = results["cases"]["zoo"]["widths"]
# A group measured again alone (``--groups zoo --merge``) notes its own run.
for note in results["merged_groups"]:
    if note["group"] == "zoo":
        print(
            f"the zoo rows: a run of their own, {note['date']}, load average "
            f"{note['machine']['load_average_at_start']} at its start"
        )
FAMILY_NAMES = {
    "lenet": "LeNet",
    "resnet": "ResNet with batch norm",
    "lstm_language_model": "2-layer LSTM language model",
    "gru_classifier": "bidirectional GRU, packed",
    "transformer_language_model": "Transformer language model",
    "dcgan": "DCGAN",
}
MARKERS = dict(zip(FAMILY_NAMES, "osD^vP"))


def work_per_op_us(case):
    return zoo[case]["cpu_eager"]["us"] / ops_per_step[case]["cpu"]


def eager_ratio(case):
    return zoo[case]["npy_eager"]["us"] / zoo[case]["cpu_eager"]["us"]


def family_cases(family):
    return [case for case, described in zoo_widths.items() if described["family"] == family]


def at_zoo_size(case):
    return case == zoo_widths[case]["family"]


for case, described in zoo_widths.items():
    width = "zoo size" if described["width"] is None else f"width {described['width']}"
    size = f"{width} (zoo)" if at_zoo_size(case) and described["width"] is not None else width
    ops = ops_per_step[case]
    print(
        f"{FAMILY_NAMES[described['family']]:28} {size:16} aten ops: CPU {ops['cpu']:3}, npy {ops['npy']:3} | CPU "
        f"{zoo[case]['cpu_eager']['us'] / 1e3:5.2f} ms, {work_per_op_us(case):5.1f} µs per op | "
        f"npy / CPU {eager_ratio(case):.2f}"
    )

figure, axes = plt.subplots(figsize=(7, 4.2))
for family, name in FAMILY_NAMES.items():
    cases = family_cases(family)
    points = [work_per_op_us(case) for case in cases], [eager_ratio(case) for case in cases]
    axes.plot(*points, marker=MARKERS[family], label=name)
    for case, x, y in zip(cases, *points):
        if zoo_widths[case]["width"] is not None:
            axes.annotate(zoo_widths[case]["width"], (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
axes.axhline(1, color="grey", linewidth=0.8, linestyle=":")
axes.set_xscale("log")
axes.set_yscale("log")
axes.xaxis.set_major_formatter(ScalarFormatter())
axes.yaxis.set_major_formatter(ScalarFormatter())
axes.yaxis.set_minor_formatter(ScalarFormatter())
axes.tick_params(axis="y", which="minor", labelsize=7)
axes.set_xlabel("CPU eager step time per aten op (µs, log scale)")
axes.set_ylabel("npy / CPU eager step time (log scale)")
axes.set_title("Model zoo training steps: the more work per op, the closer npy is to CPU", fontsize=10)
axes.legend(fontsize=7, loc="lower left")
figure.tight_layout()

# %%
# A wider model runs the same ops (the counts above do not change with the
# width), each on more numbers: CPU's time per op grows, while npy's fixed
# cost per op, the dispatcher calling a Python kernel and that kernel's own
# Python, stays put. So the ratio falls as the work per op grows, most
# steeply for the Transformer, whose step is the most ops on npy; a middle width
# can sit level with the zoo's size (one run's noise is a few percent), the
# largest is lower in every family:

for family, name in FAMILY_NAMES.items():
    ratios = " -> ".join(f"{eager_ratio(case):.2f}" for case in family_cases(family))
    print(f"{name:28} npy / CPU eager by width: {ratios}")

# %%
# The families sit highest at the zoo's size, where each op does least. The
# three furthest from CPU there, with the time npy's step takes beyond CPU's
# spread over npy's ops, beside what a small add costs npy beyond CPU:

small_add = timings["small"]["add"]
small_add_extra_us = small_add["npy"]["us"] - small_add["cpu"]["us"]
print(
    f"a small add: npy {small_add['npy']['us']:.1f} µs, CPU {small_add['cpu']['us']:.1f} µs, "
    f"{small_add_extra_us:.1f} µs more on npy"
)
for case in sorted(filter(at_zoo_size, zoo_widths), key=eager_ratio, reverse=True)[:3]:
    extra_us = zoo[case]["npy_eager"]["us"] - zoo[case]["cpu_eager"]["us"]
    ops = ops_per_step[case]
    print(
        f"{FAMILY_NAMES[case]}: npy / CPU {eager_ratio(case):.2f}; npy's step {extra_us / 1e3:.2f} ms longer, "
        f"{extra_us / ops['npy']:.1f} µs per op over its {ops['npy']} ops (CPU runs {ops['cpu']}), "
        f"{extra_us / ops['npy'] / small_add_extra_us:.1f}x a small add's"
    )

# %%
# Each op of these steps costs npy several times what a small add does
# beyond CPU: their ops are not the empty-bodied kind (a convolution's
# im2col and matrix product, a whole LSTM sequence with its backprop
# through time in NumPy), so the dispatcher's floor is only part of it. The
# Transformer's attention is one op per layer on both: on CPU the fused
# ``_scaled_dot_product_flash_attention_for_cpu`` and its backward, on npy
# ``scaled_dot_product_attention`` itself, registered at
# ``AutogradPrivateUse1`` with a NumPy forward and backward
# (``backend_pkg/ops/attention.py``), as ``linear`` is
# (``backend_pkg/ops/linalg.py``), where the composites ran several ops
# each. What npy still runs tensor by tensor is the optimizer's step:
# ``_default_to_fused_or_foreach`` (``torch/optim/optimizer.py``) takes the
# ``foreach`` path only for parameters whose type is exactly ``torch.Tensor``
# or ``Parameter``, and an npy parameter is an ``NpyTensor``
# (:ref:`sphx_glr_auto_examples_limits_03_parameters_and_storages.py` has the
# upstream change; the bench times the Transformer's step with
# ``foreach=True`` set by hand too).
# ``clip_grad_norm_`` asks the same of the gradients (``_has_foreach_support``
# in ``torch/utils/_foreach_utils.py``), and takes its ``_foreach_norm`` path:
# an npy gradient is a plain ``torch.Tensor`` object, PyTorch's C++ ``detach``
# of the computed one (``backend_pkg.tensor.detached``). Its ``_foreach_*``
# ops, and SGD's, have npy kernels that take the whole list in one call
# (``backend_pkg/ops/foreach.py``) where PyTorch's own kernel for a device
# without them dispatches one op per tensor. The GRU runs
# fewer: npy computes the whole
# packed sequence, forward and backward, in one op of its own
# (``backend_pkg/ops/recurrent.py``) where CPU's step runs each time step's
# cell as plain ops, so its point's work per op, counted on CPU, is less
# than npy's ops do.

# %%
# Python against C++
# ------------------
# The same rows on four implementations: CPU eager; the C++ twin of the
# minimal backend, whose kernels call PyTorch's CPU kernels on host memory
# from C++; the minimal Python backend, whose kernels are NumPy calls in
# Python; and ``backend_pkg`` (both minimal backends:
# :ref:`sphx_glr_auto_examples_learn_02_write_your_own_backend.py`). The MLP is the one
# above, trained with a mean-squared-error loss, which all four can run.
# The four take turns as the rows above do, the two minimal backends each
# in a process of its own that waits for its turn.

print_rows(timings, "backends")
figure, axes = plt.subplots(figsize=(8, 3.8))
grouped_bars(axes, timings, "backends", "µs per call (log scale)")
axes.set_yscale("log")
axes.tick_params(axis="x", labelsize=7)
axes.set_title("Python and C++ PrivateUse1 backends, and CPU eager")
figure.tight_layout()

# %%
# What the C++ side costs before the first op: its build (in a new build
# directory, then from ``_build/``), and each backend's first import in a
# new process:

build, first_import = results["cpp_vs_python"]["twin_build_seconds"], results["cpp_vs_python"]["first_import_seconds"]
print(f"C++ twin build: {build['cold']:.1f} s cold, {build['cached']:.2f} s cached")
print("first import:", ", ".join(f"{LABELS[name]} {seconds * 1000:.0f} ms" for name, seconds in first_import.items()))

# %%
# A DDP step
# ----------
# One ``DistributedDataParallel`` training step of a small MLP in two
# processes on this machine (see the Scaling out page): on ``npy`` through
# the ``npy_gloo`` process group, on CPU through gloo. gloo reduces the
# gradients in both; the rest of the step is npy's Python kernels against
# CPU's C++ ones.

ddp_step = timings["distributed"]["ddp_step"]
print(f"npy {ddp_step['npy']['us'] / 1e3:.2f} ms | CPU {ddp_step['cpu']['us'] / 1e3:.2f} ms per step (rank 0)")

# %%
# Targets
# -------
# The goals the backend is measured against (``benchmarks/targets.csv``),
# each a ratio of the times above (lower is faster): a small ``add`` within
# a small factor of CPU eager and of its unavoidable part (floor plus
# NumPy), a large matmul at NumPy's speed, the compiled MLP at or near CPU
# eager, the MLP compiled by default on npy near the same on CPU, a
# compute-bound MLP compiled by default on npy at CPU eager's speed, and the
# eager MLP step, the ResNet block and the DDP step within a few times CPU's
# time; the table gives each target.

print(f"{'':46}{'value':>7}  {'target':>7}  result")
for ratio in results["ratios"].values():
    value = "-" if ratio["value"] is None else f"{ratio['value']:.2f}"
    print(f"{ratio['description']:46}{value:>7}  {'<= ' + str(ratio['target']):>7}  {ratio['status']}")

# %%
# What the misses say
# -------------------
# The small-op targets ask the whole ``npy`` add for less than what the
# floor and making a result cost together, compared here with the target's
# budget:

add = timings["small"]["add"]
unavoidable = add["floor_with_result"]["us"] + add["numpy"]["us"]
cpu_target = results["ratios"]["small_add_npy_vs_cpu"]["target"]
floor_target = results["ratios"]["small_add_npy_vs_floor_plus_numpy"]["target"]
print(
    f"floor + result + NumPy add: {unavoidable:.1f} µs;"
    f" {cpu_target} x CPU eager allows {cpu_target * add['cpu']['us']:.1f} µs,"
    f" {floor_target} x (floor + NumPy) allows"
    f" {floor_target * (add['floor']['us'] + add['numpy']['us']):.1f} µs"
)

# %%
# And a compiled forward cannot be cheaper than ``torch.compile``'s own
# cost per call, which on this model already exceeds CPU eager's whole
# forward:

forward = timings["mlp"]["forward"]
print(
    f"CPU eager forward {forward['cpu_eager']['us']:.1f} µs;"
    f" the same model compiled with a do-nothing backend {forward['cpu_dynamo_only']['us']:.1f} µs"
)

# %%
# The same cost weighs on the compute-bound MLP's target, a forward compiled
# by default on npy at CPU eager's speed. CPU's own compiled forward beside
# npy's, each against CPU eager:

large = timings["models"]["large_mlp_forward"]
for name in ("npy_inductor", "cpu_inductor"):
    print(f"{LABELS[name]}: {large[name]['us'] / large['cpu_eager']['us']:.3f} x CPU eager")

# %%
# In the compiled training step, PyTorch's device guard for Python backends
# asks Python for its device type each time the autograd engine guards a
# node's device and stream (the guard calls counted above, for the eager
# step). The ``guard`` rows time the step once more in a process whose npy
# guard answers in C++, as the change to ``PythonDeviceGuard`` proposed on
# :ref:`sphx_glr_auto_examples_limits_02_autograd_engine.py` would
# (``benchmarks/device_guard_in_cpp.cpp``, loaded
# before ``import backend_pkg``), taking turns with the same step here:

guard = timings["guard"]["train_step"]
for suffix, where in (("", "npy's guard in Python"), ("_guard_in_cpp", "npy's guard in C++")):
    npy_step, cpu_step = guard[f"npy_inductor{suffix}"]["us"], guard[f"cpu_inductor{suffix}"]["us"]
    print(f"{where}: npy {npy_step:.1f} µs, CPU {cpu_step:.1f} µs per step, ratio {npy_step / cpu_step:.2f}")

# %%
# The same run times the step's beginnings beside it: the compiled loss
# alone, then with its backward and ``zero_grad``. Their differences are
# the step's phases; the optimizer's phase is the compiled SGD step. The
# guard's calls are counted in each:

PHASES = {
    "forward": ("loss", None),
    "backward": ("loss_backward", "loss"),
    "optimizer": ("train_step", "loss_backward"),
}


def phase(values, name):
    """A phase's share of ``values`` (case -> number): its case, less the case it begins with."""
    case, before = PHASES[name]
    return values[case] - (values[before] if before else 0)


calls = results["guard_calls_per_call"]
print(
    f"{'µs per step':12}{'guard calls':>12}"
    + "".join(f"{'npy':>8}{'CPU':>8}{'extra':>7}" for _ in range(2))
    + "\n"
    + " " * 24
    + f"{'guard in Python':^23}{'guard in C++':^23}"
)
for name in PHASES:
    line = f"{name:12}{phase(calls, name):12}"
    for suffix in ("", "_guard_in_cpp"):
        npy_us, cpu_us = (
            phase({case: rows[variant + suffix]["us"] for case, rows in timings["guard"].items()}, name)
            for variant in ("npy_inductor", "cpu_inductor")
        )
        line += f"{npy_us:8.1f}{cpu_us:8.1f}{npy_us - cpu_us:7.1f}"
    print(line)

# %%
# Most of the extra time is the backward's, and a guard answering in C++
# leaves most of it there. Around each node of a backward (here the compiled
# backward and one ``AccumulateGrad`` per parameter), the autograd engine
# sets the node's device and stream and restores them
# (``Engine::evaluate_function`` in ``torch/csrc/autograd/engine.cpp``),
# which is where the guard's calls come from: cheap once the guard answers
# in C++. What npy still pays there is Python: the wrapper code's host views
# of its inputs and npy results of its outputs, and each gradient's way into
# ``.grad``, which ``AccumulateGrad`` makes with ``detach``: npy's kernel, in
# Python, where CPU's is C++. npy registers its own so that the result is an
# :class:`~backend_pkg.NpyTensor` keeping the views the optimizer's compiled
# step reads; PyTorch's kernel would hand Python a plain ``torch.Tensor``, as
# C++ hands every tensor it makes on a device other than XLA:

import backend_pkg

try:
    torch._C._register_py_class_for_device("npy", backend_pkg.NpyTensor)
except RuntimeError as error:
    print("RuntimeError:", str(error).splitlines()[0])

# %%
# .. dropdown:: Issue: only XLA can choose the Python class of the tensors C++ makes on its device
#
#    **What fails.** A tensor that PyTorch's C++ code makes on a
#    Python-registered device (a C++ kernel's result such as ``detach``'s,
#    ``.data``, an output saved for backward) reaches Python as a plain
#    ``torch.Tensor``, without what the backend's tensor subclass keeps on its
#    objects. The backend either registers Python kernels for such ops,
#    whose results then have a Python object that ``Tensor._make_subclass``
#    refuses to give another class, or rebuilds what the plain object lacks
#    each time it meets one (npy leaves ``detach`` to PyTorch, so every
#    gradient ``AccumulateGrad`` stores is such an object).
#
#    **Where.** ``torch/csrc/autograd/python_variable.cpp``:
#    ``registerPythonTensorClass`` (``torch._C._register_py_class_for_device``)
#    refuses every device type but ``kXLA``, and ``THPVariable_Wrap`` looks
#    up the registered class only for XLA tensors.
#
#    **Proposed change.** Accept ``PrivateUse1`` in
#    ``registerPythonTensorClass``, requiring a subclass of ``torch.Tensor``,
#    and in ``THPVariable_Wrap`` read the per-device table
#    (``getPythonTensorClass``) for ``PrivateUse1`` tensors as for XLA ones;
#    ``_setup_privateuseone_for_python_backend`` could then take the class
#    as an argument.

# %%
# To measure again, run ``make bench`` and commit the new
# ``source/benchmarks.json``; the next build of this site shows it. The
# run above took:

print(f"{results['seconds'] / 60:.1f} minutes")
