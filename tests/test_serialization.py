"""torch.save / torch.load and deepcopy of npy tensors and models."""

import copy
import io

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
