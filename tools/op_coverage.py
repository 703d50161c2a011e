"""Correctness of the npy device measured with PyTorch's OpInfo database.

Run ``make coverage`` (or ``.venv/bin/python tools/op_coverage.py``) to
regenerate ``source/op_coverage.json``, which the docs page "Op coverage"
renders. The file is generated: never edit it by hand.

What runs
---------
``torch.testing._internal.common_methods_invocations.op_db`` lists about
700 OpInfos, each a PyTorch operator with a generator of sample inputs.
For every OpInfo the backend implements natively (see below), every sample
of every dtype in :data:`DTYPES` that the OpInfo supports on CPU (at most
:data:`MAX_SAMPLES_PER_DTYPE` per dtype, and none after
:data:`SECONDS_PER_OPINFO` seconds on one OpInfo, less when the OpInfos
left would overrun :data:`TOTAL_SECONDS`: the full run stays under three
minutes on two cores as kernels are added; the limits are recorded in the
output, and samples cut by time are counted as skipped with that reason)
runs twice: once on CPU, once on copies of its tensors moved to ``npy``
(``"cpu"`` device arguments become ``npy`` too; an argument the sample puts
on the CPU whatever the device, such as ``tensor_split``'s indices, stays
there: :func:`cpu_placed` finds those by generating the same samples for
``meta``). The results, moved back to the CPU, are compared with
:func:`torch.testing.assert_close` (values, dtype and shape; tuples and
lists leaf by leaf); a tensor result must also be on ``npy``. Skipped, each
with its reason recorded: a sample whose CPU run raises (an error sample,
nothing to compare), one whose inputs cannot be moved to ``npy``
(``bfloat16``, which NumPy lacks; sparse layouts), one that puts no tensor
on ``npy`` at all. OpInfos of :data:`SKIP` (random ops, ops returning
uninitialized memory, conversions to dtypes npy cannot hold) are not run
at all, each for its reason.

How "native" is decided
-----------------------
By running, not by guessing. Each npy run happens with
``BACKEND_PKG_STRICT=1``, under which the CPU fallback
(:mod:`backend_pkg.fallback`) raises ``NotImplementedError`` instead of
running an op that has no npy kernel. A sample that gets through is native:
every aten op it reached on the npy device had a kernel (registered, or one
of PyTorch's composites built from registered kernels). A sample stopped by
strict mode is run again, on fresh copies, with the fallback allowed, so its
correctness is still measured; the ops it fell back on are read from
``fallback.calls``. An OpInfo is ``native`` when all its compared samples
ran natively, ``fallback`` when any needed the fallback, ``unsupported``
when every sample raised some other error (``convolution_overrideable``,
which PyTorch raises for a backend without its own convolution, is never
the fallback's to catch), ``not compared`` when every sample was skipped.

Mapping OpInfos to aten overloads by watching a CPU run (a
``TorchDispatchMode``) was rejected: the CPU and npy dispatch tables differ.
``new_zeros``, for one, is a kernel of its own on the CPU, so a CPU trace
shows ``aten::new_zeros``, which npy has no kernel for; on npy PyTorch's
composite builds it from kernels npy does have. A trace-based map would call
it "not native" although it never leaves npy kernels, and it would call an
op native whose own kernel is registered but whose samples reach another,
missing, op. Strict mode asks the dispatcher itself, on the device.

Which OpInfos are covered
-------------------------
An OpInfo is covered, that is run in full and listed, when either

* its name or ``aten_name`` is the name of an aten op with an npy kernel
  (``aten::add.Tensor`` and ``aten::add_.Tensor`` give ``add``), see
  :func:`opinfos_of_registered_ops`; or
* a probe finds it native: the first sample the CPU accepts, of some dtype,
  runs on npy under strict mode without being refused. (A probe sample that
  raises another error also counts: it reached npy and failed there, which
  the table should show.)

Every other OpInfo is counted as probed and not native. Nothing here names
a kernel: as kernels are registered on other branches, more OpInfos pass
the probe and the same code measures them.

Expected failures and errors
----------------------------
Failures are recorded per OpInfo and dtype; ``tools/expected_failures.py``
lists the known ones with their reasons, and the samples that draw random
numbers (dropout inside attention), which are run but not compared.
:func:`unexpected` compares a run with that table; ``tests/tools/test_opinfo.py``
runs the whole measurement and fails on either kind of difference. The JSON
also carries the table, the error-input parity of ``tools/error_inputs.py`` and
the gradcheck counts, which ``tools/gradcheck_all.py --record`` adds (every sample;
``make coverage`` runs both).

Why not PyTorch's device-generic test machinery
-----------------------------------------------
``instantiate_device_type_tests`` and ``@ops``
(``torch/testing/_internal/common_device_type.py``) can drive npy: when
``backend_pkg`` is imported before that module, ``PrivateUse1TestBase`` is
among its test bases, a test class ``TestNpy`` becomes ``TestNpyPRIVATEUSE1``
with tests such as ``test_compare_cpu_add_npy_float32`` on samples made on
npy, and ``skipOps([xfail(...)])`` marks expected failures per OpInfo and
dtype, as here. This runner stays because the page needs
what those tests do not give: whether each sample ran on npy kernels alone
(strict mode, above) and the JSON; and because a per-sample rule (a random
sample, recognised by its arguments) needs ``sample_skips_and_xfails``,
which under pytest requires the ``pytest-subtests`` plugin
(``OpInfo._sample_callback_fn`` in ``torch/testing/_internal/opinfo/core.py``).
Samples are generated on the CPU and moved, so their values are the CPU's
and do not depend on npy's random generator.
"""

