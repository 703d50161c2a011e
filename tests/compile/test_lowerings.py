"""Eager npy and ``torch.compile(backend="npy")`` run one NumPy function per op: they agree.

For every aten overload in the lowering table, an expression that reaches it
runs on CPU, eagerly on npy and compiled for npy, over float32, float64, int64
and bool where the op takes them; the three results must match (dtype and
shape included). Compiled means ``torch.compile(backend="npy")``, or, for the
overloads AOTAutograd's decompositions never leave in a graph, the backend's
code generation on a graph of the op alone. A lowering that neither reaches
fails the first test.
"""

import functools
import operator

import pytest
import torch
import torch.nn.functional as F
from reference import make, views_of_a_3x4_tensor
from torch import fx
from torch.utils._pytree import tree_map

from backend_pkg.compiler.codegen import compile_graph
from backend_pkg.compiler.dynamo_backend import npy_backend
from backend_pkg.ops.registry import LOWERINGS

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated")

ALL = (torch.float32, torch.float64, torch.int64, torch.bool)
NUMERIC = (torch.float32, torch.float64, torch.int64)
FLOATS = (torch.float32, torch.float64)
aten = torch.ops.aten


def _batch_norm_updating(x, y):
    """A training batch norm's result, and the running statistics it updated."""
    running_mean, running_var = torch.zeros_like(x[0]), torch.ones_like(x[0])
    out = F.batch_norm(x, running_mean, running_var, y[0], y[1], training=True, momentum=0.2)
    return out, running_mean, running_var


def _grad_scaler_steps(x, y):
    """GradScaler's two ops: unscaling gradients (one with infs), and updating the scale after it."""
    gradients, found_inf = [x.clone(), y / 0], torch.zeros(1, device=x.device)
    torch._amp_foreach_non_finite_check_and_unscale_(gradients, found_inf, torch.full((1,), 0.5, device=x.device))
    scales = [torch.full((1,), 4.0, device=x.device) for _ in range(2)]
    trackers = [torch.zeros(1, dtype=torch.int32, device=x.device) for _ in range(2)]
    torch._amp_update_scale_(scales[0], trackers[0], found_inf, 2.0, 0.5, 3)
    torch._amp_update_scale_(scales[1], trackers[1], torch.zeros_like(found_inf), 2.0, 0.5, 1)
    return (*gradients, found_inf, *scales, *trackers)


