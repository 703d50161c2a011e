"""torch.compile on npy: compiled results equal eager ones, dtype and shape included."""

import functools
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
import zoo
from reference import make, views_of_a_3x4_tensor
from zoo import classification_step

import backend_pkg
from backend_pkg.compiler.dynamo_backend import npy_backend

# Dynamo's backend lookup imports Inductor, whose modules still define torch.jit script methods.
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated")


@pytest.fixture(autouse=True)
def fresh_dynamo():
    """Each test compiles from scratch: Dynamo's caches would otherwise carry over."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture
def compiled_graphs():
    """The graphs the npy backend generates, through a backend that records them."""
    graphs = []
    return graphs, functools.partial(npy_backend, on_compiled=graphs.append)


def mlp(device):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).to(device)


def data(batch, device):
    x = make((batch, 32), torch.float32, 1).to(device)
    y = (make((batch,), torch.int64, 2) % 10).to(device)
    return x, y


def assert_same(compiled, eager):
    """Same device, dtype, shape and values (assert_close checks all of them)."""
    torch.testing.assert_close(compiled, eager)


def test_the_backend_is_found_by_name():
    assert "npy" in torch._dynamo.list_backends()
    fn = torch.compile(lambda a: (a * 2).sum(), backend="npy")
    assert_same(fn(torch.ones(3, device="npy")), torch.tensor(6.0, device="npy"))


def test_mlp_forward_runs_entirely_in_numpy(compiled_graphs):
    graphs, backend = compiled_graphs
    model = mlp("npy")
    x, _ = data(64, "npy")
    with torch.no_grad():
        compiled = torch.compile(model, backend=backend)(x)
        eager = model(x)
    assert_same(compiled, eager)
    assert type(compiled) is backend_pkg.NpyTensor
    [graph] = graphs
    assert set(graph.lowered) == {"permute", "addmm", "relu"} and not graph.eager
    # Five inputs (x, two weights, two biases) unwrapped once each, one output wrapped once.
    assert graph.code.count("unwrap(") == 5 and graph.code.count("wrap(") == 6


def train(device, step, optimizer_class, steps=3):
    model = mlp(device)
    optimizer = optimizer_class(model.parameters(), lr=0.1)
    x, y = data(16, device)
    losses = torch.stack([step(model, [optimizer], (x, y)).detach().cpu() for _ in range(steps)])
    grads = [p.grad.cpu() for p in model.parameters()]
    weights = [p.detach().cpu() for p in model.parameters()]
    return losses, grads, weights


def assert_runs_equal(run, reference, **tolerance):
    for got, want in zip(run, reference):
        torch.testing.assert_close(got, want, **tolerance)


def test_sgd_training_step_equals_eager_npy_and_cpu(compiled_graphs):
    graphs, backend = compiled_graphs
    compiled = train("npy", torch.compile(classification_step, backend=backend), torch.optim.SGD)
    assert_runs_equal(compiled, train("npy", classification_step, torch.optim.SGD))
    assert_runs_equal(compiled, train("cpu", classification_step, torch.optim.SGD))
    assert graphs and not any(graph.eager for graph in graphs)


def test_adam_training_step_equals_cpu_compiled_the_same_way():
    """Compiled, Adam runs formulas of its own (its foreach path, the step count on
    the CPU) that round differently from eager Adam's, on CPU as well; so the
    reference is the CPU run compiled by PyTorch's aot_eager backend."""
    compiled = train("npy", torch.compile(classification_step, backend="npy"), torch.optim.Adam)
    torch._dynamo.reset()
    assert_runs_equal(compiled, train("cpu", torch.compile(classification_step, backend="aot_eager"), torch.optim.Adam))


@pytest.mark.parametrize("dynamic", [None, True], ids=["recompiled", "dynamic"])
def test_changing_batch_size(dynamic):
    model = mlp("npy")

    def loss_of(x, y):
        return torch.nn.functional.cross_entropy(model(x), y)

    compiled = torch.compile(loss_of, backend="npy", dynamic=dynamic)
    for batch in (8, 5, 11):
        x, y = data(batch, "npy")
        model.zero_grad()
        compiled(x, y).backward()
        compiled_grads = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        loss_of(x, y).backward()
        assert_runs_equal(compiled_grads, [p.grad for p in model.parameters()])
        assert_same(compiled(x, y), loss_of(x, y))


