"""OpInfo samples in the layouts a kernel rarely sees: non-contiguous, expanded, 0-dim, empty.

``tools/op_coverage.py`` runs each OpInfo's first samples as its generator
makes them: contiguous tensors, nearly all. A kernel that reads memory as if
it were contiguous, or forgets a storage offset, passes there. Here every
OpInfo the coverage JSON lists runs, in one dtype (float32 where CPU has it),
on CPU and on npy:

* its first samples with every tensor non-contiguous
  (``noncontiguous_like``, what ``SampleInput.noncontiguous()`` applies:
  every other element of a buffer twice the size, starting at offset 1);
* its first samples with every tensor of two rows or more replaced by its
  first row expanded (stride 0 along dim 0);
* its first sample with a 0-dim input and its first with an empty input
  among those the coverage run leaves out (past its per-dtype limit).

The layout is made on each device after the move, since ``.to("npy")``
copies into contiguous memory; the test checks that both devices got the same
strides. A difference is expected only when the coverage table lists the
OpInfo and dtype (``expected_failures.SAMPLES``) or
``expected_failures.LAYOUTS`` lists it for that layout, with its reason.
"""

import json
import sys
import types
import warnings
from itertools import islice
from pathlib import Path

import pytest
import torch
from torch.testing._internal.common_utils import noncontiguous_like
from torch.testing._internal.opinfo.core import SampleInput
from torch.utils._pytree import tree_flatten, tree_unflatten

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import expected_failures  # noqa: E402
import op_coverage  # noqa: E402

NONCONTIGUOUS_SAMPLES = 3
EXPANDED_SAMPLES = 2


def expanded_like(tensor):
    """``tensor``'s first row repeated along dim 0, as a stride-0 view (itself when it has
    fewer than two rows)."""
    if tensor.dim() == 0 or tensor.shape[0] < 2:
        return tensor
    return tensor[:1].expand(tensor.shape)


RELAYOUTS = {"noncontiguous": noncontiguous_like, "expanded": expanded_like, "zero-dim": None, "empty": None}


def generate(opinfo, device, dtype):
    """``opinfo``'s samples, the same every run. Not ``opinfo.sample_inputs``, which reseeds
    every generator before each sample and inspects the call stack: most of this test's time."""
    torch.default_generator.manual_seed(0)
    return opinfo.sample_inputs_func(opinfo, device, dtype, False)


def chosen_samples(opinfo, dtype):
    """``(layout, index, sample)`` for the samples this test runs of ``opinfo`` in ``dtype``."""
    picked = []
    rare = {"zero-dim": lambda t: t.dim() == 0, "empty": lambda t: t.numel() == 0}
    for index, sample in enumerate(generate(opinfo, "cpu", dtype)):
        if index < NONCONTIGUOUS_SAMPLES:
            picked.append(("noncontiguous", index, sample))
        if index < EXPANDED_SAMPLES:
            picked.append(("expanded", index, sample))
        if index >= op_coverage.MAX_SAMPLES_PER_DTYPE and isinstance(sample.input, torch.Tensor):
            for layout, has_it in list(rare.items()):
                if has_it(sample.input):
                    picked.append((layout, index, sample))
                    del rare[layout]
        if index >= NONCONTIGUOUS_SAMPLES and not rare:
            break
    return picked


def cpu_placements(opinfo, dtype, count):
    """For each of the first ``count`` samples, which leaves stay on the CPU (see
    ``op_coverage.cpu_placed``), or Nones when the generator cannot make them for meta."""
    try:
        metas = list(islice(generate(opinfo, "meta", dtype), count))
    except Exception:
        metas = []
    return [op_coverage.cpu_placed(meta) for meta in metas] + [None] * (count - len(metas))


def relayout(parts, stay_on_cpu, change):
    """``parts`` with ``change`` applied to every strided tensor that moves to npy."""
    leaves, spec = tree_flatten(parts)
    stay_on_cpu = stay_on_cpu if stay_on_cpu and len(stay_on_cpu) == len(leaves) else [False] * len(leaves)
    changed = [
        change(leaf) if isinstance(leaf, torch.Tensor) and leaf.layout == torch.strided and not keep else leaf
        for leaf, keep in zip(leaves, stay_on_cpu)
    ]
    return tree_unflatten(changed, spec)


def _layouts(parts):
    return [(tuple(leaf.shape), leaf.stride()) for leaf in tree_flatten(parts)[0] if isinstance(leaf, torch.Tensor)]