# name -> (expression of x, y (the dtype under test, 3x4), i (int64 indices in [0, 4), 3x4)), dtypes
CASES = {
    "add": (lambda x, y, i: (torch.add(x, y), x + 2, torch.add(x, y, alpha=3), x + 0.5), NUMERIC),
    "add.bool": (lambda x, y, i: (x + y, x + True), (torch.bool,)),
    "sub": (lambda x, y, i: (torch.sub(x, y, alpha=2), x - 1, x - 0.25), NUMERIC),
    "mul": (lambda x, y, i: (x * y, x * 3, x * 0.5), ALL),
    "div": (lambda x, y, i: (x / y, x / 4, torch.true_divide(x, y)), ALL),
    "pow": (lambda x, y, i: (x**2, x.abs() ** y.abs(), 2**x, x**0, x**1), NUMERIC),
    "maximum": (lambda x, y, i: (torch.maximum(x, y), torch.minimum(x, y)), ALL),
    "clamp": (lambda x, y, i: (torch.clamp(x, -1, 1), x.clamp(min=0)), NUMERIC),
    "addcmul": (lambda x, y, i: (torch.addcmul(x, x, y, value=0.5), torch.addcdiv(x, x, y, value=0.5)), FLOATS),
    "addcmul.int": (lambda x, y, i: (torch.addcmul(x, x, y, value=2),), (torch.int64,)),
    "lerp": (lambda x, y, i: (torch.lerp(x, y, 0.3), torch.lerp(x, y, y.sigmoid())), FLOATS),
    "neg": (lambda x, y, i: (-x, x.abs()), NUMERIC),
    "abs.bool": (lambda x, y, i: (torch.logical_not(x),), (torch.bool,)),
    "float functions": (
        lambda x, y, i: (x.exp(), x.log(), x.sqrt(), x.tanh(), x.reciprocal(), x.rsqrt(), x.sigmoid()),
        ALL,
    ),
    "relu": (lambda x, y, i: (x.relu(), torch.where(x > y, x, y)), NUMERIC),
    "where.bool": (lambda x, y, i: (torch.where(x, y, x),), (torch.bool,)),
    "comparisons": (
        lambda x, y, i: (
            torch.eq(x, y),
            torch.ne(x, 1),
            torch.lt(x, y),
            torch.le(x, 0),
            torch.gt(x, 0.5),
            torch.ge(x, y),
            torch.logical_not(x),
            x.any(),
            x.any(1),
            x.any((0, 1), keepdim=True),
        ),
        ALL,
    ),
    "sum": (lambda x, y, i: (x.sum(), x.sum(1, keepdim=True), x.sum(0, dtype=torch.float64)), ALL),
    "mean": (lambda x, y, i: (x.mean(), x.mean(0), x.mean(1, keepdim=True)), FLOATS),
    "amax": (lambda x, y, i: (x.amax(1), x.amin(0), x.amax((0, 1))), ALL),
    "max.dim": (lambda x, y, i: (*x.max(1), *x.min(0, keepdim=True), x.cumsum(1), x.cumprod(0)), ALL),
    "argmax": (lambda x, y, i: (x.argmax(), x.argmax(1), x.argmin(0, keepdim=True)), NUMERIC),
    "var": (
        lambda x, y, i: (
            x.var(1),
            x.var((0, 1), correction=0),
            *torch.var_mean(x, 0, keepdim=True),
            torch.linalg.vector_norm(x),
            torch.linalg.vector_norm(x, 1, dim=1),
            torch.linalg.vector_norm(x, float("inf"), dim=0, keepdim=True),
        ),
        FLOATS,
    ),
    "softmax": (lambda x, y, i: (x.softmax(0), x.log_softmax(1)), FLOATS),
    "activations": (
        lambda x, y, i: (
            F.leaky_relu(x, 0.1),
            F.elu(x, 0.5),
            F.hardtanh(x, -0.5, 0.5),
            F.gelu(x),
            F.gelu(x, approximate="tanh"),
        ),
        FLOATS,
    ),
    "hardtanh.int": (lambda x, y, i: (F.hardtanh(x, -1, 2),), (torch.int64,)),
    "products": (
        lambda x, y, i: (
            x[:, :3] @ y[:3],
            torch.bmm(x[None], y.t()[None]),
            torch.addmm(x[0, :3], x[:, :2], y[:2, :3], beta=2, alpha=3),
        ),
        NUMERIC,
    ),
    "views": (
        lambda x, y, i: (
            *views_of_a_3x4_tensor(x),
            x[:1].squeeze(),
            x.clone(),
            aten.alias.default(x),
        ),
        ALL,
    ),
    "copies": (
        lambda x, y, i: (x.to(torch.float64), x.to(torch.int64), x.to(torch.bool), aten.copy.default(x, y)),
        ALL,
    ),
    "gather": (lambda x, y, i: (x.gather(1, i), x.scatter(1, i[:, :2], y[:, :2]), x.scatter(0, i[:2] % 3, 1)), ALL),
    "scatter_add": (lambda x, y, i: (x.scatter_add(1, i, y), x.scatter_reduce(0, i % 3, y, "amax")), NUMERIC),
    "indexing": (
        lambda x, y, i: (
            x[i[0] % 3],
            x[:, i[0]],
            x[i % 3, i],
            torch.index_select(x, 1, i[0]),
            x.index_put((i[0, :1] % 3,), y[:1]),
            x.put(i[0, :1], y[0, :1]),
        ),
        ALL,
    ),
    "index_put.accumulate": (
        lambda x, y, i: (x.index_put((i[0] % 3,), y[:1], accumulate=True), x.put(i, y, accumulate=True)),
        NUMERIC,
    ),
    "cat": (
        lambda x, y, i: (torch.cat([x, y]), torch.cat([x, y[:, :1]], 1), torch.stack([x, y]), torch.cat([x, i])),
        ALL,
    ),
    "embedding": (lambda x, y, i: (F.embedding(i % 3, x), F.embedding(i[0] % 3, y, padding_idx=1)), ALL),
    "batch_norm": (
        lambda x, y, i: (*_batch_norm_updating(x, y), F.batch_norm(x[None], None, None, training=True)),
        FLOATS,
    ),
    "grad scaler": (lambda x, y, i: _grad_scaler_steps(x, y), FLOATS),
    "scalar overloads": (
        lambda x, y, i: (
            aten.add.Scalar(x, 2),
            aten.sub.Scalar(x, 1),
            aten.mul.Scalar(x, 3),
            aten.div.Scalar(x, 2),
            aten.eq.Scalar(x, 1),
            aten.lt.Scalar(x, 1),
            aten.le.Tensor(x, y),
            aten.ne.Tensor(x, y),
            aten.true_divide.Tensor(x, y),
            aten.pow.Scalar(2, x),
        ),
        NUMERIC,
    ),
    "fused": (
        lambda x, y, i: (
            aten.addcmul.default(x, x, y, value=0.5),
            aten.addcdiv.default(x, x, y, value=0.5),
            aten.lerp.Scalar(x, y, 0.3),
            aten.lerp.Tensor(x, y, y.sigmoid()),
            aten.threshold_backward.default(y, x, 0.5),
        ),
        FLOATS,
    ),
    "foreach": (
        lambda x, y, i: (
            *torch._foreach_add([x, y], [y, x]),
            *torch._foreach_add([x, y], 2),
            *torch._foreach_mul([x, y], [2, 3]),
            *torch._foreach_div([x, y], y.sum()),
            *torch._foreach_pow([x, y], 2),
            *torch._foreach_maximum([x, y], 0.5),
            *torch._foreach_minimum([x, y], [x, x]),
            *torch._foreach_lerp([x, y], [y, x], 0.3),
            *torch._foreach_addcmul([x, y], [x, y], [y, x], 0.5),
            *torch._foreach_addcdiv([x, y], [x, y], [y, x], [0.5, 2]),
            *torch._foreach_neg([x, y]),
            *torch._foreach_exp([x]),
            *torch._foreach_sqrt([x.abs()]),
            *torch._foreach_abs([x]),
            *torch._foreach_reciprocal([y]),
            *torch._foreach_sub([x, y], 1),
        ),
        FLOATS,
    ),
    "convolution": (
        lambda x, y, i: (
            F.conv1d(x[None], y.reshape(2, 3, 2), padding=1),
            F.conv2d(x[None, None], y[None, None, :2, :2], stride=(1, 2), dilation=(2, 1)),
            F.conv_transpose1d(x[None], y[:, None, :2], y[0, :1], stride=2, output_padding=1),
            F.conv1d(x[None], y.reshape(3, 2, 2)[:, :1], groups=3),
        ),
        NUMERIC,
    ),
    "normalization": (
        lambda x, y, i: (
            F.layer_norm(x, (4,), y[0], y[1]),
            F.layer_norm(x, (3, 4)),
            F.group_norm(x[None], 3, y[0, :3], y[1, :3]),
            F.group_norm(x.reshape(2, 6, 1), 2),
        ),
        FLOATS,
    ),
    "pooling": (
        lambda x, y, i: (
            F.max_pool2d(x[None], 2),
            F.max_pool2d(x[None], (2, 3), stride=1, padding=1, ceil_mode=True),
            F.avg_pool2d(x[None], 2),
            F.avg_pool2d(x[None], 3, stride=2, padding=1, count_include_pad=False),
            F.max_pool3d(x[None, None], (1, 2, 2)),
            F.avg_pool3d(x[None, None], (1, 2, 2), divisor_override=3),
        ),
        NUMERIC,
    ),
    "factories": (
        lambda x, y, i: (
            torch.zeros(3, dtype=x.dtype, device=x.device),
            torch.ones_like(x),
            torch.zeros_like(x),
            torch.full((2,), 3, dtype=x.dtype, device=x.device),
            torch.full_like(x, 1),
            torch.arange(5, device=x.device),
            torch.ones(2, 3, dtype=x.dtype, device=x.device),
            torch.empty_like(x).copy_(y),
            torch.empty(3, 4, dtype=x.dtype, device=x.device).copy_(y),
            torch.scalar_tensor(2, dtype=x.dtype, device=x.device),
        ),
        ALL,
    ),
}


