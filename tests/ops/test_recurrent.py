"""Recurrent networks on npy against CPU: nn.LSTM, nn.GRU, nn.RNN, their cells, packed sequences.

Each module runs on CPU and, from the same weights, on npy (a deep copy);
outputs, final states and the gradients of the input, the initial states
and every parameter must agree. CPU computes its cells from plain ops, npy
from the fused cell ops PyTorch sends an accelerator
(``_thnn_fused_lstm_cell``, ``_thnn_fused_gru_cell`` and their backward), so
the fused ops are also checked directly, against the same math written in
plain CPU ops. Everything runs in strict mode: nothing falls back to CPU.
"""

import copy

import pytest
import torch
from reference import assert_backward_like_cpu, assert_like_cpu, make, npy
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

aten = torch.ops.aten

INPUT, HIDDEN, SEQUENCE, BATCH = 4, 6, 5, 3
# npy computes half in float32 and rounds once per op (a matmul, a whole fused
# cell); CPU's cell rounds every plain op's result to half. Over a few steps
# the two differ by a few half-precision ulps (5e-3 is enough today).
HALF_TOLERANCE = {"atol": 1e-2, "rtol": 1e-2}
MODULES = {
    "lstm": nn.LSTM,
    "gru": nn.GRU,
    "rnn_tanh": nn.RNN,
    "rnn_relu": lambda *args, **kwargs: nn.RNN(*args, nonlinearity="relu", **kwargs),
}


@pytest.fixture(autouse=True)
def _strict(strict):
    """Every test here runs in strict mode."""


def data(shape, dtype=torch.float32, seed=0):
    """Inputs of moderate size, so that the gates stay away from saturation."""
    return make(shape, torch.float64, seed).mul(0.25).to(dtype)


def module(kind, dtype=torch.float32, seed=0, **options):
    torch.manual_seed(seed)
    return MODULES[kind](INPUT, HIDDEN, **options).to(dtype)


def initial_state(kind, num_layers=1, bidirectional=False, batch=BATCH, proj_size=0, dtype=torch.float32):
    layers = num_layers * (2 if bidirectional else 1)
    hidden = data((layers, batch, proj_size or HIDDEN), dtype, seed=7)
    if kind != "lstm":
        return hidden
    return hidden, data((layers, batch, HIDDEN), dtype, seed=8)


# --- running a module on both devices ------------------------------------------


def _leaf(tensor, device):
    return tensor.detach().to(device).requires_grad_()


def _as_list(value):
    if value is None:
        return []
    return list(value) if isinstance(value, tuple) else [value]


def _as_state(tensors):
    if not tensors:
        return None
    return tuple(tensors) if len(tensors) == 2 else tensors[0]


def _run(net, x, state, device, packing):
    """Forward and backward of ``net`` on ``device``: the results, then the gradients of the
    input, the initial states and the parameters (in that order)."""
    leaves = [_leaf(x, device)] + [_leaf(tensor, device) for tensor in _as_list(state)]
    inputs = leaves[0]
    if packing is not None:
        inputs = pack_padded_sequence(
            inputs, packing["lengths"], batch_first=packing["batch_first"], enforce_sorted=packing["enforce_sorted"]
        )
    output, final = net(inputs, _as_state(leaves[1:]))
    results = [output]
    if packing is not None:
        output, lengths = pad_packed_sequence(output, batch_first=packing["batch_first"])
        results = [output, lengths]
    results += _as_list(final)
    differentiable = [result for result in results if result.dtype.is_floating_point]
    seeds = [make(out.shape, out.dtype, seed).to(device) for seed, out in enumerate(differentiable, 1)]
    torch.autograd.backward(differentiable, seeds)
    return results, [leaf.grad for leaf in leaves] + [parameter.grad for parameter in net.parameters()]


