"""``Module.to("npy")`` keeps parameter objects, as CUDA does (backend_pkg/parameters.py).

Each case is compared with the same program on the CPU: tied weights stay
one object, an optimizer made before the move trains the moved model, the
way back keeps the objects too, and copying, pickling and saving behave as
before.
"""

import copy
import io
import pickle

import pytest
import torch
from reference import training_losses

from backend_pkg import NpyTensor

TOKENS = [[1, 2, 0, 4], [3, 3, 1, 0]]


class TiedLanguageModel(torch.nn.Module):
    """An embedding and an output layer sharing one weight, as GPT-style models do."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(7, 6)
        self.mix = torch.nn.Linear(6, 6)
        self.head = torch.nn.Linear(6, 7, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, tokens):
        return self.head(torch.tanh(self.mix(self.embed(tokens))))


def tied_model():
    torch.manual_seed(0)
    return TiedLanguageModel()


def train(model, optimizer, device, steps):
    """The losses of ``steps`` next-token steps; the model is moved to ``device`` after
    ``optimizer`` is made, as programs written for CUDA do."""
    model.to(device)
    tokens = torch.tensor(TOKENS, device=device)

    def next_token_loss():
        logits = model(tokens[:, :-1])
        return torch.nn.functional.cross_entropy(logits.reshape(-1, 7), tokens[:, 1:].reshape(-1))

    return training_losses(optimizer, next_token_loss, steps)


def test_tied_weights_stay_one_parameter():
    model = tied_model()
    weight = model.embed.weight
    model.to("npy")
    assert model.head.weight is model.embed.weight is weight
    assert type(weight) is NpyTensor and isinstance(weight, torch.nn.Parameter)
    assert weight.device.type == "npy" and weight.requires_grad and weight.is_leaf
    assert len(list(model.parameters())) == 3  # embed.weight (head.weight), mix.weight, mix.bias


@pytest.mark.parametrize("optimizer_class", [torch.optim.SGD, torch.optim.Adam])
def test_tied_model_trains_like_cpu_with_an_optimizer_made_before_the_move(optimizer_class):
    results = {}
    for device in ("cpu", "npy"):
        model = tied_model()
        optimizer = optimizer_class(model.parameters(), lr=0.1)
        losses = train(model, optimizer, device, steps=5)
        results[device] = losses, {name: value.cpu() for name, value in model.state_dict().items()}
        assert model.head.weight is model.embed.weight
    torch.testing.assert_close(results["npy"][0], results["cpu"][0])
    torch.testing.assert_close(results["npy"][1], results["cpu"][1])
    assert results["npy"][0][-1] < results["npy"][0][0]


def test_moving_back_to_cpu_keeps_the_objects_and_their_class():
    model = tied_model()
    weight, bias = model.embed.weight, model.mix.bias
    model.to("npy")
    model(torch.tensor(TOKENS, device="npy")).sum().backward()
    model.to("cpu")
    assert model.embed.weight is weight and model.head.weight is weight and model.mix.bias is bias
    assert type(weight) is torch.nn.Parameter and weight.device.type == "cpu"
    assert "_is_param" not in weight.__dict__
    assert type(weight.grad) is torch.Tensor and weight.grad.device.type == "cpu"
    reference = tied_model()
    reference(torch.tensor(TOKENS)).sum().backward()
    torch.testing.assert_close(weight.grad, reference.embed.weight.grad)


def test_gradients_move_with_their_parameters():
    model = tied_model()
    model(torch.tensor(TOKENS)).sum().backward()
    grad = model.mix.weight.grad
    model.to("npy")
    assert model.mix.weight.grad is grad and type(grad) is NpyTensor and grad.device.type == "npy"


def test_deepcopy_and_pickle_keep_the_tie_on_npy():
    model = tied_model().to("npy")
    for copied in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert copied.head.weight is copied.embed.weight
        assert type(copied.embed.weight) is NpyTensor and isinstance(copied.embed.weight, torch.nn.Parameter)
        torch.testing.assert_close(copied.embed.weight.cpu(), model.embed.weight.cpu())


def test_deepcopy_copies_a_gradient_as_on_cpu():
    """A gradient's object is plain on npy (AccumulateGrad's C++ ``detach``, see backend_pkg.tensor.detached)."""
    copies = {}
    for device in ("cpu", "npy"):
        leaf = torch.arange(3.0, device=device).requires_grad_()
        (leaf * leaf).sum().backward()
        copied = copy.deepcopy(leaf)
        assert copied.grad is not leaf.grad and copied.grad.device.type == device
        copies[device] = copied.grad.cpu()
    torch.testing.assert_close(copies["npy"], copies["cpu"])
    model = tied_model().to("npy")
    model(torch.tensor(TOKENS, device="npy")).sum().backward()
    torch.testing.assert_close(copy.deepcopy(model).mix.weight.cpu(), model.mix.weight.cpu())


@pytest.mark.parametrize("map_location", [None, "cpu"])
def test_saved_state_loads_with_weights_only(map_location):
    model = tied_model().to("npy")
    buffer = io.BytesIO()
    torch.save({"state": model.state_dict(), "weight": model.embed.weight}, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=True, map_location=map_location)
    device = map_location or "npy"
    assert loaded["weight"].device.type == device and isinstance(loaded["weight"], torch.nn.Parameter)
    for name, value in model.state_dict().items():
        assert loaded["state"][name].device.type == device
        torch.testing.assert_close(loaded["state"][name].cpu(), value.cpu())
    fresh = tied_model()
    fresh.load_state_dict({name: value.cpu() for name, value in loaded["state"].items()})
    torch.testing.assert_close(fresh.embed.weight, model.embed.weight.cpu())


def test_asking_alone_changes_no_tensor():
    """The question ``Module._apply`` asks before moving changes nothing; only the move does."""
    host, device = torch.ones(3), torch.zeros(3, device="npy")
    parameter = torch.nn.Parameter(torch.ones(3))
    assert torch._has_compatible_shallow_copy_type(host, device)
    assert torch._has_compatible_shallow_copy_type(parameter, device)
    assert type(host) is torch.Tensor and type(parameter) is torch.nn.Parameter
    host.data = device
    assert type(host) is NpyTensor and host.device.type == "npy"
    torch.testing.assert_close(host.cpu(), torch.zeros(3))


def test_the_rule_is_cudas_dense_backends():
    npy = torch.zeros(2, device="npy")
    assert torch._has_compatible_shallow_copy_type(npy, torch.zeros(2, device="npy"))
    assert torch._has_compatible_shallow_copy_type(npy, torch.zeros(2))
    assert torch._has_compatible_shallow_copy_type(torch.zeros(2, dtype=torch.int64), npy)
    assert not torch._has_compatible_shallow_copy_type(npy, torch.zeros(2, device="meta"))
    with pytest.raises(RuntimeError, match="incompatible tensor type"):
        npy.data = torch.zeros(2, device="meta")
    assert type(npy) is NpyTensor


def test_a_refused_move_leaves_the_class_and_raises_as_on_cpu():
    parameter = torch.nn.Parameter(torch.ones(2))
    with pytest.raises(RuntimeError) as on_cpu:
        parameter.data = torch.zeros(2, dtype=torch.int64)
    with pytest.raises(RuntimeError) as on_npy:
        parameter.data = torch.zeros(2, dtype=torch.int64, device="npy")
    assert str(on_npy.value) == str(on_cpu.value)
    assert type(parameter) is torch.nn.Parameter and parameter.device.type == "cpu"


class ScaledParameter(torch.nn.Parameter):
    """A user's parameter class: it keeps its class on npy."""


