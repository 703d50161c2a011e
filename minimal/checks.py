"""The checks the minimal backends pass: ``python -m minimal.checks python|cpp [--exit-runs N]``.

Run in a process of its own (one PrivateUse1 backend per process); prints one
line per check and exits non-zero at the first that fails. The checks both
backends share run in this process; a backend's own checks start new
interpreters where the point is a process's start or end.
"""

import argparse
import importlib
import os
import re
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path

import torch
from torch.testing import assert_close

BACKENDS = {"python": "minimal.python_backend", "cpp": "minimal.cpp_backend"}
CHECKOUT = Path(__file__).parents[1]
EXIT_RUNS = 50  # scripts ending in backward(): with the backward on PyTorch's device thread, 8 of 20 aborted
PROCESS_TIMEOUT = 300
SPINNERS = 2  # busy processes while those scripts run: on two cores the 8 of 20 above aborted beside two
# Names the setup refuses part way: not lower case, a character the device-string parser stops at, a name taken.
REFUSED_DEVICE_NAMES = ["LST", "mini2", "xla", "cuda", "float"]


def check_copies(device):
    cpu = torch.arange(6.0).reshape(2, 3)
    on_device = cpu.to(device)
    back = on_device.cpu()
    assert on_device.device.type == device and back.device.type == "cpu"
    assert_close(back, cpu)
    cpu.add_(1)  # neither copy sees a change to its source
    on_device.mul_(0)
    assert_close(back, torch.arange(6.0).reshape(2, 3))
    assert_close(on_device.cpu(), torch.zeros(2, 3))


def check_dtypes(device):
    for dtype in (torch.float32, torch.float64, torch.int64, torch.int32, torch.bool, torch.float16):
        cpu = torch.tensor([[1, 0], [3, 4]], dtype=dtype)
        on_device = cpu.to(device)
        assert on_device.dtype == dtype, (on_device.dtype, dtype)
        assert_close(on_device.cpu(), cpu)
    assert_close(
        torch.ones(3, dtype=torch.float32).to(device).to(torch.float64).cpu(), torch.ones(3, dtype=torch.float64)
    )


def check_printing(device):
    on_device = torch.tensor([1.5, 2.0]).to(device)
    assert repr(on_device) == f"tensor([1.5000, 2.0000], device='{device}:0')", repr(on_device)
    assert f"{on_device[1].item():.1f}" == "2.0"


def check_view(device):
    base = torch.arange(12.0).to(device)
    matrix = base.view(3, 4)
    transposed = matrix.t()
    assert transposed.stride() == (1, 4) and not transposed.is_contiguous()
    assert matrix.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    matrix.mul_(2)  # a write through the view shows in its base
    assert_close(base.cpu(), torch.arange(12.0) * 2)
    assert_close(transposed.cpu(), (torch.arange(12.0) * 2).view(3, 4).t())


def check_device_indices(device):
    """Each device the backend reports holds tensors; the next index is refused, never served by device 0."""
    count = torch.get_device_module(device).device_count()
    for index in range(count):
        assert_close(torch.arange(3.0).to(f"{device}:{index}").add(1).cpu(), torch.arange(3.0) + 1)
        assert torch.ones(1, device=f"{device}:{index}").device == torch.device(device, index)
    try:
        torch.empty(1, device=f"{device}:{count}")
    except RuntimeError:
        return
    raise AssertionError(f"{device}:{count} gave a tensor; the backend reports {count} device(s)")