def run_in_layout(opinfo, sample, stay_on_cpu, change, tolerance=None):
    """Run ``sample`` on CPU and npy with ``change`` applied on each device: None when it
    matches (within ``tolerance``, see ``op_coverage.compare``) or cannot be compared, else the difference."""
    pristine = op_coverage.sample_parts(sample, op_coverage._clone)
    try:
        npy_parts = op_coverage.to_npy(pristine, stay_on_cpu)
    except Exception:
        return None  # inputs npy cannot hold (bfloat16, sparse)
    cpu_parts = op_coverage.sample_parts(sample, op_coverage._clone)
    if change is not None:
        cpu_parts = relayout(cpu_parts, stay_on_cpu, change)
        npy_parts = relayout(npy_parts, stay_on_cpu, change)
        assert _layouts(npy_parts) == _layouts(cpu_parts), "the layout differs between the devices"
    try:
        expected = op_coverage.call(opinfo, cpu_parts)
    except Exception:
        return None  # an error sample, or one CPU refuses in this layout
    try:
        op_coverage.compare(op_coverage.call(opinfo, npy_parts), expected, tolerance)
    except Exception as error:
        return op_coverage._short(error)
    return None


def run_opinfo(opinfo):
    """``{(OpInfo, dtype, layout): difference}`` over the chosen samples of ``opinfo``."""
    name = op_coverage.full_name(opinfo)
    dtypes = op_coverage.supported_dtypes(opinfo)
    dtype = torch.float32 if torch.float32 in dtypes else dtypes[0]
    dtype_name = str(dtype).removeprefix("torch.")
    try:
        picked = chosen_samples(opinfo, dtype)
    except Exception:
        return {}  # sample_inputs raised: the coverage run records it
    placements = cpu_placements(opinfo, dtype, max((index for _, index, _ in picked), default=-1) + 1)
    differences = {}
    for layout, index, sample in picked:
        if expected_failures.random_sample_reason(name, sample) is not None:
            continue
        difference = run_in_layout(
            opinfo, sample, placements[index], RELAYOUTS[layout], expected_failures.tolerance(name, dtype_name)
        )
        if difference is not None:
            differences.setdefault((name, dtype_name, layout), difference)
    return differences


@pytest.fixture(scope="module")
def differences():
    names = {row["name"] for row in json.loads(op_coverage.OUTPUT.read_text())["results"]}
    found = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for opinfo in op_coverage.load_op_db():
            if op_coverage.full_name(opinfo) in names and op_coverage.supported_dtypes(opinfo):
                found.update(run_opinfo(opinfo))
    return found


def _expected(key):
    name, dtype, _ = key
    return key in expected_failures.LAYOUTS or (name, dtype) in expected_failures.SAMPLES


def test_every_layout_difference_is_expected(differences):
    unlisted = {key: message for key, message in differences.items() if not _expected(key)}
    assert not unlisted, (
        "OpInfo samples that differ from the CPU on npy in a layout (fix the kernel, or list them "
        "with their reason in expected_failures.LAYOUTS):\n"
        + "\n".join(f"  {key}: {message[:300]}" for key, message in sorted(unlisted.items()))
    )


def test_no_expected_layout_difference_passes_now(differences):
    passing = sorted(set(expected_failures.LAYOUTS) - set(differences))
    assert not passing, f"these now match CPU: delete them from expected_failures.LAYOUTS: {passing}"


# The harness itself must be able to say no, and must really change the layout.


def _opinfo(op):
    return types.SimpleNamespace(op=op, name="fake", variant_test_name="")


def _reads_memory_in_order(x):
    """A kernel bug: the elements in memory order from the first one, as if ``x`` were contiguous."""
    if x.device.type == "cpu":
        return x.clone()
    contiguous_strides = torch.empty(x.shape, device="meta").stride()
    return torch.as_strided(x, x.shape, contiguous_strides, x.storage_offset()).clone()


@pytest.mark.parametrize("layout", ["noncontiguous", "expanded"])
def test_a_kernel_that_ignores_strides_fails(layout):
    sample = SampleInput(torch.arange(12.0).reshape(4, 3))
    assert run_in_layout(_opinfo(torch.clone), sample, None, RELAYOUTS[layout]) is None
    assert "not close" in run_in_layout(_opinfo(_reads_memory_in_order), sample, None, RELAYOUTS[layout])


def test_samples_are_relaid_on_each_device():
    seen = []

    def record(x):
        seen.append((x.device.type, x.is_contiguous(), x.stride(), x.storage_offset()))
        return x.clone()

    run_in_layout(_opinfo(record), SampleInput(torch.ones(2, 3)), None, noncontiguous_like)
    assert seen == [("cpu", False, (6, 2), 1), ("npy", False, (6, 2), 1)]