def test_a_parameter_subclass_keeps_its_class_and_its_memory():
    module = torch.nn.Linear(3, 2)
    module.weight = ScaledParameter(module.weight.detach().clone())
    expected = module.weight.detach().clone()
    weight = module.weight
    module.to("npy")
    assert module.weight is weight and type(weight) is ScaledParameter and weight.device.type == "npy"
    assert weight.data_ptr() != 0 and weight.untyped_storage().nbytes() == expected.numel() * 4
    buffer = io.BytesIO()
    torch.save(module.state_dict(), buffer)
    buffer.seek(0)
    torch.testing.assert_close(torch.load(buffer, weights_only=True)["weight"].cpu(), expected)
    expected_output = torch.ones(1, 3) @ expected.T + module.bias.cpu()
    torch.testing.assert_close(module(torch.ones(1, 3, device="npy")).cpu(), expected_output)


def lazy_model_losses(model, device, lr, steps):
    """The losses of ``steps`` SGD steps of the lazy ``model`` on ``device`` (the mean square of its
    output): a first call materializes its parameters, set then to the same values on every device,
    since each device draws the initial ones from its own generator."""
    inputs = torch.arange(6.0).reshape(2, 3).to(device)
    model(inputs)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(torch.linspace(-1, 1, parameter.numel()).reshape(parameter.shape))
    return training_losses(torch.optim.SGD(model.parameters(), lr=lr), lambda: model(inputs).square().mean(), steps)


