"""
C++ vs Python, side by side
===========================

The same backend pieces, registered from C++ (as PyTorch's reference
out-of-tree backend, ``torch_openreg``, does) and from Python (as
``backend_pkg`` does). The C++ snippets are excerpts of ``torch_openreg``
(``test/cpp_extensions/open_registration_extension/torch_openreg/`` in
pytorch/pytorch, quoted at commit 06904f3d, ``// ...`` marking what is left
out) and are not compiled here; every Python snippet is the package's own
code.
The rows below are checked when this page is built; the per-op costs are
read from what ``make bench`` measured last.
"""

# %%
# Registering the pieces
# ----------------------
#
# .. tab-set::
#
#    .. tab-item:: Kernels
#
#       C++ (``torch_openreg/csrc/aten/OpenRegMinimal.cpp``, excerpt): twelve
#       kernels for the PrivateUse1 key, and PyTorch's boxed CPU fallback
#       for every other op:
#
#       .. code-block:: cpp
#
#          // ...
#          TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
#            m.impl("empty.memory_format", wrapper_empty_memory_format);
#            m.impl("empty_strided", wrapper_empty_strided);
#            m.impl("as_strided", wrapper_as_strided);
#            m.impl("resize_", wrapper_resize_);
#            m.impl("_reshape_alias", wrapper__reshape_alias);
#            m.impl("_copy_from", wrapper__copy_from);
#            m.impl("_copy_from_and_resize", wrapper__copy_from_and_resize);
#            m.impl("_local_scalar_dense", wrapper__local_scalar_densor);
#            m.impl("set_.source_Tensor", wrapper_set_source_Tensor_);
#            m.impl("set_.source_Storage", wrapper_set_source_Storage_);
#            m.impl(
#                "set_.source_Storage_storage_offset",
#                wrapper_set_source_Storage_storage_offsetset_);
#            m.impl("view", wrapper_view);
#          }
#
#          TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
#            m.fallback(
#                torch::CppFunction::makeFromBoxedFunction<&wrapper_cpu_fallback>());
#          }
#          // ...
#
#       Python (``backend_pkg/ops/registry.py`` registers the kernels,
#       ``backend_pkg/backend.py`` the fallback with the rest):
#
#       .. literalinclude:: ../../../backend_pkg/ops/registry.py
#          :pyobject: install
#
#       .. literalinclude:: ../../../backend_pkg/backend.py
#          :pyobject: install_kernels
#
#    .. tab-item:: Device guard
#
#       C++ (``torch_openreg/csrc/runtime/OpenRegGuard.cpp``, excerpt; the
#       ``OpenRegGuardImpl`` class is in ``OpenRegGuard.h``):
#
#       .. code-block:: cpp
#
#          // ...
#          C10_REGISTER_GUARD_IMPL(PrivateUse1, OpenRegGuardImpl);
#          // ...
#
#       Python (``backend_pkg/runtime.py``):
#
#       .. literalinclude:: ../../../backend_pkg/runtime.py
#          :pyobject: NpyDeviceGuard
#
#    .. tab-item:: Hooks
#
#       C++ (``torch_openreg/csrc/runtime/OpenRegHooks.cpp``, excerpt; the
#       ``OpenRegHooksInterface`` class is in ``OpenRegHooks.h``):
#
#       .. code-block:: cpp
#
#          // ...
#          static bool register_hook_flag [[maybe_unused]] = []() {
#            at::RegisterPrivateUse1HooksInterface(new OpenRegHooksInterface());
#
#            return true;
#          }();
#          // ...
#
#       Python (``backend_pkg/runtime.py``):
#
#       .. literalinclude:: ../../../backend_pkg/runtime.py
#          :pyobject: NpyHooks
#
# .. warning::
#
#    In C++ as in Python, register the hooks. Without them ``backward()``
#    fails (:ref:`sphx_glr_auto_examples_deep_dives_03_hooks_and_device_guard.py`
#    runs it).
#
# The template's C++ twin
# -----------------------
# ``minimal/cpp_backend.cpp`` is the template of
# :ref:`sphx_glr_auto_examples_learn_02_write_your_own_backend.py` written in
# C++, for this page: a host allocator, a ``DeviceGuardImplInterface``, a
# ``PrivateUse1HooksInterface``, each kernel running PyTorch's CPU kernel on
# CPU views (``at::from_blob``) of the same memory, and
# ``at::native::cpu_fallback`` for every op it has no kernel for. Its guard
# is its own, so it also has what the Python route's guard cannot give: two
# devices, and events that read the host's clock for ``elapsed_time``.
# ``torch.utils.cpp_extension.load`` compiles it on first import (into
# ``_build/cpp_backend``), and it passes the same ``minimal/checks.py``,
# run below in a process of its own.
#
# .. tab-set::
#
#    .. tab-item:: C++ (minimal/cpp_backend.cpp)
#
#       .. literalinclude:: ../../../minimal/cpp_backend.cpp
#          :language: cpp
#
#    .. tab-item:: Building it (minimal/cpp_backend.py)
#
#       .. literalinclude:: ../../../minimal/cpp_backend.py
#
# The comparison
# --------------
# Two backends written to be compared, the C++ twin and the minimal Python
# backend of :ref:`sphx_glr_auto_examples_learn_02_write_your_own_backend.py` (the same
# device pieces and kernels over host memory, one in each language), and
# ``backend_pkg``. Every cell of the table is a measurement:
#
# * the per-op costs, the twin's build and each first import are what
#   ``make bench`` measured last (``source/benchmarks.json``): the four
#   implementations take turns on the same rows, each minimal backend in a
#   process of its own, and the row's name gives CPU eager's time;
# * the rest is found while this page is built: the files are counted, and
#   ``minimal/facts.py`` runs once per backend in a process of its own (a
#   process has one PrivateUse1 backend), tries each thing and records the
#   value it gave or the exception it raised.

