"""Gradients on npy against PyTorch's own checker (tools/gradcheck_all.py), gated by the table."""

import json
import sys
import types
from pathlib import Path

import pytest
import torch
from torch.testing._internal.opinfo.core import SampleInput

import backend_pkg

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import expected_failures  # noqa: E402
import gradcheck_all  # noqa: E402
import op_coverage  # noqa: E402


@pytest.fixture(scope="module")
def opinfos():
    return gradcheck_all.covered(op_coverage.load_op_db())


@pytest.fixture(scope="module")
def measured(opinfos):
    """The first samples of every differentiable covered OpInfo, all samples of a listed one."""
    return gradcheck_all.run(opinfos, limit=gradcheck_all.TEST_SAMPLES)


def test_every_differentiable_covered_opinfo_is_checked(opinfos, measured):
    assert len(measured) == len(gradcheck_all.differentiable(opinfos)) > 300, "the selection is broken"
    unchecked = {row["name"]: set(row["skip_reasons"]) for row in measured if not row["passed"] + row["failed"]}
    # Allowed only where PyTorch's own gradcheck fails too (op_db marks those OpInfos expectedFailure).
    assert all(reasons == {"gradcheck fails on the CPU too"} for reasons in unchecked.values()), unchecked


def test_every_gradcheck_failure_is_an_expected_one(measured):
    unlisted, _ = gradcheck_all.unexpected(measured)
    failures = {row["name"]: row["first_failure"] for row in measured}
    assert not unlisted, (
        "OpInfos whose gradients on npy fail gradcheck where the CPU's pass (fix the backward, or "
        "list them with their reason in GRADCHECK, tools/expected_failures.py):\n"
        + "\n".join(f"  {name}: {failures[name]}" for name in unlisted)
    )


def test_no_expected_gradcheck_failure_passes_now(measured):
    _, passing = gradcheck_all.unexpected(measured)
    assert not passing, f"these pass gradcheck on npy now: delete them from GRADCHECK: {passing}"


def test_gradcheck_entries_have_reasons():
    for name, reason in expected_failures.GRADCHECK.items():
        assert isinstance(reason, str) and len(reason) > 20, name


# The harness itself must be able to say no.


class _WrongOnNpy(torch.autograd.Function):
    """``x * 2``, whose backward has the wrong sign on npy only."""

    @staticmethod
    def forward(ctx, x):
        ctx.on_npy = x.device.type == backend_pkg.DEVICE_NAME
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * (-2 if ctx.on_npy else 2)


class _WrongEverywhere(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 3


def _opinfo(function):
    return types.SimpleNamespace(
        op=function.apply,
        name="fake",
        variant_test_name="",
        gradcheck_nondet_tol=0.0,
        gradcheck_wrapper=lambda op, *args, **kwargs: op(*args, **kwargs),
        get_op=lambda: function.apply,
    )


def _sample():
    return SampleInput(torch.rand(3, dtype=torch.float64, requires_grad=True))


def test_a_wrong_backward_on_npy_fails():
    result = gradcheck_all.run_sample(_opinfo(_WrongOnNpy), _sample())
    assert result["outcome"] == "failed", result
    assert "Jacobian mismatch" in result["message"]


def test_a_backward_wrong_on_the_cpu_too_is_skipped():
    result = gradcheck_all.run_sample(_opinfo(_WrongEverywhere), _sample())
    assert result == {"outcome": "skipped", "reason": "gradcheck fails on the CPU too"}


def test_unexpected_names_unlisted_failures_and_listed_passes(monkeypatch):
    monkeypatch.setattr(expected_failures, "GRADCHECK", {"listed": "why", "cut": "why"})
    rows = [
        {"name": "new", "failed": 1, "complete": True},
        {"name": "listed", "failed": 0, "complete": True},
        {"name": "cut", "failed": 0, "complete": False},  # samples left out: nothing known
    ]
    assert gradcheck_all.unexpected(rows) == (["new"], ["listed"])


def test_committed_json_lists_the_gradcheck_table():
    counts = json.loads(op_coverage.OUTPUT.read_text()).get("gradcheck", {})
    assert counts.get("expected_failures") == expected_failures.GRADCHECK, "run `make coverage`"
