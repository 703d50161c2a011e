"""addcmul, addcdiv and lerp (what optimizers run), and the promotion of several operands: npy against CPU."""

import itertools

import pytest
import torch
from reference import DTYPES, assert_like_cpu, make

import backend_pkg
from backend_pkg.ops._operands import result_type

OPERANDS = [make(shape, dtype) for dtype in DTYPES for shape in ((2,), ())] + [True, 2, 2.5, 1j]


def test_result_type_of_two_is_torch_result_type():
    for a, b in itertools.product(OPERANDS, repeat=2):
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            assert result_type(a, b) == torch.result_type(a, b), (a, b)


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")  # half with complex promotes to it
def test_result_type_of_three_is_what_addcmul_gives():
    tensors = [operand for operand in OPERANDS if isinstance(operand, torch.Tensor) and operand.dtype != torch.bool]
    for a, b, c in itertools.product(tensors, repeat=3):
        expected = torch.addcmul(a.to("meta"), b.to("meta"), c.to("meta")).dtype
        assert result_type(a, b, c) == expected, (a.dtype, a.dim(), b.dtype, b.dim(), c.dtype, c.dim())


FUSED = {
    "addcmul": lambda a, b, c: torch.addcmul(a, b, c, value=0.5),
    "addcmul_": lambda a, b, c: a.clone().addcmul_(b, c, value=-2),
    "addcmul out": lambda a, b, c: torch.addcmul(a, b, c, out=torch.empty(0, dtype=a.dtype, device=a.device)),
    "addcdiv": lambda a, b, c: torch.addcdiv(a, b, c, value=0.5),
    "addcdiv_": lambda a, b, c: a.clone().addcdiv_(b, c),
    "lerp": lambda a, b, c: torch.lerp(a, b, 0.3),
    "lerp weight 0.7": lambda a, b, c: torch.lerp(a, b, 0.7),
    "lerp tensor weight": lambda a, b, c: torch.lerp(a, b, c),
    "lerp_": lambda a, b, c: a.clone().lerp_(b, 0.9),
    "lerp out": lambda a, b, c: torch.lerp(a, b, c, out=torch.empty(0, dtype=a.dtype, device=a.device)),
}


@pytest.mark.parametrize("name", FUSED)
def test_fused_pointwise_like_cpu(name, dtype, strict):
    # The third operand is a weight in [0, 1] for lerp, and never zero for addcdiv.
    weight = make((3, 4), dtype, seed=2).abs() / 40 if dtype.is_floating_point else make((3, 4), dtype, seed=2)
    assert_like_cpu(FUSED[name], make((3, 4), dtype), make((3, 4), dtype, seed=1), weight)


ERRORS = {
    "addcmul complex value": lambda a, b: torch.addcmul(a, b, b, value=1j),
    "addcmul integer value": lambda a, b: torch.addcmul(a.long(), b.long(), b.long(), value=0.5),
    "addcdiv integers": lambda a, b: torch.addcdiv(a.long(), b.long(), b.long()),
    "lerp end dtype": lambda a, b: torch.lerp(a, b.double(), 0.5),
    "lerp weight dtype": lambda a, b: torch.lerp(a, b, b.double()),
    "lerp integers": lambda a, b: torch.lerp(a.long(), b.long(), 0.5),
    "lerp_ broadcast into self": lambda a, b: a[0].clone().lerp_(b, 0.5),
    "addcmul mixed": lambda a, b: torch.addcmul(a.half(), b, b.long()),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_and_edge_cases_like_cpu(name, strict):
    assert_like_cpu(ERRORS[name], make((3, 4), torch.float32), make((3, 4), torch.float32, seed=1))


def test_adam_steps_run_on_npy_kernels(strict):
    torch.manual_seed(0)
    weights = [torch.randn(4, 3), torch.randn(3)]
    results = []
    for device in ("cpu", "npy"):
        parameters = [w.clone().to(device).requires_grad_() for w in weights]
        optimizer = torch.optim.Adam(parameters, lr=0.1)
        for _ in range(3):
            optimizer.zero_grad()
            (parameters[0].sum(0) * parameters[1]).pow(2).sum().backward()
            optimizer.step()
        results.append([p.detach().cpu() for p in parameters])
    for got, want in zip(*results):
        torch.testing.assert_close(got, want)


def test_optimizers_default_to_one_tensor_at_a_time_on_npy():
    """What the module's docstring says: PyTorch's type check keeps npy parameters off the
    foreach path by default (the day it lets them in, this fails and the docstring changes)."""
    from torch.optim.optimizer import _default_to_fused_or_foreach
    from torch.utils._foreach_utils import _has_foreach_support

    parameters = list(torch.nn.Linear(3, 2).to("npy").parameters())
    assert type(parameters[0]) is backend_pkg.NpyTensor
    assert _default_to_fused_or_foreach(parameters, differentiable=False) == (False, False)
    assert not _has_foreach_support(parameters, parameters[0].device)


@pytest.mark.parametrize(
    "make_optimizer",
    [
        lambda parameters: torch.optim.SGD(parameters, lr=0.1, momentum=0.9, foreach=True),
        lambda parameters: torch.optim.Adam(parameters, lr=0.1, foreach=True),
    ],
    ids=["sgd", "adam"],
)
def test_foreach_true_trains_like_cpu(make_optimizer, strict):
    """``foreach=True``, with gradient clipping's too: SGD's and clipping's ``_foreach_*`` ops have
    npy kernels, Adam's composite kernels call npy's in-place ops tensor by tensor."""
    torch.manual_seed(0)
    weights = [torch.randn(4, 3), torch.randn(3)]
    results = []
    for device in ("cpu", "npy"):
        parameters = [w.clone().to(device).requires_grad_() for w in weights]
        optimizer = make_optimizer(parameters)
        for _ in range(3):
            optimizer.zero_grad()
            (parameters[0].sum(0) * parameters[1]).pow(2).sum().backward()
            torch.nn.utils.clip_grad_norm_(parameters, 1.0, foreach=True)
            optimizer.step()
        results.append([p.detach().cpu() for p in parameters])
    for got, want in zip(*results):
        torch.testing.assert_close(got, want)