import json
import re

import torch

# CHECKOUT: the checkout backend_pkg is installed from, where minimal/ lives.
from _fresh_python import CHECKOUT, run_module
from _measurements import Table, load_benchmarks

twin_checks = run_module("minimal.checks", "cpp", timeout=900)
print(twin_checks.stdout)
BACKENDS = {"cpp": "cpp_twin", "python": "minimal_python", "backend_pkg": "backend_pkg"}  # facts.py: benchmarks.json
SOURCES = {
    "cpp": ["minimal/cpp_backend.cpp", "minimal/cpp_backend.py"],
    "python": ["minimal/python_backend.py"],
    "backend_pkg": sorted(str(path.relative_to(CHECKOUT)) for path in (CHECKOUT / "backend_pkg").rglob("*.py")),
}
# A private torch name: an attribute or import whose name starts with "_".
PRIVATE_NAME = re.compile(r"torch(?:\.\w+)*\._\w+|import (_\w+)")


def facts_of(backend):
    return json.loads(run_module("minimal.facts", backend, timeout=900).stdout)


def private_names(files):
    return {
        match.group(0).removeprefix("import ")
        for file in files
        for match in PRIVATE_NAME.finditer((CHECKOUT / file).read_text())
    }


facts = {backend: facts_of(backend) for backend in BACKENDS}
bench = load_benchmarks()
timings, cpp_vs_python = bench["timings_us"]["backends"], bench["cpp_vs_python"]
print(f"make bench: {bench['date']}, load average {bench['machine']['load_average_at_start']} at the start")
print(f"this build: torch {torch.__version__}")

table = Table(["C++ twin", "minimal Python", "backend_pkg"])
for case, rows in timings.items():
    table.add(
        f"{case}, µs per call (CPU eager {rows['cpu']['us']:,.1f})",
        *(f"{rows[name]['us']:,.1f}" for name in BACKENDS.values()),
    )
