"""The OpInfo harness (tools/op_coverage.py) and the JSON it committed to source/."""

import json
import sys
import time
import types
from pathlib import Path

import pytest
import torch
from torch.testing._internal.opinfo.core import SampleInput
from torch.utils._pytree import tree_flatten

import backend_pkg

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import expected_failures  # noqa: E402
import op_coverage  # noqa: E402
import opinfo_inputs  # noqa: E402

FAST_SUBSET = ["add", "mul", "sum", "view", "expand", "index_select", "cat"]


@pytest.fixture(scope="module")
def op_db():
    return op_coverage.load_op_db()


@pytest.fixture(scope="module")
def committed():
    return json.loads(op_coverage.OUTPUT.read_text())


def test_json_lists_every_opinfo_of_a_registered_op(op_db, committed):
    listed = {row["name"] for row in committed["results"]}
    expected = op_coverage.opinfos_of_registered_ops(op_db)
    assert expected, "no registered op has an OpInfo: the name mapping is broken"
    missing = sorted(set(expected) - listed)
    assert not missing, (
        f"source/op_coverage.json is stale: OpInfos of natively registered ops missing: {missing}; run `make coverage`"
    )


def test_json_names_real_opinfos(op_db, committed):
    names = {op_coverage.full_name(opinfo) for opinfo in op_db}
    unknown = sorted(row["name"] for row in committed["results"] if row["name"] not in names)
    assert not unknown, f"not OpInfos of this torch: {unknown}; run `make coverage`"
    assert committed["totals"]["passed"] == sum(row["passed"] for row in committed["results"])


@pytest.fixture(scope="module")
def measured():
    """The whole ``make coverage`` measurement, run now."""
    return op_coverage.run()


def test_every_sample_failure_is_an_expected_one(measured):
    unlisted, _ = op_coverage.unexpected(measured["results"])
    failures = {
        (row["name"], dtype): message for row in measured["results"] for dtype, message in row["failures"].items()
    }
    assert not unlisted, (
        "OpInfo samples that differ from the CPU on npy (fix the kernel, or list them with their "
        "reason in tools/expected_failures.py):\n"
        + "\n".join(f"  {name} [{dtype}]: {failures[name, dtype][:300]}" for name, dtype in unlisted)
    )


def test_no_expected_sample_failure_passes_now(measured):
    _, passing = op_coverage.unexpected(measured["results"])
    assert not passing, f"these now pass on npy: delete them from tools/expected_failures.py: {passing}"


def test_committed_json_lists_the_expected_failures(committed):
    listed = {(entry["opinfo"], entry["dtype"]) for entry in committed["expected_failures"]}
    assert listed == set(expected_failures.SAMPLES), "run `make coverage`"
    assert set(committed["random_samples"]) == set(expected_failures.RANDOM_SAMPLES), "run `make coverage`"


def test_fast_subset_has_no_failures(op_db):
    start = time.perf_counter()
    chosen = op_coverage.select(op_db, FAST_SUBSET)
    assert {opinfo.name for opinfo in chosen} == set(FAST_SUBSET)
    failures = {}
    for opinfo in chosen:
        row = op_coverage.run_opinfo(opinfo, limit=None)  # every sample
        assert row["passed"] > 0, row
        if row["failed"]:
            failures[row["name"]] = (row["failed"], row["first_failure"])
    assert not failures, failures
    assert time.perf_counter() - start < 30


def test_skip_list_entries_have_reasons(op_db):
    names = {opinfo.name for opinfo in op_db}
    for name, reason in op_coverage.SKIP.items():
        assert isinstance(reason, str) and reason.strip(), name
        assert name in names, f"skip list names {name!r}, which is no OpInfo"


def _leaves(sample):
    return tree_flatten(op_coverage.sample_parts(sample, lambda value: value))[0]


def _same_samples(ours, theirs):
    assert len(ours) == len(theirs) > 0
    for our_sample, their_sample in zip(ours, theirs):
        for ours_leaf, theirs_leaf in zip(_leaves(our_sample), _leaves(their_sample), strict=True):
            if isinstance(theirs_leaf, torch.Tensor):
                torch.testing.assert_close(ours_leaf, theirs_leaf, rtol=0, atol=0, equal_nan=True)
            elif not callable(theirs_leaf):
                assert ours_leaf == theirs_leaf


@pytest.mark.parametrize(
    "name, dtype",
    [
        ("add", torch.float32),  # random values: the seed before each sample
        ("tensor_split", torch.float64),  # an argument the sample puts on the CPU
        ("cumsum", torch.float64),
        ("nn.functional.conv2d", torch.complex64),
    ],
)
def test_samples_are_those_sample_inputs_gives(op_db, name, dtype):
    [opinfo] = op_coverage.select(op_db, [name])
    for requires_grad in (False, True):
        ours = list(opinfo_inputs.sample_inputs(opinfo, "cpu", dtype, requires_grad))
        _same_samples(ours, list(opinfo.sample_inputs("cpu", dtype, requires_grad=requires_grad)))


