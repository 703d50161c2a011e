"""The site's diagrams, drawn with matplotlib (not a page itself).

Each diagram is data: boxes of text and the arrows between them. A box that
shows a piece of code lists it in ``names``, as a dotted path from an
importable module (``backend_pkg.runtime.NpyHooks.has_primary_context``), and
the constants below hold what a diagram claims of PyTorch (the dispatch keys
of one call, the guard's calls in a backward, the compile backends...);
``tests/docs/test_diagrams.py`` checks both against the code, so a renamed
function or a changed dispatch path fails a test instead of leaving a stale
picture. Nothing here imports torch: conf.py draws the diagrams that serve as
thumbnails (:func:`save_all`) before any page runs.

A page draws one with :func:`draw`; sphinx-gallery's matplotlib scraper puts
the figure on the page, and the first figure of a page is its thumbnail.
"""

from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch, Patch


@dataclass(frozen=True)
class Layer:
    """Who runs a box: its fill colour, and the legend's words for it."""

    fill: str
    legend: str


LAYERS = {
    "python": Layer("#dbe9f6", "Python: the user's code, and PyTorch's"),
    "torch": Layer("#eeeeee", "C++: PyTorch's"),
    "generated": Layer("#e6ddf2", "C++ that Inductor generates"),
    "skipped": Layer("#ffffff", "a key the dispatcher skips for this call"),
    "npy": Layer("#d9f0d3", "backend_pkg, in Python"),
    "numpy": Layer("#fde0c5", "NumPy"),
}
LINE_HEIGHT = 0.19  # inches per line of text at FONT_SIZE
FONT_SIZE = 9
TITLE_ROOM = 0.6  # inches above the highest box
LEGEND_ROOM = 0.65  # inches below the lowest box


@dataclass(frozen=True)
class Box:
    key: str
    text: str
    x: float  # centre, in inches from the left of the figure
    y: float  # centre, in inches from the bottom
    layer: str
    names: tuple = ()  # the code the box shows: dotted paths the tests resolve
    width: float = 3.6

    @property
    def height(self):
        return LINE_HEIGHT * (self.text.count("\n") + 1) + 0.16


@dataclass(frozen=True)
class Arrow:
    start: str
    end: str
    label: str = ""
    dashed: bool = False


@dataclass(frozen=True)
class Diagram:
    name: str  # the file name of its image, without the extension
    title: str
    width: float  # in inches; figure_of fits the height to the boxes
    boxes: tuple
    arrows: tuple = ()


# --- One call's dispatch path --------------------------------------------------------------

# The keys the dispatcher goes through for ``x + y`` on npy tensors that require grad, highest
# first, and what aten::add.Tensor has at each (as torch._C._dispatch_dump_table words it).
ADD_DISPATCH_KEYS = (
    ("AutogradPrivateUse1", "autograd kernel"),
    ("ADInplaceOrView", "fallthrough"),
    ("BackendSelect", "fallthrough"),
    ("PrivateUse1", "kernel"),
)
# On the tensors too, but in the thread's excluded set while autocast is off.
EXCLUDED_KEY = "AutocastPrivateUse1"

_KEY_TEXT = {
    "AutogradPrivateUse1": "autograd kernel (VariableType): records the node\n"
    "AddBackward0, then redispatches below autograd",
    "ADInplaceOrView": "fallthrough: skipped (this key works for views\nand in-place ops only)",
    "BackendSelect": "fallthrough: skipped (this key works for\nfactory functions only)",
    "PrivateUse1": "npy's kernel, a Python function registered with\ntorch.library by install_kernels",
}