compiled = [path for path in (CHECKOUT / "backend_pkg").rglob("*") if path.suffix in (".so", ".pyd", ".dll")]
table.add(
    "build step",
    f"{cpp_vs_python['twin_build_seconds']['cold']:.1f} s cold, "
    f"{cpp_vs_python['twin_build_seconds']['cached']:.2f} s from _build/ (make bench)",
    "none: one Python file",
    f"none: {len(SOURCES['backend_pkg'])} Python files, {len(compiled)} compiled",
)
table.add(
    "first import, new process (make bench)",
    *(f"{cpp_vs_python['first_import_seconds'][name] * 1000:,.0f} ms" for name in BACKENDS.values()),
)
table.add(
    "lines of code",
    *(
        f"{sum(len((CHECKOUT / file).read_text().splitlines()) for file in SOURCES[backend]):,}"
        f" in {len(SOURCES[backend])} file(s)"
        for backend in BACKENDS
    ),
)
table.add("private torch names used", *(len(private_names(SOURCES[backend])) for backend in BACKENDS))
for section, aspects in facts["cpp"].items():
    for aspect in aspects:
        table.add(f"{section}: {aspect}", *(facts[backend][section][aspect] for backend in BACKENDS))
table

# %%
# What the table shows:
#
# * **Per op**, the C++ twin pays CPU eager's cost plus its own dispatch
#   and the CPU views of its memory; each Python kernel adds a Python call
#   and the wrapping of its result
#   (:ref:`sphx_glr_auto_examples_deep_dives_07_performance.py` splits that cost up).
#   On large tensors the arithmetic takes most of the time.
# * **Devices**: the Python route's device guard is C++ code in PyTorch
#   (``PythonDeviceGuard`` in ``torch/csrc/acc/Module.cpp``) that reports one
#   device and whose ``setDevice`` does nothing, so
#   ``set_device_index(1)`` leaves the index at 0. The twin's guard is its
#   own: two devices, and a current index it keeps per thread.
# * **Streams and events**: the same ``PythonDeviceGuard`` records no
#   event and reports every one complete, and has no ``synchronizeEvent``,
#   ``elapsedTime`` or ``synchronizeDevice``, so those raise PyTorch's
#   default errors; asking it for a new stream gives the default one. The
#   twin's work is synchronous, so its events complete when recorded and
#   hold the host's clock, which ``elapsed_time`` reads; it leaves
#   ``getNewStream`` to PyTorch's default, which refuses.
# * **torch.compile**: ``backend="eager"`` runs on all three. The minimal
#   Python backend fails under AOTAutograd (``aot_eager`` and Inductor
#   alike): its ``detach`` kernel is handed a tensor whose storage is on
#   ``meta``, and the ``set_`` its views are made with refuses that. The
#   twin runs ``aot_eager``, and Inductor stops at its table of code
#   generation per device, which has no ``twin``
#   (``get_device_op_overrides`` in ``torch/_inductor/codegen/common.py``).
#   ``backend_pkg`` runs Inductor, whose CPU code generation its device
#   module hands over, ``eager``, and a ``backend="npy"`` of its own
#   (:ref:`sphx_glr_auto_examples_deep_dives_05_compiling_for_npy.py`), and
#   ``aot_eager``, whose graph runs aten ops on npy tensors under
#   AOTAutograd's first-call check of custom ops: that check refuses every
#   tensor class it does not know, and npy tensors answer its questions as
#   CPU tensors do
#   (:ref:`sphx_glr_auto_examples_deep_dives_06_compiling_with_inductor.py`).
# * **API status**: the Python route is built on private, experimental
#   names (``_setup_privateuseone_for_python_backend``,
#   ``torch._C._acc``); the twin's C++ uses PyTorch's C++ registration API,
#   and its Python side names its device module through
#   ``torch._register_device_module``.
#
# The *PyTorch limits* section (:ref:`sphx_glr_auto_examples_limits_01_runtime_around_kernels.py`
# and after) goes through what the
# Python route cannot do, and what ``backend_pkg`` does about it.

# sphinx_gallery_thumbnail_path = "../_build/diagrams/dispatch_path.png"