def test_a_marked_dynamic_dim_needs_no_recompile(compiled_graphs):
    graphs, backend = compiled_graphs
    compiled = torch.compile(lambda a: (a * 2).softmax(0), backend=backend)
    for length in (4, 6, 9):
        a = make((length,), torch.float32, length).to("npy")
        torch._dynamo.mark_dynamic(a, 0)
        assert_same(compiled(a), (a * 2).softmax(0))
    assert len(graphs) == 1


def test_graph_breaks_give_eager_results(capsys):
    def with_breaks(a):
        b = a * 2
        print("a graph break")
        scale = b.sum().item()  # another one
        return (b + 1) / scale

    a = make((3, 4), torch.float32, 1).to("npy")
    assert_same(torch.compile(with_breaks, backend="npy")(a), with_breaks(a))
    assert capsys.readouterr().out.count("a graph break") == 2


def test_a_new_dtype_recompiles():
    compiled = torch.compile(lambda a: (a * 2.5 + 1).relu().sum(1) / 3, backend="npy")
    for dtype in (torch.float32, torch.float64, torch.float16):
        a = make((3, 4), dtype, 1).to("npy")
        assert_same(compiled(a), (a * 2.5 + 1).relu().sum(1) / 3)


def mixed(f, i, b):
    """NumPy promotes differently from PyTorch in each of these."""
    return (
        f * 2.5 + 1,  # float32 with a Python float stays float32
        i * 0.5,  # int64 with a Python float is float32 in PyTorch, float64 in NumPy
        i + 3,
        i.sum(),
        (i > 1).sum(),
        torch.where(b, f, 0.5),
        f + f.double().sum(),  # a 0-dim float64 tensor does not widen float32
        i.float().exp(),
        b.sum(0),
    )


def test_results_keep_pytorch_dtypes(compiled_graphs):
    graphs, backend = compiled_graphs
    inputs = [make((3, 4), dtype, 1).to("npy") for dtype in (torch.float32, torch.int64, torch.bool)]
    for got, want in zip(torch.compile(mixed, backend=backend)(*inputs), mixed(*inputs)):
        assert_same(got, want)
    assert not graphs[0].eager


def lowered_ops(a, b, m, i, c):
    """One expression (at least) per lowering of the table, in one graph."""
    return (
        torch.add(a, b, alpha=-0.5),
        torch.sub(a, b, alpha=2),
        a * b,
        a / b,
        a**2,
        torch.pow(a.abs(), b),
        torch.maximum(a, b),
        torch.minimum(a, b),
        torch.clamp(a, -0.5, 0.5),
        torch.addcmul(a, a, b, value=0.3),
        torch.addcdiv(a, a, b, value=0.3),
        -a,
        a.exp(),
        a.abs().log(),
        a.abs().sqrt(),
        a.abs(),
        a.tanh(),
        a.reciprocal(),
        a.abs().rsqrt(),
        a.sigmoid(),
        a.relu(),
        torch.where(a > b, a, b),
        # Comparisons as functions: returned straight from the compiled function, ``a >= 0``
        # on an input hits a Dynamo bug for tensor subclasses (see the gallery's last section).
        torch.eq(a, b),
        torch.ne(a, 1),
        torch.lt(a, b),
        torch.le(a, 0),
        torch.gt(a, b),
        torch.ge(a, 0),
        torch.logical_not(a.gt(0)),
        a.gt(0).any(),
        a.gt(0).any(1),
        a.sum(),
        a.sum(1, keepdim=True),
        a.mean(),
        a.mean(0),
        a.amax(1),
        a.amin(0),
        i.sum(),
        c.sum(),
        a.log_softmax(1),
        a.softmax(0),
        m @ m.t(),
        torch.bmm(m[None], m.t()[None]),
        torch.addmm(a[0, :3], m, m.t(), beta=0.5, alpha=2),
        *views_of_a_3x4_tensor(a),
        a.clone(),
        a.to(torch.float64),
        i.to(torch.float32),
        a.gather(1, i.clamp(0, 3)),
        a.scatter(1, i[:, :2].clamp(0, 3), 2.0),
        torch.zeros(3, device="npy"),
        torch.ones_like(a),
        torch.full((2,), 3, device="npy"),
        torch.arange(5, device="npy"),
    )