def _dispatch_path():
    x, note_x = 2.55, 6.45
    boxes = [
        Box("call", "x + y\nx, y: NpyTensor, requires_grad=True", x, 9.0, "python", ("backend_pkg.tensor.NpyTensor",)),
        Box(
            "binding",
            "Tensor.__add__: the C++ binding parses the\narguments and calls the op aten::add.Tensor",
            x,
            8.2,
            "torch",
            ("torch.Tensor.__add__", "torch.ops.aten.add.Tensor"),
        ),
        Box("keys", "the dispatcher: the keys of x and y, highest first", x, 7.45, "torch", width=4.4),
    ]
    y = 6.6
    for key, kind in ADD_DISPATCH_KEYS:
        layer = "skipped" if kind == "fallthrough" else "npy" if key == "PrivateUse1" else "torch"
        boxes.append(Box(key, f"{key}\n{_KEY_TEXT[key]}", x, y, layer, width=4.4))
        y -= 0.98
    boxes += [
        Box(
            "kernel",
            "the kernel registered for aten::add.Tensor: add_kernel\nbehind with_same_dtype_shortcut: "
            "same dtype, and\nboth NumPy views kept on the tensors (_npy_array)?",
            x,
            2.6,
            "npy",
            ("backend_pkg.ops._same_dtype.with_same_dtype_shortcut", "backend_pkg.ops.arithmetic.add_kernel"),
            width=4.6,
        ),
        Box("shortcut", "yes (x + y here):\nnp.add on the two arrays", 1.55, 1.2, "numpy", ("numpy.add",), width=2.6),
        Box(
            "general",
            "no: add_kernel, PyTorch's checks (result_type,\nalpha), unwrap: the arrays, then "
            "arithmetic.add:\nnp.add in the promoted dtype",
            5.3,
            1.2,
            "numpy",
            (
                "backend_pkg.ops.arithmetic.add_kernel",
                "torch.result_type",
                "backend_pkg.tensor.unwrap",
                "backend_pkg.ops.arithmetic.add",
            ),
            width=4.0,
        ),
        Box(
            "wrap",
            "wrap: the result array becomes a new NpyTensor\n(autograd gives it grad_fn=AddBackward0)",
            x + 0.6,
            -0.1,
            "npy",
            ("backend_pkg.tensor.wrap",),
            width=4.4,
        ),
        Box(
            "excluded",
            f"{EXCLUDED_KEY}: on the tensors too,\nexcluded while autocast is off",
            note_x,
            7.45,
            "skipped",
            width=3.0,
        ),
        Box(
            "registry",
            "install_kernels: one torch.library.Library\n"
            "impl per op, from the table KERNELS\n(ops without a kernel: the CPU fallback)",
            note_x,
            3.66,
            "npy",
            ("backend_pkg.backend.install_kernels", "backend_pkg.ops.registry.KERNELS", "torch.library.Library"),
            width=3.0,
        ),
    ]
    chain = ["call", "binding", "keys", *(key for key, _ in ADD_DISPATCH_KEYS), "kernel"]
    arrows = [Arrow(a, b) for a, b in zip(chain, chain[1:])]
    arrows += [
        Arrow("kernel", "shortcut"),
        Arrow("kernel", "general"),
        Arrow("shortcut", "wrap"),
        Arrow("general", "wrap"),
        Arrow("keys", "excluded", dashed=True),
        Arrow("registry", "PrivateUse1", dashed=True),
    ]
    return Diagram(
        "dispatch_path",
        "One call, x + y on npy: from Python through the dispatcher into NumPy",
        8.2,
        tuple(boxes),
        tuple(arrows),
    )


# --- Tensor, storage and memory --------------------------------------------------------------

# The two tensors drawn: the code that makes each, and the sizes, strides and storage offset
# PyTorch gives it. The storage they share holds six float32, 24 bytes.
MEMORY_TENSORS = (
    ("x", 'torch.arange(6.).to("npy")', (6,), (1,), 0),
    ("v", "x[2:].view(2, 2)", (2, 2), (2, 1), 2),
)
MEMORY_STORAGE_BYTES = 24
FLOAT32_BYTES = 4