def assert_module_like_cpu(net, x, state=None, packing=None, **tolerance):
    """``net`` on npy (a copy with the same weights) matches it on CPU, forward and backward."""
    npy_net = copy.deepcopy(net).to("npy")
    cpu_results, cpu_grads = _run(net, x, state, "cpu", packing)
    npy_results, npy_grads = _run(npy_net, x, state, "npy", packing)
    for got, want in zip(npy_results + npy_grads, cpu_results + cpu_grads, strict=True):
        # Packed sequences' lengths stay on CPU.
        assert got.device.type == ("cpu" if want.dtype == torch.int64 else "npy")
        torch.testing.assert_close(got.detach().cpu(), want.detach(), **tolerance)


# --- nn.LSTM, nn.GRU, nn.RNN ---------------------------------------------------

OPTIONS = [
    pytest.param({}, id="plain"),
    pytest.param({"bias": False}, id="no_bias"),
    pytest.param({"num_layers": 2}, id="2_layers"),
    pytest.param({"bidirectional": True}, id="bidirectional"),
    pytest.param({"num_layers": 2, "bidirectional": True, "batch_first": True}, id="2_layers_bidir_batch_first"),
]


@pytest.mark.parametrize("kind", MODULES)
@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_module_matches_cpu(kind, options, dtype):
    shape = (BATCH, SEQUENCE, INPUT) if options.get("batch_first") else (SEQUENCE, BATCH, INPUT)
    assert_module_like_cpu(module(kind, dtype, **options), data(shape, dtype))


@pytest.mark.parametrize("kind", MODULES)
@pytest.mark.parametrize("options", [{}, {"num_layers": 2, "bidirectional": True}], ids=["plain", "2_layers_bidir"])
def test_module_with_initial_state_matches_cpu(kind, options):
    net = module(kind, **options)
    assert_module_like_cpu(net, data((SEQUENCE, BATCH, INPUT)), initial_state(kind, **options))


@pytest.mark.parametrize("kind", MODULES)
def test_unbatched_sequence_matches_cpu(kind):
    state = initial_state(kind, batch=1)
    state = tuple(tensor[:, 0] for tensor in state) if kind == "lstm" else state[:, 0]
    assert_module_like_cpu(module(kind), data((SEQUENCE, INPUT)), state)


@pytest.mark.parametrize("kind", MODULES)
def test_half_module_matches_cpu(kind):
    x = data((SEQUENCE, BATCH, INPUT), torch.float16)
    assert_module_like_cpu(module(kind, torch.float16), x, **HALF_TOLERANCE)


# CPU's oneDNN path warns (once per process) that it leaves projections to the plain path.
@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
@pytest.mark.parametrize(
    "options",
    [{"proj_size": 3}, {"proj_size": 2, "num_layers": 2, "bidirectional": True, "batch_first": True}],
    ids=["proj", "proj_2_layers_bidir_batch_first"],
)
def test_lstm_projection_matches_cpu(options):
    shape = (BATCH, SEQUENCE, INPUT) if options.get("batch_first") else (SEQUENCE, BATCH, INPUT)
    state = initial_state(
        "lstm", options.get("num_layers", 1), options.get("bidirectional", False), proj_size=options["proj_size"]
    )
    assert_module_like_cpu(module("lstm", **options), data(shape), state)


# --- packed sequences ----------------------------------------------------------


@pytest.mark.parametrize("kind", MODULES)
@pytest.mark.parametrize(
    "layout",
    [
        pytest.param({"lengths": [5, 4, 2], "enforce_sorted": True, "batch_first": False}, id="sorted"),
        pytest.param({"lengths": [2, 5, 4], "enforce_sorted": False, "batch_first": False}, id="unsorted"),
        pytest.param({"lengths": [3, 1, 5], "enforce_sorted": False, "batch_first": True}, id="unsorted_batch_first"),
    ],
)
def test_packed_sequence_matches_cpu(kind, layout):
    packing = {**layout, "lengths": torch.tensor(layout["lengths"])}
    shape = (BATCH, SEQUENCE, INPUT) if layout["batch_first"] else (SEQUENCE, BATCH, INPUT)
    net = module(kind, num_layers=2, bidirectional=True, batch_first=layout["batch_first"])
    assert_module_like_cpu(net, data(shape), initial_state(kind, 2, True), packing=packing)


# --- dropout between layers --------------------------------------------------