@pytest.mark.filterwarnings("ignore:npy device.*has no npy kernel")  # the eager run's fallbacks
def test_each_lowering_gives_the_eager_result(compiled_graphs):
    graphs, backend = compiled_graphs
    a, b, m = (make(shape, torch.float32, seed).to("npy") for shape, seed in [((3, 4), 1), ((3, 4), 2), ((3, 5), 3)])
    i, c = make((3, 4), torch.int64, 4).to("npy"), make((3, 4), torch.bool, 5).to("npy")
    for got, want in zip(torch.compile(lowered_ops, backend=backend)(a, b, m, i, c), lowered_ops(a, b, m, i, c)):
        torch.testing.assert_close(got, want, equal_nan=True)
    [graph] = graphs
    assert not graph.eager, graph.eager


@pytest.mark.filterwarnings("ignore:npy device.*has no npy kernel")
def test_ops_without_a_lowering_run_eagerly(compiled_graphs):
    graphs, backend = compiled_graphs

    def unlowered(a):
        return torch.flip(a, [1]).erf() + torch.sort(a, 1).values * 2

    a = make((3, 4), torch.float32, 1).to("npy")
    assert_same(torch.compile(unlowered, backend=backend)(a), unlowered(a))
    [graph] = graphs
    assert set(graph.eager) == {"flip", "erf", "sort"}
    assert set(graph.lowered) == {"add.Tensor", "mul.Tensor"}


def test_npy_kernels_run_eagerly_are_not_compiled_by_dynamo():
    """``backward()`` after the graph break runs npy kernels, which C++ calls inside
    the compiled function; Dynamo would otherwise compile each into graphs of its own."""
    counters = torch._dynamo.utils.counters
    counters.clear()
    w = torch.ones(3, device="npy", requires_grad=True)

    def step(w):
        loss = (w * w).sum()
        loss.backward()
        return loss

    assert_same(torch.compile(step, backend="npy")(w), torch.tensor(3.0, device="npy"))
    assert_same(w.grad, torch.full((3,), 2.0, device="npy"))
    assert counters["stats"]["unique_graphs"] == 1