def _memory():
    (x_name, x_code, *x_metadata), (v_name, v_code, *v_metadata) = MEMORY_TENSORS
    left, right, middle = 1.9, 6.3, 4.1
    boxes = (
        Box(
            "x", f"{x_name} = {x_code}\nan NpyTensor", left, 6.2, "python", ("backend_pkg.tensor.NpyTensor",), width=3.3
        ),
        Box("v", f"{v_name} = {v_code}\nan NpyTensor, a view of {x_name}", right, 6.2, "python", width=3.3),
        Box(
            "x_impl",
            f"its TensorImpl (C++)\n{_metadata(*x_metadata)}\nfloat32, device npy:0",
            left,
            5.0,
            "torch",
            width=3.3,
        ),
        Box(
            "v_impl",
            f"its TensorImpl (C++)\n{_metadata(*v_metadata)}\nfloat32, device npy:0",
            right,
            5.0,
            "torch",
            width=3.3,
        ),
        Box(
            "storage",
            f"one StorageImpl (C++), shared: {MEMORY_STORAGE_BYTES} bytes,\n"
            "data_ptr = the root array's address\nits Python object: an NpyStorage, with _npy_root",
            middle,
            3.55,
            "npy",
            ("backend_pkg.storage.NpyStorage",),
            width=4.2,
        ),
        Box(
            "root",
            f"the root array: a NumPy ndarray of {MEMORY_STORAGE_BYTES // FLOAT32_BYTES} float32\n"
            "that owns the bytes (storage_root)",
            middle,
            2.3,
            "numpy",
            ("backend_pkg.memory.storage_root", "numpy.ndarray"),
            width=4.2,
        ),
        Box(
            "x_view",
            f"{x_name}._npy_array, the NumPy view unwrap\nreturns: here the root array itself",
            left,
            1.05,
            "numpy",
            ("backend_pkg.tensor.unwrap",),
            width=3.3,
        ),
        Box(
            "v_view",
            f"{v_name}._npy_array, the NumPy view unwrap\nreturns: "
            f"shape {v_metadata[0]}, from byte {v_metadata[2] * FLOAT32_BYTES} of the root",
            right,
            1.05,
            "numpy",
            width=3.3,
        ),
    )
    arrows = (
        Arrow("x", "x_impl"),
        Arrow("v", "v_impl"),
        Arrow("x_impl", "storage", "storage"),
        Arrow("v_impl", "storage", "storage"),
        Arrow("storage", "root", "_npy_root"),
        Arrow("x_view", "root", "is", dashed=True),
        Arrow("v_view", "root", "a view of", dashed=True),
    )
    return Diagram(
        "memory", "Tensor, storage and memory: a view shares its base's storage and root array", 8.2, boxes, arrows
    )


def _metadata(size, stride, storage_offset):
    return f"sizes {size}, strides {stride}, offset {storage_offset}"


# --- What autograd asks of the hooks and the guard ---------------------------------------------

# backend_pkg.runtime.guard_calls() counts the guard's answers: a backward asks this many for each
# gradient a node hands on (a chain of ``y * 2`` has one per node, of ``y * u``, u requiring grad, two).
GUARD_CALLS_PER_GRADIENT = 4
HOOKS_METHODS = ("has_primary_context", "is_built", "is_available")


def _autograd():
    left, middle, right = 2.35, 4.45, 6.55
    boxes = (
        Box(
            "backward",
            "loss.backward()\nNpyTensor.backward turns the engine's\nthreads off for this call "
            "(set_multithreading_enabled)",
            left,
            8.0,
            "npy",
            ("backend_pkg.tensor.NpyTensor.backward", "torch.autograd.set_multithreading_enabled"),
            width=3.9,
        ),
        Box(
            "grad",
            "torch.autograd.grad(loss, w)\ntorch.autograd.backward(loss)\n(threads left on)",
            right,
            8.0,
            "python",
            ("torch.autograd.grad", "torch.autograd.backward"),
            width=3.3,
        ),
        Box(
            "engine",
            "the autograd engine (C++): as each backward starts,\nGraphTask::stash_current_streams asks the hooks",
            middle,
            6.75,
            "torch",
            width=5.4,
        ),
        Box(
            "hooks",
            "NpyHooks.has_primary_context(0): True (no hooks: backward fails)\n"
            "is_built, is_available: the hooks' other answers",
            middle,
            5.6,
            "npy",
            tuple(f"backend_pkg.runtime.NpyHooks.{method}" for method in HOOKS_METHODS),
            width=5.4,
        ),
        Box(
            "caller",
            "the calling thread runs every node\n(MulBackward0, SumBackward0...)",
            left,
            4.3,
            "torch",
            width=3.9,
        ),
        Box(
            "thread",
            "the engine's own thread for device 0\nruns the npy nodes, and takes the GIL\nfor each call into Python",
            right,
            4.3,
            "torch",
            width=3.3,
        ),
        Box(
            "guard",
            f"each node: NpyDeviceGuard.type_ -> PrivateUse1, {GUARD_CALLS_PER_GRADIENT} calls\n"
            f"per gradient it hands on (a chain of y * 2: {GUARD_CALLS_PER_GRADIENT} per\nnode), counted by "
            "guard_calls; then the node's\nops: npy kernels at PrivateUse1",
            2.85,
            2.7,
            "npy",
            ("backend_pkg.runtime.NpyDeviceGuard.type_", "backend_pkg.runtime.guard_calls"),
            width=4.9,
        ),
        Box(
            "exit",
            "at exit, settle_autograd_thread\nwaits until the guard has\nbeen quiet",
            right + 0.4,
            2.7,
            "npy",
            ("backend_pkg.runtime.settle_autograd_thread",),
            width=2.5,
        ),
    )
    arrows = (
        Arrow("backward", "engine"),
        Arrow("grad", "engine"),
        Arrow("engine", "hooks"),
        Arrow("hooks", "caller", "loss.backward()"),
        Arrow("hooks", "thread", "grad, backward"),
        Arrow("caller", "guard"),
        Arrow("thread", "guard"),
        Arrow("thread", "exit", dashed=True),
    )
    return Diagram(
        "autograd", "What backward asks of the hooks and the device guard, and on which thread", 8.6, boxes, arrows
    )