@pytest.mark.parametrize("kind", MODULES)
def test_dropout_changes_train_outputs_only(kind):
    """npy draws its own random numbers, so train-mode dropout cannot match CPU's draws;
    it must change the outputs, backpropagate, and leave eval mode alone."""
    net = module(kind, num_layers=2, dropout=0.5).to("npy")
    x = npy(data((SEQUENCE, BATCH, INPUT)))
    expected = module(kind, num_layers=2, dropout=0.5).eval()(data((SEQUENCE, BATCH, INPUT)))[0]
    torch.testing.assert_close(net.eval()(x)[0].cpu(), expected.detach())
    output = net.train()(x)[0]
    assert not torch.allclose(output.detach().cpu(), expected.detach())
    output.sum().backward()
    assert all(parameter.grad is not None for parameter in net.parameters())
    torch.testing.assert_close(net.eval()(x)[0].detach().cpu(), expected.detach())


# --- the whole-sequence kernels: aten::lstm and aten::gru in one op ------------------------

WHOLE_SEQUENCE_KINDS = ["lstm", "gru"]
WHOLE_SEQUENCE_OPTIONS = [
    pytest.param(
        dict(zip(("num_layers", "bidirectional", "batch_first", "bias"), values)),
        id=f"{values[0]}_layers{'_bidir' * values[1]}{'_batch_first' * values[2]}{'_no_bias' * (not values[3])}",
    )
    for values in [
        (1, False, False, True),
        (1, True, True, False),
        (2, False, True, True),
        (2, True, False, True),
        (3, True, True, True),
        (3, False, False, False),
    ]
]


def recorded_ops(output):
    """The names of the backward nodes autograd recorded for ``output``."""
    names, pending, seen = set(), [output.grad_fn], set()
    while pending:
        node = pending.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        names.add(type(node).__name__)
        pending.extend(next_node for next_node, _ in node.next_functions)
    return names


def runs_whole_sequence(output):
    ops = recorded_ops(output)
    return "_WholeSequenceBackward" in ops and not any(name.startswith("ThnnFused") for name in ops)


