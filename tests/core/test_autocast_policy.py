"""``torch.autocast("npy")`` casts each op of its lists as CPU autocast casts it: op by op, the
policy (lower precision, float32 or promote), not only the membership of a list.

An autocast kernel casts the op's inputs, then calls the op below the autocast layer. A
``TorchDispatchMode`` runs below that layer, so it sees the casts (``aten._to_copy``) as they
happen; it stops the call at the first op that is not a cast, before any computation. Each op is
called with float32 inputs, with float16 inputs, and with the first float16 and the rest float32:
the dtypes cast to tell the three policies apart (lower precision casts float32 to float16,
float32 casts float16 to float32, promote casts only mixed inputs, to the widest), and the same
call on CPU under ``torch.autocast("cpu")`` gives what npy must do.
"""

import itertools

import pytest
import torch
from reference import assert_matches_cpu, make
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from backend_pkg import autocast

# The dtypes of an op's tensor inputs, in order, made afresh for each call.
INPUT_DTYPES = {
    "float32": lambda: itertools.repeat(torch.float32),
    "float16": lambda: itertools.repeat(torch.float16),
    "mixed": lambda: itertools.chain([torch.float16], itertools.repeat(torch.float32)),
}


class _Stop(Exception):
    """Raised by :class:`CastsSeen` at the first op after the casts."""


class CastsSeen(TorchDispatchMode):
    """Records the dtype of each cast below the autocast layer, and stops at the first other op on tensors."""

    def __init__(self):
        super().__init__()
        self.dtypes = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is not torch.ops.aten._to_copy.default:
            # Ops on no tensor (npy's torch.promote_types, working out the widest dtype) are not the call.
            if any(isinstance(value, torch.Tensor) for value in tree_leaves((args, kwargs))):
                raise _Stop
            return func(*args, **kwargs)
        self.dtypes.append(kwargs.get("dtype"))
        return func(*args, **kwargs)


def _overload(name):
    op_name, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, op_name, None), overload or "default", None)


def _argument(argument, dtypes, device):
    """A value of ``argument``'s type: tensors of the next dtypes, anything else a plain value
    (the autocast kernel casts and forwards; nothing reads the values before the mode stops)."""
    kind = str(argument.type)
    if "Tensor" in kind:
        if "[]" in kind or "List" in kind:
            return [torch.ones(2, 2, dtype=next(dtypes), device=device) for _ in range(2)]
        return torch.ones(2, 2, dtype=next(dtypes), device=device)
    if argument.has_default_value():
        return argument.default_value
    if kind.endswith("?") or kind.startswith("Optional"):
        return None
    if kind.startswith("List["):
        return [1] * (argument.N or 2)  # a fixed length where the schema has one (SymInt[3])
    for word, value in (("int", 1), ("float", 1.0), ("Scalar", 1.0), ("bool", False), ("str", "fro")):
        if word in kind:
            return value
    raise TypeError(f"no value for an argument of type {kind}")


def casts(op, device, inputs):
    """The dtypes ``op``'s autocast kernel on ``device`` casts its inputs to, inputs of ``INPUT_DTYPES[inputs]``."""
    dtypes = INPUT_DTYPES[inputs]()
    arguments = op._schema.arguments
    args = [_argument(argument, dtypes, device) for argument in arguments if not argument.kwarg_only]
    kwargs = {argument.name: _argument(argument, dtypes, device) for argument in arguments if argument.kwarg_only}
    seen = CastsSeen()
    try:
        with torch.autocast(device, dtype=torch.float16), seen:
            op(*args, **kwargs)
    except Exception:  # _Stop, or an op's own check of the values, which runs after the casts
        pass
    return seen.dtypes


def _listed_with_a_cpu_kernel():
    listed = []
    for policy in ("LOWER_PRECISION", "FLOAT32", "PROMOTE"):
        for name in getattr(autocast, policy):
            op = _overload(name)
            if op is not None and torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "AutocastCPU"):
                listed.append(pytest.param(op, id=f"{policy}-{name}"))
    return listed


@pytest.mark.parametrize("inputs", INPUT_DTYPES)
@pytest.mark.parametrize("op", _listed_with_a_cpu_kernel())
def test_each_op_is_cast_as_cpu_autocast_casts_it(op, inputs):
    assert casts(op, "npy", inputs) == casts(op, "cpu", inputs)


@pytest.mark.parametrize("op", _listed_with_a_cpu_kernel())
def test_the_probe_sees_a_cast_of_each_op_on_cpu(op):
    """An op whose call fails before its casts (arguments the schema refuses) would compare nothing."""
    assert any(casts(op, "cpu", inputs) for inputs in INPUT_DTYPES)


def test_the_probe_tells_the_three_policies_apart():
    """What the test above compares: the casts of one op of each policy on CPU."""
    signatures = {
        name: [casts(_overload(name), "cpu", inputs) for inputs in INPUT_DTYPES] for name in ("mm", "mse_loss", "cat")
    }
    f16, f32 = torch.float16, torch.float32
    assert signatures == {"mm": [[f16, f16], [], [f16]], "mse_loss": [[], [f32, f32], [f32]], "cat": [[], [], [f32]]}


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, y: torch.bmm(x.unsqueeze(0), y.t().unsqueeze(0)),
        lambda x, y: torch.addmm(y[:, :3], x, y.t()),
        lambda x, y: torch.nn.functional.conv1d(x.unsqueeze(0), y.unsqueeze(0)),
        lambda x, y: torch.nn.functional.l1_loss(x.half(), y),
        lambda x, y: torch.prod(x.half(), 1),
        lambda x, y: torch.trace(x.half()),
        lambda x, y: torch.stack([x.half(), y]),
        lambda x, y: torch.stack([x.half(), y.half()]),
        lambda x, y: x.index_copy(0, torch.tensor([2, 0], device=x.device), y[:2].half()),
    ],
    ids=["bmm", "addmm", "conv1d", "l1_loss", "prod", "trace", "stack", "stack-half", "index_copy"],
)
def test_outputs_of_each_policy_like_cpu(fn):
    x, y = make((3, 4), torch.float32, 1), make((3, 4), torch.float32, 2)
    with torch.autocast("cpu", dtype=torch.float16):
        expected = fn(x, y)
    with torch.autocast("npy", dtype=torch.float16):
        result = fn(x.to("npy"), y.to("npy"))
    assert result.dtype == expected.dtype
    assert_matches_cpu(result, expected)