# --- The two compile routes -------------------------------------------------------------------

# The names torch.compile is given for each route: "inductor" is the default.
COMPILE_BACKENDS = ("npy", "inductor")


def _compile_routes():
    left, right = 2.3, 6.4
    boxes = (
        Box("compile", "torch.compile(fn, backend=...)", 4.35, 8.1, "python", ("torch.compile",), width=3.6),
        Box("dynamo", "Dynamo: fn's torch calls as an FX graph", 4.35, 7.35, "python", ("torch._dynamo",), width=3.6),
        Box(
            "npy",
            'backend="npy": the entry point\ntorch_dynamo_backends names npy_backend',
            left,
            6.35,
            "npy",
            ("backend_pkg.compiler.dynamo_backend.npy_backend",),
        ),
        Box(
            "inductor",
            'backend="inductor", the default:\nInductor\'s compile_fx',
            right,
            6.35,
            "python",
            ("torch._inductor.compile_fx.compile_fx",),
        ),
        Box(
            "aot",
            "AOTAutograd (aot_autograd): aten graphs,\nforward and backward, decomposed\nto core ATen (DECOMPOSITIONS)",
            left,
            5.05,
            "python",
            ("torch._dynamo.backends.common.aot_autograd", "backend_pkg.compiler.dynamo_backend.DECOMPOSITIONS"),
        ),
        Box("lowering", "AOTAutograd, then Inductor lowers\nthe aten graphs to loops", right, 5.05, "python"),
        Box(
            "codegen",
            "compile_graph: each graph becomes one\nPython function calling NumPy (LOWERINGS);\n"
            "an op without a lowering runs eagerly",
            left,
            3.6,
            "npy",
            ("backend_pkg.compiler.codegen.compile_graph", "backend_pkg.compiler.lowerings.LOWERINGS"),
        ),
        Box(
            "registered",
            'register_backend_for_device("npy", ...):\n'
            "init_backend_registration reads torch.npy's\nScheduling (NpyScheduling, Inductor's C++)\n"
            "and PythonWrapperCodegen (NpyWrapperCodegen)",
            right,
            3.45,
            "npy",
            (
                "torch._inductor.codegen.common.register_backend_for_device",
                "torch._inductor.codegen.common.init_backend_registration",
                "backend_pkg.compiler.inductor.NpyScheduling",
                "backend_pkg.compiler.inductor.NpyWrapperCodegen",
            ),
            width=3.8,
        ),
        Box("run_numpy", "run: inputs unwrapped once, NumPy from\nop to op, outputs wrapped once", left, 2.05, "numpy"),
        Box(
            "run_cpp",
            "run: C++ kernels on CPU tensors over npy\nmemory (to_host), outputs back as npy\n"
            "tensors over the same memory (to_npy)",
            right,
            1.95,
            "generated",
            ("backend_pkg.compiler.host.to_host", "backend_pkg.compiler.host.to_npy"),
            width=3.8,
        ),
    )
    arrows = (
        Arrow("compile", "dynamo"),
        Arrow("dynamo", "npy"),
        Arrow("dynamo", "inductor"),
        Arrow("npy", "aot"),
        Arrow("aot", "codegen"),
        Arrow("codegen", "run_numpy"),
        Arrow("inductor", "lowering"),
        Arrow("lowering", "registered"),
        Arrow("registered", "run_cpp"),
    )
    return Diagram(
        "compile_routes",
        "The two compile routes: npy's NumPy code, or Inductor's C++ on npy memory",
        8.6,
        boxes,
        arrows,
    )


# --- What the setup registers -------------------------------------------------------------------

# What _setup_privateuseone_for_python_backend calls, in its order, and what each gives npy.
SETUP_STEPS = (
    ("torch.utils.rename_privateuse1_backend", "the PrivateUse1 key's device is named npy"),
    ("torch.utils.generate_methods_for_privateuse1_backend", "Tensor.npy(), Tensor.is_npy, Module.npy()..."),
    ("torch._register_device_module", "torch.npy is backend_pkg.device (device_count...)"),
    ("torch._C._acc.register_python_privateuseone_hook", "NpyHooks(): built, available, ready for backward"),
    ("torch._C._acc.register_python_privateuseone_device_guard", "NpyDeviceGuard(): the device type"),
)


