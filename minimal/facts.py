"""What a backend does with ops it has no kernel for, devices, streams, events and ``torch.compile``,
found by running it.

``python -m minimal.facts cpp|python|backend_pkg`` sets up that backend (one
PrivateUse1 backend per process), tries each thing and prints, as JSON, what
happened: the value it gave, or the exception it raised. The C++ vs Python page
(gallery/07_cpp_vs_python.py) shows the three side by side.
"""

import importlib
import json
import sys

import torch

BACKENDS = {"cpp": "minimal.cpp_backend", "python": "minimal.python_backend", "backend_pkg": "backend_pkg"}
MESSAGE_LIMIT = 160  # characters of an exception's message kept


def first_line(error):
    """The exception's type and its message's first sentence."""
    sentence = (str(error).strip().splitlines() or [""])[0].split(". ")[0]
    return f"{type(error).__name__}: {sentence[:MESSAGE_LIMIT]}"


def outcome(attempt):
    """What ``attempt()`` gave, as text; or the exception it raised, with the one that caused it."""
    try:
        return attempt()
    except Exception as error:  # noqa: BLE001  (an exception is the answer being recorded)
        cause = error
        while (cause.__cause__ or cause.__context__) is not None:  # torch.compile wraps a backend's error
            cause = cause.__cause__ or cause.__context__
        if cause is error:
            return f"raises {first_line(error)}"
        return f"raises {type(error).__name__}, from {first_line(cause)}"


def kernel_facts(device):
    registered = torch._C._dispatch_get_registrations_for_dispatch_key("PrivateUse1")
    tensor = torch.arange(1.0, 4.0)

    def op_without_kernel():  # none of the three registers aten::lgamma for PrivateUse1
        result = torch.lgamma(tensor.to(device))
        torch.testing.assert_close(result.cpu(), torch.lgamma(tensor))
        return f"runs, result on {result.device}, equal to CPU"

    return {
        "aten ops with a kernel of their own": sum(name.startswith("aten::") for name in registered),
        "torch.lgamma, which has none": outcome(op_without_kernel),
    }


def device_facts(device):
    def second_device():
        return str(torch.ones(1, device=f"{device}:1").device)

    def set_device_index():
        torch.accelerator.set_device_index(1)
        current = torch.accelerator.current_device_index()
        torch.accelerator.set_device_index(0)
        return f"current index is then {current}"

    return {
        "device_count()": torch.accelerator.device_count(),
        "a tensor on index 1": outcome(second_device),
        "set_device_index(1)": outcome(set_device_index),
    }


def stream_and_event_facts(device):
    stream = torch.accelerator.current_stream()
    start, end = torch.Event(device=device, enable_timing=True), torch.Event(device=device, enable_timing=True)

    def elapsed_time():
        start.record(stream)
        torch.ones(1000, device=device).add(1)
        end.record(stream)
        return f"{start.elapsed_time(end):.3f} ms"

    return {
        "current_stream()": str(stream),
        "torch.Stream() (a new stream)": outcome(lambda: str(torch.Stream(device=device))),
        "Event.record(), query()": outcome(lambda: start.record(stream) or start.query()),
        "Event.synchronize()": outcome(lambda: start.synchronize() or "returns"),
        "Event.elapsed_time()": outcome(elapsed_time),
        "accelerator.synchronize()": outcome(lambda: torch.accelerator.synchronize() or "returns"),
    }


def affine(tensor):
    return tensor * 2 + 1


def compile_facts(device):
    tensor = torch.arange(3.0).to(device)
    expected = affine(tensor.cpu())

    def compiled_with(backend):
        result = torch.compile(affine, backend=backend)(tensor)
        torch.testing.assert_close(result.cpu(), expected)
        return f"runs, result on {result.device}, equal to eager"

    backends = ["inductor", "eager", "aot_eager"]
    if device in torch._dynamo.list_backends(exclude_tags=()):
        backends.append(device)  # a compile backend named after the device, as backend_pkg registers
    return {f'backend="{backend}"': outcome(lambda: compiled_with(backend)) for backend in backends}


def main(backend):
    device = importlib.import_module(BACKENDS[backend]).DEVICE_NAME
    facts = {
        "kernels": kernel_facts(device),
        "devices": device_facts(device),
        "streams and events": stream_and_event_facts(device),
        "torch.compile": compile_facts(device),
    }
    print(json.dumps(facts))


if __name__ == "__main__":
    main(sys.argv[1])
