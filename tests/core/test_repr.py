"""An npy tensor prints as the same CPU tensor does, with its device."""

import re

import pytest
import torch
from reference import DTYPES, assert_matches_cpu, make, npy

import backend_pkg


def normalized(text):
    return re.sub(r"\s+", " ", text)


CASES = {
    "matrix": lambda: make((3, 4), torch.float32),
    "scalar": lambda: torch.tensor(3.5),
    "empty": lambda: torch.zeros(0, 3),
    "large, summarized": lambda: torch.linspace(-5, 5, 5000),
    "wide values": lambda: torch.tensor([1e10, 1.5, -3e-5]),
    "non-contiguous": lambda: make((4, 5), torch.float64).t()[::2],
    **{str(dtype): (lambda dtype=dtype: make((2, 3), dtype)) for dtype in DTYPES},
}


@pytest.mark.parametrize("name", CASES)
def test_repr_matches_cpu_plus_device(name):
    cpu = CASES[name]()
    text = repr(cpu.to("npy"))
    assert text.startswith("tensor(")
    assert "device='npy:0'" in text
    assert normalized(text).replace(", device='npy:0'", "") == normalized(repr(cpu))


def test_repr_shows_autograd_state():
    leaf = torch.ones(2, device="npy", requires_grad=True)
    assert "requires_grad=True" in repr(leaf)
    assert "grad_fn=<MulBackward0>" in repr(leaf * 2)
    assert str(leaf) == repr(leaf)


# --- printing a plain tensor -------------------------------------------------------
# ``view(dtype)`` makes a plain ``torch.Tensor`` object, which PyTorch's printer
# formats by running ops on the device (an NpyTensor formats a CPU copy).

# Ops the printer runs that other modules of the backend implement.
OPS_OF_OTHER_MODULES = {"abs", "ne", "eq", "isfinite", "bitwise_and", "min", "max", "ceil", "div", "gt", "lt"}

PRINTED = {
    "int": lambda: make((3, 4), torch.int32),
    "bool": lambda: make((5,), torch.bool),
    "summarized int": lambda: torch.arange(5000).reshape(50, 100),
    "float": lambda: torch.arange(4.0),
    "summarized float": lambda: torch.linspace(-5, 5, 5000),
    "complex": lambda: make((2, 2), torch.complex64),
}


def test_printer_summarizes_a_plain_tensor_like_cpu():
    cpu = make((40, 3, 50), torch.float64)
    plain = npy(cpu).view(cpu.dtype)
    summarized = torch._tensor_str.get_summarized_data(plain)
    assert_matches_cpu(summarized, torch._tensor_str.get_summarized_data(cpu))
    assert_matches_cpu(plain.masked_select(npy(cpu.abs() > 1)), cpu.masked_select(cpu.abs() > 1))


@pytest.mark.parametrize("name", PRINTED)
def test_plain_npy_tensor_prints_like_cpu(name):
    cpu = PRINTED[name]()
    plain = npy(cpu).view(cpu.dtype)
    assert type(plain) is torch.Tensor
    try:
        text = repr(plain)
    except NotImplementedError as error:
        op = re.search(r"aten::(\w+)", str(error)).group(1)
        assert op in OPS_OF_OTHER_MODULES, f"printing needs aten::{op}"
        pytest.skip(f"printing {name} waits for aten::{op}, from another module")
    expected = repr(npy(cpu))  # an NpyTensor prints its CPU copy's digits
    if text != expected and backend_pkg.NpyTensor.__format__ is torch.Tensor.__format__:
        # The printer measures each element with f"{element}"; torch.Tensor
        # formats only plain 0-dim tensors as numbers, and the elements of a
        # plain npy tensor's views are NpyTensors.
        pytest.skip("element widths wait for NpyTensor.__format__ (backend_pkg/tensor.py)")
    assert text == expected
