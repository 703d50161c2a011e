"""
A minimal backend to copy
=========================

``backend_pkg`` is complete, and large. The file below is the smallest
backend this project calls correct: one file, no import of ``backend_pkg``,
with its own device, ``mini``. Its tensors keep their memory in NumPy
arrays; copies go both ways and never alias; dtypes are kept; it prints as
a CPU tensor prints; views share their base's memory; and an MLP's training
step with SGD gives CPU's numbers. Beside it is its C++ twin, written for
this page: the same device pieces and kernels, registered from C++, with
PyTorch's CPU fallback for every other op. Both are built and checked when
this page is built.
"""

# %%
# The two files
# -------------
#
# .. tab-set::
#
#    .. tab-item:: Python (minimal/python_backend.py)
#
#       .. literalinclude:: ../../minimal/python_backend.py
#
#    .. tab-item:: C++ (minimal/cpp_backend.cpp)
#
#       .. literalinclude:: ../../minimal/cpp_backend.cpp
#          :language: cpp
#
#    .. tab-item:: Building the C++ twin (minimal/cpp_backend.py)
#
#       .. literalinclude:: ../../minimal/cpp_backend.py
#
# What the Python file does, top to bottom:
#
# * ``_setup_privateuseone_for_python_backend`` names PrivateUse1 ``mini``
#   and registers the hooks and the device guard, Python objects that the
#   C++ side calls (``backward()`` asks the hooks ``has_primary_context``).
# * Memory: each result is a NumPy array. A storage is made over its
#   memory (``_construct_storage_from_data_pointer``) and keeps the array
#   alive; ``create_empty_tensor`` makes the tensor, and ``set_``'s CPU
#   kernel (which touches no memory) gives it that storage and its sizes,
#   strides and offset. So ``stride()`` tells the truth, and a view
#   (``as_strided``, ``view``) is a new tensor over the same storage.
# * Copies: ``_copy_from`` runs PyTorch's CPU ``copy_`` over CPU views of
#   both sides, so dtype conversion is PyTorch's, into memory the
#   destination owns.
# * Kernels: for ops that PyTorch generates from an ``out=`` kernel (a
#   *structured* op: ``add``, ``add_`` and ``add(out=...)`` all reach
#   ``add.out``), the backend registers only the ``out=`` form, and
#   PyTorch has already given ``out`` the result's dtype and shape.
#
# The C++ twin has the same pieces: a host allocator, a
# ``DeviceGuardImplInterface``, a ``PrivateUse1HooksInterface``, and each
# kernel runs PyTorch's CPU kernel on CPU views (``at::from_blob``) of the
# same memory; ``at::native::cpu_fallback`` serves every op it has no
# kernel for. Its guard is its own, so it also has what the Python route's
# guard cannot give: two devices, and events that complete when recorded
# and read the host's clock for ``elapsed_time``
# (:ref:`sphx_glr_auto_examples_07_cpp_vs_python.py` runs both).
#
# Both, checked
# -------------
# ``minimal/checks.py`` holds the checks (copies both ways never alias,
# dtypes kept, printing, a view, each device index it reports and none
# beyond, an MLP training step against CPU with
# ``assert_close``). Each backend runs them in a process of its own: a
# process has one PrivateUse1 backend, and this one already has ``npy``.
# The C++ twin is compiled by ``torch.utils.cpp_extension.load`` on first
# import and loaded from ``_build/cpp_backend`` afterwards.

import subprocess
import sys
import time
from pathlib import Path

import backend_pkg

# The checkout backend_pkg is installed from, where minimal/ lives.
ROOT = Path(backend_pkg.__file__).resolve().parents[1]


def run_checks(backend):
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "minimal.checks", backend],
                            capture_output=True, text=True, cwd=ROOT, timeout=900, check=True)
    return result.stdout, time.perf_counter() - start


for backend in ("python", "cpp"):
    output, seconds = run_checks(backend)
    print(f"{backend}: {seconds:.1f} s, build and start-up included")
    print(output)

# %%
# How big each is
# ---------------

for path in ("minimal/python_backend.py", "minimal/cpp_backend.cpp", "minimal/cpp_backend.py"):
    print(f"{path}: {len((ROOT / path).read_text().splitlines())} lines")

# %%
# :ref:`sphx_glr_auto_examples_07_cpp_vs_python.py` compares the two, with
# ``backend_pkg`` and CPU eager, on the rows ``make bench`` times.

# sphinx_gallery_thumbnail_path = "../_build/diagrams/setup.png"