import argparse
import collections
import contextlib
import json
import math
import os
import re
import sys
import time
import warnings
from pathlib import Path

import error_inputs
import expected_failures
import opinfo_inputs
import torch
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

import backend_pkg
from backend_pkg import fallback

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "source" / "op_coverage.json"

DTYPES = [torch.float32, torch.float64, torch.int64, torch.bool, torch.complex64]
MAX_SAMPLES_PER_DTYPE = 12
SECONDS_PER_OPINFO = 5.0
# The whole run aims to end within TOTAL_SECONDS: an OpInfo's budget shrinks
# (to 0.25 s at least) when what is left would not keep RESERVE_SECONDS for
# each OpInfo still to come (most take 0.02 to 0.2 s).
TOTAL_SECONDS = 150.0
RESERVE_SECONDS = 0.2
MESSAGE_LIMIT = 400

# OpInfo name -> why its samples cannot be compared with CPU's results.
SKIP = {
    "bernoulli": "random: draws from the generator of its device",
    "cauchy": "random: draws from the generator of its device",
    "exponential": "random: draws from the generator of its device",
    "geometric": "random: draws from the generator of its device",
    "log_normal": "random: draws from the generator of its device",
    "multinomial": "random: draws from the generator of its device",
    "normal": "random: draws from the generator of its device",
    "uniform": "random: draws from the generator of its device",
    "rand_like": "random: draws from the generator of its device",
    "randn_like": "random: draws from the generator of its device",
    "randint_like": "random: draws from the generator of its device",
    "randint": "random: draws from the generator of its device",
    "randn": "random: draws from the generator of its device",
    "nn.functional.dropout": "random: the dropout mask comes from the device's generator",
    "nn.functional.dropout2d": "random: the dropout mask comes from the device's generator",
    "nn.functional.dropout3d": "random: the dropout mask comes from the device's generator",
    "nn.functional.alpha_dropout": "random: the dropout mask comes from the device's generator",
    "nn.functional.feature_alpha_dropout": "random: the dropout mask comes from the device's generator",
    "nn.functional.rrelu": "random: in training mode the slopes come from the device's generator",
    "empty": "returns uninitialized memory",
    "empty_like": "returns uninitialized memory",
    "empty_strided": "returns uninitialized memory",
    "empty_permuted": "returns uninitialized memory",
    "new_empty": "returns uninitialized memory",
    "new_empty_strided": "returns uninitialized memory",
    "bfloat16": "its result is bfloat16, which NumPy, and so the npy device, cannot hold",
    "chalf": "its result is complex32, which NumPy, and so the npy device, cannot hold",
    "resize_": "the elements it adds are uninitialized memory",
    "resize_as_": "the elements it adds are uninitialized memory",
}

_STRICT_OP = re.compile(r"npy device: (\S+) has no npy kernel")


