"""Compiled functions whose outputs are views, on npy as on the CPU: values, dtype, shape, strides
and storage offset, under ``torch.compile``'s default backend (Inductor) and ``backend="npy"``.

The graphs are inference graphs (no gradient asked for), where neither route remakes a view
output in eager code: Inductor's wrapper hands out a view of one of its buffers, and the npy
backend's lowerings return NumPy views. Each view is taken on a dimension other than the first
as well, of a computed buffer and of the input itself.
"""

import gc
import warnings

import pytest
import torch
from reference import make

from backend_pkg.compiler.dynamo_backend import npy_backend

# Dynamo's backend lookup imports Inductor, whose modules still define torch.jit script methods.
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated")

VIEWS = {
    "t of a result": lambda x: (x + 1)[0].t(),
    "t of the input": lambda x: x[0].t(),
    "every other column of a result": lambda x: (x + 1)[:, 1::2],
    "every other column of the input": lambda x: x[:, 1::2],
    "transpose(0, 2)[1] of a result": lambda x: (x * 2).transpose(0, 2)[1],
    "transpose(0, 2)[1] of the input": lambda x: x.transpose(0, 2)[1],
    "transpose(1, 2) of a result": lambda x: (x - 1).transpose(1, 2),
    "select on dim 1": lambda x: (x + 1)[:, 2],
    "select on the last dim": lambda x: (x + 1)[..., -2],
    "narrow on the last dim": lambda x: (x + 1).narrow(2, 1, 3),
    "unsqueeze(1).expand": lambda x: (x + 1).unsqueeze(1).expand(-1, 2, -1, -1),
    "expand to a new leading dim": lambda x: (x + 1)[0].expand(2, -1, -1),
    "squeeze of dim 1": lambda x: (x + 1)[:, :1].squeeze(1),
    "permute": lambda x: (x + 1).permute(2, 0, 1),
    "a result and its view": lambda x: ((y := x + 1), y[:, 1::2]),
}

# What each route is compared with: the same compilation on CPU tensors (for npy's own
# backend, AOTAutograd without a compiler, which runs the graph's aten ops as traced).
ROUTES = {"inductor": ("inductor", "inductor"), "npy": (npy_backend, "aot_eager")}


@pytest.fixture(autouse=True)
def fresh_dynamo():
    """Each test compiles from scratch: Dynamo's caches would otherwise carry over."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def outputs(result):
    return result if isinstance(result, tuple) else (result,)


def compiled_on(device, fn, backend, x):
    torch._dynamo.reset()
    with torch.no_grad():
        return outputs(torch.compile(fn, backend=backend)(x.to(device)))


def assert_same_views(npy_results, cpu_results):
    """Equal results; reading one warns of nothing (a read-only NumPy array would)."""
    assert len(npy_results) == len(cpu_results)
    for got, want in zip(npy_results, cpu_results):
        assert got.device.type == "npy"
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            host = got.cpu()
        assert (got.dtype, got.shape, got.stride(), got.storage_offset()) == (
            want.dtype,
            want.shape,
            want.stride(),
            want.storage_offset(),
        )
        torch.testing.assert_close(host, want, rtol=0, atol=0)


@pytest.mark.usefixtures("warn_always")
@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=str)
@pytest.mark.parametrize("fn", VIEWS.values(), ids=VIEWS.keys())
def test_compiled_view_outputs_like_cpu(fn, dtype, route):
    on_npy, on_cpu = ROUTES[route]
    x = make((3, 4, 5), dtype)
    assert_same_views(compiled_on("npy", fn, on_npy, x), compiled_on("cpu", fn, on_cpu, x))


@pytest.mark.parametrize("route", ROUTES)
def test_a_view_output_of_the_input_writes_into_the_input_like_cpu(route):
    on_npy, on_cpu = ROUTES[route]
    x = make((3, 4, 5), torch.float32)
    results = {}
    for device, backend in (("npy", on_npy), ("cpu", on_cpu)):
        torch._dynamo.reset()
        source = x.to(device)
        with torch.no_grad():
            view = torch.compile(lambda t: t.transpose(0, 2)[1], backend=backend)(source)
        view.mul_(-1)
        results[device] = source
    torch.testing.assert_close(results["npy"].cpu(), results["cpu"], rtol=0, atol=0)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    "fn, holds_a_buffer",
    [(VIEWS["every other column of the input"], False), (VIEWS["every other column of a result"], True)],
    ids=["of the input", "of a result"],
)
def test_a_view_output_holds_its_buffer_and_nothing_more(fn, holds_a_buffer, route):
    """A view of the input holds no new memory; a view of a result holds the result's storage,
    all of it, until the view goes."""
    x = make((3, 4, 5), torch.float32).to("npy")
    compiled = torch.compile(fn, backend=ROUTES[route][0])
    with torch.no_grad():
        compiled(x)  # compiles, and starts the memory counting
        gc.collect()
        before = torch.npy.memory_allocated()
        view = compiled(x)
        gc.collect()
        assert torch.npy.memory_allocated() - before == (view.untyped_storage().nbytes() if holds_a_buffer else 0)
        assert view.untyped_storage().nbytes() == x.untyped_storage().nbytes()
        del view
        gc.collect()
        assert torch.npy.memory_allocated() == before
