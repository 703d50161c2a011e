"""What a CUDA program touches around the kernels, run on npy: pinned memory and
DataLoader, synchronization, memory counters, RNG state, autocast.

Where PyTorch 2.13 blocks a Python backend, a test pins down the failure
(docs_limits.md has the upstream issue for each); when PyTorch lifts the
limit the test fails, and the docs need updating.
"""

import subprocess
import sys
import textwrap

import pytest
import torch
import torch.utils.checkpoint
from reference import assert_matches_cpu, make

from backend_pkg import autocast


def run_fresh(code):
    """Run ``code`` in a new interpreter; returns its stdout, failing on a non-zero exit."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


# ---- pinned memory -------------------------------------------------------------------------


def test_pin_memory_copies_into_host_memory_marked_pinned():
    source = make((3, 4), torch.float32).t()
    pinned = source.pin_memory()
    assert pinned.device.type == "cpu" and pinned.is_pinned() and not source.is_pinned()
    assert pinned.stride() == source.stride() and torch.equal(pinned, source)
    assert pinned.untyped_storage().data_ptr() != source.untyped_storage().data_ptr()
    assert pinned.pin_memory() is pinned
    assert pinned[1:].is_pinned() and pinned.untyped_storage().is_pinned()
    assert source.untyped_storage().pin_memory().is_pinned()


def test_pinning_anything_but_a_host_tensor_is_pytorchs_own_error():
    assert not torch.ones(2, device="npy").is_pinned()
    with pytest.raises(RuntimeError, match="^cannot pin 'npyHalfType' only dense CPU tensors can be pinned$"):
        torch.ones(2, dtype=torch.float16, device="npy").pin_memory()
    with pytest.raises(RuntimeError, match="^cannot pin 'MetaHalfType' only dense CPU tensors can be pinned$"):
        torch.ones(2, dtype=torch.float16, device="meta").pin_memory()


def test_factory_pin_memory_is_out_of_reach():
    """``torch.empty(..., pin_memory=True)`` allocates through the hooks (docs_limits.md)."""
    with pytest.raises(NotImplementedError, match="getPinnedMemoryAllocator"):
        torch.empty(3, pin_memory=True)


def test_a_cuda_style_training_script_runs_on_the_current_accelerator():
    """The device-generic idioms of a CUDA training script, with the accelerator npy:
    pinned DataLoader batches from two workers, non_blocking copies, autocast and
    GradScaler, activation checkpointing, peak memory, a checkpoint. Every loss
    equals the same script's on CPU (no dropout: npy draws other random numbers)."""
    output = run_fresh(
        """
        import io
        import torch, backend_pkg
        from torch.utils.data import DataLoader, TensorDataset
        from torch.utils.checkpoint import checkpoint

        def train(device, **loader_options):
            torch.manual_seed(0)
            data = TensorDataset(torch.randn(64, 4), torch.randint(0, 3, (64,)))
            model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scaler = torch.amp.GradScaler(device.type)
            losses = []
            for inputs, targets in DataLoader(data, batch_size=16, **loader_options):
                if loader_options.get("pin_memory"):
                    assert inputs.is_pinned() and targets.is_pinned()
                inputs = inputs.to(device, non_blocking=True)
                targets = targets.to(device, non_blocking=True)
                with torch.autocast(device.type, dtype=torch.float16):
                    logits = checkpoint(model, inputs, use_reentrant=False)
                    loss = torch.nn.functional.cross_entropy(logits, targets)
                optimizer.zero_grad()
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                losses.append(loss.item())
            buffer = io.BytesIO()
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, buffer)
            buffer.seek(0)
            model.load_state_dict(torch.load(buffer)["model"])
            return losses

        device = torch.accelerator.current_accelerator()
        assert device.type == "npy"
        expected = train(torch.device("cpu"))
        module = torch.get_device_module(device)
        module.reset_peak_memory_stats()
        for workers in (0, 2):
            losses = train(device, pin_memory=True, num_workers=workers, timeout=60 if workers else 0)
            torch.testing.assert_close(losses, expected)
        module.synchronize()
        assert module.max_memory_allocated() > module.memory_allocated()
        print("trained")
        """
    )
    assert output.strip() == "trained"


# ---- synchronization -----------------------------------------------------------------------


def test_device_module_and_stream_synchronize():
    torch.npy.synchronize()
    torch.npy.synchronize("npy:0")
    torch.accelerator.current_stream().synchronize()
    event = torch.accelerator.current_stream().record_event()
    assert event.query()


def test_data_prefetcher_copies_on_a_side_stream_and_records_it():
    """A CUDA data prefetcher's step: copy the batch in on a stream of its own, make the
    compute stream wait for it, and mark the batch used there (``record_stream``)."""
    side = torch.Stream("npy")
    with side:
        batch = torch.arange(4.0).pin_memory().to("npy", non_blocking=True)
    compute = torch.accelerator.current_stream()
    compute.wait_stream(side)
    batch.record_stream(compute)
    assert_matches_cpu(batch * 2, torch.arange(4.0) * 2)