def load_op_db():
    """The OpInfo database (importing it takes a few seconds)."""
    from torch.testing._internal.common_methods_invocations import op_db

    return op_db


def full_name(opinfo):
    """``name``, or ``name.variant`` for OpInfos with a ``variant_test_name``."""
    return f"{opinfo.name}.{opinfo.variant_test_name}" if opinfo.variant_test_name else opinfo.name


def family(opinfo):
    """The op family the Op coverage page groups ``opinfo`` under.

    An op outside ``torch.*`` belongs to its namespace (``nn.functional.conv2d``
    to ``torch.nn.functional``); a ``torch.*`` op to the kind of OpInfo PyTorch
    describes it with (``torch/testing/_internal/opinfo/core.py``: unary and
    binary elementwise, reductions), else to the views when its aten schema
    returns an alias of an input (``reshape(Tensor(a) self, ...) -> Tensor(a)``),
    else to the rest (``torch.ops.aten.*`` OpInfos too).
    """
    from torch.testing._internal.opinfo.core import BinaryUfuncInfo, ReductionOpInfo, UnaryUfuncInfo

    namespace = opinfo.name.rpartition(".")[0]
    if namespace and not opinfo.name.startswith("torch."):
        return f"torch.{namespace}"
    if isinstance(opinfo, UnaryUfuncInfo):
        return "torch: unary elementwise"
    if isinstance(opinfo, BinaryUfuncInfo):
        return "torch: binary elementwise"
    if isinstance(opinfo, ReductionOpInfo):
        return "torch: reductions"
    if _returns_alias(opinfo.aten_name):
        return "torch: views"
    return "torch: other ops"


def _returns_alias(aten_name):
    """Whether an overload of ``aten::<aten_name>`` returns a tensor aliasing an input, unwritten."""
    packet = getattr(torch.ops.aten, aten_name, None)
    if packet is None:
        return False
    returns = (ret for overload in packet.overloads() for ret in getattr(packet, overload)._schema.returns)
    return any(ret.alias_info is not None and not ret.alias_info.is_write for ret in returns)


def registered_op_names():
    """Names of the aten ops with an npy kernel: ``aten::add_.Tensor`` gives ``add_`` and ``add``."""
    names = set()
    for qualified in backend_pkg.registered_ops():
        name = qualified.split("::", 1)[1].split(".", 1)[0]
        names.add(name)
        names.add(name.rstrip("_") or name)
    return names


def opinfos_of_registered_ops(op_db):
    """The OpInfos named after an op with an npy kernel, by full name (skip list excluded)."""
    names = registered_op_names()
    return {
        full_name(opinfo): opinfo
        for opinfo in op_db
        if opinfo.name not in SKIP and (opinfo.name in names or opinfo.aten_name in names)
    }


def supported_dtypes(opinfo):
    cpu = opinfo.supported_dtypes("cpu")
    return [dtype for dtype in DTYPES if dtype in cpu]


@contextlib.contextmanager
def strict(enabled=True):
    """``BACKEND_PKG_STRICT=1`` while inside (the fallback reads it at each call)."""
    old = os.environ.get(fallback.STRICT_ENV)
    if enabled:
        os.environ[fallback.STRICT_ENV] = "1"
    else:
        os.environ.pop(fallback.STRICT_ENV, None)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(fallback.STRICT_ENV, None)
        else:
            os.environ[fallback.STRICT_ENV] = old


def is_strict_refusal(error):
    return isinstance(error, NotImplementedError) and fallback.STRICT_ENV in str(error)


def _short(error):
    text = f"{type(error).__name__}: {error}".strip()
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 3] + "..."


def _is_cpu_device(value):
    return (isinstance(value, str) and value == "cpu") or (isinstance(value, torch.device) and value.type == "cpu")


def _move(value, device):
    if isinstance(value, torch.Tensor):
        with torch.no_grad():
            return value.detach().to(device)
    return value


def _clone(value):
    if isinstance(value, torch.Tensor):
        with torch.no_grad():
            return value.detach().clone()
    return value


def sample_parts(sample, transform):
    """``(input, args, kwargs)`` of ``sample`` with every tensor passed through ``transform``."""
    return tree_map(transform, (sample.input, list(sample.args), dict(sample.kwargs)))


