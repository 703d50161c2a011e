"""Plant realistic bugs in a scratch copy of the backend and check that the tests catch each one.

A test suite is only as good as the bugs it finds. Each entry of
:data:`PLANTS` is a one-line change of the kind a backend author makes by
mistake (a stride assumed contiguous, a storage offset counted in elements
instead of bytes, a promotion rule, a forgotten ``keepdim``, a path of the
CPU fallback that only a few ops take, a compiled view output, an op in the
wrong autocast list, an RNG state restored by reseeding, a peak lowered by a
free, a collective on a copy), the test files that should catch it and why.
For each plant this script copies the project's tracked files to a
temporary directory, applies the change there (never in the working tree),
runs the named test files with that copy first on ``PYTHONPATH``, and
records the tests that failed. A plant that no test catches survives: the
script says so and exits with status 1.

    .venv/bin/python tools/plant_bugs.py                   # every plant
    .venv/bin/python tools/plant_bugs.py fallback-several  # some, by name
    .venv/bin/python tools/plant_bugs.py --write           # and rewrite tests/PLANTED_BUGS.md

The run takes a few minutes (each plant is one pytest run), so it is not part
of ``make test``; ``tests/tools/test_plant_bugs.py`` checks there that every
plant still applies to the code as it is.

A change PyTorch makes unobservable is no bug and is not planted: the
fallback's results for ``Tensor(a!)`` returns (``out=`` and in-place ops) are
never seen, since PyTorch hands the caller the arguments themselves, through
``torch.kthvalue(out=...)``, ``torch.ops.aten.kthvalue.values`` and under
``inference_mode`` alike (returning ``torch.zeros(7)`` there changes no result).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "tests" / "PLANTED_BUGS.md"


@dataclass(frozen=True)
class Plant:
    name: str
    kind: str
    path: str
    old: str
    new: str
    why: str
    tests: tuple


PLANTS = [
    Plant(
        "view-as-real-strides",
        "stride",
        "backend_pkg/ops/views.py",
        "(*array.shape, 2), (*array.strides, part.itemsize)), base=self)",
        "(*array.shape, 2), (*np.empty(array.shape, array.dtype).strides, part.itemsize)), base=self)",
        "view_as_real describes its result with a contiguous tensor's strides, whatever the input's",
        ("tests/tools/test_opinfo_layouts.py",),
    ),
    Plant(
        "host-view-copies",
        "stride",
        "backend_pkg/tensor.py",
        "else torch.from_numpy(unwrap(tensor))",
        "else torch.from_numpy(unwrap(tensor)).contiguous()",
        "the CPU view of an npy tensor is made contiguous, so for a strided tensor it is a copy: "
        "the fallback and copy_ write into that copy, not into the tensor",
        ("tests/core/test_fallback.py", "tests/ops/test_in_place_aliasing.py"),
    ),
    Plant(
        "reinterpret-offset-in-elements",
        "offset",
        "backend_pkg/ops/views.py",
        "offset = self.storage_offset() * storage.itemsize",
        "offset = self.storage_offset()",
        "view_as_real and view_as_complex count the storage offset in elements where NumPy wants bytes",
        ("tests/tools/test_opinfo_layouts.py",),
    ),
    Plant(
        "empty-view-offset-past-the-end",
        "offset",
        "backend_pkg/ops/views.py",
        "    if 0 in shape:  # a view without elements may start past the end of the memory, which NumPy refuses\n"
        "        offset = min(offset, storage.nbytes)\n",
        "",
        "view_as_real of an empty view whose offset lies past its storage's end lets NumPy's ValueError out",
        ("tests/tools/test_opinfo_layouts.py",),
    ),
    Plant(
        "mul-scalar-keeps-dtype",
        "promotion",
        "backend_pkg/ops/arithmetic.py",
        "def mul_kernel(self, other):\n    return torch.result_type(self, other)",
        "def mul_kernel(self, other):\n"
        "    return self.dtype if isinstance(other, (int, float)) else torch.result_type(self, other)",
        "a Python number never changes the result dtype: an integer tensor times 2.5 stays integer",
        ("tests/ops/test_arithmetic.py", "tests/ops/test_integer_edges.py"),
    ),
    Plant(
        "alpha-as-float",
        "overflow",
        "backend_pkg/ops/arithmetic.py",
        "        (scale,) = computed(out_dtype, alpha)\n",
        "        scale = float(alpha)\n",
        "add's alpha is applied as a Python float, so integer operands are computed in float64: "
        "large int64 values lose digits and overflow no longer wraps",
        ("tests/ops/test_arithmetic.py", "tests/ops/test_integer_edges.py"),
    ),
    Plant(
        "uint32-stored-as-int32",
        "dtype",
        "backend_pkg/dtypes.py",
        "torch.uint32: np.dtype(np.uint32),",
        "torch.uint32: np.dtype(np.int32),",
        "a typo in the dtype table: uint32 tensors are stored as int32",
        ("tests/ops/test_integer_edges.py",),
    ),
    Plant(
        "argmax-drops-keepdim",
        "keepdim",
        "backend_pkg/ops/reductions.py",
        "return np.asarray(np_arg(a, axis=axis, keepdims=keepdim)).astype(np.int64, copy=False)",
        "return np.asarray(np_arg(a, axis=axis)).astype(np.int64, copy=False)",
        "argmax and argmin ignore keepdim",
        ("tests/ops/test_reductions.py", "tests/ops/test_nan_reductions.py"),
    ),
    Plant(
        "amax-skips-nan",
        "nan",
        "backend_pkg/ops/reductions.py",
        'return np.max(a, axis=reduced_axes("amax", dim, a.ndim), keepdims=keepdim)',
        'return np.nanmax(a, axis=reduced_axes("amax", dim, a.ndim), keepdims=keepdim)',
        "amax skips NaN (np.nanmax) where PyTorch propagates it",
        ("tests/ops/test_reductions.py", "tests/ops/test_nan_reductions.py"),
    ),
    Plant(
        "sum-warns-on-nan",
        "nan",
        "backend_pkg/ops/registry.py",
        "token = ERROR_STATE.set(ALL_IGNORED)",
        "token = ERROR_STATE.set(ERROR_STATE.get())",
        "sum and mean let NumPy's RuntimeWarning out when inf + -inf makes a NaN; CPU is silent",
        ("tests/ops/test_nan_reductions.py",),
    ),
    Plant(
        "in-place-overlap-unchecked",
        "aliasing",
        "backend_pkg/ops/registry.py",
        "    def in_place_kernel(self, *args, **kwargs):\n        _check_iterator_overlaps(self, args, kwargs)\n",
        "    def in_place_kernel(self, *args, **kwargs):\n",
        "in-place elementwise ops compute x.add_(x.T) instead of refusing it as CPU does",
        ("tests/ops/test_in_place_aliasing.py",),
    ),
    Plant(
        "out-overlap-unchecked",
        "aliasing",
        "backend_pkg/ops/registry.py",
        "    def out_kernel(*args, out, **kwargs):\n        _check_iterator_overlaps(out, args, kwargs)\n",
        "    def out_kernel(*args, out, **kwargs):\n",
        "elementwise out= is resized before it is checked: an expanded out is quietly reallocated, "
        "and an out that shares part of an input is computed into",
        ("tests/ops/test_in_place_aliasing.py",),
    ),
    Plant(
        "copy-overlap-unchecked",
        "aliasing",
        "backend_pkg/ops/copies.py",
        "    check_apart(self, partial=(src,))\n",
        "",
        "x.copy_(x.T) copies instead of refusing: CPU's own check sees two unrelated CPU tensors",
        ("tests/ops/test_in_place_aliasing.py", "tests/ops/test_copies.py"),
    ),
    Plant(
        "masked-fill-expanded-silent",
        "aliasing",
        "backend_pkg/ops/indexing.py",
        '    warn_if_expanded("masked_fill_", self, "tensor[mask] = scalar")\n',
        "",
        "masked_fill_ writes an expanded tensor without CPU's deprecation warning",
        ("tests/ops/test_in_place_aliasing.py",),
    ),
    Plant(
        "fallback-out-through-reshape",
        "fallback out=",
        "backend_pkg/fallback.py",
        "    host_view(npy_out).copy_(cpu_out)\n",
        "    unwrap(npy_out).reshape(-1)[:] = cpu_out.numpy().reshape(-1)\n",
        "the fallback stores out= through a flat reshape, which for a non-contiguous out is a copy: the result is lost",
        ("tests/core/test_fallback.py",),
    ),
    Plant(
        "fallback-several-stay-on-cpu",
        "fallback, several results",
        "backend_pkg/fallback.py",
        "    return tuple(_from_host(r, schema, written, args, kwargs) for r, schema in zip(result, returns))",
        "    return (_from_host(result[0], returns[0], written, args, kwargs), *result[1:])",
        "only the first of several results becomes an npy tensor; the others stay CPU tensors",
        ("tests/core/test_fallback.py",),
    ),
    Plant(
        "broadcast-left-to-numpy",
        "shapes",
        "backend_pkg/ops/_operands.py",
        "    if len(set(shapes)) > 1:\n        broadcast_shapes(*shapes)\n",
        "    if False:\n        broadcast_shapes(*shapes)\n",
        "operands whose shapes do not broadcast reach NumPy, whose ValueError reaches the user "
        "instead of PyTorch's RuntimeError",
        ("tests/ops/test_activations.py",),
    ),
    Plant(
        "inductor-view-taken-for-its-buffer",
        "compiled view",
        "backend_pkg/compiler/inductor.py",
        "        and _known_contiguous(view.get_size(), view.get_stride())\n",
        "",
        "Inductor's wrapper takes an output that views all of a buffer's elements for the buffer reshaped, "
        "transposed or not: a compiled function returning (x + 1).t() returns x + 1's values in the wrong order",
        ("tests/compile/test_compile_views.py",),
    ),
    Plant(
        "inductor-view-storage-of-its-elements",
        "compiled view",
        "backend_pkg/compiler/host.py",
        "        array = tensor.numpy() if _starts_its_memory(tensor) else _view_over_its_storage(tensor)\n",
        "        array = tensor.numpy()\n",
        "an Inductor output that views a buffer from an offset or with gaps ((x + 1)[:, 1::2]) gets an npy "
        "storage of its own elements only, too small for its strides",
        ("tests/compile/test_compile_views.py",),
    ),
    Plant(
        "npy-slice-on-the-first-dim",
        "compiled view",
        "backend_pkg/compiler/lowerings.py",
        "    index[dim] = slice(start, end, step)\n    return a[tuple(index)]\n",
        "    return a[start:end:step]\n",
        'backend="npy" slices the first dimension whatever the dim: x[:, 1::2] slices rows',
        ("tests/compile/test_compile_views.py",),
    ),
    Plant(
        "npy-select-copies",
        "compiled view",
        "backend_pkg/compiler/lowerings.py",
        "    return a[(slice(None),) * (dim % a.ndim) + (index,)]\n",
        "    return np.take(a, index, axis=dim)\n",
        'backend="npy" selects with np.take, a copy: x[:, 2] of a computed buffer comes out contiguous, '
        "where PyTorch's is a view with the buffer's strides and offset",
        ("tests/compile/test_compile_views.py",),
    ),
    Plant(
        "autocast-pool3d-in-lower-precision",
        "autocast policy",
        "backend_pkg/autocast.py",
        "    mkldnn_rnn_layer mm prelu scaled_dot_product_attention\n"
        '""".split()\n\nFLOAT32 = """\n    _grid_sampler_2d_cpu_fallback _lu_with_info adaptive_avg_pool3d ',
        "    mkldnn_rnn_layer mm prelu scaled_dot_product_attention adaptive_avg_pool3d\n"
        '""".split()\n\nFLOAT32 = """\n    _grid_sampler_2d_cpu_fallback _lu_with_info ',
        "adaptive_avg_pool3d sits in the lower-precision list: still listed and registered, but it runs in "
        "float16 where CPU autocast runs it in float32",
        ("tests/core/test_autocast_policy.py",),
    ),
    Plant(
        "autocast-promote-ignores-inputs",
        "autocast policy",
        "backend_pkg/autocast.py",
        "    return functools.reduce(torch.promote_types, dtypes, torch.get_autocast_dtype(DEVICE_NAME))\n",
        "    return torch.get_autocast_dtype(DEVICE_NAME)\n",
        "the promote policy casts to the autocast dtype: cat of a float16 and a float32 tensor is float16",
        ("tests/core/test_autocast_policy.py",),
    ),
    Plant(
        "rng-restore-reseeds",
        "RNG state",
        "backend_pkg/device.py",
        '    _seed = values["seed"]\n',
        '    return manual_seed(values["seed"])\n',
        "set_rng_state reseeds from the saved seed: a state saved right after a seed replays, one saved "
        "mid-stream restarts the stream",
        ("tests/core/test_rng_state.py",),
    ),
    Plant(
        "rng-state-drops-the-buffered-half",
        "RNG state",
        "backend_pkg/device.py",
        '        "has_uint32": values["has_uint32"],\n',
        '        "has_uint32": 0,\n',
        "set_rng_state drops the buffered half of a 64-bit draw: after an odd number of small integers the "
        "restored stream is 32 bits off",
        ("tests/core/test_rng_state.py",),
    ),
    Plant(
        "memory-reset-peak-to-zero",
        "memory statistics",
        "backend_pkg/memory.py",
        "    _start_counting()\n    _peak = _allocated\n",
        "    _start_counting()\n    _peak = 0\n",
        "reset_peak_memory_stats sets the peak to zero, below the bytes still held",
        ("tests/core/test_memory_stats.py",),
    ),
    Plant(
        "memory-peak-lowered-by-a-free",
        "memory statistics",
        "backend_pkg/memory.py",
        "    global _allocated, _frees\n    del _roots[ref.key]\n    _allocated -= ref.nbytes\n",
        "    global _allocated, _frees, _peak\n    del _roots[ref.key]\n    _allocated -= ref.nbytes\n"
        "    _peak = _allocated\n",
        "a free lowers the peak to the current bytes: max_memory_allocated after alloc, free, alloc is the "
        "second allocation's",
        ("tests/core/test_memory_stats.py",),
    ),
    Plant(
        "pinned-copy-contiguous",
        "pinned memory",
        "backend_pkg/pinned.py",
        "    pinned = torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype)\n",
        "    pinned = torch.empty(tensor.shape, dtype=tensor.dtype)\n",
        "pin_memory() of a transposed tensor returns a contiguous copy, where PyTorch keeps the strides",
        ("tests/core/test_accelerator.py",),
    ),
    Plant(
        "loaded-storage-read-only",
        "serialization",
        "backend_pkg/serialization.py",
        "    data = np.frombuffer(bytes(storage), dtype=np.uint8).copy()\n",
        "    data = np.frombuffer(bytes(storage), dtype=np.uint8)\n",
        "torch.load makes npy tensors over the loaded bytes object, read-only: an in-place op on a loaded "
        "tensor lets NumPy's ValueError out",
        ("tests/core/test_serialization.py",),
    ),
    Plant(
        "collective-on-a-contiguous-copy",
        "distributed",
        "backend_pkg/distributed.py",
        "        return host_view(value)\n",
        "        return host_view(value).contiguous()\n",
        "collectives run on a contiguous copy of each npy tensor: on a transposed tensor the result is "
        "written into the copy and lost",
        ("tests/core/test_distributed.py",),
    ),
]


def tracked_files():
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [Path(line) for line in listed.stdout.splitlines()]


def scratch_copy(destination):
    """The tracked files as they are in the working tree (edits included), under ``destination``."""
    for relative in tracked_files():
        source = ROOT / relative
        if source.is_file():
            target = destination / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def apply(plant, root):
    path = root / plant.path
    text = path.read_text()
    count = text.count(plant.old)
    if count != 1:
        raise ValueError(f"{plant.name}: the text to replace occurs {count} times in {plant.path}, not once")
    path.write_text(text.replace(plant.old, plant.new))


def run_tests(root, tests):
    """The failed test ids of ``tests`` run against the copy at ``root``, and the run's output."""
    environment = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    environment.pop("BACKEND_PKG_STRICT", None)
    command = [sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", *tests]
    done = subprocess.run(command, cwd=root, env=environment, capture_output=True, text=True)
    failed = re.findall(r"^FAILED (.+?)(?: - .*)?$", done.stdout, flags=re.MULTILINE)  # ids may hold spaces
    if done.returncode != 0 and not failed:  # collection errors, crashes: not a caught bug
        failed = [f"(pytest exited {done.returncode}: {done.stdout.strip().splitlines()[-1:]})"]
    return failed, done


def check_the_copy_is_tested(root):
    """The tests must import the scratch copy's backend_pkg, not an installed one."""
    environment = {**os.environ, "PYTHONPATH": str(root)}
    found = subprocess.run(
        [sys.executable, "-c", "import backend_pkg; print(backend_pkg.__file__)"],
        cwd=root,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(found).is_relative_to(root):
        raise RuntimeError(f"the tests would import {found}, not the scratch copy in {root}")


def run_plant(plant):
    with tempfile.TemporaryDirectory(prefix=f"plant-{plant.name}-") as scratch:
        root = Path(scratch)
        scratch_copy(root)
        check_the_copy_is_tested(root)
        apply(plant, root)
        start = time.perf_counter()
        failed, _ = run_tests(root, plant.tests)
        return failed, time.perf_counter() - start


def record(results):
    lines = [
        "# Planted bugs and the tests that catch them",
        "",
        "Written by `tools/plant_bugs.py --write`: each bug below was planted in a scratch copy of the",
        "project and the listed test files were run against it. Every bug must be caught; the",
        "script fails when one survives. Rerun it after changing the tests or the planted code.",
        "",
        "| bug | kind | planted in | what it does | caught by |",
        "| --- | --- | --- | --- | --- |",
    ]
    for plant, failed in results:
        shown = ", ".join(f"`{test}`" for test in failed[:3])
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        caught = shown + more if failed else "**nothing: survived**"
        lines.append(f"| `{plant.name}` | {plant.kind} | `{plant.path}` | {plant.why} | {caught} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="plants to run (default: all)")
    parser.add_argument("--write", action="store_true", help=f"rewrite {RECORD.relative_to(ROOT)}")
    options = parser.parse_args(argv)
    unknown = set(options.names) - {plant.name for plant in PLANTS}
    if unknown:
        parser.error(f"no such plant: {sorted(unknown)}")
    chosen = [plant for plant in PLANTS if not options.names or plant.name in options.names]
    results = []
    for plant in chosen:
        failed, seconds = run_plant(plant)
        results.append((plant, failed))
        verdict = f"caught by {len(failed)} test(s), first {failed[0]}" if failed else "SURVIVED"
        print(f"{plant.name:36} {verdict} ({seconds:.0f} s)", flush=True)
    if options.write:
        RECORD.write_text(record(results))
        print(f"wrote {RECORD.relative_to(ROOT)}")
    survivors = [plant.name for plant, failed in results if not failed]
    if survivors:
        print(f"survived every test: {survivors}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
