"""``zoo``: one training step of each family of the model zoo (``tests/zoo.py``: LeNet, a ResNet with batch norm,
a 2-layer LSTM language model, a bidirectional GRU over packed sequences, a TransformerEncoder language model,
DCGAN's two steps), on one batch, eager on ``npy`` and on CPU, and the same step compiled by the default
``torch.compile`` (``torch.compile(recipe.step)``) and by ``torch.compile(recipe.step, mode="reduce-overhead")``
on each; a step that cannot compile is a row's reason. That mode only turns on ``triton.cudagraphs``
(``list_mode_options`` in torch/_inductor/__init__.py), and Inductor skips CUDA graphs for a graph with no CUDA
device (``check_lowering_disable_cudagraph`` in torch/_inductor/cudagraph_utils.py, counted as
``cudagraph_skips``); on CPU and npy the setting still changes the compile, as graph partitions are on by default:
the scheduler reorders nodes for fewer partitions (``Scheduler._init``, ``reorder_for_reducing_graph_partitions``),
which changes some fusions, and the graph's ``call`` leaves its input size and stride asserts to the partitions
(``is_using_cudagraph_partition`` in torch/_inductor/codegen/wrapper.py), of which a CPU or npy node gets none. The
families whose width is a setting (hidden size, channels) run again, eager only, at the larger widths of
:data:`ZOO_WIDTHS` (``lstm_language_model_width96``...): how the ratio falls as each op has more to do. The
families of :data:`ZOO_FOREACH` run again on npy, eager, with their optimizers' ``foreach`` set
(``npy_eager_foreach``): the "what if" of PyTorch's optimizers taking npy parameters on their foreach path by
default, as the limits page on parameters proposes. The families of :data:`ZOO_GRAD_TRACED` run again on npy,
compiled by default, while Dynamo reads a tensor subclass's ``grad`` as a tensor's (``npy_inductor_grad_traced``,
under :func:`dynamo_reads_subclass_grad`): the "what if" of the upstream change the compiling page proposes, for
steps that call ``clip_grad_norm_``. ``zoo_aten_ops_per_step`` counts the aten ops one step of
each family and width runs on npy and on CPU (a ``torch.utils._python_dispatch.TorchDispatchMode`` sees each
op after autograd, the backward's included): a step's CPU time divided by CPU's count is the work per op.
Beside them a depthwise and a 3d convolution, forward and backward, eager on both. Each case (a family at one
width, a convolution) is timed in a process of its own, where its rows take turns (:func:`measure_group`), and
whose malloc keeps the memory it frees (:data:`MALLOC_KEEPS_FREED_MEMORY`). The steps take milliseconds:
:data:`OWN_SETTINGS`.
"""

import dataclasses
import functools
import importlib.util
import inspect
from unittest import mock

import torch
import torch._dynamo.variables.torch_function as dynamo_torch_function
from torch.utils._python_dispatch import TorchDispatchMode

import backend_pkg
from benchmarks.shared import QUICK_SKIPS_INDUCTOR, ROOT, error_reason, run_turn_process
from benchmarks.timing import Settings, as_timer, serve_turns, timing_row, unavailable_row

