"""The npy device as PyTorch sees it: setup, device module, hooks, guard."""

import subprocess
import sys
import textwrap
import threading
import time

import pytest
import torch

import backend_pkg


def run_fresh(code):
    """Run ``code`` in a new interpreter, where nothing is registered yet."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)


def test_device_module_is_torch_npy():
    assert torch.npy is backend_pkg.device
    assert torch.npy.is_available() and torch.npy.is_initialized()
    assert torch.npy.device_count() == 1
    assert torch.npy.current_device() == 0
    assert "NumPy" in torch.npy.get_device_name()


def test_accelerator_api_sees_npy():
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator() == torch.device("npy")
    assert torch.accelerator.device_count() == 1


def test_generated_tensor_methods():
    t = torch.ones(2).npy()
    assert t.is_npy and t.device == torch.device("npy:0")
    assert not torch.ones(2).is_npy


def test_dispatch_key_keeps_its_cpp_name():
    keys = str(torch._C._dispatch_keys(torch.ones(1, device="npy")))
    assert "PrivateUse1" in keys and "npy" not in keys


@pytest.mark.parametrize("bad", [1, "npy:1", torch.device("npy", 3)])
def test_a_device_index_the_backend_lacks_is_an_error(bad):
    with pytest.raises(RuntimeError, match="invalid device index"):
        torch.npy.set_device(bad)


def test_torch_manual_seed_reaches_the_device_module():
    torch.manual_seed(1234)
    assert torch.npy.initial_seed() == 1234
    first = torch.npy.generator.random(3)
    torch.manual_seed(1234)
    assert (torch.npy.generator.random(3) == first).all()
    assert torch.npy.seed() == torch.npy.initial_seed()


def test_hooks_and_guard():
    hooks = backend_pkg.runtime.NpyHooks()
    assert hooks.is_built() and hooks.is_available()
    assert hooks.has_primary_context(0) and not hooks.has_primary_context(1)
    guard = backend_pkg.runtime.NpyDeviceGuard()
    assert guard.type_() == torch._C._autograd.DeviceType.PrivateUse1


def test_importing_twice_is_safe():
    result = run_fresh(
        """
        import importlib, torch
        import backend_pkg
        first = torch.npy
        importlib.reload(backend_pkg)
        backend_pkg.backend.setup()
        assert torch.npy is first
        x = torch.ones(3, device="npy")
        print((x + x).sum().item())
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "6.0"


def test_backward_works_in_a_fresh_process():
    result = run_fresh(
        """
        import torch, backend_pkg
        a = torch.ones(2, 2, device="npy", requires_grad=True)
        (a * 3).sum().backward()
        print(a.grad.cpu().tolist())
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[[3.0, 3.0], [3.0, 3.0]]"


def test_privateuse1_taken_by_another_backend_is_a_clear_error():
    result = run_fresh(
        """
        import torch
        torch.utils.rename_privateuse1_backend("other")
        import backend_pkg
        """
    )
    assert result.returncode != 0
    assert "PrivateUse1 is already the 'other' backend" in result.stderr


def test_exit_waits_for_the_autograd_thread_to_leave_the_guard():
    """After a backward() on the engine's npy thread, backend_pkg waits at exit until the guard
    has been ``quiet`` seconds without a call.

    (A Python guard called during interpreter finalization aborts the process;
    short scripts calling backward() did so in 9 of 30 runs on a loaded
    machine before this wait, 0 of 40 after.) Another thread calls the guard
    every ``quiet / 10`` seconds for ``busy`` seconds: the wait ends ``quiet``
    seconds after its last call, and not before it.
    """
    x = torch.ones(3).to("npy").requires_grad_()
    torch.autograd.backward((x * 2).sum())  # the engine's npy thread runs it
    guard = backend_pkg.runtime.NpyDeviceGuard()
    quiet, busy = 0.5, 1.0
    calls = []

    def call_the_guard():
        started = time.monotonic()
        while time.monotonic() - started < busy:
            guard.type_()
            calls.append(time.monotonic())
            time.sleep(quiet / 10)

    worker = threading.Thread(target=call_the_guard)
    worker.start()
    backend_pkg.runtime.settle_autograd_thread(quiet=quiet, limit=10 * busy)
    settled = time.monotonic()
    worker.join()
    assert calls and calls[-1] < settled
    assert settled - calls[-1] >= quiet
    assert x.grad is not None


def test_exit_does_not_wait_after_backward_on_the_main_thread():
    backend_pkg.runtime.settle_autograd_thread()  # whatever ran before this test
    x = torch.ones(3).to("npy").requires_grad_()
    (x * 2).sum().backward()
    started = time.monotonic()
    backend_pkg.runtime.settle_autograd_thread()
    assert time.monotonic() - started < backend_pkg.runtime.QUIET_SECONDS / 2


class TiedLanguageModel(torch.nn.Module):
    """An embedding and an output layer sharing one weight, as GPT-style models do."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(5, 3)
        self.head = torch.nn.Linear(3, 5, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, tokens):
        return self.head(self.embed(tokens))


def test_module_to_npy_keeps_shared_parameters_tied():
    """``Module.to`` keeps a parameter object (``param.data = moved``) only when the op
    ``_has_compatible_shallow_copy_type`` says so; c10's rule names the dense backends it knows
    (``TensorImpl::has_compatible_shallow_copy_type`` in c10/core/TensorImpl.h) and leaves
    PrivateUse1 to a kernel of the backend's, which npy registers (backend_pkg/parameters.py):
    tied weights stay one parameter, as on CUDA (tests/core/test_parameters.py has the rest)."""
    model = TiedLanguageModel()
    moved = model.head.weight
    model.to("npy")
    assert model.head.weight is model.embed.weight is moved
    assert len(list(model.parameters())) == 1


def test_models_built_on_npy_or_swapped_there_stay_tied():
    """The other ways to a tied model on npy: build it on the device, or move it with
    ``torch.__future__.set_swap_module_params_on_conversion(True)``, whose ``swap_tensors``
    keeps every parameter object."""
    with torch.device("npy"):
        built_there = TiedLanguageModel()
    assert built_there.head.weight is built_there.embed.weight
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        swapped = TiedLanguageModel().to("npy")
    finally:
        torch.__future__.set_swap_module_params_on_conversion(False)
    assert swapped.head.weight is swapped.embed.weight and swapped.embed.weight.device.type == "npy"
    swapped(torch.tensor([1, 2], device="npy")).sum().backward()
    cpu = TiedLanguageModel()
    cpu.load_state_dict({name: value.cpu() for name, value in swapped.state_dict().items()})
    cpu(torch.tensor([1, 2])).sum().backward()
    torch.testing.assert_close(swapped.embed.weight.grad.cpu(), cpu.embed.weight.grad)