def to_npy(parts, stay_on_cpu=None):
    """A copy of ``(input, args, kwargs)`` on npy, tensors and ``cpu`` device arguments alike.

    ``stay_on_cpu`` (from :func:`cpu_placed`) marks the leaves the sample
    puts on the CPU whatever the device, which stay there. Non-strided
    tensors (sparse, mkldnn) raise TypeError: npy holds strided tensors only.
    """
    leaves, spec = tree_flatten(parts)
    if stay_on_cpu is None or len(stay_on_cpu) != len(leaves):
        stay_on_cpu = [False] * len(leaves)
    moved = []
    for leaf, keep in zip(leaves, stay_on_cpu):
        if isinstance(leaf, torch.Tensor) and not keep:
            if leaf.layout != torch.strided:
                raise TypeError(f"npy holds strided tensors only, not {leaf.layout}")
            leaf = _move(leaf, backend_pkg.DEVICE_NAME)
        elif _is_cpu_device(leaf):
            leaf = backend_pkg.DEVICE_NAME if isinstance(leaf, str) else torch.device(backend_pkg.DEVICE_NAME)
        moved.append(leaf)
    return tree_unflatten(moved, spec)


def cpu_placed(meta_sample):
    """Which leaves of a sample made for the ``meta`` device are CPU tensors anyway.

    Some samples put an argument on the CPU on every device, because the op
    requires it there (``tensor_split``'s ``tensor_indices_or_sections``).
    Generating the same samples for ``meta`` tells those apart generically:
    what the generator placed on ``device`` is on meta, the rest on the CPU.
    """
    if meta_sample is None:
        return None
    leaves, _ = tree_flatten(sample_parts(meta_sample, lambda v: v))
    return [isinstance(v, torch.Tensor) and v.device.type == "cpu" for v in leaves]


def call(opinfo, parts):
    sample_input, args, kwargs = parts
    return opinfo.op(sample_input, *args, **kwargs)


def compare(actual, expected, tolerance=None):
    """Raise AssertionError unless the npy result ``actual`` matches CPU's ``expected``, within
    ``tolerance`` (``rtol`` and ``atol``; assert_close's defaults when None)."""
    actual_leaves, actual_spec = tree_flatten(actual)
    expected_leaves, expected_spec = tree_flatten(expected)
    if len(actual_leaves) != len(expected_leaves) or str(actual_spec) != str(expected_spec):
        raise AssertionError(f"result structure differs: npy {actual_spec}, cpu {expected_spec}")
    for index, (got, want) in enumerate(zip(actual_leaves, expected_leaves)):
        where = f"result {index}: " if len(expected_leaves) > 1 else ""
        if isinstance(want, torch.Tensor):
            if not isinstance(got, torch.Tensor):
                raise AssertionError(f"{where}expected a tensor, npy returned {type(got).__name__}")
            if want.device.type == "cpu" and got.device.type != backend_pkg.DEVICE_NAME:
                raise AssertionError(f"{where}result is on {got.device}, expected npy")
            got = got.cpu()  # not detach(): npy results carry no grad here, and detach is an op too
            if got.layout != want.layout:
                raise AssertionError(f"{where}layout {got.layout} != {want.layout}")
            try:
                torch.testing.assert_close(got, want, equal_nan=True, **(tolerance or {}))
            except AssertionError as error:
                raise AssertionError(f"{where}{error}") from None
        elif isinstance(want, float) and isinstance(got, float) and math.isnan(want):
            if not math.isnan(got):
                raise AssertionError(f"{where}{got} != nan")
        elif got != want:
            raise AssertionError(f"{where}{got!r} != {want!r}")