def test_numpy_warnings_stay_silent_as_pytorch_is():
    a = torch.tensor([1.0, 0.0, -1.0], device="npy")
    divided_and_logged = torch.compile(lambda t: (t / 0, t.log()), backend="npy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = divided_and_logged(a)
    for got, want in zip(results, (a / 0, a.log())):
        torch.testing.assert_close(got, want, equal_nan=True)


def test_inputs_written_in_place_are_written():
    def step(a):
        a.add_(1)
        return a * 2

    a = torch.zeros(3, device="npy")
    assert_same(torch.compile(step, backend="npy")(a), torch.full((3,), 2.0, device="npy"))
    assert_same(a, torch.ones(3, device="npy"))


def test_outputs_that_are_views_alias_their_input():
    a = torch.arange(6.0).reshape(2, 3).to("npy")
    transposed, row = torch.compile(lambda t: (t.t(), t[1]), backend="npy")(a)
    a[1, 0] = 100.0
    assert transposed[0, 1].item() == 100.0 and row[0].item() == 100.0


def _doubled_and_flattened(t):
    return (t * 2).view(-1)


def _two_views_of_one_intermediate(t):
    doubled = t * 2
    return doubled.view(-1), doubled.t()


def _an_intermediate_and_its_view(t):
    doubled = t * 2
    return doubled, doubled.view(-1)


def _linear_over_sequences(sequences, weight, bias):
    """``nn.Linear`` over 3-D input: a matrix product of a 2-D view, viewed back in 3-D."""
    return torch.nn.functional.linear(sequences, weight, bias)


@pytest.mark.parametrize(
    "function, shapes",
    [
        (_doubled_and_flattened, [(2, 3)]),
        (_two_views_of_one_intermediate, [(2, 3)]),
        (_an_intermediate_and_its_view, [(2, 3)]),
        (_linear_over_sequences, [(2, 5, 4), (3, 4), (3,)]),
    ],
    ids=lambda case: getattr(case, "__name__", ""),
)
def test_outputs_that_view_an_intermediate_under_autograd_work_from_the_first_call(function, shapes):
    """AOTAutograd remakes an output that views an intermediate with ``_unsafe_view``, under its
    first-call check of custom ops, which refuses every tensor subclass: the graph hands it a
    plain Tensor object (``host.as_plain_tensor``), and the caller gets an npy tensor, with
    CPU's values and gradients. (Outputs sharing a base are remade through functionalization's
    view replay, which the check does not see: those cases guard the results.)"""
    leaves = [make(shape, torch.float32, seed).requires_grad_() for seed, shape in enumerate(shapes, 1)]
    expected = _as_tuple(function(*leaves))
    on_npy = [leaf.detach().to("npy").requires_grad_() for leaf in leaves]
    torch._dynamo.reset()
    outputs = _as_tuple(torch.compile(function)(*on_npy))
    for output, cpu_output in zip(outputs, expected, strict=True):
        assert type(output) is backend_pkg.NpyTensor
        assert_same(output.cpu(), cpu_output)
    sum(output.sum() for output in outputs).backward()
    sum(output.sum() for output in expected).backward()
    for npy_leaf, leaf in zip(on_npy, leaves):
        assert_same(npy_leaf.grad.cpu(), leaf.grad)


def _as_tuple(outputs):
    return outputs if isinstance(outputs, tuple) else (outputs,)


def _loss_of_detached(x, w):
    return (x.detach() * w).sum()


def test_an_input_whose_gradient_the_graph_never_needs_compiles_from_the_first_call():
    """AOTAutograd detaches a non-leaf input whose gradient the compiled graph never computes
    under its first-call check of custom ops, which gives up on tensor classes it does not know;
    npy tensors pass it as CPU tensors do (backend_pkg/custom_op_check.py), with the check on."""
    assert torch._functorch.config.check_custom_op_aliasing
    leaf, w = make((3,), torch.float32, 1).requires_grad_(), make((3,), torch.float32, 2).requires_grad_()
    expected = _loss_of_detached(leaf * 1.0, w)
    on_npy, w_on_npy = (t.detach().to("npy").requires_grad_() for t in (leaf, w))
    compiled = torch.compile(_loss_of_detached)
    for _ in range(2):
        loss = compiled(on_npy * 1.0, w_on_npy)
        assert_same(loss.cpu(), expected)
        loss.backward()
    torch.testing.assert_close(w_on_npy.grad.cpu(), 2 * leaf.detach())


def test_a_gan_step_compiled_whole_trains_like_cpu_from_the_first_call():
    """The model zoo's DCGAN step under the default torch.compile: the discriminator's loss on
    ``fake.detach()`` makes a graph whose computed input AOTAutograd detaches at the first call."""
    recipe = zoo.RECIPES["dcgan"]
    runs = {}
    for device, step in (("npy", torch.compile(recipe.step)), ("cpu", recipe.step)):
        torch.manual_seed(0)
        model = recipe.build().to(device)
        optimizers = recipe.optimizers(model)
        batches = recipe.batches(device)[:2]
        losses = [
            step(model, optimizers, tuple(value.to(device) for value in batch)).detach().cpu() for batch in batches
        ]
        runs[device] = torch.stack(losses), {name: value.cpu() for name, value in model.state_dict().items()}
    torch.testing.assert_close(runs["npy"], runs["cpu"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("backend", ["inductor", "npy"])
def test_detach_of_a_computed_tensor_stays_in_the_graph(backend):
    """``x.detach()`` of an npy input is traced as PyTorch's op: Dynamo stepping into npy's own
    ``detach`` broke the graph there, and the zoo's GAN step compiled whole ran five times slower
    (its ``fake.detach()``: ``fake`` is computed before a graph break, as here outside)."""
    x = make((3, 4), torch.float32, 1)
    computed = x.to("npy").requires_grad_() * 2
    compiled = torch.compile(lambda t: t.detach().exp() + 1, backend=backend, fullgraph=True)
    result = compiled(computed)
    assert type(result) is backend_pkg.NpyTensor and not result.requires_grad
    torch.testing.assert_close(result.cpu(), (x * 2).exp() + 1)


def test_the_check_alone_sees_npy_tensors_as_plain_parameters():
    """Anywhere but in that check, an npy tensor is no parameter and its ``.data`` is an npy tensor."""
    tensor = torch.ones(2, device="npy")
    assert not isinstance(tensor, torch.nn.Parameter) and type(tensor.data) is backend_pkg.NpyTensor
    assert isinstance(torch.nn.Parameter(tensor), torch.nn.Parameter)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_pytorch_debug_backends_trace_npy_tensors(backend):
    """aot_eager runs aten ops on npy tensors in its graph at the first call, under AOTAutograd's
    check of custom ops, left on."""
    a = make((3, 4), torch.float32, 1).to("npy")

    def views_and_reductions(t):
        return (t.t() @ t).view(-1).relu().sum()

    assert_same(torch.compile(views_and_reductions, backend=backend)(a), views_and_reductions(a))


def test_default_compile_runs_inductor_cpp_on_npy_memory():
    model = mlp("npy")
    x, _ = data(16, "npy")
    with torch.no_grad():
        compiled = torch.compile(model)(x)
        eager = model(x)
    assert_same(compiled, eager)
    assert type(compiled) is backend_pkg.NpyTensor


def test_inductor_caches_no_npy_graph(tmp_path, monkeypatch):
    """The generated code calls backend_pkg, which the FX graph cache's key does not cover:
    the second compile of a graph compiles it again, from an empty cache directory."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    counters = torch._dynamo.utils.counters
    counters.clear()
    a = torch.ones(3, device="npy")
    for _ in range(2):
        torch._dynamo.reset()
        assert_same(torch.compile(lambda t: t + 1)(a), torch.full((3,), 2.0, device="npy"))
    assert not any(key.startswith("fxgraph_cache") for key in counters["inductor"]), counters["inductor"]
    assert counters["aot_autograd"]["autograd_cache_hit"] == 0, counters["aot_autograd"]


def test_default_compile_follows_an_input_whose_memory_changes_between_calls():
    """Each npy tensor keeps the CPU view of its memory the compiled code reads between calls:
    a view made for memory the tensor has since left is never read."""
    compiled = torch.compile(lambda t: t * 2)
    a = torch.ones(3, device="npy")
    assert_same(compiled(a), torch.full((3,), 2.0, device="npy"))
    a.data = torch.full((3,), 5.0, device="npy")
    assert_same(compiled(a), torch.full((3,), 10.0, device="npy"))
    a.set_(torch.full((3,), 7.0, device="npy"))
    assert_same(compiled(a), torch.full((3,), 14.0, device="npy"))
    a.add_(1)  # written in place: the same memory, new values
    assert_same(compiled(a), torch.full((3,), 16.0, device="npy"))


def test_default_compile_output_in_a_reused_buffer_and_gradients_read_by_the_next_graph(monkeypatch):
    """A training forward's loss lives in a buffer Inductor allocated for another; the
    backward's gradients are read by the compiled optimizer step. The parameters' host views
    are those the forward gave them; each gradient gets one: ``.grad`` is AccumulateGrad's C++
    ``detach`` of the backward's output, a plain object that keeps none (backend_pkg.tensor.detached)."""
    from torch._inductor.utils import run_and_get_code

    from backend_pkg.compiler import host

    model, (x, y) = mlp("npy"), data(16, "npy")
    loss_of = torch.compile(lambda: torch.nn.functional.cross_entropy(model(x), y))
    loss, [forward_code, _] = run_and_get_code(lambda: loss_of().backward())
    assert "empty_host((), torch.float32)" in forward_code  # the buffer the loss reuses is NumPy memory
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    expected = [(p - 0.5 * p.grad).cpu() for p in model.parameters()]
    made_for = []
    make_host_view = host._host_view_of
    monkeypatch.setattr(host, "_host_view_of", lambda tensor: made_for.append(tensor) or make_host_view(tensor))
    torch.compile(optimizer.step)()
    monkeypatch.undo()
    gradients = [parameter.grad for parameter in model.parameters()]
    assert len(made_for) == len(gradients) and all(any(t is g for g in gradients) for t in made_for)
    for parameter, want in zip(model.parameters(), expected):
        assert_same(parameter.cpu(), want)


def test_default_compile_leaves_tensors_pickled_and_copied_as_before(tmp_path):
    """The host views compiled graphs keep on npy tensors (parameters, inputs, gradients and
    their ``detach``) are caches: ``torch.save`` leaves them out, so that
    ``torch.load(weights_only=True)`` reads the file, and ``copy.deepcopy`` does too."""
    import copy

    model, (x, y) = mlp("npy"), data(16, "npy")
    torch.nn.functional.cross_entropy(torch.compile(model)(x), y).backward()
    weight = model[0].weight
    saved = {"model": model.state_dict(), "parameter": weight, "grad": weight.grad, "detached": weight.detach()}
    torch.save(saved, tmp_path / "saved.pt")
    assert b"numpy" not in (tmp_path / "saved.pt").read_bytes()
    loaded = torch.load(tmp_path / "saved.pt", weights_only=True)
    assert_same(loaded["model"]["0.weight"], weight.detach())
    assert_same(loaded["parameter"], weight)
    assert_same(loaded["grad"], weight.grad)
    copied = copy.deepcopy(model)
    assert_same(copied(x), model(x))


def test_default_compile_large_output_is_npy_memory_aligned_as_the_cpus():
    """A large output is computed in memory of the CPU's allocator (64-byte aligned), which
    the npy tensor then owns: it outlives the compiled call and takes writes and views."""
    a = make((128, 256), torch.float32, 1)  # 128 KiB
    out = torch.compile(lambda t: t * 2)(a.to("npy"))
    assert type(out) is backend_pkg.NpyTensor and out.data_ptr() % 64 == 0
    assert_same(out.cpu(), a * 2)
    out[1:].add_(1)
    expected = a * 2
    expected[1:] += 1
    assert_same(out.cpu(), expected)


def test_default_compile_sgd_training_step_equals_cpu():
    compiled = train("npy", torch.compile(classification_step), torch.optim.SGD)
    assert_runs_equal(compiled, train("cpu", classification_step, torch.optim.SGD))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
def test_default_compile_dynamic_dtypes_graph_breaks_and_new_tensors(dtype):
    def fn(a):
        b = a * 3 + torch.tensor(2, device=a.device)  # an npy tensor made while tracing
        print("a graph break")
        return (b - 1).sum(0), b.t()

    compiled = torch.compile(fn, dynamic=True)
    for rows in (3, 5):
        a = make((rows, 4), dtype, rows).to("npy")
        for got, want in zip(compiled(a), fn(a)):
            assert_same(got, want)


def test_a_cpu_graph_still_compiles_as_before():
    """One process, both devices: npy's code generation is registered for npy only."""
    from torch._inductor.utils import run_and_get_code

    a = make((3, 4), torch.float32, 1)
    result, [code] = run_and_get_code(torch.compile(lambda t: (t * 2).relu().sum(1)), a)
    assert_same(result, (a * 2).relu().sum(1))
    assert "to_host" not in code and "to_npy" not in code and "empty_strided_cpu" in code


def test_default_compile_npy_kernels_run_on_the_calling_thread_cpu_ones_on_openmp_threads():
    """npy's C++ kernels share no loop out to OpenMP threads (see inductor.KERNEL_THREADS); a CPU
    graph compiled in the same process keeps Inductor's parallel loops."""
    from torch._inductor.utils import run_and_get_code

    a = make((256, 1024), torch.float32, 1)
    function = lambda t: (t * 2).relu() + 1  # noqa: E731
    npy_result, [npy_code] = run_and_get_code(torch.compile(function), a.to("npy"))
    assert_same(npy_result, function(a.to("npy")))
    assert "cpp_fused" in npy_code and "omp parallel" not in npy_code
    if torch.get_num_threads() > 1:
        _, [cpu_code] = run_and_get_code(torch.compile(function), a)
        assert "omp parallel" in cpu_code


def run_fresh(*code):
    """Run the pieces of ``code``, each dedented, one after the other in a new Python process."""
    source = "\n".join(textwrap.dedent(piece) for piece in code)
    return subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=120)


def test_in_a_fresh_process_dynamo_is_quiet_and_imported_only_when_used():
    """Dynamo warns once per process, so the check of the guard runs in a new one."""
    result = run_fresh(
        """
        import sys
        import torch
        import backend_pkg
        assert "torch._dynamo" not in sys.modules
        a = torch.ones(3, device="npy")
        print(torch.compile(lambda t: (t * 2).sum(), backend="eager")(a).item())
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "6.0"
    assert "Dynamo" not in result.stderr and "monotonic" not in result.stderr, result.stderr


# Run in a fresh process: every attribute of every loaded ``torch`` module, and of every class such a
# module defines, by identity; added names are the keys missing from a snapshot taken earlier.
PYTORCH_OBJECTS = """
    import sys

    def pytorch_objects():
        objects = {}
        for module_name, module in list(sys.modules.items()):
            if module is None or module_name.split(".")[0] != "torch":
                continue
            for name, value in list(vars(module).items()):
                objects[module_name, name] = value
                if isinstance(value, type) and value.__module__ == module_name:
                    for attribute, member in list(vars(value).items()):
                        objects[module_name, name, attribute] = member
        return objects

    def replaced(before, after):
        return sorted(".".join(key) for key in before if key in after and after[key] is not before[key])

    def added(before, after):
        return sorted(".".join(key) for key in after if key not in before and key[:-1] in before)
"""


def test_import_replaces_no_object_of_pytorch():
    """After ``import backend_pkg``, every object of PyTorch's is the one it was, in every module
    of Dynamo, AOTAutograd and Inductor too (imported first), but those PyTorch's own
    ``rename_privateuse1_backend`` replaces (the name it records, and two pybind11 enums given
    an ``NPY`` member, shown by a process that only renames); what the registration functions add
    is npy's (``torch.npy``, ``Tensor.npy``...). Settings are not attributes: the next test
    compares them."""
    renaming_only = run_fresh(
        PYTORCH_OBJECTS,
        """
        import torch
        before = pytorch_objects()
        torch.utils.rename_privateuse1_backend("npy")
        print(replaced(before, pytorch_objects()))
        """,
    )
    package = run_fresh(
        PYTORCH_OBJECTS,
        """
        import torch
        import torch._dynamo
        import torch._inductor.compile_fx
        import torch._functorch.config
        from torch._subclasses.fake_tensor import FakeTensor
        before = pytorch_objects()
        import backend_pkg
        after = pytorch_objects()
        print(replaced(before, after))
        print(added(before, after))
        # What the package replaced before (these modules are loaded, so their objects are compared).
        print(all(key in before for key in [
            ("torch._subclasses.fake_tensor", "FakeTensor", "__new__"),
            ("torch", "_TorchCompileInductorWrapper", "__call__"),
        ]))
        """,
    )
    assert renaming_only.returncode == 0 and package.returncode == 0, renaming_only.stderr + package.stderr
    replaced_by_renaming = renaming_only.stdout.splitlines()[0]
    replaced_by_package, added_by_package, compared_what_it_replaced = package.stdout.splitlines()[:3]
    assert replaced_by_package == replaced_by_renaming, replaced_by_package
    assert compared_what_it_replaced == "True"
    names = eval(added_by_package)
    assert names and all("npy" in name.split(".")[-1].lower() for name in names), names


def test_import_and_compiles_leave_every_setting_as_it_was():
    """Compiling npy graphs (both routes, forward and backward, a graph break) leaves every setting
    of Dynamo, AOTAutograd and Inductor as it was; settings npy needs are changed only while
    they are needed."""
    result = run_fresh(
        """
        import torch
        import torch._dynamo.config as dynamo_config
        import torch._functorch.config as functorch_config
        import torch._inductor.config as inductor_config

        def settings():
            return {
                f"{config.__name__}.{name}": value
                for config in (dynamo_config, functorch_config, inductor_config)
                for name, value in config.get_config_copy().items()
            }

        def changed(before, after):
            return sorted(k for k in before if before[k] is not after[k] and before[k] != after[k])

        before = settings()
        import backend_pkg
        after_import = settings()
        print(changed(before, after_import))

        def broken(t):
            s = (t * 2).softmax(0).sum()
            torch._dynamo.graph_break()
            return torch.cumsum(t, 0).sum() + s

        w = torch.ones(3, device="npy", requires_grad=True)
        for backend in ("inductor", "npy"):
            torch.compile(lambda t: (t * 2).softmax(0).sum(), backend=backend)(w).backward()
            torch.compile(broken, backend=backend)(w).backward()
        print(changed(after_import, settings()))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["[]", "[]"], result.stdout


def test_default_compile_bool_input_mutation_and_outputs_aliasing_inputs():
    def fn(a, mask):
        a.add_(1)
        return a.view(-1), a[0], torch.where(mask, a, 0.0), mask.logical_not()

    a, mask = make((3, 4), torch.float32, 1), make((3, 4), torch.bool, 2)
    npy_a, npy_mask = a.to("npy"), mask.to("npy")
    for got, want in zip(torch.compile(fn)(npy_a, npy_mask), fn(a, mask)):
        assert_same(got.cpu(), want)
    assert_same(npy_a.cpu(), a)  # the input was written
    flat, row = torch.compile(fn)(npy_a, npy_mask)[:2]
    npy_a[0, 0] = 100.0  # and the outputs are views of it
    assert flat[0].item() == 100.0 and row[0].item() == 100.0


def test_default_compile_marked_dynamic_dim_needs_no_recompile():
    counters = torch._dynamo.utils.counters
    counters.clear()
    compiled = torch.compile(lambda a: (a * 2).softmax(0))
    for length in (4, 6, 9):
        a = make((length,), torch.float32, length).to("npy")
        torch._dynamo.mark_dynamic(a, 0)
        assert_same(compiled(a), (a * 2).softmax(0))
    assert counters["stats"]["unique_graphs"] == 1


def test_default_compile_adam_training_step_equals_cpu_compiled_the_same_way():
    """Model, loss and Adam's step compiled by Inductor on npy; the reference is the same
    on the CPU (compiled Adam rounds differently from eager Adam, see the npy backend's test)."""
    compiled = train("npy", torch.compile(classification_step), torch.optim.Adam)
    torch._dynamo.reset()
    assert_runs_equal(compiled, train("cpu", torch.compile(classification_step), torch.optim.Adam))


def test_default_compile_convolutions_in_channels_last_give_npy_layouts():
    """Inductor lays a conv net out channels-last when it expects that to be faster (a LeNet in
    eval, wider convolutions in training; forced here): the CPU's convolution and its backward,
    run on host views, then give channels-last results where npy's give contiguous ones, which
    the graph was planned with."""
    import torch._inductor.config

    def conv_net(device):
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Conv2d(4, 5, 3)).to(device)

    x = make((2, 3, 8, 8), torch.float32, 1)
    runs = []
    for device, compiled in (("npy", True), ("cpu", False)):
        model = conv_net(device)
        with torch._inductor.config.patch(force_layout_optimization=True):
            out = (torch.compile(model) if compiled else model)(x.to(device))
            out.sum().backward()
        runs.append([out.detach().cpu()] + [p.grad.cpu() for p in model.parameters()])
    assert_runs_equal(*runs)


def test_default_compile_of_the_zoo_lenet_trains_and_infers_as_cpu_eager():
    """``torch.compile(model)``, the usual call, on the zoo's LeNet (convolutions, max pooling, a
    momentum SGD step left eager): two training steps, then inference in eval under ``no_grad``
    (where Inductor lays the convolutions out channels-last), against eager CPU."""
    import zoo

    recipe = zoo.RECIPES["lenet"]
    runs = []
    for device, compiled in (("npy", True), ("cpu", False)):
        torch.manual_seed(0)
        model = recipe.build().to(device)
        optimizers = recipe.optimizers(model)
        run = torch.compile(model) if compiled else model
        losses = []
        for images, labels in recipe.batches(device)[:2]:
            images, labels = images.to(device), labels.to(device)
            losses.append(recipe.step(run, optimizers, (images, labels)).detach().cpu())
        model.eval()
        with torch.no_grad():
            predictions = run(images).cpu()
        runs.append([torch.stack(losses), predictions, *(p.detach().cpu() for p in model.parameters())])
    assert_runs_equal(*runs, rtol=1e-4, atol=1e-5)  # the zoo's tolerance (tests/models/test_model_zoo.py)
