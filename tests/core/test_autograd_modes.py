"""Autograd's modes and hooks on npy tensors: the same flags, graphs and gradients as on CPU."""

import pytest
import torch

pytestmark = pytest.mark.filterwarnings("ignore:npy device.*has no npy kernel")

# Each op's outputs, described by what autograd attached to them.
OPS = {
    "mul": lambda x, w: x * w,
    "sum dim": lambda x, w: x.sum(1),
    "view": lambda x, w: x.view(3, 2),
    "transpose": lambda x, w: x.t(),
    "slice": lambda x, w: x[1:],
    "expand": lambda x, w: x[0].expand(2, 3),
    "unbind": lambda x, w: x.unbind(0),
    "relu": lambda x, w: x.relu(),
    "matmul": lambda x, w: x @ w,
    "max dim": lambda x, w: x.max(1),
    "sort": lambda x, w: x.sort(1),
    "cat": lambda x, w: torch.cat([x, x]),
    "to float64": lambda x, w: x.to(torch.float64),
    "clone": lambda x, w: x.clone(),
    "detach": lambda x, w: x.detach(),
    "index": lambda x, w: x[torch.tensor([1, 0], device=x.device)],
    "eq": lambda x, w: x == 1,
    "argmax": lambda x, w: x.argmax(),
    "no kernel (fallback)": lambda x, w: torch.special.erfcx(x),
    "fallback, two results": lambda x, w: x.kthvalue(1, 1),
    "in-place on a non-leaf": lambda x, w: (x * 1).add_(w),
}


def leaves(device):
    x = torch.arange(6.0).reshape(2, 3).to(device).requires_grad_()
    return x, torch.linspace(-1, 1, 3).to(device)


def describe(result):
    results = result if isinstance(result, tuple) else (result,)
    return [(t.requires_grad, t.is_leaf, type(t.grad_fn).__name__ if t.grad_fn else None) for t in results]


@pytest.mark.parametrize("name", OPS)
def test_outputs_carry_cpus_grad_fn(name):
    assert describe(OPS[name](*leaves("npy"))) == describe(OPS[name](*leaves("cpu")))


class EnableInsideNoGrad:
    """enable_grad nested in no_grad: grad mode on again."""

    def __enter__(self):
        self.outer, self.inner = torch.no_grad(), torch.enable_grad()
        self.outer.__enter__()
        self.inner.__enter__()

    def __exit__(self, *exc):
        self.inner.__exit__(*exc)
        self.outer.__exit__(*exc)


MODES = {
    "no_grad": torch.no_grad,
    "inference_mode": torch.inference_mode,
    "set_grad_enabled(False)": lambda: torch.set_grad_enabled(False),
    "set_grad_enabled(True)": lambda: torch.set_grad_enabled(True),
    "enable_grad inside no_grad": EnableInsideNoGrad,
}


@pytest.mark.parametrize("mode", MODES)
def test_grad_modes_like_cpu(mode):
    def run(device):
        x, w = leaves(device)
        with MODES[mode]():
            y = x * w + 1
            z = x.sum()
        return describe(y) + describe(z) + [y.is_inference()]

    assert run("npy") == run("cpu")


def test_inference_tensors_are_refused_by_autograd_like_cpu():
    def run(device):
        x, _ = leaves(device)
        with torch.inference_mode():
            y = x * 2
        with pytest.raises(RuntimeError) as error:
            (y * x).sum().backward()
        return str(error.value)

    assert run("npy") == run("cpu")


def test_retain_grad_and_hooks_like_cpu():
    def run(device):
        x, w = leaves(device)
        h = x * 3
        h.retain_grad()
        seen = []
        h.register_hook(lambda grad: seen.append(("h", grad.device.type, grad.clone())) or grad * 2)
        x.register_hook(lambda grad: seen.append(("x", grad.device.type, grad.clone())))
        x.register_post_accumulate_grad_hook(
            lambda leaf: seen.append(("accumulated", leaf.grad.device.type, leaf.grad.clone()))
        )
        (h * h * w).sum().backward()
        return h.grad, x.grad, seen

    npy_h, npy_x, npy_seen = run("npy")
    cpu_h, cpu_x, cpu_seen = run("cpu")
    torch.testing.assert_close(npy_h.cpu(), cpu_h)
    torch.testing.assert_close(npy_x.cpu(), cpu_x)
    assert [(name, device) for name, device, _ in npy_seen] == [(name, "npy") for name, _, _ in cpu_seen]
    for (_, _, got), (_, _, want) in zip(npy_seen, cpu_seen):
        torch.testing.assert_close(got.cpu(), want)


def test_requires_grad_flags_like_cpu():
    def run(device):
        x = torch.ones(3, device=device)
        flags = [x.requires_grad]
        x.requires_grad_()
        flags += [x.requires_grad, x.is_leaf, (x * 2).requires_grad, x.detach().requires_grad]
        flags += [torch.zeros(2, device=device, requires_grad=True).requires_grad]
        flags += [torch.ones(2, dtype=torch.int64, device=device).requires_grad]
        with pytest.raises(RuntimeError) as error:
            torch.ones(2, dtype=torch.int64, device=device).requires_grad_()
        return flags, str(error.value)

    assert run("npy") == run("cpu")