def run_sample(opinfo, sample, stay_on_cpu=None, tolerance=None):
    """Run one sample on CPU and npy, and compare the results within ``tolerance`` (see
    :func:`compare`); a dict: outcome, native, fallback ops, message.

    ``native`` is True when the npy run needed no fallback, False when it
    did, None when it raised before strict mode had anything to refuse.
    """
    pristine = sample_parts(sample, _clone)
    try:
        npy_parts = to_npy(pristine, stay_on_cpu)
    except Exception as error:  # bfloat16 and other dtypes NumPy cannot hold
        return {"outcome": "skipped", "reason": f"inputs cannot move to npy: {_short(error)}"}
    try:
        expected = call(opinfo, sample_parts(sample, _clone))
    except Exception:
        return {"outcome": "skipped", "reason": "CPU raises (an error sample)"}

    native = True
    used = []
    try:
        with strict():
            actual = call(opinfo, npy_parts)
    except Exception as error:
        if not is_strict_refusal(error):
            return {"outcome": "failed", "native": None, "message": _short(error)}
        native = False
        before = collections.Counter(fallback.calls)
        try:
            with strict(False):
                actual = call(opinfo, to_npy(pristine, stay_on_cpu))
        except Exception as error2:
            used = sorted((fallback.calls - before).keys())
            return {"outcome": "failed", "native": False, "fallback_ops": used, "message": _short(error2)}
        used = sorted((fallback.calls - before).keys())
        if not used:  # refused in strict mode, but nothing counted: name it from the message
            match = _STRICT_OP.search(str(error))
            used = [match.group(1)] if match else []
    if not (_has_npy_tensor(npy_parts) or _has_npy_tensor(actual)):
        return {"outcome": "skipped", "reason": "no tensor reaches npy (nothing to compare)"}
    try:
        compare(actual, expected, tolerance)
    except Exception as error:
        return {"outcome": "failed", "native": native, "fallback_ops": used, "message": _short(error)}
    return {"outcome": "passed", "native": native, "fallback_ops": used}


def _has_npy_tensor(tree):
    return any(
        isinstance(leaf, torch.Tensor) and leaf.device.type == backend_pkg.DEVICE_NAME for leaf in tree_flatten(tree)[0]
    )


def samples(opinfo, dtype, limit=MAX_SAMPLES_PER_DTYPE, requires_grad=False):
    """At most ``limit`` ``(cpu sample, stay_on_cpu)`` pairs of ``opinfo`` for ``dtype``, and
    whether more were left out."""
    taken = []
    for sample in opinfo_inputs.sample_inputs(opinfo, "cpu", dtype, requires_grad):
        if limit is not None and len(taken) >= limit:
            return _with_placement(opinfo, dtype, taken, requires_grad), True
        taken.append(sample)
    return _with_placement(opinfo, dtype, taken, requires_grad), False


def _with_placement(opinfo, dtype, taken, requires_grad):
    metas = []
    try:
        for sample in opinfo_inputs.sample_inputs(opinfo, "meta", dtype, requires_grad):
            if len(metas) == len(taken):
                break
            metas.append(sample)
    except Exception:
        pass  # a generator that needs data: every tensor moves
    if len(metas) != len(taken):
        metas = [None] * len(taken)
    return [(sample, cpu_placed(meta)) for sample, meta in zip(taken, metas)]


def probe(opinfo):
    """Whether some dtype's first CPU-accepted sample runs on npy in strict mode without a refusal."""
    for dtype in supported_dtypes(opinfo):
        try:
            generator = opinfo_inputs.sample_inputs(opinfo, "cpu", dtype)
            for sample in generator:
                pristine = sample_parts(sample, _clone)
                try:
                    call(opinfo, sample_parts(sample, _clone))
                except Exception:
                    continue  # an error sample: try the next one
                try:
                    npy_parts = to_npy(pristine)
                except Exception:
                    break
                try:
                    with strict():
                        call(opinfo, npy_parts)
                except Exception as error:
                    if not is_strict_refusal(error):
                        return True  # reached npy kernels, and they raised: worth measuring
                    break
                else:
                    return True
        except Exception:
            continue
    return False


