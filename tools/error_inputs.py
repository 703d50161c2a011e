"""Error parity with the CPU over PyTorch's own bad inputs, ``OpInfo.error_inputs``.

For most ops, ``op_db`` (``torch.testing._internal.common_methods_invocations``)
also lists inputs the op must refuse, each an ``ErrorInput``: a sample, the
exception type and a regular expression its message must match (PyTorch's
``TestCommon.test_errors`` checks them with ``assertRaisesRegex``, that is
``re.search``). Here every case is generated for the CPU and run there;
each case the CPU answers as PyTorch expects is moved to npy (its tensors,
``requires_grad`` kept, and ``"cpu"`` device arguments) and must be answered
the same way there. A case PyTorch's CPU itself answers otherwise is not
asked of npy.

Cases generated for the CPU rather than for npy: a generator builds its bad
input with the device's own kernels (``torch.rand(sizes, device=device)``),
so on npy one input npy cannot build would hide every later case of the
OpInfo; and the case list then is the same on every machine. (The few
cases a generator yields only for other devices, such as a CPU tensor mixed
into a device op, are not run here.)

:data:`expected_failures.ERROR_INPUTS` lists the cases npy answers
differently, each with its reason; ``tests/tools/test_error_inputs.py`` fails on
any other, and on a listed one that now passes.
"""

import re
import warnings

import opinfo_inputs
import torch
from torch.testing._internal.opinfo.core import SampleInput
from torch.utils._pytree import tree_flatten, tree_unflatten

import backend_pkg

MESSAGE_LIMIT = 300


def full_name(opinfo):
    return f"{opinfo.name}.{opinfo.variant_test_name}" if opinfo.variant_test_name else opinfo.name


def case_name(opinfo, index):
    """How the expected-failures table names case ``index`` of ``opinfo``'s error inputs."""
    return f"{full_name(opinfo)}[{index}]"


def _short(text):
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 3] + "..."


def answer(opinfo, sample, error_input):
    """``None`` if ``opinfo`` refuses ``sample`` as ``error_input`` expects, else what it did."""
    try:
        opinfo(sample.input, *sample.args, **sample.kwargs)
    except Exception as error:
        if isinstance(error, error_input.error_type) and re.search(error_input.error_regex, str(error)):
            return None
        return _short(f"{type(error).__name__}: {error}")
    return "no error"


def _mover():
    """A function moving one leaf of a sample to npy; the leaves it moves that share CPU memory
    (an ``out=`` that is also an input, two views of one tensor) share npy memory too."""
    bases = {}
    moved_tensors = {}

    def move(value):
        if isinstance(value, torch.Tensor) and value.device.type == "cpu":
            if id(value) not in moved_tensors:
                moved_tensors[id(value)] = moved(value)
            return moved_tensors[id(value)]
        if isinstance(value, torch.device) and value.type == "cpu":
            return torch.device(backend_pkg.DEVICE_NAME)
        if isinstance(value, str) and value == "cpu":
            return backend_pkg.DEVICE_NAME
        return value

    def moved(value):
        storage = value.untyped_storage()
        key = (storage.data_ptr(), value.dtype)
        if key not in bases or storage.nbytes() == 0:
            whole = torch.empty(0, dtype=value.dtype).set_(storage)
            bases[key] = whole.to(backend_pkg.DEVICE_NAME)
        moved = bases[key].as_strided(value.shape, value.stride(), value.storage_offset())
        return moved.detach().requires_grad_() if value.requires_grad else moved

    return move


def on_npy(sample, stay_on_cpu=None):
    """A copy of ``sample`` on npy, memory shared where the CPU sample shares it.

    ``stay_on_cpu`` (from ``op_coverage.cpu_placed``) marks the leaves the
    sample puts on the CPU whatever the device, which stay there.
    """
    move = _mover()
    leaves, spec = tree_flatten((sample.input, list(sample.args), dict(sample.kwargs)))
    if stay_on_cpu is None or len(stay_on_cpu) != len(leaves):
        stay_on_cpu = [False] * len(leaves)
    moved = [leaf if keep else move(leaf) for leaf, keep in zip(leaves, stay_on_cpu)]
    sample_input, args, kwargs = tree_unflatten(moved, spec)
    return SampleInput(
        sample_input, args=tuple(args), kwargs=kwargs, output_process_fn_grad=sample.output_process_fn_grad
    )


def run(op_db):
    """Every error input of ``op_db``: a dict of counts and, by case name, npy's wrong answers.

    ``expected`` counts the cases the CPU answers as PyTorch expects,
    ``matched`` those npy answers the same way too; ``failures`` maps each
    other case to what npy did instead.
    """
    counts = {"opinfos": 0, "cases": 0, "cpu_differs": 0, "expected": 0, "matched": 0}
    failures = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for opinfo in op_db:
            try:
                cases = list(opinfo_inputs.error_inputs(opinfo, "cpu"))
            except Exception:
                continue  # PyTorch's own generator fails: nothing to compare
            if not cases:
                continue
            counts["opinfos"] += 1
            for index, error_input in enumerate(cases):
                counts["cases"] += 1
                sample = error_input.sample_input
                try:
                    npy_sample = on_npy(sample)  # before the CPU run, which may change the inputs
                except Exception as error:
                    npy_sample = error
                if answer(opinfo, sample, error_input) is not None:
                    counts["cpu_differs"] += 1
                    continue
                counts["expected"] += 1
                if isinstance(npy_sample, Exception):
                    failures[case_name(opinfo, index)] = _short(
                        f"the input cannot move to npy: {type(npy_sample).__name__}: {npy_sample}"
                    )
                    continue
                wrong = answer(opinfo, npy_sample, error_input)
                if wrong is None:
                    counts["matched"] += 1
                else:
                    failures[case_name(opinfo, index)] = (
                        f"{wrong} (expected {error_input.error_type.__name__} matching /{error_input.error_regex}/)"
                    )
    return counts, failures