def test_device_module_makes_streams_and_events_as_torch_cuda_does():
    """What code written for any accelerator asks the device module for (FSDP2's collectives:
    ``Stream()``, ``with stream(...)``, ``current_stream().wait_event(...)``)."""
    module = torch.get_device_module("npy")
    side = module.Stream()
    assert isinstance(side, torch.Stream) and side.device == torch.device("npy:0")
    with module.stream(side):
        assert module.current_stream() == side
        event = module.Event()
        event.record()
    with module.stream(None):
        module.current_stream().wait_event(event)
    assert event.query() and module.default_stream() == module.current_stream("npy:0")
    with pytest.raises(RuntimeError, match="invalid device index 1"):
        module.Stream("npy:1")


def test_device_module_steers_bfloat16_choices_to_float16():
    """``dtype = bfloat16 if is_bf16_supported() else float16``: npy tensors cannot hold bfloat16."""
    assert torch.get_device_module("npy").is_bf16_supported() is False


def recorded_event():
    event = torch.Event("npy", enable_timing=True)
    event.record()
    return event


@pytest.mark.parametrize(
    "call, message",
    [
        (torch.accelerator.synchronize, "synchronizing all streams on device"),
        (lambda: recorded_event().synchronize(), "synchronizing events"),
        (lambda: recorded_event().elapsed_time(recorded_event()), "elapsedTime"),
    ],
    ids=["accelerator.synchronize", "Event.synchronize", "Event.elapsed_time"],
)
def test_what_the_python_device_guard_cannot_do(call, message):
    """PythonDeviceGuard (torch/csrc/acc/Module.cpp) keeps the interface's refusals (docs_limits.md)."""
    with pytest.raises(RuntimeError, match=message):
        call()


# ---- memory --------------------------------------------------------------------------------


@pytest.mark.usefixtures("no_collection")
def test_memory_counts_each_storage_once_until_it_is_freed():
    before = torch.npy.memory_allocated()
    tensor = torch.ones(1000, device="npy")
    assert torch.npy.memory_allocated() == before + 4000
    views = [tensor[10:], tensor.view(10, 100).t(), tensor.unsqueeze(0)]
    assert torch.npy.memory_allocated() == before + 4000
    torch.npy.reset_peak_memory_stats()
    bigger = torch.zeros(500, dtype=torch.float64, device="npy")
    assert torch.npy.max_memory_allocated() == before + 8000
    del tensor, views, bigger
    assert torch.npy.memory_allocated() == before
    assert torch.npy.max_memory_allocated() == before + 8000
    stats = torch.npy.memory_stats()
    assert stats["allocated_bytes.all.current"] == before and stats["allocated_bytes.all.peak"] == before + 8000
    assert torch.npy.memory_reserved() == before


@pytest.mark.usefixtures("no_collection")
def test_memory_of_a_backward_pass_is_freed_with_the_graph():
    before = torch.npy.memory_allocated()
    weight = torch.ones(64, 64, device="npy", requires_grad=True)
    (weight @ weight).sum().backward()
    assert torch.npy.memory_allocated() == before + 2 * 64 * 64 * 4  # the weight and its grad
    del weight
    assert torch.npy.memory_allocated() == before


def test_counting_starts_at_the_first_query_with_the_tensors_alive_then():
    output = run_fresh(
        """
        import torch, backend_pkg
        from backend_pkg import memory
        kept = [torch.ones(250, device="npy"), torch.ones(10, dtype=torch.float64, device="npy")]
        view = kept[0][5:]
        print(memory.counting, torch.npy.memory_allocated(), memory.counting)
        """
    )
    assert output.split() == ["False", "1080", "True"]


def test_torch_accelerator_memory_needs_a_cpp_allocator():
    """c10::getDeviceAllocator asserts the allocator is a DeviceAllocator (docs_limits.md)."""
    with pytest.raises(RuntimeError, match="is not a DeviceAllocator"):
        torch.accelerator.memory_allocated()


# ---- random numbers ------------------------------------------------------------------------


def test_rng_state_round_trip_and_fork_rng():
    torch.manual_seed(5)
    state = torch.npy.get_rng_state()
    first = torch.randn(5, device="npy").cpu()
    torch.npy.set_rng_state(state)
    assert torch.equal(torch.randn(5, device="npy").cpu(), first)
    assert torch.npy.initial_seed() == 5
    with torch.random.fork_rng(device_type="npy"):
        inside = torch.randn(3, device="npy").cpu()
    assert torch.equal(torch.randn(3, device="npy").cpu(), inside)
    with pytest.raises(RuntimeError, match="RNG state has 48 bytes"):
        torch.npy.set_rng_state(torch.zeros(3, dtype=torch.uint8))


