"""Gradients on npy checked by PyTorch's own checker, over the OpInfo samples.

``torch.autograd.gradcheck`` compares the gradients autograd computes (the
backward kernels) with finite differences of the forward, on the device the
inputs are on. Here it runs as PyTorch's ``TestBwdGradients.test_fn_grad``
(``test/test_ops_gradients.py``, through ``TestGradients._check_helper`` in
``torch/testing/_internal/common_utils.py``) runs it: in float64, on every
sample of every OpInfo with ``supports_autograd`` whose backward dtypes on
the CPU include float64, each tensor argument that requires grad an input
of the check, the sample's ``gradcheck_wrapper`` and
``output_process_fn_grad`` applied, ``check_undefined_grad`` and
``check_grad_dtypes`` on. Two settings are cheaper than PyTorch's tests:
``fast_mode=True`` always (one random projection of the Jacobian instead of
all of it; PyTorch's default too, which a few OpInfos turn off with
``gradcheck_fast_mode=False``) and ``check_batched_grad=False`` (the
backward under ``vmap``, a check of batching rules rather than of the
device's kernels).

Which OpInfos: those the Op coverage page covers (``tools/op_coverage.py``:
named after an op with an npy kernel, or probed native), read from
``source/op_coverage.json``. Samples are generated for the CPU, as there,
from a fixed seed (every run checks the same values), and moved to npy with
their storage (``error_inputs.on_npy``: a view keeps its offset and strides
over a copy of its whole storage, which ``as_strided``'s partial-view
samples reach past the view), except the arguments a sample puts on the CPU
on every device (``op_coverage.cpu_placed``).

Each sample's check runs under ``BACKEND_PKG_STRICT=1`` first, as the
forward measurement does: refused, it runs again with the CPU fallback
allowed and counts as a fallback sample. When gradcheck fails on npy, the
same check runs on the CPU sample: if it fails there too, the sample is
skipped ("fails on the CPU too"; with torch 2.13 each such OpInfo is one
that ``op_db`` marks ``expectedFailure`` or ``skip`` for ``TestBwdGradients``,
such as the conversions ``float`` and ``half``, whose float32 result
gradcheck cannot compare), and it is npy's failure only when the CPU passes.

:data:`expected_failures.GRADCHECK` lists the OpInfos with npy failures and
why; ``tests/tools/test_gradcheck.py`` runs the first :data:`TEST_SAMPLES` samples
of each OpInfo (all of a listed one's) and fails on an unlisted failure and
on a listed OpInfo that now passes. ``make coverage`` runs every sample and
records the counts in ``source/op_coverage.json`` (``python tools/gradcheck_all.py
--record``, after ``tools/op_coverage.py`` has written the file); ``python
tools/gradcheck_all.py`` runs every sample and prints the counts and the
differences from the table.
"""

import collections
import json
import sys
import time
import warnings

import error_inputs
import expected_failures
import op_coverage
import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from backend_pkg import fallback

DTYPE = torch.float64
TEST_SAMPLES = 4  # per OpInfo in tests/tools/test_gradcheck.py, which make test runs: keep it cheap
MESSAGE_LIMIT = 300


def differentiable(opinfos):
    """The OpInfos of ``opinfos`` that PyTorch's gradient tests check in float64."""
    return [
        opinfo for opinfo in opinfos if opinfo.supports_autograd and DTYPE in opinfo.supported_backward_dtypes("cpu")
    ]


def covered(op_db):
    """The OpInfos of ``op_db`` listed in the committed ``source/op_coverage.json``."""
    names = {row["name"] for row in json.loads(op_coverage.OUTPUT.read_text())["results"]}
    return [opinfo for opinfo in op_db if op_coverage.full_name(opinfo) in names]


def _short(error):
    """The head of an error: gradcheck's own messages go on for a paragraph after the numbers."""
    text = f"{type(error).__name__}: {error}".split("\n\n")[0]
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 3] + "..."