@pytest.mark.parametrize("kind", WHOLE_SEQUENCE_KINDS)
@pytest.mark.parametrize("options", WHOLE_SEQUENCE_OPTIONS)
@pytest.mark.parametrize("with_state", [False, True], ids=["zero_state", "given_state"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_whole_sequence_matches_cpu(kind, options, with_state, dtype):
    shape = (BATCH, SEQUENCE, INPUT) if options["batch_first"] else (SEQUENCE, BATCH, INPUT)
    state = None
    if with_state:
        state = initial_state(kind, options["num_layers"], options["bidirectional"], dtype=dtype)
    net = module(kind, dtype, **options)
    assert runs_whole_sequence(copy.deepcopy(net).to("npy")(npy(data(shape, dtype)).requires_grad_())[0])
    assert_module_like_cpu(net, data(shape, dtype), state)


@pytest.mark.parametrize("kind", WHOLE_SEQUENCE_KINDS)
@pytest.mark.parametrize("lengths", [[5, 4, 2], [2, 5, 5], [1, 1, 1], [5, 5, 5]], ids=str)
@pytest.mark.parametrize("options", WHOLE_SEQUENCE_OPTIONS[1:4])
def test_whole_sequence_packed_matches_cpu(kind, lengths, options):
    packing = {"lengths": torch.tensor(lengths), "enforce_sorted": False, "batch_first": options["batch_first"]}
    shape = (BATCH, SEQUENCE, INPUT) if options["batch_first"] else (SEQUENCE, BATCH, INPUT)
    state = initial_state(kind, options["num_layers"], options["bidirectional"])
    net = module(kind, **options)
    packed = pack_padded_sequence(
        npy(data(shape)).requires_grad_(), packing["lengths"], batch_first=options["batch_first"], enforce_sorted=False
    )
    assert runs_whole_sequence(copy.deepcopy(net).to("npy")(packed)[0].data)
    assert_module_like_cpu(net, data(shape), state, packing=packing)


@pytest.mark.parametrize("kind", WHOLE_SEQUENCE_KINDS)
@pytest.mark.parametrize("packed", [False, True], ids=["padded", "packed"])
def test_whole_sequence_gradcheck(kind, packed):
    """The backward through time against finite differences, in float64, on npy alone:
    the input, both initial states and every weight of two bidirectional layers."""
    torch.manual_seed(0)
    net = MODULES[kind](3, 4, num_layers=2, bidirectional=True).double().to("npy")
    names = [name for name, _ in net.named_parameters()]
    x = npy(data((4, 2, 3), torch.float64))
    states = [npy(data((4, 2, 4), torch.float64, seed)) for seed in ((7, 8) if kind == "lstm" else (7,))]

    def run(x, *tensors):
        state, weights = tensors[: len(states)], tensors[len(states) :]
        inputs = pack_padded_sequence(x, torch.tensor([4, 2])) if packed else x
        output, final = torch.func.functional_call(net, dict(zip(names, weights)), (inputs, _as_state(list(state))))
        return (output.data if packed else output, *_as_list(final))

    leaves = [tensor.detach().requires_grad_() for tensor in (x, *states, *net.parameters())]
    assert runs_whole_sequence(run(*leaves)[0])
    assert torch.autograd.gradcheck(run, leaves)


@pytest.mark.parametrize("kind", WHOLE_SEQUENCE_KINDS)
def test_dropout_in_training_is_left_to_pytorchs_loop(kind):
    """Dropout between layers draws random numbers as PyTorch's composite does (per layer, on
    npy's generator), so training with it runs that composite; evaluation runs the whole sequence."""
    net = module(kind, num_layers=2, dropout=0.5).to("npy")
    x = npy(data((SEQUENCE, BATCH, INPUT))).requires_grad_()
    assert not runs_whole_sequence(net.train()(x)[0])
    assert runs_whole_sequence(net.eval()(x)[0])


@pytest.mark.parametrize("kind", WHOLE_SEQUENCE_KINDS)
def test_whole_sequence_refuses_double_backward(kind):
    """Like cuDNN's RNN, the whole-sequence kernel's backward is differentiable once."""
    net = module(kind).to("npy")
    x = npy(data((SEQUENCE, BATCH, INPUT))).requires_grad_()
    (grad,) = torch.autograd.grad(net(x)[0].square().sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="marked with @once_differentiable"):
        grad.sum().backward()


# --- the cells: nn.LSTMCell, nn.GRUCell, nn.RNNCell ------------------------------

CELLS = {"lstm": nn.LSTMCell, "gru": nn.GRUCell, "rnn": nn.RNNCell}


def cell_step(cell, state_count=0):
    """``cell`` as a function of its input, ``state_count`` state tensors and its weights, so
    that assert_backward_like_cpu compares the weights' gradients too."""
    names = [name for name, _ in cell.named_parameters()]

    def step(x, *tensors):
        state, weights = tensors[:state_count], tensors[state_count:]
        return torch.func.functional_call(cell, dict(zip(names, weights)), (x, _as_state(list(state))))

    return step, [parameter.detach() for parameter in cell.parameters()]


@pytest.mark.parametrize("kind", CELLS)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_cell_matches_cpu(kind, bias, batched, dtype):
    torch.manual_seed(0)
    batch = (BATCH,) if batched else ()
    state = [data((*batch, HIDDEN), dtype, seed) for seed in ((7, 8) if kind == "lstm" else (7,))]
    step, weights = cell_step(CELLS[kind](INPUT, HIDDEN, bias=bias).to(dtype), len(state))
    assert_backward_like_cpu(step, data((*batch, INPUT), dtype), *state, *weights)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_cell_without_state_matches_cpu(kind):
    torch.manual_seed(0)
    step, weights = cell_step(CELLS[kind](INPUT, HIDDEN))
    assert_backward_like_cpu(step, data((BATCH, INPUT)), *weights)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_cell_double_backward_matches_cpu(kind):
    """With ``create_graph=True`` PyTorch differentiates the cells through the composite
    ``_thnn_differentiable_*_cell_backward``, plain ops that npy runs natively."""
    torch.manual_seed(0)
    cell = CELLS[kind](INPUT, HIDDEN)
    cell_on = {"cpu": cell, "npy": copy.deepcopy(cell).to("npy")}

    def gradient_norm(x):
        output = cell_on[x.device.type](x)
        (grad,) = torch.autograd.grad(_as_list(output)[0].square().sum(), x, create_graph=True)
        return grad.square().sum()

    assert_backward_like_cpu(gradient_norm, data((BATCH, INPUT)))


# --- the fused cell ops, against the same math in plain CPU ops ------------------


def lstm_cell_reference(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    """RNN.cu's LSTM cell in plain ops; the workspace holds the activated gates ``[i, f, g, o]``."""
    gates = input_gates + hidden_gates
    if input_bias is not None:
        gates = gates + input_bias + hidden_bias
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate, forgetgate, outgate = ingate.sigmoid(), forgetgate.sigmoid(), outgate.sigmoid()
    cellgate = cellgate.tanh()
    cy = forgetgate * cx + ingate * cellgate
    hy = outgate * cy.tanh()
    return hy, cy, torch.cat([ingate, forgetgate, cellgate, outgate], 1).detach()


def gru_cell_reference(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    """RNN.cu's GRU cell in plain ops; the workspace holds ``[r, z, n, hx, hn + b_hn]``."""
    if input_bias is not None:
        input_gates, hidden_gates = input_gates + input_bias, hidden_gates + hidden_bias
    input_r, input_z, input_n = input_gates.chunk(3, 1)
    hidden_r, hidden_z, hidden_n = hidden_gates.chunk(3, 1)
    resetgate = (input_r + hidden_r).sigmoid()
    updategate = (input_z + hidden_z).sigmoid()
    newgate = (input_n + resetgate * hidden_n).tanh()
    hy = newgate + updategate * (hx - newgate)
    return hy, torch.cat([resetgate, updategate, newgate, hx, hidden_n], 1).detach()


def fused(op, reference):
    """The fused op on npy, its plain-op reference on CPU (which has no kernel for it)."""

    def cell(*args, outputs=slice(None)):
        result = reference(*args) if args[0].device.type == "cpu" else op(*args)
        return result[outputs]

    return cell


fused_lstm_cell = fused(aten._thnn_fused_lstm_cell, lstm_cell_reference)
fused_gru_cell = fused(aten._thnn_fused_gru_cell, gru_cell_reference)


def cell_inputs(gate_count, dtype, bias=True, batch=BATCH):
    gates = [data((batch, gate_count * HIDDEN), dtype, seed) for seed in (1, 2)]
    biases = [data((gate_count * HIDDEN,), dtype, seed) for seed in (4, 5)] if bias else []
    return gates, data((batch, HIDDEN), dtype, seed=3), biases


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_fused_lstm_cell_matches_plain_ops(bias, dtype):
    gates, cx, biases = cell_inputs(4, dtype, bias)
    assert_backward_like_cpu(fused_lstm_cell, *gates, cx, *biases)


@pytest.mark.parametrize("used", ["hy", "cy"])
def test_fused_lstm_cell_backward_with_one_gradient(used):
    """An undefined grad_hy or grad_cy counts as zeros."""
    gates, cx, biases = cell_inputs(4, torch.float32)
    index = {"hy": 0, "cy": 1}[used]

    def one_state(*args):
        return fused_lstm_cell(*args, outputs=slice(index, index + 1))

    assert_backward_like_cpu(one_state, *gates, cx, *biases)


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_fused_gru_cell_matches_plain_ops(bias, dtype):
    gates, hx, biases = cell_inputs(3, dtype, bias)
    assert_backward_like_cpu(fused_gru_cell, *gates, hx, *biases)


def test_fused_cells_in_half_round_once():
    """Half is computed in float32 and rounded once: a float32 reference, rounded, is within an
    ulp or so; the backward reads the half workspace, as on CUDA."""

    def rounded(cell):
        def half_cell(*args):
            if args[0].device.type != "cpu":
                return cell(*args)
            return tuple(result.half() for result in cell(*(arg.float() for arg in args)))

        return half_cell

    for cell, count in ((fused_lstm_cell, 4), (fused_gru_cell, 3)):
        gates, hidden, biases = cell_inputs(count, torch.float16)
        assert_backward_like_cpu(rounded(cell), *gates, hidden, *biases, atol=2e-3, rtol=2e-3)


def test_fused_cells_on_empty_batch():
    for cell, count in ((fused_lstm_cell, 4), (fused_gru_cell, 3)):
        gates, hidden, biases = cell_inputs(count, torch.float32, batch=0)
        assert_backward_like_cpu(cell, *gates, hidden, *biases)


def test_workspaces_have_cuda_layout():
    gates, cx, biases = cell_inputs(4, torch.float32)
    workspace = aten._thnn_fused_lstm_cell(*map(npy, (*gates, cx, *biases)))[2]
    assert workspace.shape == (BATCH, 4 * HIDDEN)
    torch.testing.assert_close(workspace.cpu(), lstm_cell_reference(*gates, cx, *biases)[2])
    gates, hx, biases = cell_inputs(3, torch.float32)
    workspace = aten._thnn_fused_gru_cell(*map(npy, (*gates, hx, *biases)))[1]
    assert workspace.shape == (BATCH, 5 * HIDDEN)
    torch.testing.assert_close(workspace.cpu(), gru_cell_reference(*gates, hx, *biases)[1])


def test_backward_ops_return_bias_gradients_only_with_bias():
    gates, cx, biases = cell_inputs(4, torch.float32)
    hy, cy, workspace = aten._thnn_fused_lstm_cell(*map(npy, (*gates, cx, *biases)))
    backward = aten._thnn_fused_lstm_cell_backward_impl
    grad_gates, _, grad_bias = backward(hy, cy, npy(cx), cy, workspace, True)
    torch.testing.assert_close(grad_bias.cpu(), grad_gates.cpu().sum(0))
    assert backward(hy, None, npy(cx), cy, workspace, False)[2] is None
    assert backward(None, None, npy(cx), cy, workspace, True) == (None, None, None)
    gates, hx, biases = cell_inputs(3, torch.float32)
    hy, workspace = aten._thnn_fused_gru_cell(*map(npy, (*gates, hx, *biases)))
    results = aten._thnn_fused_gru_cell_backward(hy, workspace, True)
    torch.testing.assert_close(results[3].cpu(), results[0].cpu().sum(0))
    torch.testing.assert_close(results[4].cpu(), results[1].cpu().sum(0))
    assert aten._thnn_fused_gru_cell_backward(hy, workspace, False)[3:] == (None, None)


# --- errors -------------------------------------------------------------------


def per_device(net):
    """``net`` on whichever device its input is on (CPU, or an npy copy)."""
    nets = {"cpu": net, "npy": copy.deepcopy(net).to("npy")}
    return lambda x, *state: nets[x.device.type](x, *state)


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_tanh"])
@pytest.mark.parametrize(
    "shape",
    [(SEQUENCE, BATCH, INPUT - 1), (2, SEQUENCE, BATCH, INPUT), (INPUT,)],
    ids=["features", "4d", "1d"],
)
def test_wrong_input_size_fails_as_on_cpu(kind, shape):
    """PyTorch checks the input in Python (``RNNBase.check_input``), before any kernel."""
    assert_like_cpu(per_device(module(kind)), data(shape))


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_wrong_state_size_fails_as_on_cpu(kind):
    hidden = data((1, BATCH + 1, HIDDEN), seed=7)
    state = (hidden, data((1, BATCH, HIDDEN), seed=8)) if kind == "lstm" else hidden
    assert_like_cpu(per_device(module(kind)), data((SEQUENCE, BATCH, INPUT)), state)


@pytest.mark.parametrize("kind", CELLS)
def test_cell_wrong_sizes_fail_as_on_cpu(kind):
    """The cells check sizes in C++ (``lstm_cell``, ``gru_cell``), before the fused op."""
    torch.manual_seed(0)
    step = per_device(CELLS[kind](INPUT, HIDDEN))
    assert_like_cpu(step, data((BATCH, INPUT + 1)))
    hidden = data((BATCH + 1, HIDDEN), seed=7)
    assert_like_cpu(step, data((BATCH, INPUT)), (hidden, hidden) if kind == "lstm" else hidden)


def test_integer_cells_fail_as_on_cpu():
    x, hidden = make((BATCH, INPUT), torch.int64), make((BATCH, HIDDEN), torch.int64, seed=1)
    lstm_weights = [make((4 * HIDDEN, size), torch.int64, seed) for seed, size in ((2, INPUT), (3, HIDDEN))]
    gru_weights = [make((3 * HIDDEN, size), torch.int64, seed) for seed, size in ((2, INPUT), (3, HIDDEN))]
    assert_like_cpu(lambda x, h, *weights: torch.lstm_cell(x, (h, h), *weights), x, hidden, *lstm_weights)
    assert_like_cpu(torch.gru_cell, x, hidden, *gru_weights)


# Direct calls with bad inputs (CPU has no kernel to compare with): CUDA's checks
# (RNN.cu, TensorUtils.cpp) and messages, naming the npy op.
LSTM_GATES, CX = data((BATCH, 4 * HIDDEN)), data((BATCH, HIDDEN))
BAD_CALLS = [
    pytest.param(
        aten._thnn_fused_lstm_cell,
        [LSTM_GATES.cfloat(), LSTM_GATES.cfloat(), CX.cfloat()],
        NotImplementedError,
        "\"_thnn_fused_lstm_cell\" not implemented for 'ComplexFloat'",
        id="complex",
    ),
    pytest.param(
        aten._thnn_fused_gru_cell_backward,
        [CX.long(), CX.repeat(1, 5).long(), True],
        NotImplementedError,
        "\"_thnn_fused_gru_cell_backward\" not implemented for 'Long'",
        id="integer_backward",
    ),
    pytest.param(
        aten._thnn_fused_lstm_cell,
        [LSTM_GATES, LSTM_GATES, CX.double()],
        RuntimeError,
        "expected scalar type Float but found Double",
        id="mixed_dtypes",
    ),
    pytest.param(
        aten._thnn_fused_gru_cell,
        [LSTM_GATES[0, :18], LSTM_GATES[0, :18], CX],
        RuntimeError,
        "Expected 2-dimensional tensor, but got 1-dimensional tensor for argument #1 'input_gates'",
        id="1d_gates",
    ),
    pytest.param(
        aten._thnn_fused_lstm_cell,
        [LSTM_GATES, LSTM_GATES[:, :20], CX],
        RuntimeError,
        r"argument #2 'hidden_gates'; but \[3, 24\] does not equal \[3, 20\]",
        id="gate_sizes",
    ),
    pytest.param(
        aten._thnn_fused_gru_cell,
        [LSTM_GATES[:, :18], LSTM_GATES[:, :18], CX[:, :5]],
        RuntimeError,
        "argument #5 'prev_hidden' to have 18 elements; but it actually has 15",
        id="hidden_size",
    ),
    pytest.param(
        aten._thnn_fused_lstm_cell,
        [LSTM_GATES, LSTM_GATES, CX, CX[0, :5], CX[0, :5]],
        RuntimeError,
        "argument #3 'input_bias' to have 24 elements",
        id="bias_size",
    ),
    pytest.param(
        aten._thnn_fused_lstm_cell_backward_impl,
        [CX, None, CX[:, :5], CX, LSTM_GATES, True],
        RuntimeError,
        r"Expected tensor of size \[3, 6\], but got tensor of size \[3, 5\] for argument #3 'cx'",
        id="backward_cx_size",
    ),
    pytest.param(
        aten._thnn_fused_gru_cell_backward,
        [CX, LSTM_GATES, True],
        RuntimeError,
        r"Expected tensor of size \[3, 30\], but got tensor of size \[3, 24\] for argument #2 'workspace'",
        id="backward_workspace_size",
    ),
]


@pytest.mark.parametrize(("op", "args", "error", "message"), BAD_CALLS)
def test_fused_ops_refuse_bad_inputs(op, args, error, message):
    with pytest.raises(error, match=message):
        op(*(npy(arg) if isinstance(arg, torch.Tensor) else arg for arg in args))