def run_opinfo(opinfo, limit=MAX_SAMPLES_PER_DTYPE, budget=SECONDS_PER_OPINFO):
    """Every sample (up to ``limit`` per dtype) of ``opinfo``; its row of the results."""
    row = {
        "name": full_name(opinfo),
        "family": family(opinfo),
        "status": "native",
        "passed": 0,
        "failed": 0,
        "skipped": 0,
        "native_samples": 0,
        "fallback_samples": 0,
        "dtypes": [],
        "truncated": False,
        "fallback_ops": [],
        "first_failure": None,
        "failures": {},
        "skip_reasons": {},
    }
    fallback_ops = set()
    start = time.perf_counter()
    complete = row["complete_dtypes"] = set()  # the dtypes whose every sample ran (see unexpected())
    for dtype in supported_dtypes(opinfo):
        row["dtypes"].append(str(dtype).removeprefix("torch."))
        complete.add(row["dtypes"][-1])
        try:
            taken, truncated = samples(opinfo, dtype, limit)
        except Exception as error:
            row["skipped"] += 1
            reason = f"sample_inputs raised: {_short(error)}"
            row["skip_reasons"][reason] = row["skip_reasons"].get(reason, 0) + 1
            continue
        row["truncated"] |= truncated
        tolerance = expected_failures.tolerance(row["name"], row["dtypes"][-1])
        for sample, stay_on_cpu in taken:
            random_reason = expected_failures.random_sample_reason(row["name"], sample)
            if random_reason is not None:
                result = {"outcome": "skipped", "reason": f"random: {random_reason}"}
            elif budget is not None and time.perf_counter() - start > budget:
                result = {"outcome": "skipped", "reason": f"over this OpInfo's time budget, {budget:.2f} s"}
                row["complete_dtypes"].discard(row["dtypes"][-1])
            else:
                result = run_sample(opinfo, sample, stay_on_cpu, tolerance)
            outcome = result["outcome"]
            row[outcome] += 1
            if outcome == "skipped":
                reason = result["reason"]
                row["skip_reasons"][reason] = row["skip_reasons"].get(reason, 0) + 1
                continue
            if result["native"]:
                row["native_samples"] += 1
            elif result["native"] is False:
                row["fallback_samples"] += 1
                fallback_ops.update(result.get("fallback_ops", []))
            if outcome == "failed":
                row["failures"].setdefault(row["dtypes"][-1], result["message"])
            if outcome == "failed" and row["first_failure"] is None:
                row["first_failure"] = f"[{row['dtypes'][-1]}] {result['message']}"
    row["fallback_ops"] = sorted(fallback_ops)
    row["complete_dtypes"] = sorted(complete)
    if row["fallback_samples"]:
        row["status"] = "fallback"
    elif row["native_samples"]:
        row["status"] = "native"
    elif row["failed"]:
        row["status"] = "unsupported"  # no sample ran on npy: each raised, the fallback unasked
    else:
        row["status"] = "not compared"  # every sample skipped
    return row


def unexpected(rows):
    """Failures the expected-failures table does not list, and listed entries that passed.

    Both as sorted ``(OpInfo, dtype)`` pairs. An entry counts as passing only
    when every sample of its OpInfo and dtype ran (none cut by the time budget).
    """
    failed = {(row["name"], dtype) for row in rows for dtype in row["failures"]}
    ran = {(row["name"], dtype) for row in rows for dtype in row["complete_dtypes"]}
    listed = set(expected_failures.SAMPLES)
    return sorted(failed - listed), sorted((listed & ran) - failed)


def select(op_db, names=None):
    """The OpInfos to run in full: by name when ``names`` is given, else named or probed native."""
    if names is not None:
        wanted = set(names)
        return [o for o in op_db if (o.name in wanted or full_name(o) in wanted) and o.name not in SKIP]
    named = opinfos_of_registered_ops(op_db)
    chosen = []
    not_native = 0
    for opinfo in op_db:
        if opinfo.name in SKIP:
            continue
        if full_name(opinfo) in named or probe(opinfo):
            chosen.append(opinfo)
        else:
            not_native += 1
    return chosen, not_native


