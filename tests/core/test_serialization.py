"""torch.save / torch.load and deepcopy of npy tensors and models."""

import copy
import io
import pickle

import pytest
import torch
from reference import assert_matches_cpu


def saved(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return buffer


@pytest.mark.parametrize("map_location", [None, "npy", "cpu"])
def test_state_dict_and_views_round_trip(map_location):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    on_device = copy.deepcopy(model).to("npy")
    view = torch.arange(12.0).reshape(3, 4).to("npy")[:, 1:]
    loaded = torch.load(saved({"state": on_device.state_dict(), "view": view}), map_location=map_location)
    expected_device = "cpu" if map_location == "cpu" else "npy"
    for name, tensor in model.state_dict().items():
        assert loaded["state"][name].device.type == expected_device
        torch.testing.assert_close(loaded["state"][name].cpu(), tensor)
    assert loaded["view"].stride() == view.stride()
    torch.testing.assert_close(loaded["view"].cpu(), view.cpu())


def test_loaded_state_dict_drives_a_model_on_npy():
    torch.manual_seed(0)
    source = torch.nn.Linear(4, 3).to("npy")
    target = torch.nn.Linear(4, 3).to("npy")
    target.load_state_dict(torch.load(saved(source.state_dict())))
    x = torch.randn(2, 4)
    assert_matches_cpu(target(x.to("npy")).detach(), source(x.to("npy")).detach().cpu())


def test_deepcopy_makes_new_memory():
    original = torch.arange(4.0).to("npy").requires_grad_()
    copied = copy.deepcopy(original)
    assert copied.requires_grad and copied.untyped_storage().data_ptr() != original.untyped_storage().data_ptr()
    assert_matches_cpu(copied.detach(), torch.arange(4.0))
    model = copy.deepcopy(torch.nn.Linear(2, 2).to("npy"))
    assert model.weight.device.type == "npy" and isinstance(model.weight, torch.nn.Parameter)


def test_pickle_and_legacy_save_round_trip_views_and_models():
    """``pickle`` (multiprocessing, caches, experiment trackers) and the legacy ``torch.save``
    format write each storage through PyTorch's C++, which copies it to the CPU from a tensor
    of its own over the storage's data pointer."""
    view = torch.arange(12.0).reshape(3, 4).to("npy")[:, 1:]
    unpickled = pickle.loads(pickle.dumps(view))
    assert unpickled.stride() == view.stride()
    assert_matches_cpu(unpickled, view.cpu())
    model = torch.nn.Linear(2, 2).to("npy")
    buffer = io.BytesIO()
    torch.save(model, buffer, _use_new_zipfile_serialization=False)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=False)
    assert loaded.weight.device.type == "npy"
    torch.testing.assert_close(loaded.weight.detach().cpu(), model.weight.detach().cpu())


class Net(torch.nn.Module):
    """A model class of the program's own, as torch.load(weights_only=True) meets them."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.register_buffer("scale", torch.full((3,), 2.0))

    def forward(self, x):
        return self.fc(x) * self.scale


@pytest.mark.parametrize("map_location", [None, "npy", "cpu"])
def test_whole_module_loads_with_weights_only_in_safe_globals(map_location):
    torch.manual_seed(0)
    model = Net().to("npy")
    with torch.serialization.safe_globals([Net, torch.nn.Linear]):
        loaded = torch.load(saved(model), map_location=map_location)
    device = "cpu" if map_location == "cpu" else "npy"
    for name, param in loaded.named_parameters():
        assert isinstance(param, torch.nn.Parameter) and param.requires_grad and param.device.type == device, name
    assert loaded.scale.device.type == device and not isinstance(loaded.scale, torch.nn.Parameter)
    x = torch.randn(2, 4)
    torch.testing.assert_close(loaded(x.to(device)).detach().cpu(), model(x.to("npy")).detach().cpu())


def test_npy_files_hold_no_numpy_objects():
    """weights_only refuses NumPy's reconstructors; nothing of NumPy or backend_pkg is pickled."""
    import zipfile

    model = Net().to("npy")
    model.fc.weight.note = "kept"  # Python state on a parameter is pickled, as on CPU
    archive = zipfile.ZipFile(saved({"model": model, "tensor": torch.ones(2, device="npy")}))
    pickle = archive.read(next(name for name in archive.namelist() if name.endswith("data.pkl")))
    assert b"numpy" not in pickle and b"backend_pkg" not in pickle and b"_npy_array" not in pickle
    with torch.serialization.safe_globals([Net, torch.nn.Linear]):
        assert torch.load(saved(model)).fc.weight.note == "kept"


@pytest.mark.parametrize("map_location", [None, "npy", "cpu"])
def test_adam_state_round_trips(map_location):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3).to("npy")
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.randn(2, 4, device="npy")).sum().backward()
    optimizer.step()
    state = torch.load(saved(optimizer.state_dict()), map_location=map_location)
    resumed = torch.optim.Adam(model.parameters())
    resumed.load_state_dict(state)
    for name in ("exp_avg", "exp_avg_sq"):
        assert resumed.state[model.weight][name].device.type == "npy"  # moved to the parameter's device
        torch.testing.assert_close(resumed.state[model.weight][name].cpu(), optimizer.state[model.weight][name].cpu())
    resumed.step()


def test_loading_without_backend_pkg():
    """Another process without backend_pkg loads an npy file with map_location="cpu" only."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        path = f"{directory}/model.pt"
        torch.save(torch.nn.Linear(4, 3).to("npy"), path)
        code = f"""
import sys, torch
with torch.serialization.safe_globals([torch.nn.Linear]):
    print(type(torch.load({path!r}, map_location="cpu").weight).__name__)
    try:
        torch.load({path!r})
    except RuntimeError as error:
        print(error)
print("backend_pkg" in sys.modules)
"""
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Parameter",
        "don't know how to restore data location of torch.storage.UntypedStorage (tagged with npy:0)",
        "False",
    ]