def test_error_inputs_are_those_error_inputs_gives(op_db):
    [opinfo] = op_coverage.select(op_db, ["index_select"])
    ours, theirs = list(opinfo_inputs.error_inputs(opinfo, "cpu")), list(opinfo.error_inputs("cpu"))
    _same_samples([case.sample_input for case in ours], [case.sample_input for case in theirs])
    assert [(case.error_type, case.error_regex) for case in ours] == [
        (case.error_type, case.error_regex) for case in theirs
    ]


# The harness itself must be able to say no.


def _opinfo(op, name="fake"):
    return types.SimpleNamespace(op=op, name=name, variant_test_name="")


def test_a_wrong_npy_result_fails():
    def off_by_one_on_npy(x):
        return x + 1 if x.device.type == backend_pkg.DEVICE_NAME else x + 0

    result = op_coverage.run_sample(_opinfo(off_by_one_on_npy), SampleInput(torch.ones(3)))
    assert result["outcome"] == "failed"
    assert "not close" in result["message"]


def test_the_summation_tolerance_passes_reordered_sums_and_fails_a_wrong_element():
    """Matrix products compare within SUMMATION_TOLERANCE in float32: a sum in another order
    passes, an element off by a thousandth of its value does not."""
    tolerance = expected_failures.tolerance("matmul", "float32")
    assert tolerance == expected_failures.SUMMATION_TOLERANCE
    assert expected_failures.tolerance("matmul", "float64") == {}
    a, b = torch.randn(8, 64, generator=torch.Generator().manual_seed(0)), torch.randn(64, 8)

    def reordered_on_npy(x, y):
        if x.device.type != backend_pkg.DEVICE_NAME:
            return x @ y
        products = x.cpu()[:, :, None] * y.cpu()[None]
        return products.flip(1).cumsum(1)[:, -1].to(x.device)  # the same sums, last term first

    def one_wrong_element_on_npy(x, y):
        product = x @ y
        return (
            product.index_add(0, torch.tensor([0], device=x.device), product[:1] * 1e-3)
            if x.device.type == backend_pkg.DEVICE_NAME
            else product
        )

    sample = SampleInput(a, args=(b,))
    assert op_coverage.run_sample(_opinfo(reordered_on_npy), sample, tolerance=tolerance)["outcome"] == "passed"
    wrong = op_coverage.run_sample(_opinfo(one_wrong_element_on_npy), sample, tolerance=tolerance)
    assert wrong["outcome"] == "failed" and "not close" in wrong["message"]


def test_a_result_left_on_cpu_fails():
    result = op_coverage.run_sample(_opinfo(lambda x: x.cpu() * 2), SampleInput(torch.ones(3)))
    assert result["outcome"] == "failed"
    assert "expected npy" in result["message"]


def test_a_wrong_dtype_fails():
    def wrong_dtype_on_npy(x):
        return x.double() if x.device.type == backend_pkg.DEVICE_NAME else x.clone()

    result = op_coverage.run_sample(_opinfo(wrong_dtype_on_npy), SampleInput(torch.ones(3)))
    assert result["outcome"] == "failed"
    assert "dtype" in result["message"]


@torch.library.custom_op("op_coverage_test::twice", mutates_args=(), device_types="cpu")
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@pytest.mark.filterwarnings("ignore:npy device")
def test_an_op_without_npy_kernel_counts_as_fallback():
    result = op_coverage.run_sample(_opinfo(twice), SampleInput(torch.arange(3.0)))
    assert result == {"outcome": "passed", "native": False, "fallback_ops": ["op_coverage_test::twice"]}


def test_inputs_npy_cannot_hold_are_skipped():
    result = op_coverage.run_sample(_opinfo(torch.neg), SampleInput(torch.ones(3, dtype=torch.bfloat16)))
    assert result["outcome"] == "skipped"
    assert "bfloat16" in result["reason"]


def test_unexpected_names_unlisted_failures_and_listed_passes(monkeypatch):
    monkeypatch.setattr(expected_failures, "SAMPLES", {("listed", "float32"): "why", ("cut", "float32"): "why"})
    rows = [
        {"name": "new", "failures": {"int64": "wrong"}, "complete_dtypes": ["int64"]},
        {"name": "listed", "failures": {}, "complete_dtypes": ["float32"]},
        {"name": "cut", "failures": {}, "complete_dtypes": []},  # samples cut by time: nothing known
    ]
    assert op_coverage.unexpected(rows) == ([("new", "int64")], [("listed", "float32")])