def gradcheck(opinfo, sample):
    """Run gradcheck on ``sample`` as PyTorch's ``test_fn_grad`` does; raise if it fails."""
    leaves, spec = tree_flatten((sample.input, list(sample.args), dict(sample.kwargs)))
    differentiated = [isinstance(leaf, torch.Tensor) and leaf.requires_grad for leaf in leaves]

    def fn(*inputs):
        given = iter(inputs)
        sample_input, args, kwargs = tree_unflatten(
            [next(given) if wanted else leaf for leaf, wanted in zip(leaves, differentiated)], spec
        )
        output = opinfo.gradcheck_wrapper(opinfo.get_op(), sample_input, *args, **kwargs)
        if sample.output_process_fn_grad is not None:
            return sample.output_process_fn_grad(output)
        return output

    inputs = tuple(leaf for leaf, wanted in zip(leaves, differentiated) if wanted)
    torch.autograd.gradcheck(
        fn,
        inputs,
        fast_mode=True,
        check_batched_grad=False,
        check_grad_dtypes=True,
        check_undefined_grad=True,
        nondet_tol=opinfo.gradcheck_nondet_tol,
    )


def run_sample(opinfo, sample, stay_on_cpu=None):
    """gradcheck of one sample on npy: a dict with its outcome, and whether it ran natively."""
    try:
        npy_sample = error_inputs.on_npy(sample, stay_on_cpu)
    except Exception as error:  # bfloat16 and other dtypes NumPy cannot hold
        return {"outcome": "skipped", "reason": f"inputs cannot move to npy: {_short(error)}"}
    native, fallback_ops = True, []
    try:
        with op_coverage.strict():
            gradcheck(opinfo, npy_sample)
    except Exception as error:
        failure = error
        if op_coverage.is_strict_refusal(error):  # again, on fresh copies, with the fallback allowed
            native, failure = False, None
            before = collections.Counter(fallback.calls)
            try:
                gradcheck(opinfo, error_inputs.on_npy(sample, stay_on_cpu))
            except Exception as error2:
                failure = error2
            fallback_ops = sorted((fallback.calls - before).keys())
        if failure is not None:
            try:
                gradcheck(opinfo, sample)
            except Exception:
                return {"outcome": "skipped", "reason": "gradcheck fails on the CPU too"}
            return {"outcome": "failed", "native": native, "fallback_ops": fallback_ops, "message": _short(failure)}
    return {"outcome": "passed", "native": native, "fallback_ops": fallback_ops}


def run_opinfo(opinfo, limit=None):
    """gradcheck of the first ``limit`` samples of ``opinfo`` (all when None); its row of results."""
    row = {
        "name": op_coverage.full_name(opinfo),
        "passed": 0,
        "failed": 0,
        "skipped": 0,
        "native_samples": 0,
        "fallback_samples": 0,
        "truncated": False,
        "complete": True,
        "fallback_ops": [],
        "first_failure": None,
        "skip_reasons": {},
    }
    try:
        with torch.random.fork_rng(devices=[]):  # the same values on every run, and the caller's RNG kept
            torch.default_generator.manual_seed(0)
            taken, row["truncated"] = op_coverage.samples(opinfo, DTYPE, limit, requires_grad=True)
    except Exception as error:
        return {**row, "skipped": 1, "complete": False, "skip_reasons": {f"sample_inputs raised: {_short(error)}": 1}}
    row["complete"] = not row["truncated"]
    fallback_ops = set()
    for sample, stay_on_cpu in taken:
        result = run_sample(opinfo, sample, stay_on_cpu)
        row[result["outcome"]] += 1
        if result["outcome"] == "skipped":
            row["skip_reasons"][result["reason"]] = row["skip_reasons"].get(result["reason"], 0) + 1
            continue
        row["native_samples" if result["native"] else "fallback_samples"] += 1
        fallback_ops.update(result["fallback_ops"])
        if result["outcome"] == "failed" and row["first_failure"] is None:
            row["first_failure"] = result["message"]
    row["fallback_ops"] = sorted(fallback_ops)
    return row


