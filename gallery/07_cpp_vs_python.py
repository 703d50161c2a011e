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
#       .. literalinclude:: ../../backend_pkg/ops/registry.py
#          :pyobject: install
#
#       .. literalinclude:: ../../backend_pkg/backend.py
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
#       .. literalinclude:: ../../backend_pkg/runtime.py
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
#       .. literalinclude:: ../../backend_pkg/runtime.py
#          :pyobject: NpyHooks
#
# .. warning::
#
#    In C++ as in Python, register the hooks. Without them ``backward()``
#    fails (:ref:`sphx_glr_auto_examples_05_hooks_and_device_guard.py`
#    runs it).
#
# The comparison
# --------------
# Each row below is measured or checked by the code that follows it.
#
# .. list-table::
#    :header-rows: 1
#
#    * - Aspect
#      - C++ backend
#      - Python backend (``backend_pkg``)
#    * - Build step
#      - compile an extension against one torch build
#      - none: ``pip install`` a pure-Python package
#    * - Per-op cost
#      - a C++ call
#      - a Python function call per op (measured by ``make bench``, below)
#    * - ``torch.compile``
#      - Inductor, once the backend registers code generation for its device
#      - the default, Inductor: C++ kernels on npy memory, once the device
#        module names its code generation; or ``backend="npy"``: one NumPy
#        function per graph (:ref:`sphx_glr_auto_examples_10_compiling_for_npy.py`)
#    * - Devices
#      - as many as the guard reports
#      - one: the Python guard's C++ side reports a count of 1
#    * - Streams and events
#      - real ones, if the device has them
#      - one default stream; events complete at once
#    * - API status
#      - public, documented
#      - private and experimental (``_setup_…``, ``torch._C._acc``)

import json
from pathlib import Path

import torch

import backend_pkg

# ``make bench`` writes it in the checkout this backend_pkg is installed from.
BENCHMARKS = Path(backend_pkg.__file__).resolve().parents[1] / "source" / "benchmarks.json"


timings = json.loads(BENCHMARKS.read_text())["timings_us"]
small, large = timings["small"]["add"], timings["large"]["add"]
print(f"add, 4 elements:   cpu {small['cpu']['us']:7.1f} µs | npy {small['npy']['us']:7.1f} µs")
print(f"add, 1e6 elements: cpu {large['cpu']['us']:7.1f} µs | npy {large['npy']['us']:7.1f} µs"
      f" | NumPy alone {large['numpy']['us']:7.1f} µs")
forward = timings["mlp"]["forward"]
print(f"MLP forward:       cpu {forward['cpu_eager']['us']:7.1f} µs | npy {forward['npy_eager']['us']:7.1f} µs"
      f" | npy compiled {forward['npy_compiled']['us']:7.1f} µs")
print("(source/benchmarks.json, make bench)")

# %%
# The per-op cost is a fixed overhead: it dominates tiny tensors, while on
# large ones most of the time goes to NumPy's own arithmetic (which may be
# faster or slower than PyTorch's CPU kernels).
# :ref:`sphx_glr_auto_examples_11_performance.py` has every measurement.
#
# The other rows, checked:

print("devices:", torch.accelerator.device_count(), "| npy:1 ->", end=" ")
try:
    torch.empty(1, device="npy:1")
except RuntimeError as error:
    print(error)
stream = torch.accelerator.current_stream()
print("stream:", stream)
event = torch.Event(device="npy")
event.record(stream)
print("event done at once:", event.query())
print("private:", torch.utils.backend_registration._setup_privateuseone_for_python_backend.__name__.startswith("_"))
package = Path(backend_pkg.__file__).parent
compiled = [path.name for path in package.rglob("*") if path.suffix in (".so", ".pyd", ".dll")]
print(f"build step: backend_pkg is {len(list(package.rglob('*.py')))} Python files, {len(compiled)} compiled")

# %%
# The ``torch.compile`` row: the default backend, Inductor, compiles a
# function of npy tensors into C++ kernels on npy memory, and
# ``backend="npy"`` into one NumPy function; both give the eager result
# (:ref:`sphx_glr_auto_examples_10_compiling_for_npy.py` shows how):


def affine(t):
    return t * 2 + 1


ones = torch.ones(2, device="npy")
print("eager:                           ", affine(ones))
print("torch.compile(fn):               ", torch.compile(affine)(ones))
print("torch.compile(fn, backend='npy'):", torch.compile(affine, backend="npy")(ones))

# %%
# Next, :ref:`sphx_glr_auto_examples_08_limitations.py` goes through what the
# Python route cannot do, and what ``backend_pkg`` does about it.