# The lowerings AOTAutograd's decompositions leave out of the graphs above (a composite op
# such as ``t``, the Scalar and List overloads of foreach), each run alone in a graph as
# ``compile_graph`` would meet it in a graph traced with fewer decompositions:
# overload -> (arguments of x, y, i), dtypes, whether the result's values are defined.
DIRECT = {
    aten.addcmul.default: (lambda x, y, i: ((x, x, y), {"value": 0.5}), FLOATS),
    aten.addcdiv.default: (lambda x, y, i: ((x, x, y), {"value": 0.5}), FLOATS),
    aten.lerp.Scalar: (lambda x, y, i: ((x, y, 0.3), {}), FLOATS),
    aten.lerp.Tensor: (lambda x, y, i: ((x, y, y.sigmoid()), {}), FLOATS),
    aten.threshold_backward.default: (lambda x, y, i: ((y, x, 0.5), {}), NUMERIC),
    aten.softshrink_backward.default: (lambda x, y, i: ((y, x, 0.5), {}), FLOATS),
    aten.hardshrink_backward.default: (lambda x, y, i: ((y, x, 0.5), {}), FLOATS),
    aten.multi_margin_loss_backward.default: (lambda x, y, i: ((y.sum(), x, i[:, 0], 1, 1.0, None, 1), {}), FLOATS),
    aten.multilabel_margin_loss_backward.default: (
        lambda x, y, i: ((y.sum(), x, i, 1, aten.multilabel_margin_loss_forward.default(x, i, 1)[1]), {}),
        FLOATS,
    ),
    aten.true_divide.Tensor: (lambda x, y, i: ((x, y), {}), ALL),
    aten.convolution_backward.default: (
        lambda x, y, i: (
            (x[None, :2, :2], y[None], y.reshape(2, 3, 2), [2], [1], [0], [2], False, [0], 1, [True, True, True]),
            {},
        ),
        FLOATS,
    ),
    aten.max_pool2d_with_indices_backward.default: (
        lambda x, y, i: (
            (y[None, :1, :2], x[None], [2], [2], [0], [1], False, aten.max_pool2d_with_indices(x[None], [2])[1]),
            {},
        ),
        FLOATS,
    ),
    aten.max_pool3d_with_indices_backward.default: (
        lambda x, y, i: (
            (
                y[None, None, :1, :2],
                x[None, None],
                [1, 2, 2],
                [1, 2, 2],
                [0],
                [1],
                False,
                aten.max_pool3d_with_indices(x[None, None], [1, 2, 2])[1],
            ),
            {},
        ),
        FLOATS,
    ),
    aten.avg_pool2d_backward.default: (
        lambda x, y, i: ((y[None, :1, :2], x[None], [2], [2], [0], False, True, None), {}),
        FLOATS,
    ),
    aten.avg_pool3d_backward.default: (
        lambda x, y, i: ((y[None, None, :1, :2], x[None, None], [1, 2, 2], [1, 2, 2], [0], False, True, None), {}),
        FLOATS,
    ),
    aten.t.default: (lambda x, y, i: ((x,), {}), ALL),
    aten.transpose.int: (lambda x, y, i: ((x, 0, 1), {}), ALL),
    aten.squeeze.default: (lambda x, y, i: ((x[:1],), {}), ALL),
    aten.squeeze.dim: (lambda x, y, i: ((x[:1], 0), {}), ALL),
    aten.squeeze.dims: (lambda x, y, i: ((x[:1], [0, 1]), {}), ALL),
    aten.sum.default: (lambda x, y, i: ((x,), {}), ALL),
    aten._unsafe_view.default: (lambda x, y, i: ((x, [4, 3]), {}), ALL),
    aten.lift_fresh_copy.default: (lambda x, y, i: ((x,), {}), ALL),
    aten.copy_.default: (lambda x, y, i: ((x.clone(), y), {}), ALL),
    torch.ops.prims.convert_element_type.default: (lambda x, y, i: ((x, torch.float64), {}), ALL),
    aten.ones.default: (lambda x, y, i: (([2, 3],), {"dtype": x.dtype, "device": x.device}), ALL),
    aten.zeros.default: (lambda x, y, i: (([2, 3],), {"dtype": x.dtype, "device": x.device}), ALL),
    aten.ones_like.default: (lambda x, y, i: ((x,), {}), ALL),
    aten.zeros_like.default: (lambda x, y, i: ((x,), {}), ALL),
    aten.empty_like.default: (lambda x, y, i: ((x,), {}), ALL, False),
    aten.empty_strided.default: (
        lambda x, y, i: (([2, 3], [3, 1]), {"dtype": x.dtype, "device": x.device}),
        ALL,
        False,
    ),
    aten.sym_size.int: (lambda x, y, i: ((x, 1), {}), ALL),
    aten.sym_numel.default: (lambda x, y, i: ((x,), {}), ALL),
    aten._assert_async.msg: (lambda x, y, i: ((x.ne(0).any(), "never raised"), {}), ALL),
}