def run(opinfos, limit=None, progress=None):
    """gradcheck over the differentiable ``opinfos``: one row each, at most ``limit`` samples per
    OpInfo, every sample of the OpInfos :data:`expected_failures.GRADCHECK` lists."""
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for opinfo in differentiable(opinfos):
            start = time.perf_counter()
            listed = op_coverage.full_name(opinfo) in expected_failures.GRADCHECK
            row = run_opinfo(opinfo, None if listed else limit)
            row["seconds"] = round(time.perf_counter() - start, 3)
            rows.append(row)
            if progress:
                progress(row)
    return rows


def unexpected(rows):
    """OpInfos that failed and are not listed, and listed ones whose every sample passed.

    Both sorted lists of OpInfo names. A listed OpInfo counts as passing only
    when all its samples ran.
    """
    failed = {row["name"] for row in rows if row["failed"]}
    complete = {row["name"] for row in rows if row["complete"]}
    listed = set(expected_failures.GRADCHECK)
    return sorted(failed - listed), sorted((listed & complete) - failed)


def summary(rows, seconds):
    """The counts ``source/op_coverage.json`` records under ``"gradcheck"``."""
    skip_reasons = collections.Counter()
    for row in rows:
        skip_reasons.update(row["skip_reasons"])
    return {
        "dtype": str(DTYPE).removeprefix("torch."),
        "opinfos": len(rows),
        "samples": sum(row["passed"] + row["failed"] + row["skipped"] for row in rows),
        **{
            key: sum(row[key] for row in rows)
            for key in ("passed", "failed", "skipped", "native_samples", "fallback_samples")
        },
        "skip_reasons": dict(sorted(skip_reasons.items())),
        "opinfos_skipped": {row["name"]: row["skip_reasons"] for row in rows if row["skipped"]},
        "opinfos_failing": {row["name"]: row["first_failure"] for row in rows if row["failed"]},
        "fallback_ops": sorted({op for row in rows for op in row["fallback_ops"]}),
        "expected_failures": dict(sorted(expected_failures.GRADCHECK.items())),
        "seconds": round(seconds, 1),
    }


def main(argv=None):
    parser = op_coverage.runner_arguments(__doc__, "full name", 0, "samples per OpInfo")
    parser.add_argument(
        "--record", action="store_true", help='write the counts into source/op_coverage.json, under "gradcheck"'
    )
    options = parser.parse_args(argv)
    progress = op_coverage.progress_lines(
        options.verbose,
        lambda row: (
            f"{row['name']:45} {row['passed']}/{row['passed'] + row['failed']} "
            f"skipped {row['skipped']} {row['seconds']:.2f}s {' '.join(row['fallback_ops'])}"
        ),
    )
    start = time.perf_counter()
    opinfos = covered(op_coverage.load_op_db())
    if options.ops:
        opinfos = [opinfo for opinfo in opinfos if op_coverage.full_name(opinfo) in options.ops]
    rows = run(opinfos, options.limit or None, progress)
    counts = summary(rows, time.perf_counter() - start)
    print(json.dumps({key: value for key, value in counts.items() if key != "expected_failures"}, indent=1))
    if options.record:
        data = json.loads(op_coverage.OUTPUT.read_text())
        data["gradcheck"] = counts
        op_coverage.OUTPUT.write_text(json.dumps(data, indent=1) + "\n")
    unlisted, passing = unexpected(rows)
    for name in unlisted:
        print(f"NOT LISTED in GRADCHECK (tools/expected_failures.py): {name}: {counts['opinfos_failing'][name]}")
    for name in passing:
        print(f"LISTED but passes now: delete from GRADCHECK: {name}")
    return 1 if unlisted or passing else 0


if __name__ == "__main__":
    sys.exit(main())