def mlp_step(device):
    """One SGD step of a small MLP on ``device``: the loss and the updated weights, on CPU."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    inputs, targets = torch.randn(5, 4), torch.randn(5, 3)
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = ((model(inputs.to(device)) - targets.to(device)) ** 2).mean()
    loss.backward()
    optimizer.step()
    return loss.cpu(), [parameter.detach().cpu() for parameter in model.parameters()]


def check_mlp_training_step(device):
    loss, parameters = mlp_step(device)
    expected_loss, expected_parameters = mlp_step("cpu")
    assert_close(loss, expected_loss)
    assert_close(parameters, expected_parameters)


def check_float_of_int(device):
    """A float function of an int tensor gives floats, as on CPU (the out= kernel is given a float ``out``)."""
    cpu = torch.tensor([1, 2, 3])
    for function in (torch.sin, lambda t: t / 2):
        result = function(cpu.to(device))
        assert result.dtype == function(cpu).dtype, (result.dtype, function(cpu).dtype)
        assert_close(result.cpu(), function(cpu))


def check_fallback(device):
    """Ops without a kernel of the backend's own run on CPU's kernels and give CPU's results."""

    def ops(on):
        torch.manual_seed(0)
        noise = torch.randn(4, 3, device=on)
        stacked = torch.cat([noise, torch.zeros(2, 3, device=on)])
        return [noise, stacked, stacked.max(dim=0).values, torch.nn.functional.mse_loss(noise, stacked[2:])]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the Python backend names each op it runs on CPU, once
        assert_close([result.cpu() for result in ops(device)], ops("cpu"))


def tied_language_model(device, build_optimizer_first):
    """Three Adam steps of an embedding and an output layer that share one weight; losses and the weight."""
    torch.manual_seed(0)
    embedding = torch.nn.Embedding(10, 4)
    head = torch.nn.Linear(4, 10, bias=False)
    head.weight = embedding.weight
    model = torch.nn.Sequential(embedding, head)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1) if build_optimizer_first else None
    model.to(device)
    assert model[1].weight is model[0].weight, "Module.to split the tied weight"
    optimizer = optimizer or torch.optim.Adam(model.parameters(), lr=0.1)
    tokens = torch.tensor([1, 2, 3, 4]).to(device)
    losses = []
    for _ in range(3):
        loss = torch.nn.functional.cross_entropy(model(tokens), tokens.roll(1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.detach().cpu())
    weight = model[0].weight
    assert model.to("cpu")[0].weight is weight, "Module.to('cpu') made a new parameter"
    return losses, weight.detach()


def check_parameters_keep_identity(device):
    """Module.to keeps parameter objects: tied weights stay tied, an optimizer built before the move trains."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for build_optimizer_first in (True, False):
            assert_close(
                tied_language_model(device, build_optimizer_first), tied_language_model("cpu", build_optimizer_first)
            )


CHECKS = [
    check_copies,
    check_dtypes,
    check_printing,
    check_view,
    check_device_indices,
    check_mlp_training_step,
    check_float_of_int,
    check_fallback,
    check_parameters_keep_identity,
]


def run_python(code, env=None, timeout=PROCESS_TIMEOUT):
    """``code`` run by a new interpreter in the checkout, as a script is."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=CHECKOUT,
        env={**os.environ, **(env or {})},
    )


def backward_as_last_statement(module):
    return f"""
import torch
import {module} as backend
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)).to(backend.DEVICE_NAME)
loss = model(torch.randn(5, 4).to(backend.DEVICE_NAME)).pow(2).mean()
loss.backward()
"""


def check_backward_on_calling_thread(module):
    """``loss.backward()`` runs its nodes on the calling thread, which leaves PyTorch's autograd device thread
    nothing to release after it returns (the exit abort that :func:`check_exit_after_backward` hunts)."""
    device = importlib.import_module(module).DEVICE_NAME
    loss = torch.ones(2, requires_grad=True).to(device).sum()
    threads = []
    loss.grad_fn.register_prehook(lambda grad_outputs: threads.append(threading.get_ident()))
    loss.backward()
    assert threads == [threading.get_ident()], "the backward ran on another thread"


def check_exit_after_backward(module, runs=EXIT_RUNS):
    """Scripts whose last statement is ``loss.backward()`` all exit with status 0 while the machine is busy.

    The race shows only under load: spinning processes keep the machine busy meanwhile.
    """
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(SPINNERS)]
    try:
        results = [run_python(backward_as_last_statement(module)) for _ in range(runs)]
    finally:
        for spinner in spinners:
            spinner.kill()
    failed = [result for result in results if result.returncode != 0]
    assert not failed, (
        f"{len(failed)} of {runs} scripts exited with status {failed[0].returncode}: {failed[0].stderr.strip()[-500:]}"
    )