def random_draws(x):
    """Every random lowering, reached: each draws from torch.npy's generator."""
    return (
        F.dropout(x, 0.5, training=True),
        torch.rand(3, device=x.device),
        torch.randn(2, 2, dtype=torch.float64, device=x.device),
        torch.rand_like(x),
        torch.randn_like(x),
        torch.empty_like(x).uniform_(-1, 1),
        torch.empty_like(x).normal_(2, 3),
        torch.bernoulli(x, 0.3),
    )


RANDOM = {
    aten.native_dropout.default,
    aten.rand.default,
    aten.randn.default,
    aten.rand_like.default,
    aten.randn_like.default,
    aten.uniform.default,
    aten.normal_functional.default,
    aten.bernoulli.p,
}


def _foreach_arguments(op):
    """Arguments for a foreach overload, read from its schema: a list of two tensors for each
    tensor list, 0.5 for a number, [0.5, 2] for a list of numbers, a zero-dim tensor for a tensor."""

    def arguments(x, y, i):
        lists = iter([[x, y], [y, x], [x.sigmoid(), y.sigmoid()]])
        values = {
            "List[Tensor]": lambda: next(lists),
            "number": lambda: 0.5,
            "List[number]": lambda: [0.5, 2],
            "Tensor": y.sum,
        }
        return tuple(values[str(argument.type)]() for argument in op._schema.arguments if not argument.kwarg_only), {}

    return arguments