def run(names=None, limit=MAX_SAMPLES_PER_DTYPE, progress=None):
    """Measure; the results as the dict written to ``op_coverage.json``."""
    start = time.perf_counter()
    op_db = load_op_db()
    calls_before = collections.Counter(fallback.calls)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if names is None:
            chosen, not_native = select(op_db)
        else:
            chosen, not_native = select(op_db, names), None
        probe_seconds = time.perf_counter() - start
        rows = []
        for index, opinfo in enumerate(chosen):
            t0 = time.perf_counter()
            # What is left of TOTAL_SECONDS, keeping RESERVE_SECONDS for each OpInfo after this one.
            left = TOTAL_SECONDS - (t0 - start) - RESERVE_SECONDS * (len(chosen) - index - 1)
            row = run_opinfo(opinfo, limit, budget=min(SECONDS_PER_OPINFO, max(0.25, left)))
            row["seconds"] = round(time.perf_counter() - t0, 3)
            rows.append(row)
            if progress:
                progress(row)
    fallback_calls = fallback.calls - calls_before
    rows.sort(key=lambda r: r["name"])
    totals = {
        key: sum(r[key] for r in rows) for key in ("passed", "failed", "skipped", "native_samples", "fallback_samples")
    }
    return {
        "generated_by": "tools/op_coverage.py (make coverage); do not edit by hand",
        "torch": torch.__version__.split("+")[0],
        "dtypes": [str(d).removeprefix("torch.") for d in DTYPES],
        "max_samples_per_dtype": limit,
        "seconds_per_opinfo": SECONDS_PER_OPINFO,
        "total_seconds_target": TOTAL_SECONDS,
        "native_kernels": len(backend_pkg.registered_ops()),
        "opinfos_in_db": len(op_db),
        "opinfos_skipped": dict(sorted(SKIP.items())),
        "expected_failures": [
            {"opinfo": name, "dtype": dtype, "reason": reason}
            for (name, dtype), reason in sorted(expected_failures.SAMPLES.items())
        ],
        "random_samples": dict(
            sorted((name, reason) for name, (_, reason) in expected_failures.RANDOM_SAMPLES.items())
        ),
        "summation_tolerance": {
            "opinfos": sorted(expected_failures.SUMMED_IN_ANOTHER_ORDER),
            "dtypes": list(expected_failures.SUMMATION_DTYPES),
            **expected_failures.SUMMATION_TOLERANCE,
        },
        "opinfos_probed_not_native": not_native,
        "opinfos_covered": len(rows),
        "opinfos_native": sum(1 for r in rows if r["status"] == "native"),
        "totals": totals,
        "fallback_calls": dict(sorted(fallback_calls.items())),
        "seconds": {"probe": round(probe_seconds, 1), "total": round(time.perf_counter() - start, 1)},
        "results": rows,
    }


def error_parity(op_db):
    """The error-inputs counts (see ``tools/error_inputs.py``) and the expected failures among them."""
    counts, failures = error_inputs.run(op_db)
    return {
        **counts,
        "expected_failures": {
            case: expected_failures.ERROR_INPUTS.get(case, "NOT LISTED: " + what)
            for case, what in sorted(failures.items())
        },
    }


def runner_arguments(doc, ops, limit, samples):
    """The options of both OpInfo runners (this one and ``gradcheck_all.py``): ``--ops``, ``--limit``, ``-v``."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--ops", nargs="*", help=f"only these OpInfos (by {ops})")
    parser.add_argument("--limit", type=int, default=limit, help=f"{samples}, 0 for all (default %(default)s)")
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser


def progress_lines(verbose, line):
    """A runner's ``progress``: with ``-v``, ``line(row)`` on stderr for every OpInfo as it ends."""

    def progress(row):
        if verbose:
            print(line(row), file=sys.stderr)

    return progress


def main(argv=None):
    parser = runner_arguments(__doc__, "name; no probe", MAX_SAMPLES_PER_DTYPE, "samples per dtype and OpInfo")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="where to write the JSON")
    options = parser.parse_args(argv)
    progress = progress_lines(
        options.verbose,
        lambda row: (
            f"{row['name']:40} {row['status']:8} {row['passed']}/{row['passed'] + row['failed']}"
            f" skipped {row['skipped']} {row['seconds']:.2f}s"
        ),
    )
    data = run(options.ops, options.limit if options.limit > 0 else None, progress)
    data["error_inputs"] = error_parity(load_op_db())
    options.output.write_text(json.dumps(data, indent=1) + "\n")
    t = data["totals"]
    print(
        f"{data['opinfos_covered']} OpInfos covered ({data['opinfos_native']} native), "
        f"{t['passed']}/{t['passed'] + t['failed']} samples passed, {t['skipped']} skipped, "
        f"{'at most %d' % options.limit if options.limit > 0 else 'all'} samples per dtype and OpInfo; "
        f"{data['seconds']['total']} s; wrote {options.output}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