def _setup():
    boxes = [
        Box("import", "import backend_pkg", 4.3, 7.6, "python", ("backend_pkg",), width=3.0),
        Box(
            "register",
            'register_device(): _setup_privateuseone_for_python_backend(\n"npy", backend_module=device, '
            "hook=NpyHooks(), device_guard=NpyDeviceGuard())",
            4.3,
            6.8,
            "npy",
            (
                "backend_pkg.backend.register_device",
                "torch.utils.backend_registration._setup_privateuseone_for_python_backend",
                "backend_pkg.device",
                "backend_pkg.runtime.NpyHooks",
                "backend_pkg.runtime.NpyDeviceGuard",
            ),
            width=6.4,
        ),
    ]
    y = 5.85
    for step, (function, gives) in enumerate(SETUP_STEPS, 1):
        layer = "torch" if function.startswith("torch._C.") else "python"  # torch._C's functions are C++
        boxes.append(
            Box(f"step{step}", f"{step}. {function.rsplit('.', 1)[-1]}\n{gives}", 4.3, y, layer, (function,), width=6.4)
        )
        y -= 0.78
    boxes.append(
        Box(
            "kernels",
            "install_kernels(): npy's kernels with torch.library, the CPU fallback\n"
            "for every other op; distributed.register(): the npy_gloo process group",
            4.3,
            y - 0.05,
            "npy",
            ("backend_pkg.backend.install_kernels", "backend_pkg.distributed.register"),
            width=6.4,
        )
    )
    chain = ["import", "register", *(f"step{step}" for step in range(1, len(SETUP_STEPS) + 1)), "kernels"]
    return Diagram(
        "setup",
        "What import backend_pkg registers: PrivateUse1 becomes the npy device",
        8.6,
        tuple(boxes),
        tuple(Arrow(a, b) for a, b in zip(chain, chain[1:])),
    )


# --- Scaling out ---------------------------------------------------------------------------------

# The process group npy tensors get from init_process_group, by name.
DISTRIBUTED_BACKEND = "npy_gloo"


def _scaling_out():
    left, right = 2.2, 6.4
    boxes = [
        Box(
            "init",
            f'init_process_group("{DISTRIBUTED_BACKEND}"): register() made it npy\'s group;\n'
            "create_process_group makes an NpyProcessGroup in each process",
            4.3,
            7.3,
            "npy",
            (
                "torch.distributed.init_process_group",
                "backend_pkg.distributed.register",
                "backend_pkg.distributed.create_process_group",
            ),
            width=6.8,
        ),
        Box("wire", "gloo to gloo,\nover TCP\n(127.0.0.1 here)", 4.3, 2.2, "torch", width=1.4),
    ]
    for rank, x in ((0, left), (1, right)):
        boxes += [
            Box(
                f"ddp{rank}",
                f"process {rank}: one npy device\nDistributedDataParallel(model on npy)",
                x,
                6.2,
                "python",
                ("torch.nn.parallel.DistributedDataParallel",),
                width=3.4,
            ),
            Box(
                f"backward{rank}",
                "loss.backward(): DDP's reducer\nall-reduces each bucket of gradients",
                x,
                5.2,
                "torch",
                width=3.4,
            ),
            Box(
                f"group{rank}",
                "NpyProcessGroup.allreduce, called\nfrom C++ through pybind's trampoline",
                x,
                4.2,
                "npy",
                ("backend_pkg.distributed.NpyProcessGroup.allreduce",),
                width=3.4,
            ),
            Box(
                f"view{rank}",
                "host_view: a CPU tensor over the\nnpy memory, no copy",
                x,
                3.2,
                "npy",
                ("backend_pkg.tensor.host_view",),
                width=3.4,
            ),
            Box(
                f"gloo{rank}",
                "ProcessGroupGloo: the all-reduce\nwrites into the npy memory",
                x - 0.4 if rank == 0 else x + 0.4,
                2.2,
                "torch",
                ("torch.distributed.ProcessGroupGloo",),
                width=2.6,
            ),
        ]
    arrows = [Arrow("init", "ddp0"), Arrow("init", "ddp1"), Arrow("gloo0", "wire"), Arrow("gloo1", "wire")]
    for rank in (0, 1):
        chain = [f"{step}{rank}" for step in ("ddp", "backward", "group", "view", "gloo")]
        arrows += [Arrow(a, b) for a, b in zip(chain, chain[1:])]
    return Diagram(
        "scaling_out",
        "Scaling out: DDP in two processes, gloo on host views of npy memory",
        8.6,
        tuple(boxes),
        tuple(arrows),
    )