TITLE = (
    "zoo: each model family's training step, eager and compiled, npy and CPU; larger widths, eager; two convolutions"
)
# Five repeats a turn, as a CPU step right after npy's NumPy work shares the cores with NumPy's
# still-spinning BLAS threads for its first repeats (see benchmarks/timing.py).
OWN_SETTINGS = Settings(rounds=4, repeat=5, seconds=0.02, warmup=2)
ZOO = ROOT / "tests" / "zoo.py"
ZOO_EAGER_VARIANTS = ("npy_eager", "cpu_eager")
# The compiled variants: device and ``torch.compile``'s mode.
ZOO_COMPILED_VARIANTS = {
    "npy_inductor": (backend_pkg.DEVICE_NAME, "default"),
    "cpu_inductor": ("cpu", "default"),
    "npy_reduce_overhead": (backend_pkg.DEVICE_NAME, "reduce-overhead"),
    "cpu_reduce_overhead": ("cpu", "reduce-overhead"),
}
ZOO_VARIANTS = (*ZOO_EAGER_VARIANTS, *ZOO_COMPILED_VARIANTS)
# glibc's malloc settings in each case's process (mallopt(3): M_MMAP_THRESHOLD, M_TRIM_THRESHOLD): every block
# under 64 MiB from the heap, and the heap kept when freed. By default glibc maps a block of 128 KiB or more
# anew (a threshold it raises as such blocks are freed) and gives freed memory at the heap's top back to the
# system, both as the process's history has it, so a step's time depended on whether it paged its memory in
# again: CPU's depthwise convolution step, in a process of its own, took 2897 µs with 992 page faults a call
# by default, and 879 µs with none so.
MALLOC_KEEPS_FREED_MEMORY = {"MALLOC_MMAP_THRESHOLD_": str(64 << 20), "MALLOC_TRIM_THRESHOLD_": str(256 << 20)}
# Every family's optimizer steps through one function (``Optimizer.step``'s wrapper in
# torch/optim/optimizer.py), which Dynamo compiles once per optimizer object it meets: past
# ``recompile_limit`` (8) compiles of one function it runs that function eagerly from then on,
# so the later variants' compiled steps would run their optimizer eagerly. A family's process
# compiles its step in each compiled variant, each twice (COMPILING_CALLS), and each optimizer's
# step stays compiled: up to 5 variants of DCGAN's two optimizers, two compiles each.
ZOO_RECOMPILE_LIMIT = 128
# An optimizer's step compiles again on its second call, which finds the state the first one made
# (SGD's momentum buffers, Adam's moments): both calls run while the limit above holds, so that no
# compile is left for the timed calls, under Dynamo's own limit.
COMPILING_CALLS = 2
# The larger widths (the ``width`` argument of the family's model: hidden size or channels) each
# family whose width is a setting is timed at, eager, beside its zoo size. The recurrent and
# attention steps stay small enough at 16x; the convnets' work grows with the square of the width.
ZOO_WIDTHS = {
    "resnet": (64, 128),
    "lstm_language_model": (96, 384),
    "gru_classifier": (64, 256),
    "transformer_language_model": (128, 512),
    "dcgan": (64, 128),
}
# The families timed again on npy with ``foreach=True`` optimizers (FOREACH_VARIANT, beside their
# zoo-size rows): what PyTorch would run by default for npy parameters if
# ``_default_to_fused_or_foreach`` (torch/optim/optimizer.py) accepted their type; it accepts the
# device already (``_get_foreach_kernels_supported_devices`` names the PrivateUse1 backend).
ZOO_FOREACH = ("transformer_language_model",)
FOREACH_VARIANT = "npy_eager_foreach"
# The families timed again on npy compiled by default while Dynamo reads a parameter's ``grad`` as it does on
# CPU (GRAD_TRACED_VARIANT, under dynamo_reads_subclass_grad): their steps call ``clip_grad_norm_``.
ZOO_GRAD_TRACED = ("transformer_language_model",)
GRAD_TRACED_VARIANT = "npy_inductor_grad_traced"
# Forward and backward of one convolution layer, eager: module, input shape.
ZOO_CONVOLUTIONS = {
    "depthwise_conv": (lambda: torch.nn.Conv2d(32, 32, 3, padding=1, groups=32), (8, 32, 32, 32)),
    "conv3d": (lambda: torch.nn.Conv3d(8, 16, 3, padding=1), (4, 8, 16, 16, 16)),
}


