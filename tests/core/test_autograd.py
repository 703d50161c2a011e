"""Backward on npy gives the CPU gradients."""

import signal
import subprocess
import sys
import threading

import pytest
import torch
from reference import make
from zoo import classification_step


def gradients(fn, *leaves):
    leaves = [leaf.detach().clone().requires_grad_() for leaf in leaves]
    fn(*leaves).backward()
    return [leaf.grad for leaf in leaves]


EXPRESSIONS = {
    "add_mul_sum": lambda a, b: (a * b + a).sum(),
    "alpha_and_scalars": lambda a, b: (torch.add(a, b, alpha=-0.5) * 3 - 1).sum(),
    "broadcast": lambda a, b: (a * b[:1]).sum(),
    "reduce_dim_then_broadcast": lambda a, b: (a.sum(0, keepdim=True) * b).sum(),
    "views": lambda a, b: (a.t() * b.t()).reshape(-1)[::2].view(2, 3).sum(),
    "neg_sub": lambda a, b: (-(a - b) * a).sum(dim=1).sum(),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name", EXPRESSIONS)
def test_gradients_match_cpu(name, dtype):
    a, b = make((3, 4), dtype, 1), make((3, 4), dtype, 2)
    fn = EXPRESSIONS[name]
    expected = gradients(fn, a, b)
    actual = gradients(fn, a.to("npy"), b.to("npy"))
    for got, want in zip(actual, expected):
        assert got.device.type == "npy"
        torch.testing.assert_close(got.cpu(), want)


def test_gradients_flow_through_elementwise_kernels():
    def fn(x):
        return (torch.where(x > 0, x.exp(), x.sin()) / (1 + x.abs()) + x.clamp(-1, 1) ** 2).sum()

    x = make((3, 4), torch.float64)
    leaves = [x.clone().requires_grad_(), x.to("npy").requires_grad_()]
    for leaf in leaves:
        fn(leaf).backward()
    assert leaves[1].grad.device.type == "npy"
    torch.testing.assert_close(leaves[1].grad.cpu(), leaves[0].grad)


def test_gradient_accumulates_over_two_backward_calls():
    a = torch.ones(3, device="npy", requires_grad=True)
    (a * 2).sum().backward()
    (a * 3).sum().backward()
    torch.testing.assert_close(a.grad.cpu(), torch.full((3,), 5.0))


@pytest.mark.filterwarnings("ignore:npy device.*has no npy kernel")
def test_gradcheck_in_float64_on_npy():
    x = make((3, 4), torch.float64, 1).to("npy").requires_grad_()
    w = make((4, 2), torch.float64, 2).to("npy").requires_grad_()

    def layer(x, w):
        return torch.nn.functional.log_softmax(torch.tanh(x @ w), dim=1)

    assert torch.autograd.gradcheck(layer, (x, w))
    assert torch.autograd.gradgradcheck(lambda x, w: (x @ w).pow(2).sum(), (x, w))


@pytest.mark.filterwarnings("ignore:npy device.*has no npy kernel")
@pytest.mark.parametrize("optimizer", [torch.optim.SGD, torch.optim.Adam], ids=lambda o: o.__name__)
def test_mlp_training_matches_cpu(optimizer):
    def run(device):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).to(device)
        opt = optimizer(model.parameters(), lr=0.05)
        x, y = make((32, 4), torch.float32, 3).to(device), (make((32,), torch.int64, 4) % 3).to(device)
        losses = [classification_step(model, [opt], (x, y)).item() for _ in range(20)]
        with torch.no_grad():
            assert not model(x).requires_grad
        return losses, [p.detach().cpu() for p in model.parameters()]

    npy_losses, npy_params = run("npy")
    cpu_losses, cpu_params = run("cpu")
    torch.testing.assert_close(torch.tensor(npy_losses), torch.tensor(cpu_losses))
    for got, want in zip(npy_params, cpu_params):
        torch.testing.assert_close(got, want)


# Page 08 "An exception in a backward hook ends the process": when one of these
# starts raising on npy as it does on CPU, PyTorch has fixed it; update the page.
RAISING_IN_BACKWARD = {
    "tensor_hook": """
y = x * 2
y.register_hook(lambda grad: 1 / 0)
y.sum().backward()""",
    "saved_tensor_unpack_hook": """
with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 1 / 0):
    y = (x * x).sum()
y.backward()""",
    "function_backward": """
class Fails(torch.autograd.Function):
    forward = staticmethod(lambda ctx, t: t * 2)
    backward = staticmethod(lambda ctx, grad: 1 / 0)
Fails.apply(x).sum().backward()""",
}


def run_backward(device, body):
    program = f"""
import torch, backend_pkg
x = torch.ones(3, device={device!r}, requires_grad=True)
try:{body.replace(chr(10), chr(10) + "    ")}
except ZeroDivisionError:
    print("raised")
"""
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("case", RAISING_IN_BACKWARD)
def test_exception_in_backward_reaches_the_caller_on_cpu(case):
    run = run_backward("cpu", RAISING_IN_BACKWARD[case])
    assert (run.returncode, run.stdout.strip()) == (0, "raised"), run.stderr


@pytest.mark.parametrize("case", ["tensor_hook", "saved_tensor_unpack_hook"])
def test_exception_in_backward_hook_aborts_on_npy(case):
    run = run_backward("npy", RAISING_IN_BACKWARD[case])
    assert run.returncode == -signal.SIGABRT, (run.returncode, run.stdout, run.stderr)
    assert "terminate called without an active exception" in run.stderr


def test_exception_in_function_backward_reaches_the_caller_on_npy():
    run = run_backward("npy", RAISING_IN_BACKWARD["function_backward"])
    assert (run.returncode, run.stdout.strip()) == (0, "raised"), run.stderr


def thread_of_backward(run_backward):
    """The thread that runs the backward of an npy graph when ``run_backward(loss)`` starts it."""
    x = torch.randn(3).to("npy").requires_grad_()
    y = x * 2
    threads = []
    y.register_hook(lambda grad: threads.append(threading.get_ident()))
    run_backward(y.sum())
    return threads[0]


def test_backward_of_an_npy_tensor_runs_on_the_calling_thread():
    assert thread_of_backward(lambda loss: loss.backward()) == threading.get_ident()
    assert torch.autograd.is_multithreading_enabled()  # only that call turned it off
    # The functional API keeps PyTorch's default: the autograd engine's thread for the device.
    assert thread_of_backward(torch.autograd.backward) != threading.get_ident()


def test_a_backward_before_the_import_leaves_npy_without_engine_threads():
    """Page 08: when this starts passing through autograd.grad, PyTorch sizes its queues on demand."""
    program = """
import torch
x = torch.ones(2, requires_grad=True)
(x * 2).sum().backward()
import backend_pkg
y = torch.ones(2, device="npy", requires_grad=True)
(y * 2).sum().backward()
assert y.grad.tolist() == [2.0, 2.0]
torch.autograd.grad((y * 2).sum(), y)
"""
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    assert "device_ready_queues_.size()" in run.stderr and "INTERNAL ASSERT FAILED" in run.stderr
