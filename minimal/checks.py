"""The core checks both minimal backends pass: ``python -m minimal.checks python|cpp``.

Run in a process of its own (one PrivateUse1 backend per process); prints one
line per check and exits non-zero at the first that fails.
"""

import importlib
import sys

import torch
from torch.testing import assert_close

BACKENDS = {"python": "minimal.python_backend", "cpp": "minimal.cpp_backend"}


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
    assert_close(torch.ones(3, dtype=torch.float32).to(device).to(torch.float64).cpu(), torch.ones(3, dtype=torch.float64))


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


CHECKS = [check_copies, check_dtypes, check_printing, check_view, check_device_indices, check_mlp_training_step]


def main(backend):
    device = importlib.import_module(BACKENDS[backend]).DEVICE_NAME
    for check in CHECKS:
        check(device)
        print(f"{check.__name__}: ok")


if __name__ == "__main__":
    main(sys.argv[1])