def load_zoo():
    """``tests/zoo.py``, the model zoo the tests train on npy and on CPU."""
    spec = importlib.util.spec_from_file_location("zoo", ZOO)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def zoo_step(recipe, device, backend=None, mode=None):
    """One training step of ``recipe`` on its first batch, on ``device``; compiled by ``backend``
    (``torch.compile(recipe.step, backend=..., mode=...)``) if given."""
    torch.manual_seed(0)
    model = recipe.build().to(device)
    optimizers = recipe.optimizers(model)
    batch = next(iter(recipe.batches(device)))
    batch = tuple(value.to(device) if isinstance(value, torch.Tensor) else value for value in batch)
    step = recipe.step if backend is None else torch.compile(recipe.step, backend=backend, mode=mode)

    def train_step():
        step(model, optimizers, batch)

    return train_step


def with_foreach(recipe):
    """``recipe`` with each of its optimizers set to ``foreach=True`` (every param group's ``foreach``,
    which the optimizers' steps read)."""

    def optimizers(model):
        made = recipe.optimizers(model)
        for optimizer in made:
            for group in optimizer.param_groups:
                group["foreach"] = True
        return made

    return dataclasses.replace(recipe, optimizers=optimizers)


def dynamo_reads_subclass_grad():
    """Dynamo reading a tensor subclass's ``grad`` as a tensor's: the upstream change the compiling page
    proposes, as a context manager (``unittest.mock.patch.object``), for the "what if" rows only.

    ``TensorWithTFOverrideVariable.var_getattr`` in torch/_dynamo/variables/torch_function.py refuses every
    name of that module's ``banned_attrs`` (``grad``, ``_grad``, ``_base``) on a tensor subclass, and Dynamo
    models an npy tensor as one (``infer_subclass_type`` in torch/_dynamo/variables/builder.py); within this
    context ``banned_attrs`` lacks ``grad``, so the attribute is read as it is on ``torch.Tensor``. Dynamo reads
    the list when it traces, so the context must hold whenever the row's function may compile or recompile:
    every call of it (:func:`patched_for_each_call`), and no call of another row's function."""
    kept = [name for name in dynamo_torch_function.banned_attrs if name != "grad"]
    return mock.patch.object(dynamo_torch_function, "banned_attrs", kept)


def patched_for_each_call(work, patch):
    """``work`` run inside a fresh ``patch()`` on every call (3 µs a call, against steps of milliseconds)."""

    def patched_work():
        with patch():
            work()

    return patched_work


def compiled_zoo_step(recipe, device, mode="default", patch=None):
    """The step compiled by Inductor in ``mode``, each call inside ``patch()`` if given, and run
    :data:`COMPILING_CALLS` times (it compiles), or None and why not."""
    work = zoo_step(recipe, device, backend="inductor", mode=mode)
    if patch is not None:
        work = patched_for_each_call(work, patch)
    try:
        for _ in range(COMPILING_CALLS):
            work()
    except Exception as error:  # noqa: BLE001  (a step that does not compile yet is a row's reason)
        return None, error_reason(f"torch.compile of the step failed on {device}", error)
    return work, None


def convolution_step(case, device):
    """Forward and backward of one of :data:`ZOO_CONVOLUTIONS` on ``device``, the input's gradient included."""
    make_layer, shape = ZOO_CONVOLUTIONS[case]
    torch.manual_seed(0)
    layer = make_layer().to(device)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(device).requires_grad_()

    def step():
        layer(x).sum().backward()
        layer.zero_grad()
        x.grad = None

    return step


