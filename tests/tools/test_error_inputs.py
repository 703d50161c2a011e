"""PyTorch's error inputs (``OpInfo.error_inputs``) answered on npy as on the CPU."""

import itertools
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import error_inputs  # noqa: E402
import expected_failures  # noqa: E402
import op_coverage  # noqa: E402
import opinfo_inputs  # noqa: E402
from reference import gist  # noqa: E402


@pytest.fixture(scope="module")
def parity():
    return error_inputs.run(op_coverage.load_op_db())


def test_every_error_the_cpu_raises_npy_raises_alike(parity):
    counts, failures = parity
    assert counts["expected"] > 600, counts  # the whole op_db was run
    unexpected = {case: what for case, what in failures.items() if case not in expected_failures.ERROR_INPUTS}
    assert not unexpected, (
        f"{len(unexpected)} error inputs npy answers unlike the CPU (fix the kernel, or list the case "
        f"with its reason in tools/expected_failures.py):\n"
        + "\n".join(f"  {case}: {what}" for case, what in unexpected.items())
    )


def test_no_expected_failure_passes_now(parity):
    _, failures = parity
    passing = sorted(set(expected_failures.ERROR_INPUTS) - set(failures))
    assert not passing, f"these now pass on npy: delete them from tools/expected_failures.py: {passing}"


def test_expected_failures_have_reasons():
    for table in (expected_failures.ERROR_INPUTS, expected_failures.SAMPLES):
        for entry, reason in table.items():
            assert isinstance(reason, str) and len(reason) > 20, entry


# The runner itself must be able to say no.


class _Refusing:
    """An OpInfo stand-in: refuses CPU input as asked, and npy input only when told to."""

    name, variant_test_name = "refusing", ""

    def __init__(self, npy_error):
        self.npy_error = npy_error

    def __call__(self, tensor):
        if tensor.device.type == "cpu":
            raise RuntimeError("The size of tensor a (3) must match the size of tensor b (4)")
        if self.npy_error is not None:
            raise self.npy_error

    @staticmethod
    def error_inputs_func(opinfo, device):
        import torch
        from torch.testing._internal.opinfo.core import ErrorInput, SampleInput

        yield ErrorInput(SampleInput(torch.ones(3)), error_regex=r"The size of tensor a \(3\)")


@pytest.mark.parametrize(
    "npy_error, outcome",
    [
        (None, "no error"),
        (ValueError("operands could not be broadcast together"), "ValueError: operands"),
        (RuntimeError("shapes differ"), "RuntimeError: shapes differ"),
    ],
)
def test_a_wrong_answer_on_npy_fails(npy_error, outcome):
    counts, failures = error_inputs.run([_Refusing(npy_error)])
    assert counts["expected"] == 1 and counts["matched"] == 0
    assert failures["refusing[0]"].startswith(outcome)


def test_the_same_answer_on_npy_passes():
    counts, failures = error_inputs.run(
        [_Refusing(RuntimeError("The size of tensor a (3) must match the size of tensor b (4)"))]
    )
    assert counts["matched"] == 1 and not failures


# Beyond PyTorch's own error inputs: every OpInfo whose first samples take a second operand of
# the input's shape is called with that operand one column wider, which no broadcasting accepts.


def _widened(sample):
    """``sample`` with its first positional operand of the input's shape one column wider, or None."""
    import torch

    shape = getattr(sample.input, "shape", None)
    for position, arg in enumerate(sample.args):
        if isinstance(arg, torch.Tensor) and arg.shape == shape and arg.dim() and shape[-1] > 1:
            wider = torch.ones(*shape[:-1], shape[-1] + 1, dtype=arg.dtype)
            args = (*sample.args[:position], wider, *sample.args[position + 1 :])
            return type(sample)(sample.input, args=args, kwargs=sample.kwargs)
    return None


def _outcome(opinfo, sample):
    try:
        opinfo(sample.input, *sample.args, **sample.kwargs)
    except Exception as error:  # noqa: BLE001 - the exception is what is compared
        return type(error), gist(error)
    return "no error"


def test_operands_that_do_not_broadcast_fail_as_on_cpu():
    import torch

    compared, differing = 0, {}
    for opinfo in op_coverage.load_op_db():
        if opinfo.name.startswith("sparse."):
            continue  # npy has no sparse layouts
        if torch.float32 not in opinfo.dtypes:
            continue
        samples = itertools.islice(opinfo_inputs.sample_inputs(opinfo, "cpu", torch.float32), 3)
        widened = next(filter(None, map(_widened, samples)), None)
        if widened is None:
            continue
        npy_sample = error_inputs.on_npy(widened)
        compared += 1
        expected, actual = _outcome(opinfo, widened), _outcome(opinfo, npy_sample)
        if actual != expected:
            differing[op_coverage.full_name(opinfo)] = f"CPU: {expected}; npy: {actual}"
    assert compared > 60, compared  # the sweep reached the binary ops
    assert not differing, "\n".join(f"{name}: {what}" for name, what in differing.items())