for _op in LOWERINGS:
    if _op._opname.startswith("_foreach"):
        DIRECT[_op] = (_foreach_arguments(_op), FLOATS)


def run_cases(*inputs_by_dtype):
    """Every case that takes the dtype, for each dtype's inputs (x, y, i) in ``ALL``'s order."""
    results = []
    for dtype, (x, y, i) in zip(ALL, inputs_by_dtype, strict=True):
        for expression, dtypes in CASES.values():
            if dtype in dtypes:
                results.extend(expression(x, y, i))
    return results


def inputs(dtype):
    x, y = make((3, 4), dtype, 1), make((3, 4), dtype, 2)
    if not dtype.is_floating_point and dtype != torch.bool:
        x, y = x % 4, (y % 4) + 1  # small integers: no overflow in products and powers
    i = make((3, 4), torch.int64, 3) % 4
    return x, y, i


def test_eager_and_compiled_npy_agree_with_cpu_over_dtypes():
    torch._dynamo.reset()
    graphs = []
    backend = functools.partial(npy_backend, on_compiled=graphs.append)
    cpu_inputs = [inputs(dtype) for dtype in ALL]
    npy_inputs = [tuple(value.to("npy") for value in values) for values in cpu_inputs]
    compiled = torch.compile(run_cases, backend=backend, fullgraph=True)(*npy_inputs)
    assert_agree(compiled, run_cases(*npy_inputs), run_cases(*cpu_inputs))
    torch._dynamo.reset()
    lowered = set().union(*(graph.lowered for graph in graphs))
    untested = [op for op in LOWERINGS if _name(op) not in lowered and op not in DIRECT and op not in RANDOM]
    assert not untested, f"add an expression reaching these lowerings to CASES, or to DIRECT: {untested}"


