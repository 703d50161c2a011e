"""The diagrams (gallery/_diagrams.py) against the code they draw, and every gallery thumbnail drawn.

A diagram is data: each box lists the code it shows as dotted names, and
module constants hold what it claims of PyTorch. These tests resolve every
name, run the call each diagram follows and compare: the dispatch keys of
``x + y``, the tensors and storage of the memory diagram, the hooks' methods
and the guard's calls per backward node, the threads backward runs on, and
the compile backends and Inductor's registration for npy.
"""

import importlib
import importlib.metadata
import inspect
import re
import sys
import threading
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest
import torch

import backend_pkg
from backend_pkg import runtime
from backend_pkg.memory import storage_root
from backend_pkg.ops import arithmetic, registry
from backend_pkg.ops._same_dtype import with_same_dtype_shortcut
from backend_pkg.tensor import unwrap

ROOT = Path(__file__).resolve().parents[2]
GALLERY = ROOT / "gallery"
sys.path.insert(0, str(GALLERY))
import _diagrams  # noqa: E402

BOXES = [(name, box) for name, diagram in _diagrams.DIAGRAMS.items() for box in diagram.boxes]


def resolve(dotted):
    """The object a dotted name means: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ImportError(dotted)


@pytest.mark.parametrize(("diagram", "box"), BOXES, ids=[f"{name}-{box.key}" for name, box in BOXES])
def test_every_name_drawn_exists_and_is_written_in_its_box(diagram, box):
    for name in box.names:
        resolve(name)  # raises for a name the code no longer has
        last = name.rsplit(".", 1)[-1].strip("_").lower()
        assert last in box.text.lower(), f"{diagram}: {name} is not written in the box {box.key!r}"


def test_every_arrow_joins_two_boxes():
    for diagram in _diagrams.DIAGRAMS.values():
        keys = {box.key for box in diagram.boxes}
        assert len(keys) == len(diagram.boxes), diagram.name
        for arrow in diagram.arrows:
            assert {arrow.start, arrow.end} <= keys, (diagram.name, arrow)


# --- The dispatch path -------------------------------------------------------------------------


def npy_operands():
    return (torch.ones(3, device="npy", requires_grad=True), torch.ones(3, device="npy", requires_grad=True))


def keys_highest_first(key_set):
    keys = []
    while (key := key_set.highestPriorityTypeId()) != torch._C.DispatchKey.Undefined:
        keys.append(key.name)
        key_set = key_set.remove(key)
    return keys


def test_dispatch_keys_drawn_are_those_of_x_plus_y():
    x, y = npy_operands()
    on_tensors = torch._C._dispatch_keys(x) | torch._C._dispatch_keys(y)
    excluded = torch._C._dispatch_tls_local_exclude_set()
    visited = (on_tensors | torch._C._dispatch_tls_local_include_set()) - excluded
    assert keys_highest_first(visited) == [key for key, _ in _diagrams.ADD_DISPATCH_KEYS]
    excluded_key = getattr(torch._C.DispatchKey, _diagrams.EXCLUDED_KEY)
    assert on_tensors.has(excluded_key) and excluded.has(excluded_key)


def test_what_add_has_at_each_key_drawn():
    table = dict(
        line.split(": ", 1) for line in torch._C._dispatch_dump_table("aten::add.Tensor").splitlines() if ": " in line
    )
    for key, kind in _diagrams.ADD_DISPATCH_KEYS:
        entry = table[key]
        if kind == "fallthrough":
            assert entry.startswith("fallthrough"), (key, entry)
        else:
            assert entry.endswith(f"[{kind}]") and not entry.startswith("fallthrough"), (key, entry)
    assert "backend_pkg/backend.py" in table["PrivateUse1"]


def test_the_kernel_drawn_is_the_one_registered_and_calls_the_numpy_functions_drawn():
    registered = registry.KERNELS[torch.ops.aten.add.Tensor]
    assert registered.__code__ is with_same_dtype_shortcut(np.add, arithmetic.add_kernel).__code__
    captured = inspect.getclosurevars(registered).nonlocals
    # The general path is add_kernel as registered (wrapped once more, quieting NumPy's warnings).
    assert captured["numpy_function"] is np.add and captured["general"].__wrapped__ is arithmetic.add_kernel
    assert arithmetic.add_kernel.numpy_function is arithmetic.add
    assert type(torch.Tensor.__add__).__name__ == "method_descriptor"  # the C++ binding, no Python between
    x, y = npy_operands()
    assert type(x + y).__name__ == "NpyTensor" and type((x + y).grad_fn).__name__ == "AddBackward0"


# --- Tensor, storage and memory -----------------------------------------------------------------


def test_tensors_drawn_have_the_metadata_and_memory_drawn():
    made = {}
    for name, code, size, stride, storage_offset in _diagrams.MEMORY_TENSORS:
        made[name] = tensor = eval(code, {"torch": torch}, made)
        assert (tuple(tensor.shape), tensor.stride(), tensor.storage_offset()) == (size, stride, storage_offset)
        assert type(tensor).__name__ == "NpyTensor" and tensor.dtype == torch.float32
    (x_name, *_), (v_name, *_, v_offset) = _diagrams.MEMORY_TENSORS
    x, v = made[x_name], made[v_name]
    storage = x.untyped_storage()
    root = storage._npy_root
    assert type(storage).__name__ == "NpyStorage" and storage.nbytes() == _diagrams.MEMORY_STORAGE_BYTES
    assert v.untyped_storage()._cdata == storage._cdata, "the view has a storage of its own"
    assert storage.data_ptr() == root.ctypes.data
    assert unwrap(x) is root and x._npy_array is root
    assert storage_root(unwrap(v)) is root and v._npy_array is unwrap(v)
    assert unwrap(v).ctypes.data - root.ctypes.data == v_offset * _diagrams.FLOAT32_BYTES
    assert root.itemsize == _diagrams.FLOAT32_BYTES


# --- Autograd, the hooks and the guard ----------------------------------------------------------


def test_hooks_methods_drawn_are_npy_hooks_that_cpp_asks():
    for method in _diagrams.HOOKS_METHODS:
        assert method in vars(runtime.NpyHooks), method
        assert hasattr(torch._C._acc.PrivateUse1Hooks, method), method


def test_backward_asks_has_primary_context(monkeypatch):
    asked = []
    answer = runtime.NpyHooks.has_primary_context

    def counted(self, device_index):
        asked.append(device_index)
        return answer(self, device_index)

    monkeypatch.setattr(runtime.NpyHooks, "has_primary_context", counted)
    x, y = npy_operands()
    (x * y).sum().backward()
    assert asked and set(asked) == {0}


def chain(w, factor, length):
    """``(w * factor * factor ...).sum()``: a backward of ``length`` MulBackward0 nodes in a row."""
    for _ in range(length):
        w = w * factor
    return w.sum()


def guard_calls_of(action):
    before = runtime.guard_calls()
    action()
    return runtime.guard_calls() - before


# Each MulBackward0 hands on a gradient to the next node, and to the factor too when it requires grad.
@pytest.mark.parametrize(
    ("factor_requires_grad", "gradients_per_node"), [(False, 1), (True, 2)], ids=["constant-factor", "leaf-factor"]
)
def test_guard_calls_drawn_per_gradient_a_node_hands_on(factor_requires_grad, gradients_per_node):
    w = torch.ones(3, device="npy", requires_grad=True)
    factor = torch.full((3,), 2.0, device="npy", requires_grad=factor_requires_grad)
    runtime.settle_autograd_thread()  # no late call from an earlier torch.autograd.grad counts here
    chain(w, factor, 1).backward()  # the first backward of a process asks the guard once more
    short, long = chain(w, factor, 5), chain(w, factor, 10)
    per_node = (guard_calls_of(long.backward) - guard_calls_of(short.backward)) / 5
    assert per_node == _diagrams.GUARD_CALLS_PER_GRADIENT * gradients_per_node


class ThreadProbe(torch.autograd.Function):
    """The identity, whose backward records the thread that runs it."""

    threads = []

    @staticmethod
    def forward(ctx, tensor):
        return tensor * 1

    @staticmethod
    def backward(ctx, gradient):
        ThreadProbe.threads.append(threading.get_ident())
        return gradient


def backward_thread(run_backward):
    ThreadProbe.threads.clear()
    w = torch.ones(3, device="npy", requires_grad=True)
    run_backward(ThreadProbe.apply(w).sum(), w)
    (thread,) = ThreadProbe.threads
    return thread


def test_loss_backward_runs_on_the_calling_thread_grad_on_the_engines():
    caller = threading.get_ident()
    assert backward_thread(lambda loss, w: loss.backward()) == caller
    assert backward_thread(lambda loss, w: torch.autograd.grad(loss, w)) != caller
    assert backward_thread(lambda loss, w: torch.autograd.backward(loss)) != caller
    assert "set_multithreading_enabled(False)" in inspect.getsource(backend_pkg.tensor.NpyTensor.backward)


# --- The compile routes -----------------------------------------------------------------------


def test_compile_backends_drawn_are_registered_and_inductor_is_the_default():
    import torch._dynamo

    assert set(_diagrams.COMPILE_BACKENDS) <= set(torch._dynamo.list_backends())
    from torch._dynamo.backends.registry import get_default_backend

    # torch.compile takes backend=None to mean this default (its code says so).
    assert inspect.signature(torch.compile).parameters["backend"].default is None
    assert "backend = get_default_backend()" in inspect.getsource(torch.compile)
    assert get_default_backend() == "inductor"
    (entry,) = importlib.metadata.entry_points(group="torch_dynamo_backends", name="npy")
    assert entry.load() is resolve("backend_pkg.compiler.dynamo_backend.npy_backend")


def test_inductor_registers_npy_codegen_as_drawn():
    from torch._inductor.codegen import common

    from backend_pkg.compiler import inductor

    common.init_backend_registration()
    assert common.get_scheduling_for_device("npy") is inductor.NpyScheduling
    assert common.get_wrapper_codegen_for_device("npy") is inductor.NpyWrapperCodegen


# --- The setup and scaling out ----------------------------------------------------------------


def test_setup_steps_drawn_are_the_setup_functions_calls_in_order():
    from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

    source = inspect.getsource(_setup_privateuseone_for_python_backend)
    places = [source.index(f"{function}(") for function, _ in _diagrams.SETUP_STEPS]
    assert places == sorted(places)
    assert len(re.findall(r"^\s+torch\.[\w.]+\(", source, re.MULTILINE)) == len(_diagrams.SETUP_STEPS)
    called = inspect.getsource(backend_pkg.backend.register_device)
    assert "hook=NpyHooks(), device_guard=NpyDeviceGuard()" in called and "backend_module=device" in called
    assert torch._C._get_privateuse1_backend_name() == "npy" and torch.npy is backend_pkg.device
    assert hasattr(torch.Tensor, "is_npy") and hasattr(torch.nn.Module, "npy")
    steps = [box for box in _diagrams.DIAGRAMS["setup"].boxes if box.key.startswith("step")]
    for box, (function, _) in zip(steps, _diagrams.SETUP_STEPS, strict=True):
        drawn_as_python = box.layer == "python"
        assert drawn_as_python == inspect.isfunction(resolve(function)), (function, box.layer)


def test_process_group_drawn_is_npys():
    import torch.distributed as dist

    assert _diagrams.DISTRIBUTED_BACKEND == backend_pkg.distributed.BACKEND_NAME
    assert dist.Backend.default_device_backend_map["npy"] == _diagrams.DISTRIBUTED_BACKEND


# --- Thumbnails -------------------------------------------------------------------------------

THUMBNAIL_PATH = re.compile(r"^# sphinx_gallery_thumbnail_path = ['\"](.+)['\"]$", re.MULTILINE)


def test_every_thumbnail_path_names_an_image_conf_py_draws():
    pages = [page for page in GALLERY.rglob("*.py") if not page.name.startswith("_")]
    named = {page: THUMBNAIL_PATH.findall(page.read_text()) for page in pages}
    drawn = {f"../_build/diagrams/{name}.png" for name in _diagrams.DIAGRAMS}
    for page, paths in named.items():
        assert set(paths) <= drawn, f"{page.name} names {paths}, conf.py draws {sorted(drawn)}"
    assert any(named.values())


def placeholder_thumbnail(tmp_path):
    """What sphinx-gallery makes of its placeholder image, no_image.png, as a thumbnail."""
    from sphinx_gallery.gen_gallery import DEFAULT_GALLERY_CONF
    from sphinx_gallery.utils import scale_image

    stock = Path(importlib.import_module("sphinx_gallery").__file__).parent / "_static" / "no_image.png"
    thumbnail = tmp_path / "placeholder.png"
    scale_image(stock, thumbnail, *DEFAULT_GALLERY_CONF["thumbnail_size"])
    return matplotlib.image.imread(thumbnail)


def test_no_thumbnail_is_the_placeholder(built_site, tmp_path):
    placeholder = placeholder_thumbnail(tmp_path)
    generated = built_site.parents[1] / "source" / "auto_examples"  # images/thumb/ in each gallery folder
    thumbnails = sorted(generated.rglob("sphx_glr_*_thumb.png")) + sorted(built_site.glob("_images/*_thumb.png"))
    pages = [page for page in GALLERY.rglob("*.py") if not page.name.startswith("_")]
    assert len(thumbnails) >= 2 * len(pages)
    for thumbnail in thumbnails:
        image = matplotlib.image.imread(thumbnail)
        assert image.shape != placeholder.shape or not np.array_equal(image, placeholder), thumbnail