def test_checkpoint_recomputes_dropout_with_the_same_mask():
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.5)).to("npy")
    inputs = make((4, 8), torch.float32).to("npy").requires_grad_()
    torch.manual_seed(0)
    torch.utils.checkpoint.checkpoint(model, inputs, use_reentrant=False).sum().backward()
    checkpointed = inputs.grad
    inputs.grad = None
    torch.manual_seed(0)
    model(inputs).sum().backward()
    torch.testing.assert_close(checkpointed.cpu(), inputs.grad.cpu())


def test_npy_generators_are_out_of_reach():
    """PythonHooks::getNewGenerator is not forwarded to Python (docs_limits.md)."""
    with pytest.raises(NotImplementedError, match="getNewGenerator"):
        torch.Generator(device="npy")


# ---- autocast ------------------------------------------------------------------------------


def autocast_like_cpu(fn, *args):
    """``fn`` under ``torch.autocast`` on npy gives CPU autocast's dtypes and values."""
    with torch.autocast("cpu", dtype=torch.float16):
        expected = fn(*args)
    with torch.autocast("npy", dtype=torch.float16):
        result = fn(*[arg.to("npy") if isinstance(arg, torch.Tensor) else arg for arg in args])
    assert result.dtype == expected.dtype
    assert_matches_cpu(result.detach(), expected.detach())
    return result


def test_autocast_linear_is_float16_as_on_cpu():
    weight, bias = make((3, 4), torch.float32, 1), make((3,), torch.float32, 2)
    result = autocast_like_cpu(torch.nn.functional.linear, make((2, 4), torch.float32), weight, bias)
    assert result.dtype == torch.float16


@pytest.mark.parametrize(
    "fn, expected_dtype",
    [
        (lambda x, y: torch.nn.functional.mse_loss(x.half(), y), torch.float32),
        (lambda x, y: torch.cat([x.half(), y]), torch.float32),
        (lambda x, y: torch.cat([x.half(), y.half()]), torch.float16),
        (lambda x, y: torch.softmax(x.half() + y.half(), 0), torch.float16),
        (lambda x, y: x.double() @ y.double().t(), torch.float64),
        (lambda x, y: x @ y.t(), torch.float16),
    ],
    ids=["float32-policy", "promote", "promote-half", "no-policy", "float64-untouched", "matmul"],
)
def test_autocast_policies_match_cpu(fn, expected_dtype):
    result = autocast_like_cpu(fn, make((3, 4), torch.float32, 1), make((3, 4), torch.float32, 2))
    assert result.dtype == expected_dtype


def test_autocast_backward_matches_cpu():
    torch.manual_seed(0)
    cpu_model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    npy_model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)).to("npy")
    npy_model.load_state_dict(cpu_model.state_dict())
    inputs, targets = make((5, 4), torch.float32), make((5, 3), torch.float32, 1)
    for model, device in ((cpu_model, "cpu"), (npy_model, "npy")):
        with torch.autocast(device, dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(model(inputs.to(device)), targets.to(device))
        assert loss.dtype == torch.float32
        loss.backward()
    for cpu_param, npy_param in zip(cpu_model.parameters(), npy_model.parameters()):
        assert npy_param.grad.dtype == torch.float32
        torch.testing.assert_close(npy_param.grad.cpu(), cpu_param.grad)


def test_autocast_to_bfloat16_is_refused_as_pytorch_refuses_unsupported_dtypes():
    with pytest.warns(UserWarning, match="npy Autocast only supports dtypes of torch.float16"):
        with torch.autocast("npy", dtype=torch.bfloat16):
            result = torch.nn.functional.linear(torch.ones(2, 4, device="npy"), torch.ones(3, 4, device="npy"))
    assert result.dtype == torch.float32


def test_grad_scaler_steps_like_cpu(strict):
    torch.manual_seed(0)
    cpu_model = torch.nn.Linear(4, 3)
    npy_model = torch.nn.Linear(4, 3).to("npy")
    npy_model.load_state_dict(cpu_model.state_dict())
    inputs = make((5, 4), torch.float32)
    for model, device in ((cpu_model, "cpu"), (npy_model, "npy")):
        scaler = torch.amp.GradScaler(device, init_scale=1024.0)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        with torch.autocast(device, dtype=torch.float16):
            loss = model(inputs.to(device)).float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        assert scaler.get_scale() == 1024.0
    for cpu_param, npy_param in zip(cpu_model.parameters(), npy_model.parameters()):
        torch.testing.assert_close(npy_param.detach().cpu(), cpu_param.detach())


def test_autocast_lists_are_cpu_autocasts_lists():
    """Every op with an AutocastCPU kernel in this PyTorch is listed and registered for npy."""
    names = torch._C._dispatch_get_all_op_names()
    cpu_ops = {name for name in names if torch._C._dispatch_has_kernel_for_dispatch_key(name, "AutocastCPU")}
    listed = autocast.LOWER_PRECISION + autocast.FLOAT32 + autocast.PROMOTE
    assert len(set(listed)) == len(listed)
    assert cpu_ops <= {f"aten::{name}" for name in listed}
    assert all(torch._C._dispatch_has_kernel_for_dispatch_key(name, "AutocastPrivateUse1") for name in cpu_ops)