def test_a_lazy_module_moved_to_npy_trains_like_cpu():
    results = {}
    for device in ("cpu", "npy"):
        model = torch.nn.Sequential(torch.nn.LazyLinear(4), torch.nn.ReLU(), torch.nn.LazyLinear(2)).to(device)
        losses = lazy_model_losses(model, device, lr=0.01, steps=3)
        results[device] = losses, [value.cpu() for value in model.state_dict().values()]
        for parameter in model.parameters():
            assert isinstance(parameter, torch.nn.Parameter) and parameter.data_ptr() != 0
    torch.testing.assert_close(results["npy"], results["cpu"])


NEW_SUBCLASS_OBJECTS = {
    "_make_subclass": lambda x: torch.Tensor._make_subclass(torch.nn.Parameter, x, True),
    "as_subclass": lambda x: x.as_subclass(torch.nn.Parameter),
}


@pytest.mark.parametrize("make", NEW_SUBCLASS_OBJECTS.values(), ids=NEW_SUBCLASS_OBJECTS)
def test_a_new_subclass_object_over_an_npy_tensor_as_on_cpu(make):
    """Both detach or alias their argument and give the result the class asked for: on npy
    that is PyTorch's C++ ``detach``/``alias``, whose result has no Python object yet."""
    made = {}
    for device in ("cpu", "npy"):
        x = torch.arange(6.0).reshape(2, 3).to(device)
        address = x.data_ptr()  # npy gives a fresh result's storage its pointer when read (backend_pkg.tensor)
        result = make(x)
        assert result.data_ptr() == address  # the same memory, as on CPU
        made[device] = result
    npy, cpu = made["npy"], made["cpu"]
    assert type(npy) is type(cpu) is torch.nn.Parameter
    assert npy.device.type == "npy" and npy.shape == cpu.shape and npy.stride() == cpu.stride()
    assert npy.requires_grad == cpu.requires_grad
    torch.testing.assert_close((npy * 2).detach().cpu(), cpu.detach() * 2)


def test_an_uninitialized_parameter_on_npy_as_on_cpu():
    made = {device: torch.nn.UninitializedParameter(device=device) for device in ("cpu", "npy")}
    for device, parameter in made.items():
        assert type(parameter) is torch.nn.UninitializedParameter and parameter.requires_grad
        parameter.materialize((2, 3))
        assert type(parameter) is torch.nn.Parameter and parameter.device.type == device
        assert parameter.shape == (2, 3) and parameter.requires_grad


def test_a_lazy_module_built_on_npy_trains_like_cpu():
    """``nn.LazyLinear(..., device="npy")``: its parameters are made on npy, uninitialized, and
    materialized by the first call, as on CPU."""
    results = {}
    for device in ("cpu", "npy"):
        model = torch.nn.Sequential(
            torch.nn.LazyLinear(4, device=device), torch.nn.Tanh(), torch.nn.LazyLinear(2, device=device)
        )
        assert all(type(parameter) is torch.nn.UninitializedParameter for parameter in model.parameters())
        losses = lazy_model_losses(model, device, lr=0.1, steps=4)
        for parameter in model.parameters():
            assert type(parameter) is torch.nn.Parameter and parameter.device.type == device
        results[device] = losses, [parameter.detach().cpu() for parameter in model.parameters()]
    torch.testing.assert_close(results["npy"], results["cpu"])
    assert results["npy"][0][-1] < results["npy"][0][0]


def test_a_compiled_model_moved_to_npy_compiles_as_often_as_on_cpu():
    """The parameters have their npy class before Dynamo first sees them: no recompile."""
    frames = {}
    for device in ("cpu", "npy"):
        torch._dynamo.reset()
        counters = torch._dynamo.utils.counters
        counters.clear()
        model = tied_model()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        step = torch.compile(model)
        model.to(device)
        tokens = torch.tensor(TOKENS, device=device)
        for _ in range(4):
            step(tokens).square().mean().backward()
            optimizer.step()
            optimizer.zero_grad()
        frames[device] = counters["stats"]["unique_graphs"], sum(counters["recompiles"].values())
    torch._dynamo.reset()
    assert frames["npy"] == frames["cpu"] == (1, 0)


def test_the_kernel_sits_where_mixed_cpu_and_npy_calls_arrive():
    op = "aten::_has_compatible_shallow_copy_type"
    assert torch._C._dispatch_has_kernel_for_dispatch_key(op, "AutogradPrivateUse1")