def with_device_name(module, name, directory):
    """A copy of ``module``'s source in ``directory`` with only its ``DEVICE_NAME`` changed; the copy's name."""
    source = Path(importlib.util.find_spec(module).origin).read_text()
    assignment = re.compile(r'^DEVICE_NAME = "\w+"', re.MULTILINE)
    assert len(assignment.findall(source)) == 1, "the device is named once, by DEVICE_NAME"
    copy = f"renamed_{re.sub('[^a-z]', '_', name.lower())}"
    Path(directory, f"{copy}.py").write_text(assignment.sub(f'DEVICE_NAME = "{name}"', source))
    return copy


def check_renamed_device(module):
    """Changing ``DEVICE_NAME`` alone renames the device: every in-process check passes under the new name."""
    with tempfile.TemporaryDirectory() as directory:
        copy = with_device_name(module, "renamed", directory)
        result = run_python(
            f"import sys; sys.path.insert(0, {directory!r}); import minimal.checks as c; "
            f"c.run_checks({copy!r}, c.CHECKS)"
        )
    assert result.returncode == 0, result.stderr[-3000:]


def check_refused_device_names(module):
    """A name PyTorch would refuse part way through the setup is refused first, and nothing has changed."""
    with tempfile.TemporaryDirectory() as directory:
        copies = [with_device_name(module, name, directory) for name in REFUSED_DEVICE_NAMES]
        result = run_python(f"""
import importlib, sys, torch
sys.path.insert(0, {directory!r})
for copy in {copies!r}:
    try:
        importlib.import_module(copy)
    except ValueError as error:
        print(error)
    else:
        sys.exit(copy + " was set up")
assert torch._C._get_privateuse1_backend_name() == "privateuseone", "the setup renamed PrivateUse1"
backend = importlib.import_module({module!r})
assert torch.ones(1).to(backend.DEVICE_NAME).device.type == backend.DEVICE_NAME
""")
    assert result.returncode == 0, result.stderr[-3000:] or result.stdout
    assert len(result.stdout.splitlines()) == len(REFUSED_DEVICE_NAMES), result.stdout


def check_strict_fallback(module):
    """With the strict switch set, an op without a kernel raises an error that names it."""
    backend = importlib.import_module(module)
    result = run_python(
        f"import torch, {module} as backend; torch.lgamma(torch.ones(2).to(backend.DEVICE_NAME))",
        env={backend.STRICT_ENV: "1"},
    )
    expected = (
        f"NotImplementedError: {backend.DEVICE_NAME} device: aten::lgamma.out has no kernel, "
        f"and {backend.STRICT_ENV}=1 forbids the CPU fallback"
    )
    assert result.returncode != 0 and expected in result.stderr, result.stderr[-3000:]


# Checks of one backend, given its module: the C++ twin's name and fallback are C++'s, and its backward runs on
# PyTorch's autograd device thread (see check_backward_on_calling_thread).
OWN_CHECKS = {
    "python": [
        check_backward_on_calling_thread,
        check_exit_after_backward,
        check_renamed_device,
        check_refused_device_names,
        check_strict_fallback,
    ],
    "cpp": [],
}


def run_checks(module, checks):
    device = importlib.import_module(module).DEVICE_NAME
    for check in checks:
        check(device)
        print(f"{check.__name__}: ok")


def main(backend, exit_runs=EXIT_RUNS):
    run_checks(BACKENDS[backend], CHECKS)
    for check in OWN_CHECKS[backend]:
        if check is check_exit_after_backward:
            check(BACKENDS[backend], exit_runs)
        else:
            check(BACKENDS[backend])
        print(f"{check.__name__}: ok")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("backend", choices=BACKENDS)
    parser.add_argument(
        "--exit-runs",
        type=int,
        default=EXIT_RUNS,
        help="scripts ending in backward() that must all exit cleanly (default %(default)s)",
    )
    arguments = parser.parse_args()
    main(arguments.backend, arguments.exit_runs)