class OpCounter(TorchDispatchMode):
    """Counts the aten ops that reach it: every op after autograd, the backward's included."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


def aten_ops_per_step(recipe, device):
    """How many aten ops one training step of ``recipe`` runs on ``device`` (after a first step, which
    makes the optimizer's state)."""
    step = zoo_step(recipe, device)
    step()
    with OpCounter() as counter:
        step()
    return counter.calls


def aten_ops_per_case(cases):
    """case -> device (``npy``, ``cpu``) -> how many aten ops one training step of the case's recipe runs."""
    devices = {"npy": backend_pkg.DEVICE_NAME, "cpu": "cpu"}
    return {
        case: {name: aten_ops_per_step(recipe, device) for name, device in devices.items()}
        for case, (_, recipe, _) in cases.items()
    }


def zoo_width(recipe):
    """The width the recipe's model is built with (its ``width`` argument), or None if it has none."""
    build = recipe.build
    if isinstance(build, functools.partial):
        return build.keywords["width"]
    parameter = inspect.signature(build).parameters.get("width")
    return None if parameter is None else parameter.default


def zoo_cases():
    """Each family at its zoo size, and the families of :data:`ZOO_WIDTHS` at their larger widths:
    case -> (family, recipe, whether it is timed compiled too)."""
    cases = {}
    for family, recipe in load_zoo().RECIPES.items():
        cases[family] = (family, recipe, True)
        for width in ZOO_WIDTHS.get(family, ()):
            wider = dataclasses.replace(recipe, build=functools.partial(recipe.build, width=width))
            cases[f"{family}_width{width}"] = (family, wider, False)
    return cases


def eager_zoo_works(recipe):
    """A family's eager steps by variant, on npy and on CPU."""
    return {"npy_eager": zoo_step(recipe, backend_pkg.DEVICE_NAME), "cpu_eager": zoo_step(recipe, "cpu")}


def zoo_works(family, recipe, quick):
    """A family's steps by variant, and why each missing variant is missing."""
    works = eager_zoo_works(recipe)
    if family in ZOO_FOREACH:
        works[FOREACH_VARIANT] = zoo_step(with_foreach(recipe), backend_pkg.DEVICE_NAME)
    compiled = {variant: (device, mode, None) for variant, (device, mode) in ZOO_COMPILED_VARIANTS.items()}
    if family in ZOO_GRAD_TRACED:
        compiled[GRAD_TRACED_VARIANT] = (backend_pkg.DEVICE_NAME, "default", dynamo_reads_subclass_grad)
    reasons = dict.fromkeys(compiled, QUICK_SKIPS_INDUCTOR)
    if not quick:
        for variant, (device, mode, patch) in compiled.items():
            work, reasons[variant] = compiled_zoo_step(recipe, device, mode, patch)
            if work is not None:
                works[variant] = work
    return works, reasons


def case_works(case, quick):
    """The steps of one case by variant, and why each of its compiled variants is missing (none for a
    case timed eager only)."""
    if case in ZOO_CONVOLUTIONS:
        devices = (("npy_eager", backend_pkg.DEVICE_NAME), ("cpu_eager", "cpu"))
        return {variant: convolution_step(case, device) for variant, device in devices}, {}
    family, recipe, compiled = zoo_cases()[case]
    if not compiled:
        return eager_zoo_works(recipe), {}
    with torch._dynamo.config.patch(recompile_limit=ZOO_RECOMPILE_LIMIT):
        return zoo_works(family, recipe, quick)


def serve_zoo_turns(cases, settings, quick):
    """The other end of a case's process (``benchmarks/run.py --zoo-cases``): build the steps of
    ``cases`` (compiling the compiled ones), report why any is missing, then time one turn of them
    per line read (:func:`~benchmarks.timing.serve_turns`); a row is named "case variant"."""
    timers, reasons = {}, {}
    for case in cases:
        works, reasons[case] = case_works(case, quick)
        timers.update({f"{case} {variant}": as_timer(work) for variant, work in works.items()})
    serve_turns(timers, settings, reasons=reasons)


def processes_of(cases, quick):
    """Which cases share a process: each its own in a full run, all one in a quick one, whose
    numbers are too rough to be worth a process's start (seconds each)."""
    return [list(cases)] if quick else [[case] for case in cases]


def time_in_process(cases, settings, quick):
    """Rows of ``cases``, timed in a process of their own that takes :attr:`Settings.rounds` turns:
    case -> variant -> row, and case -> variant -> why it is missing."""
    process = run_turn_process(["--zoo-cases", *cases], quick, MALLOC_KEEPS_FREED_MEMORY)
    samples = {name: [] for name in process.started["calls_per_repeat"]}
    try:
        for _ in range(settings.rounds):
            for name, per_call_us in process.one_turn().items():
                samples[name].extend(per_call_us)
    finally:
        process.close()
    rows = {case: {} for case in cases}
    for name, per_call_us in samples.items():
        case, variant = name.split(" ")
        rows[case][variant] = timing_row(per_call_us, process.started["calls_per_repeat"][name])
    return rows, process.started["reasons"]


def measure_group(settings, quick):
    """case -> variant -> row, each case in a process of its own (:func:`processes_of`); and case ->
    device -> aten ops per step, for every family and width.

    A row depends on what its process ran before it: in one process that timed every case in turn, the
    2-layer LSTM's npy eager step took 5828 µs in one run and 3397 µs in the run before, and 3471 to 3519
    µs in processes of its own. Within a process a case's rows take turns, so CPU's step and npy's share
    every slow spell."""
    cases = zoo_cases()
    timings = {}
    for names in processes_of([*cases, *ZOO_CONVOLUTIONS], quick):
        rows, reasons = time_in_process(names, settings, quick)
        for case in names:
            variants = (*ZOO_EAGER_VARIANTS, *reasons[case])  # the compiled variants, for the cases compiled
            timings[case] = {
                variant: rows[case].get(variant) or unavailable_row(reasons[case][variant]) for variant in variants
            }
            if FOREACH_VARIANT in rows[case]:
                timings[case][FOREACH_VARIANT] = rows[case][FOREACH_VARIANT]
    return timings, {"zoo_aten_ops_per_step": aten_ops_per_case(cases)}


def describe():
    return {
        "families": "the recipes of tests/zoo.py, each on its first batch, float32",
        "npy_eager": "recipe.step(model, optimizers, batch) on npy",
        "cpu_eager": "the same on CPU",
        "npy_inductor": "torch.compile(recipe.step) (Inductor) on npy",
        "cpu_inductor": "torch.compile(recipe.step) (Inductor) on CPU",
        "npy_reduce_overhead": 'torch.compile(recipe.step, mode="reduce-overhead") on npy: Inductor skips its CUDA '
        "graphs off CUDA, but reorders nodes for graph partitions and leaves out the input size and stride asserts",
        "cpu_reduce_overhead": 'torch.compile(recipe.step, mode="reduce-overhead") on CPU, likewise',
        GRAD_TRACED_VARIANT: f"npy_inductor, for the families {', '.join(ZOO_GRAD_TRACED)}, compiled and run with "
        "'grad' taken out of banned_attrs (torch/_dynamo/variables/torch_function.py) around each call: what "
        "if Dynamo read a tensor subclass's grad as a tensor's, the upstream change the compiling page proposes",
        FOREACH_VARIANT: "npy_eager with every optimizer's param groups set to foreach=True, for the families "
        f"{', '.join(ZOO_FOREACH)}: what PyTorch would run by default if _default_to_fused_or_foreach "
        "(torch/optim/optimizer.py) accepted an NpyTensor parameter",
        "widths": {
            case: {"family": family, "width": zoo_width(recipe)} for case, (family, recipe, _) in zoo_cases().items()
        },
        "wider": "a family at a larger width (its model's width argument): npy_eager and cpu_eager only",
        "aten_ops_per_step": "zoo_aten_ops_per_step: the aten ops one eager step runs on npy and on CPU, counted "
        "by a TorchDispatchMode (after autograd, the backward's ops included), after a first "
        "step",
        **{
            case: {
                "layer": repr(make_layer()),
                "input": list(shape),
                "step": "layer(x).sum().backward() with x requiring grad; zero_grad()",
            }
            for case, (make_layer, shape) in ZOO_CONVOLUTIONS.items()
        },
    }