DIAGRAMS = {
    diagram.name: diagram
    for diagram in (_dispatch_path(), _memory(), _autograd(), _compile_routes(), _setup(), _scaling_out())
}


def figure_of(diagram):
    """The matplotlib figure of ``diagram``: its title, boxes, arrows and legend, in inches.

    The figure is as tall as its boxes, with room for the title above them and the legend below.
    """
    width = diagram.width
    top = max(box.y + box.height / 2 for box in diagram.boxes) + TITLE_ROOM
    bottom = min(box.y - box.height / 2 for box in diagram.boxes) - LEGEND_ROOM
    figure = plt.figure(figsize=(width, top - bottom))
    axes = figure.add_axes((0, 0, 1, 1))
    axes.set_xlim(0, width)
    axes.set_ylim(bottom, top)
    axes.axis("off")
    # A figure title, not text on the axes: sphinx-gallery makes it the image's alt text.
    figure.suptitle(
        diagram.title, y=1 - TITLE_ROOM / 2 / (top - bottom), va="center", fontsize=FONT_SIZE + 2, fontweight="bold"
    )
    patches = {box.key: _draw_box(axes, box) for box in diagram.boxes}
    for arrow in diagram.arrows:
        _draw_arrow(axes, arrow, patches)
    layers = dict.fromkeys(box.layer for box in diagram.boxes)
    handles = [Patch(facecolor=LAYERS[layer].fill, edgecolor="#555555", label=LAYERS[layer].legend) for layer in layers]
    axes.legend(
        handles=handles,
        loc="lower center",
        ncol=min(3, len(handles)),
        fontsize=FONT_SIZE - 1,
        frameon=False,
        bbox_to_anchor=(0.5, 0.0),
    )
    return figure


def _draw_box(axes, box):
    colour = LAYERS[box.layer].fill
    patch = FancyBboxPatch(
        (box.x - box.width / 2, box.y - box.height / 2),
        box.width,
        box.height,
        boxstyle="round,pad=0.02,rounding_size=0.08",
        facecolor=colour,
        edgecolor="#999999" if box.layer == "skipped" else "#444444",
        linestyle="--" if box.layer == "skipped" else "-",
        linewidth=1,
    )
    axes.add_patch(patch)
    axes.text(
        box.x,
        box.y,
        box.text,
        ha="center",
        va="center",
        fontsize=FONT_SIZE,
        linespacing=1.25,
        color="#666666" if box.layer == "skipped" else "black",
    )
    return patch


def _draw_arrow(axes, arrow, patches):
    start, end = patches[arrow.start], patches[arrow.end]
    # patchA and patchB clip the line to the boxes' edges.
    axes.annotate(
        "",
        xy=_centre(end),
        xytext=_centre(start),
        arrowprops={
            "arrowstyle": "-|>",
            "color": "#333333",
            "linewidth": 1.1,
            "shrinkA": 1,
            "shrinkB": 1,
            "patchA": start,
            "patchB": end,
            "linestyle": "--" if arrow.dashed else "-",
        },
    )
    if arrow.label:
        (x0, y0), (x1, y1) = _centre(start), _centre(end)
        axes.text(
            (x0 + x1) / 2,
            (y0 + y1) / 2,
            arrow.label,
            ha="center",
            va="center",
            fontsize=FONT_SIZE - 1,
            style="italic",
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 1},
        )


def _centre(patch):
    return patch.get_x() + patch.get_width() / 2, patch.get_y() + patch.get_height() / 2


def draw(name):
    """Draw the diagram ``name`` for the page that calls this (sphinx-gallery keeps the figure)."""
    figure_of(DIAGRAMS[name])


def save_all(directory):
    """Write every diagram to ``directory`` as ``<name>.png``, redrawing only those older than this file.

    conf.py calls this before the gallery runs: pages without a figure of
    their own take one of these as their thumbnail.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    source_time = Path(__file__).stat().st_mtime
    for name, diagram in DIAGRAMS.items():
        image = directory / f"{name}.png"
        if not image.exists() or image.stat().st_mtime < source_time:
            figure = figure_of(diagram)
            figure.savefig(image, dpi=100)
            plt.close(figure)