def _name(op):
    return op.name().removeprefix("aten::")


def compiled_alone(op, args, kwargs):
    """``op(*args, **kwargs)`` as the npy backend's code generation compiles a graph of it alone."""
    graph = fx.Graph()
    inputs = []

    def placeholder(value):
        if not isinstance(value, torch.Tensor):
            return value
        node = graph.placeholder(f"input{len(inputs)}")
        node.meta["val"] = value
        inputs.append(value)
        return node

    node = graph.call_function(op, *tree_map(placeholder, (args, kwargs)))
    node.meta["val"] = result = op(*tree_map(_copy, args), **kwargs)
    if isinstance(result, (list, tuple)):
        items = []
        for index, item in enumerate(result):
            items.append(graph.call_function(operator.getitem, (node, index)))
            items[-1].meta["val"] = item
        graph.output(tuple(items))
    else:
        graph.output((node,))
    compiled = compile_graph(fx.GraphModule(torch.nn.Module(), graph))
    assert dict(compiled.lowered) == {_name(op): 1}, (compiled.lowered, compiled.eager)
    outputs = compiled(list(inputs))
    return outputs if isinstance(result, (list, tuple)) else outputs[0]


def _copy(value):
    return value.clone() if isinstance(value, torch.Tensor) else value


def _items(result):
    return list(result) if isinstance(result, (list, tuple)) else [result]


def assert_agree(compiled, eager, cpu, *, values_defined=True, label="result"):
    """Compiled and eager npy results are equal, and equal to CPU's (dtype and shape included)."""
    for n, (got, want, want_cpu) in enumerate(zip(_items(compiled), _items(eager), _items(cpu), strict=True)):
        where = f"{label} {n}"
        if not isinstance(want, torch.Tensor):  # a size, or None
            assert got == want == want_cpu, where
            continue
        if not values_defined:  # an empty tensor's memory: dtype and shape only
            got, want, want_cpu = (torch.zeros_like(value) for value in (got, want, want_cpu))
        torch.testing.assert_close(got, want, equal_nan=True, msg=lambda text: f"{where}, compiled: {text}")
        torch.testing.assert_close(want.cpu(), want_cpu, equal_nan=True, msg=lambda text: f"{where}, eager: {text}")


@pytest.mark.filterwarnings("ignore:npy device.*_assert_async.msg has no npy kernel")
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_each_lowering_alone_agrees_with_eager_npy_and_cpu(dtype):
    for op, (arguments, dtypes, *defined) in DIRECT.items():
        if dtype in dtypes:
            x, y, i = inputs(dtype)
            cpu_args, cpu_kwargs = arguments(x, y, i)
            args, kwargs = arguments(x.to("npy"), y.to("npy"), i.to("npy"))
            compiled = compiled_alone(op, args, kwargs)
            eager, cpu = op(*args, **kwargs), op(*cpu_args, **cpu_kwargs)
            assert_agree(compiled, eager, cpu, values_defined=defined != [False], label=str(op))


def test_random_lowerings_draw_what_eager_draws_from_one_seed():
    """Compiled and eager code draw the same numbers after the same seed (CPU's differ: only
    dtype and shape are compared with it)."""
    torch._dynamo.reset()
    graphs = []
    backend = functools.partial(npy_backend, on_compiled=graphs.append)
    x = inputs(torch.float32)[0]
    torch.manual_seed(0)
    compiled = torch.compile(random_draws, backend=backend, fullgraph=True)(x.to("npy"))
    torch.manual_seed(0)
    eager = random_draws(x.to("npy"))
    torch._dynamo.reset()
    for n, (got, want, want_cpu) in enumerate(zip(compiled, eager, random_draws(x), strict=True)):
        torch.testing.assert_close(got, want, rtol=0, atol=0, msg=lambda text: f"result {n}: {text}")
        assert (want.dtype, want.shape) == (want_cpu.dtype, want_cpu.shape), n
    lowered = set().union(*(graph.lowered for graph in graphs))
    assert {_name(op) for op in RANDOM} <= lowered
